"""The small contract every experiment file follows, and its command line.

An experiment file defines

    NAME    the family name, the first part of every value key ("multires")
    PARAMS  a dict of parameters (numbers), shown as provenance
    run(seed, **PARAMS) -> dict    named values: numbers or lists of numbers
    CLAIMS  a list of Claim
    TOLERANCE  (optional) {value key or glob: relative tolerance}: how closely a run on another
            machine must agree with a frozen result (default 1e-9; see build.py --freeze)

and ends with ``if __name__ == "__main__": harness.run_as_script(sys.modules[__name__])``,
which exits with status 1 when a claim fails.

A criterion is an expression over the values, judged by the build's own evaluator
(lessonkit/criteria.py: no eval, a fixed list of what it may contain). Inside it,
``p2.ratio`` reads the value ``p2.ratio``; ``increasing``, ``decreasing``, a few
functions of ``np`` and ``math``, and ``all``, ``any``, ``abs``, ``min``, ``max``,
``len``, ``sum`` are available.
``sweep.p3.norm_last`` reads the list of ``p3.norm_last`` over every seed of the
build (on a run alone, over its one seed). A claim with ``refuted=True`` records a criterion the data rejected: it passes
while the criterion stays false. The build runs every experiment over a set of
seeds; a claim must hold on all of them unless it says ``holds_on=0.9`` (a share
of the seeds), with the reason in its note.

A value at the level of floating-point error (a difference that is 0 with one
BLAS kernel and 1.6e-15 with another) is not a measurement of the idea: return
it as ``below(x, 1e-12)`` or ``above(x, 1e12)``, a list of such values as
``below(xs, 1e-12)`` (shown as "all below 10⁻¹²"), or bound single elements of a
list (``[d, below(e, 1e-12)]``). Pages then show the bound ("below 10⁻¹²"), the
full value stays in the provenance, and a run whose value breaks its bound fails.
A value that is really that small and is the measurement (a gradient that has
vanished to 1e-20) says so: ``tiny(x, why="...")``. The build refuses any other
shown float below 1e-9 in magnitude: it cannot tell such a number from noise.

This module only needs numpy and the standard library, so an experiment runs
on its own: ``python experiments/multires.py --seed 3``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import platform
import sys
import time
from dataclasses import dataclass, field


def _caller_line() -> int:
    """The line of the experiment file where a Claim(...) is written (for error messages)."""
    frame = sys._getframe(2)  # 0: here, 1: the dataclass __init__, 2: the caller
    return frame.f_lineno


@dataclass(frozen=True)
class Claim:
    id: str  # "p2.vanishing"; the key is NAME + "." + id
    criterion: str  # a Python expression over the values
    text: dict  # {"zh": ..., "en": ...}: the statement in words
    shows: tuple = ()  # value ids this claim verifies (their marks lead here)
    refuted: bool = False  # a first criterion that the data must keep refuting
    note: dict = field(default_factory=dict)  # optional {"zh", "en"} remark
    holds_on: float = 1.0  # the share of the seeds on which it must hold (1.0: every seed)
    line: int = field(default_factory=_caller_line, compare=False)


@dataclass(frozen=True)
class Bound:
    """A value shown as a bound: its size is floating-point noise, only the bound is a measurement.
    A list value is bounded element by element ("all below 10⁻¹²")."""

    value: float | list
    op: str  # "<" or ">"
    limit: float

    def holds(self) -> bool:
        xs = self.value if isinstance(self.value, list) else [self.value]
        return all(x < self.limit if self.op == "<" else x > self.limit for x in xs)


def _floats(value):
    if isinstance(value, (list, tuple)) or getattr(value, "ndim", 0):
        return [float(v) for v in value]
    return float(value)


def below(value, limit: float) -> Bound:
    """A value (or every element of a list) that is noise below `limit` (shown as "below 10⁻¹²")."""
    return Bound(_floats(value), "<", float(limit))


def above(value, limit: float) -> Bound:
    """A value (or every element of a list) that is noise above `limit` (shown as "more than 10¹²")."""
    return Bound(_floats(value), ">", float(limit))


@dataclass(frozen=True)
class Tiny:
    """A value below the noise floor that is nevertheless the measurement; `why` says why it is not noise."""

    value: float | list
    why: str


def tiny(value, why: str) -> Tiny:
    """Declare a really small measured value (or list): shown with its digits, not refused as noise."""
    if not isinstance(why, str) or not why.strip():
        raise ValueError("tiny() needs why=: the reason this small value is a measurement, not noise")
    return Tiny(_floats(value), why.strip())


def declarations(raw: dict) -> tuple[dict, dict, dict]:
    """run()'s dict as (values, bounds, tiny): bounds[k] is [op, limit] for a value or a whole list,
    or a list of [op, limit] / None per element; tiny[k] is the reason a small value is real."""
    values, bounds, small = {}, {}, {}
    for key, v in raw.items():
        if isinstance(v, Bound):
            bounds[key], v = [v.op, v.limit], v.value
        elif isinstance(v, Tiny):
            small[key], v = v.why, v.value
        elif isinstance(v, (list, tuple)) and any(isinstance(e, Bound) for e in v):
            bounds[key] = [[e.op, e.limit] if isinstance(e, Bound) else None for e in v]
            v = [e.value if isinstance(e, Bound) else e for e in v]
        values[key] = plain(v)
    return values, bounds, small


def bound_breaks(value, bound) -> tuple | None:
    """The first number of `value` that breaks its declared bound, with that bound; or None."""
    if isinstance(bound[0], str):  # one bound for the value, or for every element of a list
        pairs = [(x, bound) for x in (value if isinstance(value, list) else [value])]
    else:
        pairs = zip(value, bound, strict=True)
    for x, b in pairs:
        if b is not None and not Bound(x, b[0], b[1]).holds():
            return x, b
    return None


def _criteria():
    """The evaluator of criteria: the build's own (lessonkit/criteria.py, standard library only), found beside
    this file (in this repository a link to it; a build copies it in; a copied course carries a copy) or in
    the lessonkit checkout above it."""
    import importlib.util
    from pathlib import Path

    here = Path(__file__).resolve().parent
    for path in (here / "criteria.py", here.parent / "lessonkit" / "criteria.py"):
        if path.is_file():
            spec = importlib.util.spec_from_file_location("criteria", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise ImportError("experiments/harness.py needs criteria.py beside it (lessonkit/criteria.py)")


criteria = _criteria()
increasing, decreasing = criteria.increasing, criteria.decreasing


def evaluate(claim: Claim, values: dict) -> bool:
    """True when the claim holds: its criterion is true (false if refuted); the same evaluator as the build's."""
    return criteria.holds(claim.criterion, claim.refuted, values)


def check_values(values: dict) -> None:
    """Values must be finite numbers or lists of them: NaN is a bug, not data."""
    for key, value in values.items():
        flat = value if isinstance(value, list) else [value]
        for x in flat:
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                error = TypeError(f"value {key!r} is {type(x).__name__}, expected a number")
            elif not math.isfinite(x):
                error = ValueError(f"value {key!r} is not finite ({x})")
            else:
                continue
            error.key = key
            raise error


def plain(value):
    """numpy scalars and arrays to plain JSON-able Python numbers."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (np.integer, int)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return float(value)
    return value


def value_lines(module, keys) -> dict:
    """The line of the experiment file that stores each value: where its key is written into the dict
    run() returns (`"p2.ratio": …`, `out["gqa.saving"] = …`, or an f-string key such as
    `out[f"{norm}.spread"] = …`, matched as a pattern). Provenance panels show these lines."""
    import ast
    import re

    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError, SyntaxError):
        return {}
    run = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "run"), tree)
    exact, patterns = {}, []

    def note(expr, line):
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            exact.setdefault(expr.value, line)
        elif isinstance(expr, ast.JoinedStr):
            parts = [re.escape(v.value) if isinstance(v, ast.Constant) else ".+?" for v in expr.values]
            patterns.append((re.compile("".join(parts) + "$"), line))

    for scope in (run, tree):  # run() first; then helpers that build part of the dict
        for node in ast.walk(scope):
            if isinstance(node, ast.Dict):
                for key in node.keys:
                    if key is not None:
                        note(key, key.lineno)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                note(node.slice, node.lineno)
        found = {k: exact.get(k) or next((line for p, line in patterns if p.match(k)), None) for k in keys}
        if all(found.values()):
            break
    return {k: line for k, line in found.items() if line}


def _located(error: Exception, line: int | None) -> Exception:
    """The harness's own message, with the line of the experiment file the build's error points at."""
    error.source_line = line
    return error


def _claim_error(claim: Claim, message: str) -> ValueError:
    return _located(ValueError(f"claim {claim.id!r}: {message}"), claim.line)


def measure(module, seed: int) -> dict:
    """Run the experiment once and evaluate its claims: the full report."""
    import numpy as np

    params = dict(module.PARAMS)
    start = time.perf_counter()
    raw = module.run(seed, **params)
    elapsed = time.perf_counter() - start
    values, bounds, small = declarations(raw)
    try:
        check_values(values)
    except (TypeError, ValueError) as exc:
        raise _located(exc, value_lines(module, [exc.key]).get(exc.key)) from None
    for key, bound in bounds.items():
        broken = bound_breaks(values[key], bound)
        if broken is not None:
            (x, (op, limit)) = broken
            raise _located(ValueError(f"value {key!r} = {x!r} is shown as {op} {limit:g}, which it is not"),
                           value_lines(module, [key]).get(key))
    claims = []
    for claim in module.CLAIMS:
        missing = [key for key in claim.shows if key not in values]
        if missing:
            raise _claim_error(claim, f"shows {', '.join(map(repr, missing))}, which run() does not return")
        # sweep.x is x over the seeds: the build judges it on all of them, a run alone on its own seed
        sweep = {f"sweep.{k}": [v] for k, v in values.items()} if "sweep." in claim.criterion else {}
        try:
            passed = evaluate(claim, {**values, **sweep})
        except Exception as exc:  # a typo in a criterion is the claim's error, at the claim's line
            why = str(exc) if isinstance(exc, criteria.CriterionError) else f"{type(exc).__name__}: {exc}"
            raise _claim_error(claim, f"criterion {claim.criterion!r} cannot be evaluated: {why}") from None
        claims.append({
            "id": claim.id,
            "criterion": claim.criterion,
            "text": claim.text,
            "shows": list(claim.shows),
            "refuted": claim.refuted,
            "note": claim.note,
            "holds_on": claim.holds_on,
            "sweep": bool(sweep),
            "line": claim.line,
            "passed": passed,
        })
    lines = inspect.getsourcelines(module.run)
    return {
        "lines": value_lines(module, values),
        "name": module.NAME,
        "seed": seed,
        "params": params,
        "values": values,
        "bounds": bounds,
        "tiny": small,
        "tolerance": {str(k): float(v) for k, v in getattr(module, "TOLERANCE", {}).items()},
        "claims": claims,
        "function": "run",
        "source_lines": [lines[1], lines[1] + len(lines[0]) - 1],
        "versions": {"python": platform.python_version(), "numpy": np.__version__},
        "seconds": round(elapsed, 4),
    }


def _show(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def main(module, argv=None) -> int:
    """The command line of an experiment file; returns the exit status (1 when a claim fails)."""
    parser = argparse.ArgumentParser(description=(module.__doc__ or "").strip().splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the values as one JSON object")
    parser.add_argument("--lang", choices=sorted(next(iter(module.CLAIMS)).text) if module.CLAIMS else ["en"],
                        default="en")
    args = parser.parse_args(argv)
    report = measure(module, args.seed)
    # On one seed, a claim that need hold only on a share of the seeds (holds_on < 1) may fail, and so may one
    # about the sweep (sweep.x): its list of one seed says nothing of the spread over many.
    failed = [c for c in report["claims"] if not c["passed"] and c["holds_on"] >= 1 and not c["sweep"]]
    if args.json:
        keyed = {f"{module.NAME}.{k}": v for k, v in report["values"].items()}
        print(json.dumps(keyed, ensure_ascii=False, sort_keys=True))
    else:
        print(f"{module.NAME}  seed={args.seed}  params={report['params']}")
        for claim in report["claims"]:
            mark = "PASS" if claim["passed"] else "FAIL" if claim in failed else "MISS"
            kind = "  (refuted criterion: must stay false)" if claim["refuted"] else ""
            print(f"  {mark}  {module.NAME}.{claim['id']}: {claim['text'].get(args.lang, '')}")
            print(f"        criterion: {claim['criterion']}{kind}")
            if claim["holds_on"] < 1:
                print(f"        must hold on {claim['holds_on']:.0%} of the seeds: a miss on one seed is allowed")
            if claim["sweep"]:
                print("        judged here on this seed alone; python build.py judges it over all its seeds")
            for key in claim["shows"]:
                bound = report["bounds"].get(key)
                if bound and isinstance(bound[0], str):
                    bound = f"  (shown as {bound[0]} {bound[1]:g})"
                elif bound:
                    bound = "  (shown as " + ", ".join(f"{b[0]} {b[1]:g}" if b else "digits" for b in bound) + ")"
                shown = _show(report["values"][key]) + (bound or "")
                print(f"        {module.NAME}.{key} = {shown}")
        total = len(report["claims"])
        passed = sum(c["passed"] for c in report["claims"])
        allowed = f", {total - passed - len(failed)} allowed miss(es)" if total - passed > len(failed) else ""
        print(f"{passed}/{total} claims pass{allowed}")
    return 1 if failed else 0


def run_as_script(module) -> None:
    sys.exit(main(module))
