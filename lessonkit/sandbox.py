"""Run author code (an experiment, figure recipes) in a process group of its own, with a time limit.

The process writes one line to its progress file per finished step; a step that takes longer
than the limit ends the run. Either way the whole process group is killed afterwards, so a
child the code started cannot outlive the build or hold it up. Output goes to a log file, never
to the build's terminal. Standard library only: it runs on Dask workers too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

# Runs go in parallel, one process per core: a BLAS that also spreads over every core would
# oversubscribe them (OpenBLAS threads spin; a 20-seed sweep took 9 minutes instead of 15 s).
ONE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def supervise(cmd: list[str], cwd: Path, progress: Path, log: Path, timeout: float, env: dict | None = None) -> dict:
    """Run cmd; {"returncode", "timed_out", "signal"}. progress must exist; each line in it is a step done."""
    environ = {**ONE_THREAD, **os.environ, **(env or {}), "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONIOENCODING": "utf-8"}
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=environ, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True)
        timed_out, size, deadline = False, 0, time.monotonic() + timeout
        while True:
            try:
                proc.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            grown = progress.stat().st_size
            if grown != size:  # a step finished: the next one gets the whole time limit
                size, deadline = grown, time.monotonic() + timeout
            elif time.monotonic() > deadline:
                timed_out = True
                break
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the process and everything it started
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    code = proc.returncode
    return {"returncode": code, "timed_out": timed_out,
            "signal": signal.Signals(-code).name if code < 0 and not timed_out else None}


def ended_early(outcome: dict, what: str) -> str:
    """Why a run stopped before its last step, in words."""
    if outcome["signal"]:
        why = " (out of memory?)" if outcome["signal"] == "SIGKILL" else ""
        return f"killed by {outcome['signal']}{why}"
    return f"ended (exit status {outcome['returncode']}) before {what}"
