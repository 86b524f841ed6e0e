"""Run the experiments over a set of seeds, in parallel, a job (some seeds) to a process, with a cache.

A run is one experiment on one seed. Its cache entry is keyed by the experiment's code
(its file and the sibling modules it imports), the seed, the Python and numpy versions
and the environment variables that choose numpy's and the BLAS's kernels. An entry records
the SHA-256 of its report: one that does not match, or cannot be read, is a miss and the
experiment runs again. A hit reads one JSON file and imports nothing heavy.

An experiment with a frozen file for the same code (results/NAME.json, see frozen.py) takes its
reports from there and runs only a sample of seeds again, to compare.

The runs go to a concurrent.futures executor (see executors.py) as jobs: an experiment and
some seeds, with a copy of its code, so that a Dask worker needs nothing but Python and
numpy. A job kills the whole process group of a run that passes the time limit.
"""

from __future__ import annotations

import json
import re
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from lessonkit.errors import BuildError
from lessonkit.io import remove_tree
from lessonkit.measure import frozen, hostfacts, provenance, sandbox
from lessonkit.measure.runcache import (
    CRITERIA,
    RUNNER,
    cache_key,
    code_hash,
    forget,
    load_cached,
    local_sources,
    report_digest,
    runner_hash,
    source_text,
    store,
)
from lessonkit.versions import numeric_env

EXECUTOR_GRACE = 60.0  # seconds past every run's own time limit that a build waits for an executor's answer


@dataclass
class Report:
    """One experiment over the seed set: the course seed's report (`data`) and every seed's."""

    name: str
    path: Path  # the experiment file, relative to the course root
    seeds: list  # seeds[0] is the course seed: the pages show its numbers
    runs: dict  # seed -> report
    digests: dict  # seed -> SHA-256 of the report
    ran: int = 0  # runs made by this build (the rest came from the cache)
    code_hash: str = ""
    parameters: dict = field(default_factory=dict)  # value id (or pattern) -> ("set" | "computed", line)
    frozen: str = ""  # the hash of the frozen file the runs came from ("": they were measured or cached)
    frozen_seeds: int = 0
    checked: dict = field(default_factory=dict)  # seed -> report: frozen seeds run again, compared with the frozen
    frozen_at: set = field(default_factory=set)  # the seeds whose report came from the frozen file
    produced_by: dict = field(default_factory=dict)  # what the runs depend on (frozen.produced_by)
    file: Path | None = None  # the experiment file itself (path is relative to the course)

    @property
    def data(self) -> dict:
        return self.runs[self.seeds[0]]


@dataclass
class Job:
    """What a worker needs to run an experiment: its code, the seeds, the time limit."""

    name: str
    entry: str  # the experiment file's name inside `sources`
    sources: dict  # file name -> text: the experiment, the modules it imports, the runner
    seeds: list
    timeout: float
    limits: dict  # site.yaml's limits: memory_mb, processes, disk_mb
    env: dict = field(default_factory=dict)
    twin: bool = False  # its last seed is the course seed run again, to compare with its first run
    isolated_only: bool = False  # --strict: where it runs (a Dask worker too) must isolate it, or it does not run


# -- one job, on whatever machine runs it -----------------------------------------------------

def run_job(job: Job) -> dict:
    """Run the job's seeds; {"reports": [...], "failure": {...} or None, "log": str}.

    Self-contained (with sandbox.py): it runs on a Dask worker as well as here.
    """
    if job.isolated_only and not sandbox.isolated():  # checked where the job runs, not only where it was made
        return {"reports": [], "log": "", "isolated": False, "failure": {
            "message": "the worker it ran on cannot isolate author code (no working bubblewrap there), which "
                       "--strict refuses; nothing of it ran", "seed": job.seeds[0]}}
    work = sandbox.scratch(job.name)
    try:
        for name, text in job.sources.items():
            (work / name).write_text(text, "utf-8")
        reports_file, log_file = work / "reports.jsonl", work / "log.txt"
        reports_file.touch()
        outcome = sandbox.supervise([sys.executable, str(work / "runner.py"), str(work / job.entry),
                                     str(reports_file), *map(str, job.seeds)],
                                    work, reports_file, log_file, job.timeout, len(job.seeds), job.limits,
                                    job.env)
        reports, failure = [], None
        isolated = outcome["isolated"]
        try:
            written = sandbox.read_back(reports_file).decode("utf-8", "replace")
        except OSError:
            written, failure = "", {"message": "the experiment removed or replaced the runner's report file",
                                    "line": None}
        for line in filter(None, written.split("\n")):  # (not splitlines: U+2028 in a text is no line's end)
            try:
                item = json.loads(line)
            except ValueError:
                item = None
            if not isinstance(item, dict) or ("report" in item and not _report_shape(item["report"])) or \
                    ("failure" in item and not sandbox.written_failure(item["failure"])):
                failure = {"message": "the experiment wrote into its report file", "line": None}
                break
            if "failure" in item:
                failure = item["failure"]
            elif "report" in item:
                reports.append(item["report"])
        done = {r.get("seed") for r in reports}
        pending = next((s for s in job.seeds if s not in done), None)
        if outcome["limit"]:  # what the run wrote last may be the effect, not the cause
            failure = {"message": sandbox.over_limit(outcome["limit"], job.limits), "seed": pending, "limit": True}
        elif failure is None and outcome["timed_out"]:
            failure = {"message": "timed out", "seed": pending, "timeout": True}
        elif failure is None and pending is not None:
            failure = {"message": sandbox.ended_early(outcome, f"reporting seed {pending}"), "seed": pending}
        try:
            log = sandbox.read_back(log_file, tail=16000).decode("utf-8", "replace")[-4000:]
        except OSError:
            log = ""
        return {"reports": reports, "failure": failure, "log": log, "isolated": isolated}
    finally:
        remove_tree(work)


def _report_shape(report) -> bool:
    """What the runner writes of a seed (the experiment may have rewritten the file: only the shape is kept)."""
    return (isinstance(report, dict) and type(report.get("seed")) is int and isinstance(report.get("values"), dict)
            and all(isinstance(k, str) for k in report["values"])
            and isinstance(report.get("claims", []), list) and all(isinstance(c, dict) for c in report.get("claims", []))
            and isinstance(report.get("lines", {}), dict))


def worker_versions() -> dict:
    """What a Dask worker measures with (run there: it is sent by value, like run_job)."""
    import platform

    import numpy

    return {"python": ".".join(platform.python_version_tuple()[:2]), "numpy": numpy.__version__}


# -- the sweep --------------------------------------------------------------------------------

def _chunks(seeds: list, parts: int) -> list[list]:
    parts = max(1, min(parts, len(seeds)))
    return [seeds[i::parts] for i in range(parts)]


def _jobs(missing: list, seeds: list, again: bool, workers: int) -> list[tuple[list, bool]]:
    """One experiment's runs as jobs (seeds, twin), about one per worker. With `again`, the course seed
    (seeds[0]) runs a second time at the end of a job that did not run it first, after another seed: it must
    give the same values in another process, and after other seeds as well as first (which catches a
    generator made once at import, or state a seed leaves behind, as well as the time and unseeded draws).
    Where no other seed is due (only the course seed is missing, or --check finds every seed cached), seeds[1]
    runs first in that job, again, and is compared with its cached report."""
    course = seeds[0]
    chunks = [chunk for chunk in _chunks(missing, workers) if chunk]
    if not again:
        return [(chunk, False) for chunk in chunks]
    others = [chunk for chunk in chunks if course not in chunk]
    if others:
        others[-1].append(course)
        return [(chunk, chunk is others[-1]) for chunk in chunks]
    if chunks and len(chunks[0]) > 1:  # one job held every seed: the course seed first, alone
        return [([course], False), ([s for s in chunks[0] if s != course] + [course], True)]
    lead = seeds[1:2]  # cached, run again so that the course seed comes after another seed
    return [*[(chunk, False) for chunk in chunks], (lead + [course], True)]


def run_all(root: Path, names: list[str], seeds: list[int], cache_dir: Path, *, force: bool = False,
            executor=None, timeout: float = 120.0, limits: dict, progress=lambda msg: None, twice: bool = False,
            policy: frozen.Policy | None = None, require_isolation: bool,
            failures: list | None = None, where: str = "") -> list[Report]:
    """Every experiment's reports over the seeds, from its frozen file or the cache where the inputs are unchanged.

    The course seed is run a second time, in another process and after another seed if there are several (see
    _jobs), whenever it runs (an experiment's first run after a change), and with twice=True (--check) even when
    it comes from the cache: the same seed must give the same values, or the experiment measures something
    besides its seed (the time, an unseeded generator, state an earlier seed left). A frozen experiment instead
    runs its first `policy.verify` seeds again (from the cache, unless twice) and must agree with its frozen
    file. `executor()` gives a context manager for (concurrent.futures.Executor, workers); it is only entered
    when something has to run. None: run here, one job after another. require_isolation: nothing runs
    where the sandbox cannot isolate it (--strict); every caller says which it wants. `where`: the executor, as
    the progress lines name it ("dask:local"; "" for this machine's processes). Given `failures`, an
    experiment that fails is one error there and is left out of what is returned, and the others still run;
    without, its error stops the sweep.
    """
    policy = policy or frozen.Policy()
    failed: dict[str, BuildError] = {}
    plans = []
    for name in names:
        try:
            plans.append(_plan(root, name, seeds, cache_dir, force, twice, policy, progress))
        except BuildError as exc:
            if failures is None:
                raise
            failed[name] = exc
    if any(missing or again for *_, missing, again in plans):
        with executor() if executor else nullcontext((None, 1)) as (pool, workers):
            _run_missing(plans, cache_dir, pool, workers, timeout, limits, progress, require_isolation,
                         None if failures is None else failed,
                         f" on {where}, {workers} worker{'s' if workers != 1 else ''}" if where else "")
    for report, *_ in plans:
        if report.name not in failed:
            try:
                _verified(report, progress)
            except BuildError as exc:
                if failures is None:
                    raise
                failed[report.name] = exc
    if failures is not None:
        failures += [failed[name] for name in names if name in failed]
    return [report for report, *_ in plans if report.name not in failed]


def _plan(root: Path, name: str, seeds: list, cache_dir: Path, force: bool, twice: bool, policy: frozen.Policy,
          progress) -> tuple:
    """One experiment's report, filled from its frozen file and the cache, and the seeds it must still run."""
    path = root / "experiments" / f"{name}.py"
    if not path.is_file():
        raise BuildError(f"experiment {name!r} is listed but {path.relative_to(root)} does not exist",
                         "content/site.yaml")
    code = code_hash(path)
    report = Report(name, path.relative_to(root), list(seeds), {}, {}, code_hash=code,
                    parameters=provenance.kept_parameters(source_text(path), cache_dir.parent / "parameters"),
                    produced_by=frozen.produced_by(code, runner_hash()), file=path)
    thawed = not force and _thaw(root, report, seeds, policy, progress)
    verify = [s for s in seeds[:policy.verify] if s in report.runs] if thawed else []
    fresh = force or name in policy.refresh
    for seed in seeds:
        if seed in report.runs and seed not in verify:
            continue
        hit = None if fresh or (twice and seed in verify) else \
            load_cached(cache_dir, name, seed, cache_key(code, seed), progress)
        if hit and seed in verify:
            report.checked[seed] = hit[0]
        elif hit:
            report.runs[seed], report.digests[seed] = hit
    unfrozen = [s for s in seeds if s not in report.runs]
    missing = unfrozen + [s for s in verify if s not in report.checked]
    if unfrozen and policy.only and name not in policy.refresh:
        raise BuildError(f"--frozen-only: experiment {name} would run on seed(s) {_seeds(unfrozen)}, which "
                         f"{frozen.path_of(root, name).relative_to(root)} does not hold: python build.py "
                         f"--freeze (or --refresh {name}) freezes them", report.path)
    again = not thawed and (seeds[0] in missing or twice)
    return report, path, missing, again


def _seeds(seeds: list) -> str:
    return ", ".join(map(str, seeds[:8])) + (" …" if len(seeds) > 8 else "")


def _thaw(root: Path, report: Report, seeds: list, policy: frozen.Policy, progress) -> bool:
    """Fill the report from its frozen file, if it has one for this code. Returns whether it did."""
    name = report.name
    if name in policy.refresh:
        return False
    found = frozen.read(root, name)
    if found is None:
        if policy.only:
            raise BuildError(f"--frozen-only: experiment {name} has no frozen results "
                             f"({frozen.path_of(root, name).relative_to(root)}): python build.py --freeze",
                             report.path)
        return False
    now = report.produced_by
    if found.hash != frozen.identity(now):
        why = frozen.stale_reason(found, now)
        if policy.only:
            raise BuildError(f"--frozen-only: {found.path} was frozen before {why} changed; "
                             f"python build.py --refresh {name} freezes it again", report.path)
        progress(f"warning: {found.path} was frozen before {why} changed: running {name} instead "
                 f"(python build.py --refresh {name} freezes it again)")
        return False
    if seeds[0] not in found.reports:  # the course seed is not frozen: the pages' numbers are measured here
        progress(f"warning: {found.path} does not hold seed {seeds[0]}, the course seed: running {name} instead")
        return False
    course = found.reports[seeds[0]]
    for seed in seeds:
        if seed in found.reports:
            # What the code writes (claims as stated, lines, parameters) is the same on every seed; the run
            # again compares the course seed's with the code itself.
            odd = frozen.same_code(course, found.reports[seed])
            if odd:
                raise BuildError(f"seed {seed}'s report differs from seed {seeds[0]}'s in {', '.join(odd)}, which "
                                 f"the code alone decides: edited? python build.py --refresh {name} runs it again",
                                 found.path, frozen.line_of(root, name, seed))
            data = {**found.reports[seed], "code_hash": report.code_hash}
            report.runs[seed], report.digests[seed] = data, report_digest(data)
            report.frozen_at.add(seed)
    report.frozen = found.hash
    report.frozen_seeds = sum(seed in found.reports for seed in seeds)
    return True


def _verified(report: Report, progress) -> None:
    """A frozen experiment's seeds run again must agree with the frozen reports, value by value."""
    if not report.frozen:
        return
    for seed, again in sorted(report.checked.items()):
        problems = frozen.differences(report.runs[seed], again, again.get("tolerance") or {})
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise BuildError(f"experiment {report.name}, seed {seed} run again disagrees with "
                             f"{frozen.FOLDER}/{report.name}.json: {problems[0]}{more}; run it by hand "
                             f"(python {report.path} --seed {seed}) or freeze it again "
                             f"(python build.py --refresh {report.name})", report.path,
                             report.runs[seed].get("lines", {}).get(problems[0].split(":")[0]))
    ran = [s for s in report.seeds if s not in report.frozen_at]
    checked = (f"seed {_seeds(sorted(report.checked))} as run on this machine agrees" if report.checked
               else "no seed run again (--verify 0)")
    extra = f"; seed(s) {_seeds(ran)} not frozen, run here" if ran else ""
    progress(f"{report.name}: frozen at {report.frozen}, {report.frozen_seeds} of {len(report.seeds)} seeds; "
             f"{checked}{extra}")


def _run_missing(plans, cache_dir: Path, pool, workers: int, timeout: float, limits: dict, progress,
                 required: bool, failed: dict | None = None, where: str = "") -> None:
    """Run what the plans miss. Given `failed`, an experiment's error goes there (name -> error) and the
    experiment's other jobs are dropped, while the other experiments go on; without, the first error stops all."""
    sandbox.check(progress, required=required)
    jobs, due = [], {}
    for report, path, missing, again in plans:
        if (not missing and not again) or (failed and report.name in failed):
            continue
        sources = {p.name: source_text(p) for p in local_sources(path)}
        sources["runner.py"] = RUNNER.read_text("utf-8")
        sources["criteria.py"] = CRITERIA.read_text("utf-8")  # the harness judges with the build's evaluator
        if missing:
            shown = f"{len(missing)} seeds" if len(missing) > 1 else f"seed {missing[0]}"
            checking = [s for s in missing if s in report.frozen_at]
            what = "verifying" if checking and len(checking) == len(missing) else "running"
            progress(f"{what} {report.path} ({shown}{where})")
        for chunk, twin in _jobs(missing, report.seeds, again, workers):
            jobs.append((report, Job(report.name, path.name, sources, chunk, timeout, limits, numeric_env(), twin,
                                     required)))
        due[report.name] = (set(missing), again)
    futures = [(report, job, pool.submit(run_job, job) if pool else None) for report, job in jobs]
    # Every run ends within its seeds × timeout on whatever machine runs it; a worker that never answers (or
    # whose answer Dask cannot send back) does not hold the build longer than all the runs one after another.
    waited = timeout * sum(len(job.seeds) for _, job in jobs) + EXECUTOR_GRACE
    deadline = time.monotonic() + waited
    # Runs again, compared once every job is in: (report, seed, report data, the seeds before it in its job). The
    # course seed's first run is stored only once its second agrees, so that a build that fails on it fails again.
    repeats, held = [], []
    facts = hostfacts.of_builder(report.file for report, _ in jobs)
    def stop(report: Report, exc: BuildError) -> None:
        """One experiment's error: it stops the sweep, or (gathering) that experiment's jobs not yet started."""
        for other, _, future in futures:  # what has not started yet need not
            if future is not None and (failed is None or other is report):
                future.cancel()
        if failed is None:
            raise exc
        failed.setdefault(report.name, exc)

    for report, job, future in futures:
        if failed and report.name in failed:
            continue
        try:
            result = future.result(timeout=max(0.0, deadline - time.monotonic())) if future else run_job(job)
        except TimeoutError:
            for *_, other in futures:
                if other is not None:
                    other.cancel()
            raise BuildError(f"experiment {report.name}: no answer from the executor after {waited:g} s, the "
                             f"time limit of every run one after another (a worker that never returns?)",
                             report.path) from None
        try:
            _take(report, job, result, due, facts, repeats, held, cache_dir, progress)
        except BuildError as exc:
            stop(report, exc)
    for report, seed, data, after in repeats:
        if failed and report.name in failed:
            continue
        try:
            _same_twice(report, seed, data, after)
        except BuildError as exc:  # its cached result (from an earlier build, or --check's) is no answer either
            for gone in {seed, report.seeds[0]}:
                forget(cache_dir, report.name, gone)
            stop(report, exc)
    for report, seed, key, data in held:
        if not (failed and report.name in failed):
            store(cache_dir, report.name, seed, key, data, progress)


def _take(report: Report, job: Job, result: dict, due: dict, facts: dict, repeats: list, held: list,
          cache_dir: Path, progress) -> None:
    """One job's answer into its report (and the cache); the runs to compare into `repeats` and `held`."""
    missing, again = due[report.name]
    for i, data in enumerate(result["reports"]):
        hostfacts.refuse_in(report.name, report.path, data, facts)
        if data.get("name") != report.name:
            raise BuildError(f"experiment declares NAME = {data.get('name')!r}, expected {report.name!r}",
                             report.path)
        seed = data.get("seed")
        if i >= len(job.seeds) or seed != job.seeds[i]:  # the report file is the runner's alone
            raise BuildError(f"experiment {report.name} wrote a report of its own into the runner's file (seed "
                             f"{seed!r} where the runner reports seeds {_seeds(job.seeds)} in turn)", report.path)
        if job.twin and (i == len(job.seeds) - 1 or seed not in missing):
            repeats.append((report, seed, data, job.seeds[:i]))
            continue
        data["code_hash"] = report.code_hash
        key = cache_key(report.code_hash, seed)
        if again and seed == report.seeds[0]:
            held.append((report, seed, key, data))
            digest = report_digest(data)
        else:
            digest = store(cache_dir, report.name, seed, key, data, progress)
        if report.frozen and seed in report.runs:  # a frozen seed run again: compared, not shown
            report.checked[seed] = data
        else:
            report.runs[seed], report.digests[seed] = data, digest
        report.ran += 1
    if result["failure"]:
        raise _failure(report, job, result)


def _same_twice(report: Report, seed: int, again: dict, after: list) -> None:
    """A seed run again must give every value its first run gave, to the last bit."""
    first = report.runs[seed]
    when = f"run again after seed {_seeds(after)}" if after else "run again"
    for key in sorted(set(first["values"]) | set(again["values"])):
        a, b = first["values"].get(key), again["values"].get(key)
        if json.dumps(a) != json.dumps(b):  # (as text: NaN is NaN; the engine refuses it later)
            raise BuildError(f"experiment {report.name} gave seed {seed} two different values of {key}: "
                             f"{json.dumps(a)[:80]}, then {json.dumps(b)[:80]} ({when}): what it measures must "
                             f"depend on its seed and parameters alone (an unseeded generator, one made at import, "
                             f"the time, state left by an earlier seed?)", report.path,
                             first.get("lines", {}).get(key))


def _not_a_sibling(module: str, folder: Path) -> str:
    """Why an import of module failed, where the course holds a file of that name outside experiments/."""
    course = folder.parent
    found = next((p for p in sorted(course.glob(f"*/{module}.py")) + sorted(course.glob(f"{module}.py"))
                  if p.parent != folder and not any(part.startswith(".") for part in p.relative_to(course).parts)),
                 None)
    where = f"{found.relative_to(course).as_posix()} is outside experiments/: " if found else ""
    return (f" ({where}an experiment imports the modules beside it in experiments/ and the packages of the "
            f"Python that runs it, nothing else of the course)")


def _failure(report: Report, job: Job, result: dict) -> BuildError:
    failure = result["failure"]
    seed = failure.get("seed")
    where = f" (seed {seed})" if seed is not None else ""
    message = f"experiment {report.name} failed{where}: {failure['message']}"
    if failure.get("timeout"):
        message = f"experiment {report.name} timed out{where}: no result after {job.timeout:g} s " \
                  f"(content/site.yaml: experiment_timeout)"
    elif (missing := re.search(r"No module named '([A-Za-z_][A-Za-z0-9_]*)", failure["message"])) and report.file:
        message += _not_a_sibling(missing.group(1), report.file.parent)
    elif "MemoryError" in failure["message"] and not failure.get("limit"):
        message += f" ({sandbox.over_limit('memory_mb', job.limits)})"
    elif not failure.get("line") and not failure.get("limit"):
        last = [ln for ln in result["log"].splitlines() if ln.strip()]
        if last and failure["message"] not in last[-1]:  # (no control characters reach the terminal)
            message += "; last output: " + re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "?", last[-1].strip()[:200])
    return BuildError(message, report.path, failure.get("line"))
