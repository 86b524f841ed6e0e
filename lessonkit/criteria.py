"""Evaluate a claim's criterion on values, in the build: the experiment's own verdict is not trusted.

A criterion is the course's code, and the build runs it in its own process: so it is not handed to
`eval`. It is parsed, checked against a short list of what a criterion may be (names of values,
their attributes and elements, numbers, arithmetic, comparisons, and/or/not, conditional
expressions, comprehensions over values, and calls of a fixed set of functions), and interpreted
here with a bound on its size and on the steps it may take. No dunder, no other builtin, no import.

The names a criterion sees are those of experiments/harness.py: ``p2.ratio`` reads the value
"p2.ratio"; ``increasing``, ``decreasing``, ``np`` (a few of its functions), ``math`` and ``all``,
``any``, ``abs``, ``min``, ``max``, ``len``, ``sum``. numpy is imported only when a criterion uses it.
"""

from __future__ import annotations

import ast
import math
import operator
from types import SimpleNamespace

MAX_LENGTH = 2000  # characters of a criterion
MAX_STEPS = 200_000  # nodes evaluated, loops included
MAX_POWER = 64  # largest exponent of **
MAX_ITEMS = 1_000_000  # elements an array or a sequence built by the criterion may have


class CriterionError(ValueError):
    pass


def increasing(xs) -> bool:
    """Strictly increasing."""
    return all(b > a for a, b in zip(xs, xs[1:], strict=False))


def decreasing(xs) -> bool:
    """Strictly decreasing."""
    return all(b < a for a, b in zip(xs, xs[1:], strict=False))


_NUMPY = {"array", "array_equal", "allclose", "isclose", "abs", "all", "any", "mean", "median", "std", "min", "max",
          "sum", "prod", "log", "log10", "log2", "exp", "sqrt", "diff", "sign", "isfinite", "argmax", "argmin",
          "percentile", "quantile", "sort", "round", "var"}
_MATH = {"log", "log10", "log2", "exp", "sqrt", "isclose", "isfinite", "floor", "ceil", "fabs", "pi", "e", "inf"}


class _Module:
    """`np` or `math` as a criterion sees them: only the listed names (numpy imported on first use)."""

    def __init__(self, name: str, allowed: set):
        self.name, self.allowed = name, allowed

    def get(self, attr: str):
        if attr not in self.allowed:
            raise CriterionError(f"{self.name}.{attr} is not available in a criterion "
                                 f"(available: {', '.join(sorted(self.allowed))})")
        if self.name == "math":
            return getattr(math, attr)
        import numpy

        return getattr(numpy, attr)


_FUNCTIONS = {"increasing": increasing, "decreasing": decreasing, "all": all, "any": any, "abs": abs, "min": min,
              "max": max, "len": len, "sum": sum, "round": round, "sorted": sorted, "float": float, "int": int,
              "zip": zip}
_MODULES = {"np": _Module("np", _NUMPY), "math": _Module("math", _MATH)}

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_, ast.IsNot: operator.is_not}


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

    return {k: wrap(v) for k, v in tree.items()}


def _size(x) -> int:
    return len(x) if isinstance(x, (list, tuple, str)) else int(getattr(x, "size", 1) or 1)


class _Interpreter:
    def __init__(self, names: dict):
        self.scopes = [names]
        self.steps = 0

    def lookup(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in _FUNCTIONS:
            return _FUNCTIONS[name]
        if name in _MODULES:
            return _MODULES[name]
        import difflib

        known = [n for scope in self.scopes for n in scope] + [*_FUNCTIONS, *_MODULES]
        close = difflib.get_close_matches(name, known, n=1)
        raise CriterionError(f"name {name!r} is not defined" + (f" (did you mean {close[0]!r}?)" if close else ""))

    def run(self, node):
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise CriterionError(f"takes more than {MAX_STEPS:,} steps")
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise CriterionError(f"{type(node).__name__} is not allowed in a criterion")
        return method(node)

    def _Expression(self, node):
        return self.run(node.body)

    def _Constant(self, node):
        if not isinstance(node.value, (int, float, bool, str, type(None))):
            raise CriterionError(f"constant {node.value!r} is not allowed")
        return node.value

    def _Name(self, node):
        return self.lookup(node.id)

    def _Attribute(self, node):
        if node.attr.startswith("_"):
            raise CriterionError(f"attribute {node.attr!r} is not allowed")
        base = self.run(node.value)
        if isinstance(base, _Module):
            return base.get(node.attr)
        if not isinstance(base, SimpleNamespace):
            raise CriterionError(f".{node.attr} reads only values (p2.ratio), not attributes of "
                                 f"{type(base).__name__}")
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise CriterionError(f"no value {node.attr!r} here") from None

    def _Subscript(self, node):
        base, index = self.run(node.value), self.run(node.slice)
        if not isinstance(base, (list, tuple)) and type(base).__module__ != "numpy":
            raise CriterionError(f"[…] reads elements of a list value, not of {type(base).__name__}")
        return base[index]

    def _Slice(self, node):
        parts = [self.run(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def _List(self, node):
        return self._items(node.elts)

    def _Tuple(self, node):
        return tuple(self._items(node.elts))

    def _items(self, elts):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                raise CriterionError("* is not allowed in a criterion")
            out.append(self.run(e))
        return out

    def _UnaryOp(self, node):
        value = self.run(node.operand)
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        raise CriterionError(f"{type(node.op).__name__} is not allowed")

    def _BinOp(self, node):
        op = _BINARY.get(type(node.op))
        if op is None:
            raise CriterionError(f"{type(node.op).__name__} is not allowed")
        left, right = self.run(node.left), self.run(node.right)
        for side in (left, right):  # arithmetic on numbers and arrays, not on lists or strings ([0] * 10**9)
            if isinstance(side, (list, tuple, str, bytes)):
                raise CriterionError("arithmetic works on numbers and np.array(...), not on lists")
        if isinstance(node.op, ast.Pow) and abs(_scalar(right)) > MAX_POWER:
            raise CriterionError(f"exponents above {MAX_POWER} are not allowed")
        return op(left, right)

    def _BoolOp(self, node):
        if isinstance(node.op, ast.And):
            value = True
            for v in node.values:
                value = self.run(v)
                if not value:
                    return value
            return value
        value = False
        for v in node.values:
            value = self.run(v)
            if value:
                return value
        return value

    def _Compare(self, node):
        left = self.run(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.run(right_node)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node):
        return self.run(node.body) if self.run(node.test) else self.run(node.orelse)

    def _Call(self, node):
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            raise CriterionError("* and ** are not allowed in a criterion")
        if isinstance(node.func, ast.Attribute):  # np.array, math.log: only the listed functions
            module = self.run(node.func.value)
            if not isinstance(module, _Module):
                raise CriterionError(f"only functions may be called, not .{node.func.attr}")
            func = module.get(node.func.attr)
        elif isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS and not self._shadowed(node.func.id):
            func = _FUNCTIONS[node.func.id]
        else:
            raise CriterionError("only the criterion functions may be called "
                                 f"({', '.join(sorted(_FUNCTIONS))}, np.…, math.…)")
        args = self._items(node.args)
        kwargs = {k.arg: self.run(k.value) for k in node.keywords}
        if any(not hasattr(a, "__next__") and _size(a) > MAX_ITEMS for a in args):
            raise CriterionError(f"an argument of more than {MAX_ITEMS:,} elements")
        result = func(*args, **kwargs)
        if _size(result) > MAX_ITEMS:
            raise CriterionError(f"a result of more than {MAX_ITEMS:,} elements")
        return result

    def _shadowed(self, name: str) -> bool:
        return any(name in scope for scope in self.scopes)

    def _in(self, stack: list, scope: dict, node):
        """Evaluate node with the scopes it was written in (a generator may run later, inside a call)."""
        saved, self.scopes = self.scopes, [*stack, scope]
        try:
            return self.run(node)
        finally:
            self.scopes = saved

    def _comprehension_values(self, generators, elt):
        stack = list(self.scopes)

        def loop(i, scope):
            if i == len(generators):
                yield self._in(stack, scope, elt)
                return
            g = generators[i]
            if g.is_async:
                raise CriterionError("async is not allowed")
            iterable = self._in(stack, scope, g.iter)
            if not isinstance(iterable, (list, tuple, zip)) and type(iterable).__module__ != "numpy":
                raise CriterionError(f"a comprehension runs over values (lists), not over {type(iterable).__name__}")
            for item in iterable:
                self.steps += 1
                if self.steps > MAX_STEPS:
                    raise CriterionError(f"takes more than {MAX_STEPS:,} steps")
                inner = dict(scope)
                _bind(g.target, item, inner)
                if all(self._in(stack, inner, cond) for cond in g.ifs):
                    yield from loop(i + 1, inner)

        return loop(0, {})

    def _GeneratorExp(self, node):
        return self._comprehension_values(node.generators, node.elt)

    def _ListComp(self, node):
        out = []
        for x in self._comprehension_values(node.generators, node.elt):
            out.append(x)
            if len(out) > MAX_ITEMS:
                raise CriterionError(f"a list of more than {MAX_ITEMS:,} elements")
        return out


def _bind(target, value, scope: dict) -> None:
    if isinstance(target, ast.Name):
        scope[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        items = list(value)
        if len(items) != len(target.elts):
            raise CriterionError("cannot unpack")
        for t, v in zip(target.elts, items, strict=True):
            _bind(t, v, scope)
    else:
        raise CriterionError(f"{type(target).__name__} is not allowed as a loop variable")


def _scalar(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        raise CriterionError("an exponent must be a number") from None


def parse(criterion: str) -> ast.Expression:
    if not isinstance(criterion, str):
        raise CriterionError("a criterion is a string")
    if len(criterion) > MAX_LENGTH:
        raise CriterionError(f"a criterion of {len(criterion):,} characters (at most {MAX_LENGTH:,})")
    try:
        return ast.parse(criterion, mode="eval")
    except SyntaxError as exc:
        raise CriterionError(f"not an expression: {exc.msg}") from None


def evaluate(criterion: str, values: dict):
    """The criterion's value on these values (CriterionError when it may not be evaluated)."""
    return _Interpreter(namespace(values)).run(parse(criterion))


def holds(criterion: str, refuted: bool, values: dict) -> bool:
    """True when the claim holds: its criterion is true, or false for a refuted criterion."""
    held = bool(evaluate(criterion, values))
    return not held if refuted else held
