"""Write the site atomically: build into a sibling folder, swap it in only when complete."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_site(files: dict[str, bytes], out: Path, finish=None) -> None:
    """files maps a path inside the site ("zh/lesson-l5.html") to its bytes; finish(staging),
    if given, adds what is made from the written tree (the search index) before the swap."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    try:
        for rel, data in sorted(files.items()):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            previous = out / rel
            # An unchanged file is linked from the current site instead of written again: the
            # swap below replaces whole trees, so the old tree never sees a changed file.
            if _same(previous, data):
                os.link(previous, target)
            else:
                target.write_bytes(data)
        if finish is not None:
            finish(staging)
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, old / "site")
        os.replace(staging, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _same(path: Path, data: bytes) -> bool:
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


def static_files(static_dir: Path) -> dict[str, bytes]:
    return {f"static/{p.relative_to(static_dir).as_posix()}": p.read_bytes()
            for p in sorted(static_dir.rglob("*")) if p.is_file()}
