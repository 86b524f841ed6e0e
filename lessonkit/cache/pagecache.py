"""Built pages kept between builds, so that a rebuild parses and renders only what changed.

Two files in .cache/pages/: `index.json`, what every page's build yielded (its input key, what parsing
it collected, the figure sizes and cross-reference numbers its HTML was rendered with, and how its file
in the site looked once written), read on every build; and `bodies.pack`, the pages' body HTML,
appended to as pages change and read only for a page that must be rendered again without being
parsed (a figure resized, a cross-reference renumbered, another output folder).

An entry is used when the page's own inputs (its Markdown, the templates, the interface strings,
glossary, references, site config, the engine's code, its navigation) hash the same and every
experiment it shows is unchanged; the file already in the site is kept when it is the one written
for that entry. Anything unreadable is a miss.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from lessonkit.io import INPUT_LIMIT, digest, read_cache, write_cache
from lessonkit.model import Built, Collected, Nav, Page


def _file_stamp(path: Path) -> list | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


class PageCache:
    def __init__(self, folder: Path, reports: list):
        self.folder = folder
        # What a page can show of an experiment: its report but the run time, and the spread over the seeds.
        # (And whether it came frozen, and which seeds were run again: the panels say so.)
        self.report_digest = {r.name: digest({k: v for k, v in r.data.items() if k != "seconds"},
                                             [r.runs[s]["values"] for s in r.seeds],
                                             [r.frozen, sorted(r.frozen_at), sorted(r.checked)]) for r in reports}
        index = read_cache(folder / "index.json", {})
        self.index = index if isinstance(index, dict) else {}
        self.unwritable = False  # the pack could not be written: the index is not either
        self.extras: set = set()  # urls of pages made from others, seen by this build

    # -- reading ------------------------------------------------------------------------------

    def load(self, page: Page, nav: Nav, key: str) -> Built | None:
        """The page as the last build left it, if its inputs are the same; None otherwise."""
        try:
            entry = self.index.get(page.url)
            if not isinstance(entry, dict) or entry.get("key") != key:
                return None
            if any(self.report_digest.get(name) != d for name, d in entry["experiments"].items()):
                return None
            built = Built(page, nav, key, Collected.from_json(entry["collected"]), None)
            built.sizes = {tuple(k.split(" ", 1)): tuple(v) for k, v in entry["figures"].items()}
            built.resolved = entry["resolved"]
            built.stamp = entry.get("file")
        except (KeyError, TypeError, ValueError, AttributeError):  # a damaged entry is a miss
            return None
        return built

    def body(self, built: Built) -> str | None:
        """A cached page's body HTML, from the pack; None when it cannot be read back intact."""
        try:
            offset, length, sha = self.index[built.page.url]["body"]
            fd = os.open(self.folder / "bodies.pack", os.O_RDONLY | os.O_NONBLOCK)  # (a FIFO: no wait)
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode) or length > INPUT_LIMIT:
                    return None
                f.seek(offset)
                data = f.read(length)
            if digest(data, length=16) != sha:
                return None
            return data.decode("utf-8")
        except (OSError, KeyError, TypeError, ValueError):
            return None

    def unchanged_file(self, built: Built, sizes: dict, resolved: dict, out: Path) -> bool:
        """A cached page whose figures kept their sizes, whose {ref}s name the same numbers, and whose file in
        the output is the one written for it: nothing to render, nothing to write."""
        return (not built.parsed and built.resolved == resolved and built.stamp is not None
                and all(tuple(built.sizes.get((fid, built.lang), ())) == tuple(sizes.get((fid, built.lang), ()))
                        for fid, _ in built.collected.figures)
                and _file_stamp(out / built.page.url) == built.stamp)

    # -- pages made from other pages (the side-by-side pages) ---------------------------------

    def unchanged_extra(self, url: str, key: str, out: Path) -> bool:
        """A page made from others (key: theirs) whose file in the output is the one written for that key."""
        self.extras.add(url)
        entry = self.index.get(url)
        return isinstance(entry, dict) and entry.get("key") == key and entry.get("file") is not None \
            and _file_stamp(out / url) == entry["file"]

    def store_extra(self, url: str, key: str) -> None:
        self.extras.add(url)
        self.index[url] = {"key": key, "file": None}

    # -- writing ------------------------------------------------------------------------------

    def store(self, built: Built, sizes: dict) -> None:
        """Record a page rendered by this build (its body goes to the pack when the cache is saved)."""
        self.index[built.page.url] = {
            "key": built.key, "collected": built.collected.to_json(),
            "experiments": {name: self.report_digest.get(name) for name in built.collected.experiments},
            "figures": {f"{fid} {built.lang}": sizes.get((fid, built.lang)) for fid, _ in built.collected.figures},
            "resolved": built.resolved, "body": self.index.get(built.page.url, {}).get("body"),
            "file": None, "_new_body": built.body if built.parsed else None}

    def pack(self, built: list[Built]) -> None:
        """Append the bodies of the pages this build parsed to the pack (a build does it while its workers
        render; save does it if nothing did). An unwritable cache only means more work next time."""
        pages = {b.page.url for b in built} | self.extras
        fresh = {url: e.pop("_new_body") for url, e in self.index.items()
                 if isinstance(e, dict) and e.get("_new_body") is not None}
        if not fresh:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            pack = self.folder / "bodies.pack"
            live = sum(e["body"][1] for url, e in self.index.items()
                       if url in pages and url not in fresh and isinstance(e, dict) and e.get("body"))
            size = pack.stat().st_size if pack.exists() else 0
            if size > 2 * live + (1 << 20):  # mostly garbage: start the pack again with what lives
                kept = {url: self.body(b) for url, b in ((b.page.url, b) for b in built) if url not in fresh}
                if None in kept.values():
                    kept = {}  # cannot be read back: those pages will be parsed again
                fresh.update(kept)
                pack.unlink(missing_ok=True)
                size = 0
                for url in {b.page.url for b in built} - set(fresh):
                    self.index.pop(url, None)
            with open(pack, "ab") as f:
                for url, body in fresh.items():
                    data = body.encode("utf-8")
                    f.write(data)
                    self.index[url]["body"] = [size, len(data), digest(data, length=16)]
                    size += len(data)
        except OSError:
            self.unwritable = True

    def save(self, built: list[Built], out: Path) -> None:
        """After the site is written: pack new bodies (if not yet), note how each page's file looks, write the
        index. An unwritable cache only means more work next time."""
        self.pack(built)
        if self.unwritable:
            return
        pages = {b.page.url for b in built} | self.extras
        for url in list(self.index):
            if url not in pages:
                del self.index[url]
            else:
                self.index[url]["file"] = _file_stamp(out / url)
        write_cache(self.folder / "index.json", self.index)
