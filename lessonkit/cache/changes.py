"""What a reader would see differently since the previous build: every shown value whose text changed.

After an experiment's code or parameters change, its numbers move; the build says which ones, as
shown, and on which pages, so that a change in a measurement never passes unnoticed.
"""

from __future__ import annotations

import json
from pathlib import Path


def changed_values(built: list, record: Path) -> list[str]:
    """Lines "key: old → new (pages)" against the previous build's record; the record is then updated."""
    now = {b.page.url: b.collected.shown for b in built}
    try:
        before = json.loads(record.read_text("utf-8"))
        if not isinstance(before, dict):
            before = {}
    except (OSError, ValueError):
        before = None  # a first build changes nothing
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps(now, ensure_ascii=False, sort_keys=True), "utf-8")
    except OSError:
        pass
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
