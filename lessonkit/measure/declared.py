"""What an experiment declares of its values, checked on every seed: each value is a finite number or a list of
them under a readable id; a bound holds on every seed; a tiny value says why; a parameter is a value the
experiment's code sets, the same on every seed. Each scalar's range over the seeds is kept for the pages."""

from __future__ import annotations

import math

from lessonkit.errors import BuildError
from lessonkit.measure.experiments import Report
from lessonkit.measure.falsifiable import SWEEP

MAX_ELEMENTS = 10_000  # of a list value: a page shows numbers a reader can read, not a data dump


def _not_a_value(value) -> str | None:
    """Why a value is not a finite number or a list of them (None when it is)."""
    items = value if isinstance(value, list) else [value]
    if isinstance(value, list) and len(value) > MAX_ELEMENTS:
        return f"has {len(value):,} elements (at most {MAX_ELEMENTS:,}: show a summary, or a figure)"
    for x in items:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            return f"is {type(x).__name__}, not a number"
        if not math.isfinite(x):
            return f"is not finite ({x})"
    return None


def _bad_bound(bound, value) -> str | None:
    def pair(b):
        return isinstance(b, (list, tuple)) and len(b) == 2 and b[0] in ("<", ">") \
            and isinstance(b[1], (int, float)) and math.isfinite(b[1]) and b[1] != 0

    if pair(bound):
        return None
    if isinstance(bound, list) and isinstance(value, list) and len(bound) == len(value) \
            and all(b is None or pair(b) for b in bound):
        return None
    return f"a bound must be [op, limit] or one per element, not {bound!r}"


def check(values: dict, report: Report) -> None:
    """Bounds and tiny declarations, checked here (the report is the experiment's word); parameters, found
    by reading the experiment's code and confirmed by a value that is the same on every seed."""
    from lessonkit import names
    from lessonkit.measure.provenance import parameter_of
    from lessonkit.numbers import element_bounds

    name, data = report.name, report.data
    lines = data.get("lines", {})
    for vid in data["values"]:
        try:
            names.check("value id", vid)
        except BuildError as exc:
            raise exc.located(report.path, lines.get(vid) if isinstance(vid, str) else None) from None
    for seed in report.seeds:  # again here: the harness's own checks are the experiment's code, and can be undone
        for vid, value in report.runs[seed]["values"].items():
            problem = _not_a_value(value)
            if problem:
                raise BuildError(f"value {name}.{vid} on seed {seed} {problem}", report.path, lines.get(vid))
        if vid == SWEEP or vid.startswith(SWEEP + "."):
            raise BuildError(f"value id {vid!r}: '{SWEEP}.' is reserved for a value's list over the seeds "
                             f"(sweep.x in a criterion); choose another name", report.path,
                             data.get("lines", {}).get(vid))
    for vid, bound in data.get("bounds", {}).items():
        key, value = f"{name}.{vid}", data["values"].get(vid)
        problem = "it is not a value" if value is None else _bad_bound(bound, value)
        if problem:
            raise BuildError(f"value {key}: {problem}", report.path, data.get("lines", {}).get(vid))
        values[key].bound = bound
        for seed in report.seeds:  # a bound must hold on every seed
            x = report.runs[seed]["values"].get(vid)
            xs = x if isinstance(x, list) else [x]
            each = element_bounds(bound, len(xs)) if isinstance(x, list) else [tuple(bound)]
            for i, (v, b) in enumerate(zip(xs, each, strict=False)):
                if b and not (isinstance(v, (int, float)) and (v < b[1] if b[0] == "<" else v > b[1])):
                    where = f"[{i}]" if isinstance(x, list) else ""
                    raise BuildError(f"value {key}{where} = {v!r} on seed {seed} is shown as {b[0]} {b[1]:g}, "
                                     f"which it is not", report.path, data.get("lines", {}).get(vid))
    for vid, why in data.get("tiny", {}).items():
        if vid in data["values"] and isinstance(why, str) and why.strip():
            values[f"{name}.{vid}"].tiny = why
    for vid in data["values"]:
        found = parameter_of(report.parameters, vid)
        if found and all(report.runs[s]["values"].get(vid) == data["values"][vid] for s in report.seeds):
            values[f"{name}.{vid}"].parameter = found


def spread(values: dict, report: Report) -> None:
    """Each scalar value's range over the seeds (a bound's holds on every seed: see check)."""
    name = report.name
    for vid, value in report.data["values"].items():
        key = f"{name}.{vid}"
        seen = [report.runs[s]["values"].get(vid) for s in report.seeds]
        if values[key].bound:
            continue
        if isinstance(value, (int, float)) and all(isinstance(x, (int, float)) for x in seen):
            values[key].range = (min(seen), max(seen))
