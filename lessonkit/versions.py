"""What of this machine's software a result depends on: installed package versions (read from the
dist-info folder names; importlib.metadata costs ~15 ms to import) and the environment variables
that choose numpy's and the BLAS's kernels."""

from __future__ import annotations

import os
import re
import sys
from functools import cache


@cache
def package_version(name: str) -> str:
    pattern = re.compile(rf"^{re.escape(name)}-([^-]+)\.dist-info$", re.IGNORECASE)
    for path in sys.path:
        if not os.path.isdir(path):
            continue
        for entry in os.listdir(path):
            match = pattern.match(entry)
            if match:
                return match.group(1)
    return "none"


# (Thread counts are not among them: the pages must read the same whatever they are, and a test makes sure.)
_NUMERIC_ENV = re.compile(r"^(NPY_|OPENBLAS_|MKL_|GOTO|BLIS_|VECLIB_)(?!.*NUM_THREADS$)")


def numeric_env() -> dict:
    """NPY_DISABLE_CPU_FEATURES, OPENBLAS_CORETYPE …: what selects the kernels a measurement ran on."""
    return {k: v for k, v in sorted(os.environ.items()) if _NUMERIC_ENV.match(k)}
