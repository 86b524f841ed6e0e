"""Evaluate a claim's criterion on values, in the build: the experiment's own verdict is not trusted.

The names a criterion sees are those of experiments/harness.py: ``p2.ratio`` reads the
value "p2.ratio"; ``increasing``, ``decreasing``, ``np``, ``math`` and ``all``, ``any``,
``abs``, ``min``, ``max``, ``len``. numpy is imported only when a criterion uses it.
"""

from __future__ import annotations

import math
from types import SimpleNamespace


def increasing(xs) -> bool:
    """Strictly increasing."""
    return all(b > a for a, b in zip(xs, xs[1:], strict=False))


def decreasing(xs) -> bool:
    """Strictly decreasing."""
    return all(b < a for a, b in zip(xs, xs[1:], strict=False))


class _LazyNumpy:
    """`np` for criteria: imports numpy on first use (most rebuilds never need it)."""

    def __getattr__(self, name):
        import numpy

        return getattr(numpy, name)


_BUILTINS = {"increasing": increasing, "decreasing": decreasing, "np": _LazyNumpy(), "math": math, "all": all,
             "any": any, "abs": abs, "min": min, "max": max, "len": len}


def namespace(values: dict) -> dict:
    """{"p2.ratio": x} as names: p2.ratio."""
    tree: dict = {}
    for key, value in values.items():
        node = tree
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):  # "a" and "a.b" both given: "a" is a value
                break
        else:
            node[leaf] = value

    def wrap(node):
        return SimpleNamespace(**{k: wrap(v) for k, v in node.items()}) if isinstance(node, dict) else node

    return {"__builtins__": {}, **{k: wrap(v) for k, v in tree.items()}, **_BUILTINS}


def holds(criterion: str, refuted: bool, values: dict) -> bool:
    """True when the claim holds: its criterion is true, or false for a refuted criterion."""
    held = bool(eval(criterion, namespace(values)))  # noqa: S307 (the course's own expression, no builtins)
    return not held if refuted else held
