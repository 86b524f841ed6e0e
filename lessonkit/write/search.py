"""The search index: Pagefind (from PyPI, run offline) over the finished pages, one index per language."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lessonkit.errors import BuildError


def _command() -> list[str]:
    """Pagefind's own binary from its PyPI package; `python -m pagefind` (50 ms slower) otherwise."""
    import importlib.util

    spec = importlib.util.find_spec("pagefind_bin_extended")
    if spec and spec.submodule_search_locations:
        binary = Path(next(iter(spec.submodule_search_locations))) / "pagefind_extended"
        if binary.is_file():
            return [str(binary)]
    return [sys.executable, "-m", "pagefind"]


def index(site: Path) -> None:
    """Write site/pagefind/. Pagefind splits the index by each page's <html lang>."""
    proc = subprocess.run([*_command(), "--site", str(site), "--output-subdir", "pagefind", "--quiet"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()
        raise BuildError(f"search index failed: {last[-1] if last else 'pagefind exited ' + str(proc.returncode)}",
                         "pagefind")
    # Pagefind lists the languages in no fixed order; sort them so that builds are byte-identical.
    entry = site / "pagefind" / "pagefind-entry.json"
    data = json.loads(entry.read_text("utf-8"))
    entry.write_text(json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False), "utf-8")


class Search:
    """The search index as an output (lessonkit/load/plugins.py): made over the finished pages."""

    name = "search"

    def output(self, folder: Path, site: dict, say) -> None:
        say(f"indexing {site['html_files']} pages for search")
        index(folder)
