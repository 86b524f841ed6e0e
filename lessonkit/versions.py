"""Installed package versions, read from the dist-info folder names (importlib.metadata costs ~15 ms to import)."""

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
