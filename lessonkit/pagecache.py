"""Rendered pages kept between builds, so that a rebuild renders only what changed.

An entry is valid when the page's own inputs (its Markdown, the templates, the
interface strings, glossary, references, site config, the engine's code, its
navigation) hash the same, and every experiment and figure it showed is unchanged.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(kw_only=True)
class Collected:
    """What rendering a page tells the rest of the build; a PageContext collects it, a cache entry keeps it."""

    toc: list = field(default_factory=list)  # headings: level, id, text, line
    figures: list = field(default_factory=list)  # (figure id, line)
    terms: list = field(default_factory=list)  # glossary ids
    audits: list = field(default_factory=list)  # audited statements
    claims: list = field(default_factory=list)  # claim keys shown
    values: list = field(default_factory=list)  # value keys shown
    experiments: list = field(default_factory=list)  # experiment names shown
    warnings: list = field(default_factory=list)  # (line, message): said on every build, cached or not
    unaccounted: list = field(default_factory=list)  # (line, number, excerpt): numbers in prose nothing backs


COLLECTED = tuple(Collected.__dataclass_fields__)


@dataclass
class Cached(Collected):
    """A page's rendered HTML and what it collected, standing in for a PageContext."""

    page: object
    html: str
    deps: dict = field(default_factory=dict)  # experiments and figure sizes it was rendered with

    @property
    def lang(self) -> str:
        return self.page.lang


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

    def _path(self, page) -> Path:
        return self.folder / page.lang / f"{page.slug}.json"

    def deps(self, ctx, figure_sizes: dict) -> dict:
        return {"experiments": {name: self.report_digest.get(name) for name in ctx.experiments},
                "figures": {fid: figure_sizes.get((fid, ctx.lang)) for fid, _ in ctx.figures}}

    def load(self, page, key: str) -> Cached | None:
        """The entry if its key matches; its deps are checked once figures are known."""
        path = self._path(page)
        try:
            data = json.loads(path.read_text("utf-8"))
            if data.get("key") != key:
                return None
            cached = Cached(page, data["html"], **{k: data[k] for k in COLLECTED}, deps=data["deps"])
            cached.figures = [tuple(f) for f in cached.figures]
            if any(self.report_digest.get(name) != d for name, d in data["deps"]["experiments"].items()):
                return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):  # a damaged entry is a miss
            return None
        return cached

    def still_valid(self, cached: Cached, figure_sizes: dict) -> bool:
        return all(tuple(size or ()) == tuple(figure_sizes.get((fid, cached.lang), ()))
                   for fid, size in cached.deps["figures"].items())

    def store(self, page, key: str, ctx, html: str, figure_sizes: dict) -> None:
        path = self._path(page)
        entry = {"key": key, "html": html, "deps": self.deps(ctx, figure_sizes)}
        entry.update({k: getattr(ctx, k) for k in COLLECTED})
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(entry, ensure_ascii=False), "utf-8")
        except OSError:
            pass  # an unwritable cache only means the page is rendered again next time
