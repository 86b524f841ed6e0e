"""A criterion that cannot fail cannot verify: the moves of the measured values a criterion reads that would
change its verdict, tried one by one.

This catches a criterion true of every value (`abs(x) >= 0`, `len(xs) == 3` on a measured list). It cannot catch
one that tests the statement's premise rather than its assertion: that one fails under some move, as it should,
and only a reader of the criterion beside the sentence can tell.
"""

from __future__ import annotations

from lessonkit import criteria

SWEEP = "sweep"  # (claims.SWEEP: how a criterion names a value's list over the seeds)


def moves(criterion: str, values: dict, moved: list, read: set):
    """(what moved, the values moved). Each measured value (each element of a list, and its sweep over the seeds
    with it) halved, doubled, negated, zeroed, ten times larger and smaller; set to each number the criterion
    names and just either side of it; set to each other value the criterion reads. A list reversed, and its
    first and last elements alone halved and doubled. Each pair of measured values swapped."""
    import ast

    def each(x, f):
        return [each(v, f) for v in x] if isinstance(x, list) else f(x)

    def apply(vid, f) -> dict:
        out = dict(values)
        out[vid] = each(values[vid], f)
        if f"{SWEEP}.{vid}" in values:
            out[f"{SWEEP}.{vid}"] = [None if v is None else each(v, f) for v in values[f"{SWEEP}.{vid}"]]
        return out

    try:
        tree = ast.parse(criterion, mode="eval")
    except SyntaxError:
        return
    named = sorted({n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                    and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)})
    others = [(vid, values[vid]) for vid in sorted(read) if isinstance(values.get(vid), (int, float))]
    for vid in moved:
        steps = [("halved", lambda x: x / 2), ("doubled", lambda x: x * 2), ("negated", lambda x: -x),
                 ("set to zero", lambda x: 0 * x), ("ten times larger", lambda x: x * 10),
                 ("ten times smaller", lambda x: x / 10)]
        for c in named:
            near = max(abs(c) * 1e-3, 1e-300)
            steps += [(f"set to {c:g}", lambda x, c=c: c), (f"set just above {c:g}", lambda x, c=c, d=near: c + d),
                      (f"set just below {c:g}", lambda x, c=c, d=near: c - d)]
        steps += [(f"set to {other}", lambda x, v=v: v) for other, v in others if other != vid]
        for how, f in steps:
            yield f"{vid} {how}", apply(vid, f)
        value = values[vid]
        if isinstance(value, list) and len(value) > 1:
            yield f"{vid} reversed", {**values, vid: value[::-1]}
            for at, where in ((0, "first"), (-1, "last")):
                for how, k in (("halved", 0.5), ("doubled", 2)):
                    if isinstance(value[at], (int, float)):
                        changed = list(value)
                        changed[at] = value[at] * k
                        yield f"{vid}'s {where} element {how}", {**values, vid: changed}
    for i, a in enumerate(moved):
        for b in moved[i + 1:]:
            yield f"{a} and {b} swapped", {**values, a: values[b], b: values[a]}


def fails_when(criterion: str, refuted: bool, values: dict, moved: list, read: set) -> str:
    """The first move of the measured values (see `moves`) under which the claim's verdict is not the one it has
    on the values themselves; "" when none changes it. A move the criterion cannot be evaluated on proves nothing."""
    import warnings

    held = criteria.holds(criterion, refuted, values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (numpy on a negated or zeroed value: log of 0, 0/0)
        for what, changed in moves(criterion, values, moved, read):
            try:
                if criteria.holds(criterion, refuted, changed) != held:
                    return what
            except Exception:  # noqa: BLE001 - the criterion is the course's code: any error is its error
                continue
    return ""
