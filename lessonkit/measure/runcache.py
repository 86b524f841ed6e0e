"""An experiment's code, the hash that names it, and the cache of its runs keyed by that hash.

The code is the experiment's file and every sibling module it imports, recursively, read within
io.read_input's bounds; a link out of the course is refused, since the code is published with the
experiment. A cache entry is one run (an experiment on a seed), sealed, and keyed by the code, the
seed, the Python and numpy versions, the runner and the variables that choose the BLAS's kernels.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

from lessonkit.errors import BuildError
from lessonkit.io import Refused, read_input, read_sealed, write_cache
from lessonkit.versions import numeric_env, package_version

RUNNER = Path(__file__).with_name("runner.py")
CRITERIA = Path(__file__).parent.parent / "criteria.py"  # the evaluator the standalone harness shares


def runner_hash() -> str:
    return hashlib.sha256(RUNNER.read_bytes() + CRITERIA.read_bytes()).hexdigest()[:12]


# `import a, b` and `from a import x` at the start of a line: a quick look that spares the parser an experiment
# importing no sibling; one that does (harness.py, usually) is parsed, so an import in a string is not one.
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w., \t]+))", re.MULTILINE)


def _imports(text: str, folder: Path) -> dict[str, int]:
    """The sibling modules the code imports (name -> line of the first import)."""
    named = {name.strip().split(".")[0].split(" ")[0] for match in _IMPORT.finditer(text)
             for name in (match.group(1) or match.group(2)).split(",")}
    if not any((folder / f"{name}.py").is_file() for name in named):
        return {}
    found: dict[str, int] = {}
    for name, line in _imported(text, folder.parent / ".cache" / "imports"):
        if (folder / f"{name}.py").exists() and not (folder / f"{name}.py").is_dir():  # a FIFO is refused
            found[name] = min(found.get(name, line), line)
    return found


def _imported(text: str, cache: Path) -> list[tuple[str, int]]:
    """Every module the code imports absolutely (its first part) with the import's line, read by Python's parser;
    kept in cache/ by the text's digest: parsing every experiment again cost a page edit about 35 ms."""
    from lessonkit.io import digest, read_cache, write_cache

    stored = cache / f"{digest(text, Path(__file__).read_bytes(), length=20)}.json"
    kept = read_cache(stored)
    if isinstance(kept, list) and all(isinstance(x, list) and len(x) == 2 for x in kept):
        return [(str(name), int(line)) for name, line in kept]
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):  # the run reports it, at its line
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            modules = [node.module]
        else:
            continue
        out += [(module.split(".")[0], node.lineno) for module in modules]
    write_cache(stored, [list(x) for x in out])
    return out


def source_text(path: Path) -> str:
    """An experiment's or a helper's source, read within io.read_input's bounds (not a FIFO, not 2 GB)."""
    try:
        return read_input(path).decode("utf-8")
    except Refused as exc:
        raise BuildError(exc.strerror, f"experiments/{path.name}") from None
    except UnicodeDecodeError as exc:
        raise BuildError(f"not UTF-8 (byte {exc.start})", f"experiments/{path.name}") from None


def local_sources(path: Path) -> list[Path]:
    """The experiment file and every sibling module it imports, recursively. Each is published with the
    experiment's source page, so a link that leads outside the course is refused, never read."""
    seen: list[Path] = []
    todo = [(path, None, None)]
    course = path.parent.parent.resolve()
    while todo:
        p, importer, line = todo.pop()
        if p in seen:
            continue
        if not p.resolve().is_relative_to(course):  # a link, or a folder of links
            if importer is None:
                raise BuildError("a link to a file outside the course; it would be published with the experiment: "
                                 "refused", f"experiments/{p.name}")
            raise BuildError(f"imports {p.stem}, and experiments/{p.name} is a link to a file outside the course; "
                             f"it would be published with the experiment: refused", f"experiments/{importer.name}",
                             line)
        seen.append(p)
        for name, at in _imports(source_text(p), p.parent).items():
            todo.append((p.parent / f"{name}.py", p, at))
    return sorted(seen)


def code_hash(path: Path) -> str:
    """The experiment's code: its file and the sibling modules it imports (shown as provenance)."""
    h = hashlib.sha256()
    for src in local_sources(path):
        h.update(src.name.encode() + b"\0" + source_text(src).encode() + b"\0")
    return h.hexdigest()[:12]


def cache_key(code: str, seed: int) -> str:
    identity = (f"{code} seed={seed} python={sys.version.split()[0]} numpy={package_version('numpy')} "
                f"runner={runner_hash()} "
                f"{json.dumps(numeric_env())}")
    return hashlib.sha256(identity.encode()).hexdigest()[:20]


def report_digest(report: dict) -> str:
    return hashlib.sha256(json.dumps(report, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


# -- the cache: one entry per experiment and seed --------------------------------------------

def _entry(cache_dir: Path, name: str, seed: int) -> Path:
    return cache_dir / name / f"seed-{seed}.json"


def load_cached(cache_dir: Path, name: str, seed: int, key: str, warn) -> tuple[dict, str] | None:
    """The cached report and its digest, if the entry is for this key and intact."""
    path = _entry(cache_dir, name, seed)
    entry, why = read_sealed(path)
    if why == "missing":
        return None
    if why == "not sealed here":
        warn(f"warning: {path}: not written by this machine's builds, or changed since; running {name} (seed "
             f"{seed}) again")
        return None
    try:
        if why:
            raise ValueError(why)
        if entry.get("key") != key:
            return None
        report, recorded = entry["report"], entry["sha256"]
        if not isinstance(report, dict):
            raise TypeError("report is not a mapping")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        warn(f"warning: {path}: unreadable cache entry ({type(exc).__name__}); running {name} again")
        return None
    digest = report_digest(report)
    if digest != recorded:
        warn(f"warning: {path}: the report does not match its recorded hash; running {name} (seed {seed}) again")
        return None
    return report, digest


def store(cache_dir: Path, name: str, seed: int, key: str, report: dict, warn) -> str:
    digest = report_digest(report)
    path = _entry(cache_dir, name, seed)
    if not write_cache(path, {"key": key, "sha256": digest, "report": report}):
        warn(f"warning: cannot write the experiment cache ({path}); results are not kept")
    return digest


def forget(cache_dir: Path, name: str, seed: int) -> None:
    _entry(cache_dir, name, seed).unlink(missing_ok=True)
