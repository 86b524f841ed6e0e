#!/usr/bin/env python3
"""What the sandbox costs: one experiment run (a process, the runner, the harness, one seed) with and without
bubblewrap, and the real course's experiments, each a median of several runs.

    .venv/bin/python bench/sandbox.py [--runs 9]

A run is what the build does for one job: write the experiment's code into a scratch folder, start the
runner (under bwrap when it is there), read the report back. The difference is bubblewrap's own start-up:
the namespaces, the mounts, its init process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lessonkit.load.content import LIMITS  # noqa: E402
from lessonkit.measure import experiments, runcache, sandbox  # noqa: E402
from lessonkit.versions import numeric_env  # noqa: E402

TRIVIAL = '''"""Nothing: the cost of a run itself."""
import sys
import harness
NAME = "trivial"
PARAMS = {}
def run(seed):
    return {"x": 1}
CLAIMS = []
if __name__ == "__main__":
    harness.run_as_script(sys.modules[__name__])
'''


def job_for(name: str, source: str | None = None) -> experiments.Job:
    sources = {"harness.py": (REPO / "experiments" / "harness.py").read_text("utf-8"),
               "runner.py": runcache.RUNNER.read_text("utf-8"),
               "criteria.py": runcache.CRITERIA.read_text("utf-8")}
    if source is None:
        path = REPO / "experiments" / f"{name}.py"
        sources |= {p.name: p.read_text("utf-8") for p in runcache.local_sources(path)}
    else:
        sources[f"{name}.py"] = source
    return experiments.Job(name, f"{name}.py", sources, [0], 120.0, LIMITS, numeric_env())


def median_seconds(job: experiments.Job, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = experiments.run_job(job)
        times.append(time.perf_counter() - start)
        if result["failure"] or not result["reports"]:
            raise SystemExit(f"{job.name}: {result['failure'] or 'no report'}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    if not sandbox.isolated():
        raise SystemExit("bubblewrap is not available here: nothing to compare (apt-get install bubblewrap)")
    jail = sandbox.bwrap
    jobs = [("trivial", job_for("trivial", TRIVIAL))] + [(n, job_for(n)) for n in
                                                          ("multires", "heads", "headcost", "kvcache", "prenorm")]
    print(f"median of {args.runs} runs, one seed each, one at a time")
    print(f"{'experiment':<12} {'bubblewrap':>11} {'without':>9} {'cost':>8}")
    for name, job in jobs:
        with_ = median_seconds(job, args.runs)
        sandbox.bwrap = lambda: None  # the same run, without the sandbox
        try:
            without = median_seconds(job, args.runs)
        finally:
            sandbox.bwrap = jail
        print(f"{name:<12} {with_ * 1000:>9.0f} ms {without * 1000:>6.0f} ms {(with_ - without) * 1000:>+6.0f} ms")


if __name__ == "__main__":
    main()
