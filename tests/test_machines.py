"""Another machine shows the same numbers: builds of the real course with numpy's SIMD dispatch narrowed
and with a multi-threaded BLAS, running every experiment afresh, must show every value, every range and
every summary row exactly as the frozen results do, and measure values that agree with them.

OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are never set here: some processors need the machine's own
setting. Try other OpenBLAS kernels by hand with bench/kernels.py where they are unset.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import COURSE, ROOT, make_course, run_build

from lessonkit.checks import visible_numbers


def dispatch_targets() -> list[str]:
    """numpy's SIMD dispatch targets that this CPU runs (X86_V3, AVX512_ICL, ASIMDDP …), lowest first."""
    code = ("from numpy._core._multiarray_umath import __cpu_features__ as f, __cpu_dispatch__ as d;"
            "print(' '.join(t for t in d if f.get(t)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def variants() -> dict[str, dict]:
    """Other machines, as far as this one can play them: narrower SIMD dispatch, more BLAS threads."""
    found = dispatch_targets()
    threads = {"OPENBLAS_NUM_THREADS": str(max(2, os.cpu_count() or 1))}
    out = {}
    if len(found) > 1:
        out["baseline SIMD only"] = {"NPY_DISABLE_CPU_FEATURES": " ".join(found)}
        out[f"without {found[-1]}"] = {"NPY_DISABLE_CPU_FEATURES": found[-1]}
        out["threaded BLAS"] = threads
    elif found:
        # One dispatch target: the second narrowing also threads the BLAS, so that each change is played by
        # one variant alone or with the other (a value that moves with either one is caught), in two builds.
        out["baseline SIMD only"] = {"NPY_DISABLE_CPU_FEATURES": " ".join(found)}
        out["baseline SIMD, threaded BLAS"] = {"NPY_DISABLE_CPU_FEATURES": " ".join(found), **threads}
    else:
        out["threaded BLAS"] = threads
    return out


def test_variants_narrow_numpy_in_two_ways():
    found = dispatch_targets()
    assert found, "numpy reports no SIMD dispatch target on this CPU: nothing to narrow"
    narrowed = [v for v in variants().values() if "NPY_DISABLE_CPU_FEATURES" in v]
    assert len({tuple(sorted(v.items())) for v in narrowed}) >= 2
    for env in narrowed:  # numpy really runs narrowed: the disabled targets report as off
        code = ("from numpy._core._multiarray_umath import __cpu_features__ as f;"
                f"print(all(not f[t] for t in {env['NPY_DISABLE_CPU_FEATURES'].split()!r}))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, **env})
        assert out.stdout.strip() == "True", env


@pytest.fixture
def scratch(tmp_path):
    """A copy of the course with an empty cache and without its frozen results: each variant runs every
    experiment itself, on every seed."""
    root = tmp_path / "course"
    for name in set(COURSE) - {"results"}:
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


SAMPLE = 5  # seeds per variant: the pages show frozen values (results/), identical on every machine by
# construction; what a variant must show is that its fresh runs agree with them. bench/kernels.py compares
# all the seeds by hand.


@pytest.fixture(scope="module")
def frozen_sample(tmp_path_factory):
    """The course as it shows its frozen values on the first SAMPLE seeds (no experiment runs but the checks)."""
    out = tmp_path_factory.mktemp("sample") / "site"
    result = run_build("--out", out, "--seeds", SAMPLE, "--no-search", "-q", "--frozen-only", fresh=True)
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize("name", list(variants()))
def test_every_shown_number_is_the_same_on_another_machine(name, frozen_sample, scratch, tmp_path):
    from lessonkit.measure import frozen

    env = variants()[name]
    out = tmp_path / "site"
    # A threaded BLAS runs one experiment at a time: its threads would fight parallel runs for the cores.
    jobs = ["--jobs", "1"] if "OPENBLAS_NUM_THREADS" in env else []
    result = subprocess.run([sys.executable, str(ROOT / "build.py"), "--root", str(scratch), "--out", str(out),
                             "--no-search", "-q", "--seeds", str(SAMPLE), "--freeze", *jobs],
                            capture_output=True, text=True, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    here, there = visible_numbers(frozen_sample), visible_numbers(out)
    assert here.keys() == there.keys()
    differ = [f"{k}: {here[k]!r} here, {there[k]!r} with {env}" for k in here if here[k] != there[k]]
    assert not differ, "\n".join(differ[:10])
    # Every page that shows a value was compared.
    showing = {p.relative_to(frozen_sample).as_posix() for p in frozen_sample.rglob("*.html")
               if 'data-key="' in p.read_text("utf-8")}
    assert showing and {key.split(" ", 1)[0] for key in here} == showing
    # And each value the variant measured agrees with the frozen one as a build there would require.
    experiments = yaml.safe_load((ROOT / "content" / "site.yaml").read_text("utf-8"))["experiments"]
    for experiment in experiments:
        mine, theirs = frozen.read(ROOT, experiment), frozen.read(scratch, experiment)
        assert sorted(theirs.reports) == list(range(SAMPLE))
        for seed, report in theirs.reports.items():
            assert frozen.differences(mine.reports[seed], report, report.get("tolerance") or {}) == [], \
                (experiment, seed, env)


def test_the_cache_tells_machines_apart(tmp_path):
    """A run under another kernel selection is not served from the default run's cache entry."""
    course = make_course(tmp_path / "c")
    first = run_build("--no-search", "--out", course / "a", root=course, fresh=True)
    assert first.returncode == 0, first.stderr
    again = run_build("--no-search", "--out", course / "b", root=course, fresh=True)
    assert "0 experiment run(s)" in again.stdout  # the same machine: from the cache
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": " ".join(dispatch_targets())}
    other = subprocess.run([sys.executable, str(ROOT / "build.py"), "--root", str(course), "--no-search",
                            "--out", str(course / "c")], capture_output=True, text=True, env=env)
    assert other.returncode == 0, other.stderr
    assert "2 experiment run(s)" in other.stdout  # its one experiment, on both seeds, run again
