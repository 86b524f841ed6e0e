"""Conversions kept between builds (LaTeX to MathML, code to highlighted HTML): a page edit then
needs neither converter (starting Temml in QuickJS costs about 30 ms; Pygments compiles a lexer's
patterns on first use, about 75 ms). An entry is valid only for the converter version and the
code around it that made it; anything unreadable is a miss."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


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
        try:
            stored = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            stored = {}
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
            payload = {"made_by": self.made_by(), "entries": self.data}
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_text(json.dumps(payload, ensure_ascii=False, sort_keys=True), "utf-8")
            except OSError:
                pass  # made again next time
            self.dirty = False


def source_digest(*files: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    for f in files:
        h.update(f.read_bytes())
    return h.hexdigest()[:12]
