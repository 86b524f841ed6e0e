"""One build of a course at a time: a lock file in its .cache/, held for the whole build."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path


@contextmanager
def lock(cache: Path, say=print):
    """One build of a course at a time: a second one waits for the first (and says so)."""
    import fcntl

    from lessonkit.io import refuse_links_out

    refuse_links_out(cache.parent, cache.name)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        handle = open(cache / "build.lock", "a+")  # noqa: SIM115 (held for the whole build)
    except OSError:  # a read-only course still builds, unguarded
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say("another build of this course is running: waiting for it to finish")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
