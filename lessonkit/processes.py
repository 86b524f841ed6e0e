"""Work spread over forked processes, for the stages that make many pages (parse, render).

    with processes.Pool(make, count, workers) as pool:   # the workers start on make(0) … make(count - 1)
        ...                                               # the parent's own work, meanwhile
    results = pool.results                                # in order, once the block ends

make is inherited by the forked workers, not pickled; what it returns travels back. A worker's failure
comes back as a one-line BuildError. With one worker, everything runs here when the block starts.
Results are the same either way: a test compares a serial and a parallel build byte for byte.
"""

from __future__ import annotations

import os

from lessonkit.errors import BuildError

# Below this many items, forking workers costs more than it saves.
PARALLEL_MIN = 24


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def workers_for(jobs: int | None, count: int, fork: bool = True) -> int:
    """How many processes `count` items are worth: one below PARALLEL_MIN, or when the caller must not fork
    (a preview server has threads)."""
    if count < PARALLEL_MIN or not fork:
        return 1
    return max(1, min(jobs or cores(), count // (PARALLEL_MIN // 2)))


class Pool:
    def __init__(self, make, count: int, workers: int):
        self.make, self.count, self.workers = make, count, workers
        self.results: list = []
        self._pool = self._pending = None

    def __enter__(self) -> Pool:
        if self.workers == 1:
            self.results = [self.make(i) for i in range(self.count)]
            return self
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # The initializer's arguments reach a forked worker as they are, so make travels without pickling.
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("fork"),
                                         initializer=_adopt, initargs=(self.make,))
        # Every worker is forked once map has handed out the work: the parent may not fork after this.
        self._pending = self._pool.map(_make_one, range(self.count),
                                       chunksize=max(1, self.count // (self.workers * 4)))
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if self._pool is None:
            return
        try:
            if kind is None:
                self.results = list(self._pending)
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)


_make = None  # set in each forked worker by _adopt, never in the parent


def _adopt(make) -> None:
    global _make
    _make = make


def _make_one(i: int):
    try:
        return _make(i)
    except BuildError:
        raise
    except Exception as exc:
        raise BuildError(f"internal error: {type(exc).__name__}: {exc}") from None
