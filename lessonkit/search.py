"""The search index: Pagefind (from PyPI, run offline) over the finished pages, one index per language."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .errors import BuildError


def index(site: Path) -> None:
    """Write site/pagefind/. Pagefind splits the index by each page's <html lang>."""
    proc = subprocess.run([sys.executable, "-m", "pagefind", "--site", str(site), "--output-subdir", "pagefind",
                           "--quiet"], capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()
        raise BuildError(f"search index failed: {last[-1] if last else 'pagefind exited ' + str(proc.returncode)}",
                         "pagefind")
    # Pagefind lists the languages in no fixed order; sort them so that builds are byte-identical.
    entry = site / "pagefind" / "pagefind-entry.json"
    data = json.loads(entry.read_text("utf-8"))
    entry.write_text(json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False), "utf-8")
