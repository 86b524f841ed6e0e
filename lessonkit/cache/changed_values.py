"""What a reader would see differently since the previous build: every shown value whose text changed.

After an experiment's code or parameters change, its numbers move; the build says which ones, as
shown, and on which pages, so that a change in a measurement never passes unnoticed.
"""

from __future__ import annotations

from pathlib import Path

from lessonkit.io import read_cache, write_cache


def changed_values(built: list, record: Path) -> list[str]:
    """Lines "key: old → new (pages)" against the previous build's record; the record is then updated."""
    now = {b.page.url: b.collected.shown for b in built}
    before = read_cache(record)  # None: a first build changes nothing
    if before is not None and not isinstance(before, dict):
        before = {}
    write_cache(record, now)
    if before is None:
        return []
    moves: dict = {}
    for url, shown in now.items():
        old = before.get(url)
        if not isinstance(old, dict):
            continue
        for key, text in shown.items():
            if key in old and old[key] != text:
                moves.setdefault((key.split(":")[0], old[key], text), []).append(url)
    return [f"{key}: {old} → {new} ({', '.join(urls)})" for (key, old, new), urls in sorted(moves.items())]
