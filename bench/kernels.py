#!/usr/bin/env python3
"""Play other machines by hand: build the course under other numpy/BLAS kernels and compare what the pages show.

    .venv/bin/python bench/kernels.py                          # the default OpenBLAS core types below
    .venv/bin/python bench/kernels.py --coretype Haswell --coretype Prescott
    .venv/bin/python bench/kernels.py --npy X86_V3             # NPY_DISABLE_CPU_FEATURES=X86_V3

Each variant builds a fresh copy of the course (its own cache, --no-search) and is compared
with a default build: every value, range and summary row a reader sees must be the same.
OPENBLAS_CORETYPE is only tried where the machine has not set it (some processors need
their own setting); the tests never set it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lessonkit.checks import visible_numbers  # noqa: E402
from lessonkit.load.inputs import INPUTS  # noqa: E402

COURSE = [name for name in INPUTS if name != "results"]  # without frozen results: every kernel runs every seed


def build(env: dict, work: Path, name: str) -> Path:
    root, out = work / name / "course", work / name / "site"
    for folder in COURSE:
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    jobs = ["--jobs", "1"] if "OPENBLAS_NUM_THREADS" in env else []
    done = subprocess.run([sys.executable, str(REPO / "build.py"), "--root", str(root), "--out", str(out),
                           "--no-search", "-q", *jobs], capture_output=True, text=True, env={**os.environ, **env})
    if done.returncode:
        raise SystemExit(f"{name}: build failed: {done.stderr.strip()}")
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--coretype", action="append", help="an OPENBLAS_CORETYPE to try (repeatable)")
    p.add_argument("--npy", action="append", help="a NPY_DISABLE_CPU_FEATURES value to try (repeatable)")
    args = p.parse_args()
    variants = {f"NPY_DISABLE_CPU_FEATURES={v}": {"NPY_DISABLE_CPU_FEATURES": v} for v in args.npy or []}
    coretypes = args.coretype if args.coretype or args.npy else ["Haswell", "Sandybridge", "Prescott", "Zen"]
    if "OPENBLAS_CORETYPE" in os.environ:
        print(f"OPENBLAS_CORETYPE is set here ({os.environ['OPENBLAS_CORETYPE']}): not trying other core types")
    else:
        variants.update({f"OPENBLAS_CORETYPE={c}": {"OPENBLAS_CORETYPE": c} for c in coretypes or []})
    with tempfile.TemporaryDirectory(prefix="lessonkit-kernels-") as tmp:
        work = Path(tmp)
        base = visible_numbers(build({}, work, "default"))
        print(f"default: {len(base)} shown numbers and summary rows")
        bad = 0
        for name, env in variants.items():
            seen = visible_numbers(build(env, work, name.replace("=", "-")))
            differ = [k for k in base if seen.get(k) != base[k]]
            bad += bool(differ)
            print(f"{name}: {'identical' if not differ else f'{len(differ)} differ'}")
            for k in differ[:10]:
                print(f"    {k}: {base[k]!r} by default, {seen.get(k)!r} here")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
