#!/usr/bin/env python3
"""Build the course site: content + experiments -> site/.

This course's own command: `python build.py [options]`, the same as the `lessonkit` console script run in
this folder (lessonkit/command.py holds the command line). Run with a Python that lacks the dependencies,
it runs again with the course's .venv.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def _dependencies_or_venv(argv) -> None:
    """Run with the project's .venv when this Python lacks the dependencies (authors type `python build.py`)."""
    import importlib.util

    if all(importlib.util.find_spec(name) for name in ("jinja2", "markdown_it", "mdit_py_plugins", "yaml")):
        return
    venv = ROOT / ".venv" / "bin" / "python"
    if venv.is_file() and Path(sys.prefix).resolve() != venv.parent.parent.resolve():
        os.execv(venv, [str(venv), str(Path(__file__).resolve()), *(sys.argv[1:] if argv is None else argv)])
    print("error: this Python lacks the build's dependencies: run `make site` (it makes .venv), or "
          "`pip install -e .`", file=sys.stderr)
    sys.exit(1)


def main(argv=None) -> int:
    _dependencies_or_venv(argv)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from lessonkit import command

    return command.main(argv, default_root=ROOT)


if __name__ == "__main__":
    sys.exit(main())
