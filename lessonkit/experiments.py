"""Run the experiments, each in its own process, in parallel, with a cache.

A cache entry is keyed by the experiment's source and the local modules it
imports, the seed, and the Python/numpy versions; a hit reads one JSON file and
imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import BuildError
from .versions import package_version


@dataclass
class Report:
    name: str
    path: Path  # the experiment file, relative to the project root
    data: dict  # what `--report` printed: values, claims, params, provenance
    cached: bool


# `import a, b` and `from a import x` at the start of a line (regex, not ast: it runs on every build).
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w., \t]+))", re.MULTILINE)


def local_sources(path: Path) -> list[Path]:
    """The experiment file and every sibling module it imports, recursively."""
    seen: list[Path] = []
    todo = [path]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        for match in _IMPORT.finditer(p.read_text("utf-8")):
            for name in (match.group(1) or match.group(2)).split(","):
                sibling = p.parent / (name.strip().split(".")[0].split(" ")[0] + ".py")
                if sibling.is_file():
                    todo.append(sibling)
    return sorted(seen)


def _versions() -> str:
    return f"python={platform.python_version()} numpy={package_version('numpy')}"


def code_hash(path: Path) -> str:
    """The experiment's code: its file and the sibling modules it imports (shown as provenance)."""
    h = hashlib.sha256()
    for src in local_sources(path):
        h.update(src.name.encode() + b"\0" + src.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def cache_key(code: str, seed: int) -> str:
    return hashlib.sha256(f"{code} seed={seed} {_versions()}".encode()).hexdigest()[:20]


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def _failure(path: Path, root: Path, stderr: str) -> BuildError:
    """One line from a traceback: the last frame in the experiment's own file."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    last = lines[-1].strip() if lines else "no output"
    line = None
    for file, num in _FRAME.findall(stderr):
        if Path(file).resolve() == path.resolve():
            line = int(num)
    return BuildError(f"experiment failed: {last}", path.relative_to(root), line)


def _run(root: Path, path: Path, seed: int) -> dict:
    proc = subprocess.run(
        [sys.executable, str(path), "--seed", str(seed), "--report"],
        cwd=root, capture_output=True, text=True,
        env={**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise _failure(path, root, proc.stderr or proc.stdout) from None


def run_all(root: Path, names: list[str], seed: int, cache_dir: Path, force: bool = False,
            progress=lambda msg: None) -> list[Report]:
    """Every experiment's report, from the cache where its inputs are unchanged."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    jobs = []
    for name in names:
        path = root / "experiments" / f"{name}.py"
        if not path.is_file():
            raise BuildError(f"experiment {name!r} is listed but {path.relative_to(root)} does not exist",
                             "content/site.yaml")
        code = code_hash(path)
        jobs.append((name, path, code, cache_dir / f"{name}-{cache_key(code, seed)}.json"))

    def one(job):
        name, path, code, cached = job
        progress(f"running experiments/{name}.py (seed {seed})")
        data = _run(root, path, seed)
        data["code_hash"] = code
        if data.get("name") != name:
            raise BuildError(f"experiment declares NAME = {data.get('name')!r}, expected {name!r}",
                             path.relative_to(root))
        cached.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True), "utf-8")
        return Report(name, path.relative_to(root), data, False)

    reports = {}
    for name, path, _, cached in jobs:
        if cached.is_file() and not force:
            reports[name] = Report(name, path.relative_to(root), json.loads(cached.read_text("utf-8")), True)
    misses = [job for job in jobs if job[0] not in reports]
    if misses:
        from concurrent.futures import ThreadPoolExecutor

        # Each experiment runs in its own process; threads only wait for them.
        with ThreadPoolExecutor(max_workers=len(misses)) as pool:
            for report in pool.map(one, misses):
                reports[report.name] = report
    return [reports[name] for name in names]
