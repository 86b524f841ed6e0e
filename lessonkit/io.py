"""Files and hashes, one way each, for every stage: the digest, the digest of files, the atomic write, and
the JSON cache file that is a miss when unreadable or not sealed by this user's builds. Standard library only: the no-op check imports it."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path

# Bytes any one file of a course may hold: every input is read whole, and a 2 GB results/*.json, static file
# or .bib ended the build in a MemoryError.
INPUT_LIMIT = 64 * 2**20
STATIC_LIMIT = 512 * 2**20  # a static file (a lecture's video) is published as it is: it may be larger


def digest(*parts, length: int = 24) -> str:
    """SHA-256 of the parts, hex, the first `length` digits. Text is hashed as UTF-8, bytes as they are,
    anything else as sorted JSON; parts are kept apart. One text part is the hash of that text alone."""
    h = hashlib.sha256()
    for i, part in enumerate(parts):
        if i:
            h.update(b"\0")
        if isinstance(part, str):
            part = part.encode("utf-8")
        elif not isinstance(part, bytes):
            part = json.dumps(part, sort_keys=True, default=str, ensure_ascii=False).encode()
        h.update(part)
    return h.hexdigest()[:length]


def files_digest(*paths: Path, skip=lambda name: False, length: int = 24) -> str:
    """The names and contents of the files, and of every file below the folders, except where skip(name)
    holds for a part of its path below the folder. A file past STATIC_LIMIT counts by its size: the stage
    that reads it refuses it, at its place (reading it here cost a 2 GB sparse file 16 s first)."""
    h = hashlib.sha256()
    for top in paths:
        files = [top] if top.is_file() else sorted(
            p for p in top.rglob("*") if p.is_file() and not any(skip(x) for x in p.relative_to(top).parts))
        for p in files:
            try:
                data = read_input(p, STATIC_LIMIT)
            except Refused:
                data = f"\0refused {p.stat().st_size}".encode()
            h.update(str(p.relative_to(top.parent)).encode() + b"\0" + data + b"\0")
    return h.hexdigest()[:length]


class Refused(OSError):
    """A course file read_input will not read: not a regular file, or larger than its limit."""


def read_input(path: Path, limit: int = INPUT_LIMIT) -> bytes:
    """A course file, whole, within bounds: a regular file (a FIFO would block the build, a device never end) of
    at most `limit` bytes, checked before reading and while (it may grow). Refused (an OSError) saying why."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(errno.EINVAL, "not a regular file (a FIFO, a socket or a device?)")
        data = f.read(limit + 1) if info.st_size <= limit else b""
        if info.st_size > limit or len(data) > limit:
            raise Refused(errno.EFBIG, f"larger than {limit // 2**20} MiB, the most the build reads of one file")
        return data


def refuse_links_out(root: Path, *names: str) -> None:
    """The folders a build writes into (.cache, results/) are the course's own: one that is a link leading
    outside the course would have the build write through it, so it is refused before anything is written."""
    from lessonkit.errors import BuildError

    top = root.resolve()
    for name in names:
        path = root / name
        if path.is_symlink() and not path.resolve().is_relative_to(top):
            raise BuildError("a link to a folder outside the course; the build would write through it: refused "
                             "(make it a folder of the course)", name)


def remove_tree(path: Path) -> None:
    """Remove a folder and all below it, however deep, and never raise: what is left is litter, not an error.
    shutil.rmtree recurses (5,000 levels end in RecursionError, and their paths pass PATH_MAX), so each
    subfolder is first moved up beside the folder (a rename, whatever its depth) and removed in its turn;
    the moved names keep the folder's name as their start, so a later sweep finds what an interrupted one left."""
    todo, moved = [path], 0
    while todo:
        top = todo.pop()
        try:
            with os.scandir(top) as entries:
                for entry in list(entries):
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            moved += 1
                            beside = path.with_name(f"{path.name}-{moved}")
                            os.rename(entry.path, beside)
                            todo.append(beside)
                        else:
                            os.unlink(entry.path)
                    except OSError:
                        continue
            os.rmdir(top)
        except OSError:
            continue


def write_atomic(path: Path, data: bytes, *, new: bool = False) -> None:
    """Write a file whole or not at all: a temporary file beside it, synced, then renamed over it (new: only if
    no file is there). On a full disk or a failing write the old file stays exactly as it was."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if new:
            os.link(tmp, path)  # fails if the file exists: never overwrite
        else:
            os.replace(tmp, path)
        try:
            folder = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)
        except OSError:
            pass
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


_KEY: dict = {}  # this user's sealing key, read once per process


def _seal_key() -> bytes:
    """A secret of this user on this machine, kept outside every course (~/.cache/lessonkit/seal.key): a
    course that arrives with a .cache/ made elsewhere, or written by hand, has no entry it accepts. Where
    that folder cannot be written, a key of this process's own (caches then last one build)."""
    if "key" not in _KEY:
        key = os.urandom(32)
        try:
            base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lessonkit"
            path = base / "seal.key"
            try:
                kept = read_input(path, 64)
            except OSError:
                kept = b""
            if len(kept) == 32:
                key = kept
            else:  # none yet, or a damaged one: a whole new key, put in place at once (never half written)
                base.mkdir(parents=True, exist_ok=True, mode=0o700)
                tmp = base / f".seal.key.{os.getpid()}"
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(key)
                try:
                    if os.path.lexists(path):
                        os.replace(tmp, path)
                    else:
                        os.link(tmp, path)  # two first builds at once: one key wins, the other reads it
                except FileExistsError:
                    kept = read_input(path, 64)
                    key = kept if len(kept) == 32 else key
                finally:
                    tmp.unlink(missing_ok=True)
        except (OSError, RuntimeError):  # no home, or one that cannot be written: this process's own key
            pass
        _KEY["key"] = key
    return _KEY["key"]


def _seal(body: bytes) -> bytes:
    import hmac

    return hmac.new(_seal_key(), body, hashlib.sha256).hexdigest().encode()


def read_sealed(path: Path):
    """(content, None) of a JSON cache file this user's builds wrote, else (None, why): "missing",
    "unreadable" or "not sealed here" (made on another machine, or changed since it was written)."""
    import hmac

    try:
        seal, _, body = read_input(path).partition(b"\n")  # (a FIFO or /dev/zero in a .cache/ is no entry)
    except FileNotFoundError:
        return None, "missing"
    except OSError:
        return None, "unreadable"
    if not hmac.compare_digest(seal, _seal(body)):
        return None, "not sealed here"
    try:
        return json.loads(body.decode("utf-8")), None
    except ValueError:
        return None, "unreadable"


def read_cache(path: Path, default=None):
    """A JSON cache file's content, or default when it is missing, unreadable or not sealed by this user's
    builds (a cache miss, never an error)."""
    data, why = read_sealed(path)
    return default if why else data


def write_cache(path: Path, data) -> bool:
    """Store a JSON cache file whole (a reader never sees half of one), sealed with this user's key. False
    when it cannot be written, e.g. in a read-only course: a cache only saves time, so the build goes on."""
    body = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(_seal(body) + b"\n" + body)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        return False
