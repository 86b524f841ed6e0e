"""Frozen results: an experiment's reports over the seeds, committed as results/NAME.json, checked, not trusted.

`build.py --freeze` writes them; a build uses them instead of running the experiment when what produced
them is unchanged (the experiment's code and the modules it imports, which hold its parameters; the runner
and the criteria evaluator; Python and numpy: the experiment cache's key without the seed and the machine).
It still judges every claim on the frozen values, and it runs a sample again (the course seed by default,
`--verify N`) and compares it with the frozen reports within each value's tolerance: a frozen file
whose values were edited is caught there, and one edited by hand without its digests when it is read.

A file for other code is stale: the experiment runs as if unfrozen (or, with --frozen-only, the build stops).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from lessonkit.errors import BuildError
from lessonkit.io import read_input, write_atomic
from lessonkit.versions import package_version

FOLDER = "results"
FORMAT = 1
TOLERANCE = 1e-9  # relative: a value run again must agree this closely, unless its experiment declares more


@dataclass
class Frozen:
    """A frozen file as read: which code produced it, and its reports by seed."""

    path: Path  # relative to the course root
    hash: str
    produced_by: dict
    reports: dict  # seed -> report


@dataclass
class Policy:
    """What the command line chose about frozen results."""

    verify: int = 1  # how many seeds of the seed set (the course seed first) run again and are compared
    only: bool = False  # --frozen-only: a missing or stale frozen file is an error, never a run
    freeze: bool = False  # --freeze: write every experiment's reports after the build
    refresh: frozenset = frozenset()  # --refresh NAME: run these again, ignoring cache and frozen file, and freeze


def produced_by(code: str, runner: str) -> dict:
    """What the reports depend on, as recorded in the frozen file. Python by its minor version: a patch release
    (Debian's 3.11.2, another machine's 3.11.7) does not change numpy's arithmetic, and a run again would show
    it if it did; the experiment cache, local to one machine, keys on the full version. Not the machine: its
    processor and its kernel variables (NPY_*, OPENBLAS_* …) move values by rounding at most, and the run
    again compares them within the tolerance; a file frozen on one machine is as current on the next."""
    python = "{}.{}".format(*sys.version_info[:2])
    return {"code": code, "runner": runner, "python": python, "numpy": package_version("numpy")}


def identity(what: dict) -> str:
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:12]


def path_of(root: Path, name: str) -> Path:
    return root / FOLDER / f"{name}.json"


def _digest(report: dict) -> str:
    return hashlib.sha256(json.dumps(report, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def read(root: Path, name: str) -> Frozen | None:
    """The experiment's frozen file, or None if it has none. A damaged one is an error at its line, never ignored:
    each report must be filed under its own seed and experiment, match its sha256, and the file's hash must be
    that of what it says produced it."""
    path = path_of(root, name)
    rel = path.relative_to(root)
    try:
        text = read_input(path).decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise BuildError(f"not UTF-8 text: python build.py --refresh {name} writes it again", rel) from None
    except OSError as exc:
        raise BuildError(f"cannot read the frozen results ({exc.strerror})", rel) from None

    def unique(pairs):
        keys = [k for k, _ in pairs]
        twice = next((k for k in keys if keys.count(k) > 1), None)
        if twice is not None:
            raise ValueError(f"the key {twice!r} appears twice")
        return dict(pairs)

    def bad(why: str, seed=None):
        return BuildError(f"not a frozen results file ({why}): python build.py --refresh {name} writes it again",
                          rel, _line_of(text, seed) if seed is not None else None)

    try:
        data = json.loads(text, object_pairs_hook=unique)
    except ValueError as exc:
        raise BuildError(f"not valid JSON: {getattr(exc, 'msg', exc)}: python build.py --refresh {name} writes it "
                         f"again", rel, getattr(exc, "lineno", None)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("experiment") != name:
        raise bad(f"expected format {FORMAT} for experiment {name!r}")
    what, seeds = data.get("produced_by"), data.get("seeds")
    if not isinstance(what, dict) or not isinstance(seeds, dict) or data.get("hash") != identity(what):
        raise bad("its hash is not that of its produced_by")
    reports = {}
    for key, entry in seeds.items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit() and key == str(int(key))):
            raise bad(f"seed {key!r} is not a seed number", key)
        report = entry.get("report") if isinstance(entry, dict) else None
        if not isinstance(report, dict) or not isinstance(report.get("values"), dict) \
                or not isinstance(report.get("claims"), list):
            raise bad(f"seed {key}: expected a report with values and claims", key)
        if report.get("seed") != int(key) or report.get("name") != name:
            raise bad(f"seed {key} holds the report of {report.get('name')!r}, seed {report.get('seed')!r}", key)
        if _digest(report) != entry.get("sha256"):
            raise BuildError(f"the report of seed {key} does not match its sha256: edited by hand? "
                             f"python build.py --refresh {name} runs it again", rel, _line_of(text, key))
        reports[int(key)] = report
    return Frozen(rel, data["hash"], what, reports)


def line_of(root: Path, name: str, seed) -> int | None:
    """The line of a frozen file where a seed's entry starts."""
    try:
        return _line_of(path_of(root, name).read_text("utf-8"), seed)
    except (OSError, UnicodeDecodeError):
        return None


def _line_of(text: str, seed) -> int | None:
    needle = f'  "{seed}": {{'
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith(needle):
            return number
    return None


def stale_reason(frozen: Frozen, now: dict) -> str:
    """Why a frozen file no longer describes this build's experiment: what changed."""
    changed = [k for k in sorted(set(now) | set(frozen.produced_by)) if now.get(k) != frozen.produced_by.get(k)]
    names = {"code": "its code", "runner": "the runner", "python": "Python", "numpy": "numpy"}
    return ", ".join(names.get(k, k) for k in changed) or "its hash"


def write(root: Path, name: str, what: dict, reports: dict) -> tuple[bool, int]:
    """Freeze the reports (seed -> report), with the seeds the file already holds for the same code (a build on
    fewer seeds, or other ones, drops none). One key per line, so that a diff shows which value changed.
    Returns (whether the file changed, how many seeds it holds)."""
    path = path_of(root, name)
    try:
        before = read(root, name)
    except BuildError:  # damaged: this build's reports replace it
        before = None
    if before is not None and before.hash == identity(what):
        reports = {**before.reports, **reports}
    out = ['{', f' "experiment": {json.dumps(name)},', f' "format": {FORMAT},', f' "hash": "{identity(what)}",',
           f' "produced_by": {json.dumps(what, sort_keys=True)},', ' "seeds": {']
    seeds = sorted(reports)
    for i, seed in enumerate(seeds):
        report = strip(reports[seed])
        out.append(f'  "{seed}": {{')
        out.append(f'   "sha256": "{_digest(report)}",')
        out.append('   "report": {')
        fields = sorted(report)
        for j, key in enumerate(fields):
            value = report[key]
            if key == "values" and isinstance(value, dict):  # one value per line
                out.append('    "values": {')
                items = sorted(value.items())
                out.extend(f'     {json.dumps(k, ensure_ascii=False)}: '
                           f'{json.dumps(v, ensure_ascii=False, separators=(", ", ": "))}'
                           + ("," if n < len(items) - 1 else "") for n, (k, v) in enumerate(items))
                out.append('    }' + ("," if j < len(fields) - 1 else ""))
            else:
                out.append(f'    {json.dumps(key)}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}'
                           + ("," if j < len(fields) - 1 else ""))
        out.append('   }')
        out.append('  }' + ("," if i < len(seeds) - 1 else ""))
    out += [' }', '}', '']
    text = "\n".join(out)
    try:
        if path.read_text("utf-8") == text:
            return False, len(seeds)
    except (OSError, UnicodeDecodeError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    path.chmod(0o644)  # a file to commit, not a private cache entry
    return True, len(seeds)


def strip(report: dict) -> dict:
    """A report as a frozen file holds it: without its run time (so that freezing twice writes the same file)."""
    return {k: v for k, v in report.items() if k not in ("seconds", "code_hash")}


def tolerance_of(key: str, declared: dict) -> float:
    """The relative tolerance for a value: the experiment's TOLERANCE entry (a key or a glob), else the default."""
    if key in declared:
        return float(declared[key])
    for pattern, tol in declared.items():
        if fnmatch.fnmatchcase(key, pattern):
            return float(tol)
    return TOLERANCE


def differences(frozen: dict, again: dict, declared: dict) -> list[str]:
    """Where a report run again disagrees with its frozen twin beyond tolerance: 'key: frozen x, now y (…)'."""
    out = []
    a, b = frozen.get("values", {}), again.get("values", {})
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            out.append(f"{key}: {'not frozen' if key not in a else 'no longer measured'}")
            continue
        tol = tolerance_of(key, declared)
        bound = (again.get("bounds") or {}).get(key)
        x, y = a[key], b[key]
        if bound is not None and (frozen.get("bounds") or {}).get(key) == bound:
            # Shown as its bound, which the run again has just checked: the digits under a bound are noise.
            if isinstance(bound[0], str):
                continue
            if isinstance(x, list) and isinstance(y, list) and len(x) == len(y) == len(bound):
                x, y = ([e for e, c in zip(v, bound, strict=True) if c is None] for v in (x, y))
        if not _close(x, y, tol):
            exact = _exact(a[key]) and _exact(b[key])
            out.append(f"{key}: frozen {_short(a[key])}, now {_short(b[key])} "
                       + ("(whole numbers: exactly)" if exact else f"(relative tolerance {tol:g})"))
    # Everything else a report holds comes from the code (claims as written, lines, parameters, declarations):
    # it must be exactly what the code says today. A claim's verdict follows from the values, judged again.
    for field in sorted((set(frozen) | set(again)) - {"values", "versions", "seconds", "code_hash"}):
        if described(frozen.get(field), field) != described(again.get(field), field):
            out.append(f"{field}: frozen {_short(frozen.get(field))}, now {_short(again.get(field))}")
    return out


def described(value, field: str):
    """A report's field as the code describes it: claims without their verdicts."""
    if field == "claims" and isinstance(value, list):
        return [{k: v for k, v in c.items() if k != "passed"} if isinstance(c, dict) else c for c in value]
    return value


def same_code(a: dict, b: dict) -> list[str]:
    """Two reports of one experiment on different seeds: what the code writes must be the same in both."""
    return [field for field in sorted((set(a) | set(b)) - {"values", "versions", "seconds", "code_hash", "seed",
                                                             "bounds", "tiny"})
            if described(a.get(field), field) != described(b.get(field), field)]


def _close(x, y, tol: float) -> bool:
    if isinstance(x, list) or isinstance(y, list):
        return isinstance(x, list) and isinstance(y, list) and len(x) == len(y) \
            and all(_close(p, q, tol) for p, q in zip(x, y, strict=True))
    if isinstance(x, bool) or isinstance(y, bool) or isinstance(x, int) and isinstance(y, int):
        return x == y
    if not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
        return x == y
    return math.isclose(x, y, rel_tol=tol, abs_tol=0.0)


def _exact(value) -> bool:
    xs = value if isinstance(value, list) else [value]
    return all(isinstance(x, int) and not isinstance(x, bool) for x in xs)


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "…"
