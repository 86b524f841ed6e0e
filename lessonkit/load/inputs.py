"""Skip a build when nothing changed: a fingerprint of every input, standard library only.

It is read before anything heavy is imported, so a no-op rebuild costs about
Python's start-up. File sizes and modification times stand for contents, as
make does; the page and experiment caches still compare contents.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from lessonkit.io import read_cache, write_cache

# The folders of a course that hold its inputs: the one list of them (the engine's own code is an input too).
INPUTS = ("content", "experiments", "figures", "templates", "results")  # results: frozen reports


# What editors and merges leave beside a file while it is saved or after: Emacs' #name#, Kate's and
# Chrome's swap files, .orig/.rej/.bak/.swp copies, and the file Vim writes to test a folder (4913, then
# 4913 + 123 k while that name is taken; a page or folder named 2024 is a course's).
_LEFTOVERS = (".kate-swp", ".crswap", ".orig", ".rej", ".bak", ".swp", ".swx", ".tmp")


def skipped(name: str) -> bool:
    """The one rule for which files of a course are not inputs: hidden (.name), Python's caches, editors'
    backups and swap files (name~, #name#, _LEFTOVERS, 4913). The fingerprint, the preview's watcher, the
    page loader and the static copier all follow it, so a file is either read by the build and watched,
    or neither."""
    return (name.startswith(".") or name == "__pycache__" or name.endswith(("~", *_LEFTOVERS))
            or (name.isdigit() and int(name) >= 4913 and (int(name) - 4913) % 123 == 0)
            or (name.startswith("#") and name.endswith("#")))


def _walk(folder: Path, h) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):  # (a file where a folder belongs: the load stage says so)
        return
    for entry in entries:
        if skipped(entry.name):
            continue
        if entry.is_dir(follow_symlinks=False):
            _walk(Path(entry.path), h)
        else:
            try:
                st = entry.stat()
            except OSError:  # a link to nothing (or a loop): the stage that reads it says so in one line
                h.update(f"{entry.path}\0{os.readlink(entry.path) if entry.is_symlink() else '?'}\n".encode())
                continue
            h.update(f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())


def fingerprint(root: Path, engine: Path, options: dict) -> str:
    """engine: the folder that holds the lessonkit package (the checkout, or site-packages)."""
    h = hashlib.sha256()
    for name in INPUTS:
        _walk(root / name, h)
    _walk(engine / "lessonkit", h)
    default_theme = (engine / "lessonkit" / "theme").resolve()  # theme.DEFAULT, not imported: this runs early
    if (root / "templates").resolve() != default_theme:
        _walk(default_theme, h)
    h.update(f"{sys.version} {sys.prefix}".encode())
    # Installing or removing a package touches site-packages itself.
    for path in sys.path:
        if path.endswith("site-packages") and os.path.isdir(path):
            h.update(f"{path} {os.stat(path).st_mtime_ns}".encode())
    h.update(json.dumps(options, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _out_mark(out: Path) -> str | None:
    """The output as the last build left it: its manifest, and how many files it holds."""
    try:
        st = (out / "lessonkit.json").stat()  # output.MANIFEST, not imported: this runs before anything heavy
    except FileNotFoundError:
        return None
    count = sum(len(files) for _, _, files in os.walk(out))
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ino} {count}"


def up_to_date(stamp_file: Path, print_: str, out: Path) -> bool:
    saved = read_cache(stamp_file)
    return isinstance(saved, dict) and saved.get("fingerprint") == print_ and saved.get("out") == _out_mark(out)


def record(stamp_file: Path, print_: str, out: Path) -> None:
    # An unwritable cache only means the next build does not know it could stop early.
    write_cache(stamp_file, {"fingerprint": print_, "out": _out_mark(out)})


def forget(stamp_file: Path) -> None:
    try:
        stamp_file.unlink(missing_ok=True)
    except OSError:
        pass

