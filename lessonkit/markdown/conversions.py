"""Conversions kept between builds (LaTeX to MathML, code to highlighted HTML): a page edit then
needs neither converter (starting Temml in QuickJS costs about 30 ms; Pygments compiles a lexer's
patterns on first use, about 75 ms). An entry is valid only for the converter version and the
code around it that made it; anything unreadable is a miss."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lessonkit.io import read_cache, write_cache


class Memo:
    def __init__(self, made_by: Callable[[], str]):
        self.made_by = made_by
        self.path: Path | None = None
        self.data: dict = {}
        self.dirty = False

    def open(self, path: Path) -> None:
        if path == self.path:
            return
        self.path, self.dirty = path, False
        stored = read_cache(path, {})
        entries = stored.get("entries") if isinstance(stored, dict) and stored.get("made_by") == self.made_by() else {}
        self.data = {k: v for k, v in entries.items() if isinstance(v, str)} if isinstance(entries, dict) else {}

    def get(self, key: str, make: Callable[[], str]) -> str:
        if key not in self.data:
            self.data[key] = make()
            self.dirty = True
        return self.data[key]

    def merge(self, entries: dict) -> None:
        """Entries made in worker processes."""
        if entries:
            self.data.update(entries)
            self.dirty = True

    def save(self) -> None:
        if self.path is not None and self.dirty:
            write_cache(self.path, {"made_by": self.made_by(), "entries": self.data})  # else made again next time
            self.dirty = False


