"""Built pages kept between builds, so that a rebuild parses and renders only what changed.

An entry holds a page's body HTML, what parsing it collected, and the finished page. It is
used when the page's own inputs (its Markdown, the templates, the interface strings, glossary,
references, site config, the engine's code, its navigation) hash the same and every experiment
it shows is unchanged; the finished page is reused as well when its figures kept their sizes,
else it is rendered again from the body, without parsing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .model import Built, Collected, Nav, Page


def digest(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else json.dumps(part, sort_keys=True, default=str).encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def tree_digest(*folders: Path) -> str:
    """The content of every file below the folders (templates, engine code …)."""
    h = hashlib.sha256()
    for folder in folders:
        files = [folder] if folder.is_file() else sorted(p for p in folder.rglob("*") if p.is_file()
                                                          and "__pycache__" not in p.parts)
        for p in files:
            h.update(str(p.relative_to(folder.parent)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:24]


class PageCache:
    def __init__(self, folder: Path, reports: list):
        self.folder = folder
        # What a page can show of an experiment: its report but the run time, and the spread over the seeds.
        self.report_digest = {r.name: digest({k: v for k, v in r.data.items() if k != "seconds"},
                                             [r.runs[s]["values"] for s in r.seeds]) for r in reports}

    def _path(self, page: Page) -> Path:
        return self.folder / page.lang / f"{page.slug}.json"

    def load(self, page: Page, nav: Nav, key: str) -> Built | None:
        """The page as the last build left it, if its inputs are the same; None otherwise."""
        try:
            data = json.loads(self._path(page).read_text("utf-8"))
            if data.get("key") != key:
                return None
            if any(self.report_digest.get(name) != d for name, d in data["experiments"].items()):
                return None
            built = Built(page, nav, key, Collected.from_json(data["collected"]), data["body"], data["html"])
            built.sizes = {tuple(k.split(" ", 1)): tuple(v) for k, v in data["figures"].items()}
            built.resolved = data["resolved"]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):  # a damaged entry is a miss
            return None
        return built

    def html_valid(self, built: Built, sizes: dict, resolved: dict) -> bool:
        """A page from the cache whose figures kept their sizes and whose {ref}s name the same numbers needs no
        render."""
        return not built.parsed and built.html is not None and built.resolved == resolved and all(
            tuple(getattr(built, "sizes", {}).get((fid, built.lang), ())) == tuple(sizes.get((fid, built.lang), ()))
            for fid, _ in built.collected.figures)

    def store(self, built: Built, sizes: dict) -> None:
        entry = {"key": built.key, "body": built.body, "html": built.html, "collected": built.collected.to_json(),
                 "experiments": {name: self.report_digest.get(name) for name in built.collected.experiments},
                 "figures": {f"{fid} {built.lang}": sizes.get((fid, built.lang)) for fid, _ in built.collected.figures},
                 "resolved": built.resolved}
        path = self._path(built.page)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(entry, ensure_ascii=False), "utf-8")
        except OSError:
            pass  # an unwritable cache only means the page is built again next time
