"""Write the site atomically: build into a sibling folder, swap it in only when complete.

At every instant the output folder is the old site or the new one: on Linux the two folders
are exchanged in one rename (renameat2 with RENAME_EXCHANGE); elsewhere, or on a file system
that cannot, the old folder is renamed away and the new one in, a gap of one rename. Folders
left by a build that was killed are removed by the next one (builds of a course take turns:
see `lock`). New folders and files follow the umask, as any build tool's do.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
from pathlib import Path

from lessonkit.errors import BuildError

# The site's manifest: what --check reads back, and what marks a folder as a site this tool may replace.
MANIFEST = "lessonkit.json"

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2); False where that is not available."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _leftovers(out: Path) -> list[Path]:
    return [p for p in out.parent.glob(f".{out.name}.new-*")] + [p for p in out.parent.glob(f".{out.name}.old-*")]


KEEP = None  # in `files`: the file the current site holds at this path stays as it is
WRITTEN = object()  # in `files`: put into the staging folder already (Staging.put)


class Staging:
    """The next site, made in a folder beside the current one (`out`) and swapped in whole by write().
    Left without a write (an error, an interrupt), the folder is removed and `out` stays as it was."""

    def __init__(self, out: Path):
        self.out = out.resolve()
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            for stale in _leftovers(self.out):  # from a build that was killed: builds take turns, so none is ours
                shutil.rmtree(stale, ignore_errors=True)
            self.path = self.out.parent / f".{self.out.name}.new-{secrets.token_hex(4)}"
            self.path.mkdir()
        except OSError as exc:
            raise BuildError(f"cannot write the site next to {self.out}: {exc.strerror}", self.out) from None
        self._empty: set[str] = set()  # files made ahead by prepare(), not yet written
        self._folders: set[Path] = {self.path}

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc) -> None:
        if self.path.exists():
            shutil.rmtree(self.path, ignore_errors=True)

    def prepare(self, names) -> None:
        """Create these files, empty, ahead of their contents. Creating a file is most of what writing a small
        one costs (on ext4, soon after many files were deleted, about a millisecond each), and it can be done
        while the pages are still being made. A file that cannot be made now is made when it is written."""
        for rel in names:
            target = self.path / rel
            try:
                self._folder(target.parent)
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except OSError:
                return
            self._empty.add(rel)

    def put(self, rel: str, data: bytes) -> None:
        """One file of the new site (a worker process may put files too; the parent then marks them WRITTEN)."""
        try:
            self._put(rel, data)
        except OSError as exc:
            raise self._failed(exc) from None

    def write(self, files: dict, finish=None) -> None:
        """files maps a path inside the site ("zh/lesson-l5.html") to its bytes, KEEP or WRITTEN; finish(folder),
        if given, adds what is made from the written tree (the search index); then the new site is swapped in."""
        try:
            for rel, data in sorted(files.items()):
                if data is WRITTEN:
                    self._empty.discard(rel)
                else:
                    self._put(rel, data)
            for rel in sorted(self._empty, reverse=True):  # made ahead for a page that was not written after all
                os.unlink(self.path / rel)
                for folder in (self.path / rel).parents:
                    if folder == self.path or any(folder.iterdir()):
                        break
                    folder.rmdir()
            self._nothing_else(files)
            if finish is not None:
                finish(self.path)
            _swap(self.path, self.out)
        except OSError as exc:
            raise self._failed(exc) from None

    def _nothing_else(self, files: dict) -> None:
        """Only what the build put here is published: a file that appeared from elsewhere (author code
        writing where it should not) stops the build."""
        for folder, _, names in os.walk(self.path):
            for name in names:
                rel = os.path.relpath(os.path.join(folder, name), self.path).replace(os.sep, "/")
                if rel not in files:
                    raise BuildError(f"{rel} appeared in the new site, but the build did not write it (author code "
                                     f"writing outside its own folder?): nothing was published", self.out)

    def _failed(self, exc: OSError) -> BuildError:
        return BuildError(f"cannot write the site: {exc.strerror}: {exc.filename or self.out}", self.out)

    def _put(self, rel: str, data: bytes | None) -> None:
        target, previous = self.path / rel, self.out / rel
        made = rel in self._empty
        self._empty.discard(rel)
        if not made:
            self._folder(target.parent)
        # An unchanged file is linked from the current site instead of written again: the
        # swap replaces whole trees, so the old tree never sees a changed file.
        if data is KEEP:
            if made:
                os.unlink(target)
            os.link(previous, target)
            return
        if not made and _same(previous, data):
            try:
                os.link(previous, target)
                return
            except OSError:
                pass
        with open(target, "wb") as f:
            f.write(data)

    def _folder(self, folder: Path) -> None:
        if folder not in self._folders:
            folder.mkdir(parents=True, exist_ok=True)
            self._folders.add(folder)


def _swap(staging: Path, out: Path) -> None:
    if not out.exists():
        os.rename(staging, out)
    elif _exchange(staging, out):
        shutil.rmtree(staging, ignore_errors=True)  # now the old site
    else:
        old = out.parent / f".{out.name}.old-{secrets.token_hex(4)}"
        os.rename(out, old)
        os.rename(staging, out)
        shutil.rmtree(old, ignore_errors=True)


def _same(path: Path, data: bytes) -> bool:
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False
