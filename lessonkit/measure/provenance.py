"""Where a number comes from: the experiment's source lines that stored it, highlighted at build time."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path


def _source(path: Path) -> list[str]:
    # Keyed by modification time: a long-running preview must see edited experiments.
    return _read(path, path.stat().st_mtime_ns)


@lru_cache(maxsize=64)
def _read(path: Path, mtime_ns: int) -> list[str]:
    return path.read_text("utf-8").splitlines()


def value_line(report, key: str) -> int | None:
    """The line of the experiment file that stores a value, as the harness recorded it when measuring."""
    return report.data.get("lines", {}).get(key.split(".", 1)[1])


# Token classes the stylesheet colours; other tokens stay plain text to keep pages light.
_STYLED = {"k", "kn", "kc", "s", "s1", "s2", "mi", "mf", "c", "c1", "nf", "nc", "o", "ow"}


def highlighted_lines(path: Path, cache: Path | None) -> list[str]:
    """Every line of a source file as highlighted HTML, each line closed on its own.

    Kept on disk by content hash: compiling Pygments' lexer costs more than a page render.
    """
    from lessonkit.io import digest, read_cache, write_cache

    text = "\n".join(_source(path)) + "\n"
    stored = cache / f"{digest(text, length=20)}.json" if cache else None
    lines = read_cache(stored) if stored is not None else None
    if isinstance(lines, list) and all(isinstance(x, str) for x in lines):
        return lines
    from pygments import lex
    from pygments.lexers import PythonLexer
    from pygments.token import STANDARD_TYPES

    lines, current = [], []
    for token, value in lex(text, PythonLexer()):
        css = STANDARD_TYPES.get(token, "")
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append("".join(current))
                current = []
            if part:
                escaped = part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                current.append(f'<span class="{css}">{escaped}</span>' if css in _STYLED else escaped)
    if current:
        lines.append("".join(current))
    if stored is not None:
        write_cache(stored, lines)
    return lines


def snippet(root: Path, experiment: str, lines: list[int], context: int = 1, most: int = 12,
            cache: Path | None = None) -> dict | None:
    """The given lines, each with `context` lines above, highlighted: {"first", "last", "at" (the first given
    line), "html"}."""
    wanted = sorted(set(n for n in lines if n))
    if not wanted:
        return None
    source = highlighted_lines(root / experiment, cache)
    keep = sorted({k for n in wanted for k in range(max(1, n - context), n + 1)})[:most]
    html = [source[k - 1] for k in keep]
    out, previous = [], None
    for number, text in zip(keep, html, strict=True):
        if previous is not None and number > previous + 1:
            out.append('<span class="ln">  ⋮</span>')
        out.append(f'<span class="ln{" hl" if number in wanted else ""}">{number:>3}</span> {text}')
        previous = number
    return {"first": keep[0], "last": keep[-1], "at": wanted[0], "html": "\n".join(out)}


# -- parameters: values an experiment sets rather than measures ---------------------------------

# Calls that compute from their arguments alone. Anything random, timed or read from outside is not here.
_PURE_BUILTINS = {"len", "range", "min", "max", "sum", "abs", "round", "int", "float", "bool", "list", "tuple",
                  "dict", "set", "sorted", "reversed", "zip", "enumerate", "divmod", "pow", "str", "all", "any",
                  "True", "False", "None"}
# Names and attributes that make an expression depend on more than its parameters.
_IMPURE = {"random", "rng", "default_rng", "time", "perf_counter", "monotonic", "open", "input", "environ",
           "getenv", "urandom", "seed", "print", "eval", "exec", "globals", "locals", "getattr", "setattr"}


_MUTATORS = {"append", "extend", "update", "insert", "setdefault", "add", "pop", "clear", "sort", "fill"}


def _names(node: ast.AST):
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            yield n.id
        elif isinstance(n, ast.Attribute):
            yield n.attr


def _pure_functions(tree: ast.Module) -> set[str]:
    """Module-level functions and classes that compute from their arguments alone (calling only such)."""
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    pure = {name for name, f in functions.items() if not _IMPURE & set(_names(f))}
    changed = True
    while changed:  # a function that calls an impure one is impure
        changed = False
        for name in sorted(pure):
            called = {n.func.id for n in ast.walk(functions[name]) if isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Name) and n.func.id in functions}
            if called - pure:
                pure.discard(name)
                changed = True
    return pure


def _bound_names(node: ast.AST) -> set[str]:
    """Names bound inside an expression: comprehension targets and lambda arguments."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.comprehension):
            out |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
        elif isinstance(n, ast.Lambda):
            out |= {a.arg for a in n.args.args}
    return out


def kept_parameters(source: str, cache: Path | None) -> dict[str, tuple[str, int]]:
    """parameters(source), kept in cache/ by the digest of the source and of this module: reading the code
    again on every build cost about 90 ms for the real course's six experiments."""
    from lessonkit.io import digest, read_cache, write_cache

    stored = cache / f"{digest(source, Path(__file__).read_bytes(), length=20)}.json" if cache else None
    kept = read_cache(stored) if stored is not None else None
    if isinstance(kept, list) and all(isinstance(x, list) and len(x) == 3 for x in kept):
        return {key: (kind, line) for key, kind, line in kept}  # (in the order found: patterns are tried so)
    found = parameters(source)
    if stored is not None:
        write_cache(stored, [[key, kind, line] for key, (kind, line) in found.items()])
    return found


def parameters(source: str) -> dict[str, tuple[str, int]]:
    """The values of run()'s dict that its parameters alone decide: key (or f-string key pattern) ->
    ("set", line in PARAMS) for a parameter passed through, ("computed", line that stores it) for one
    computed from parameters only (d_k = d_model // h; the .nbytes of an array shaped by them). Found by
    reading the code, not by running it: a value counts only if every name it is made from is a parameter,
    a constant, a pure function or class, or a container into which only such values were put."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    params = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PARAMS" for t in node.targets) \
                and isinstance(node.value, ast.Dict):
            params = {k.value: k.lineno for k in node.value.keys if isinstance(k, ast.Constant)}
    run = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"), None)
    if run is None:
        return {}
    args = [a.arg for a in run.args.posonlyargs + run.args.args][1:] + [a.arg for a in run.args.kwonlyargs]
    known = set(args) | _pure_functions(tree) | _PURE_BUILTINS | {"np", "math"}
    known |= {t.id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
              for t in n.targets if isinstance(t, ast.Name)}  # module constants
    # A container that anything measured is put into (out["x"] = …, xs.append(…)) is no parameter: found
    # by reading run() again until no new such container turns up.
    spoiled: set[str] = set()
    while True:
        found, fouled = _read_run(run, args, params, known - spoiled, spoiled)
        if fouled <= spoiled:
            return found
        spoiled |= fouled


def _read_run(run, args, params, known, spoiled) -> tuple[dict, set]:
    """One reading of run(): the parameter values found, and the containers that received a measurement."""
    import re

    derived = set(args) - spoiled
    found: dict[str, tuple[str, int]] = {}
    fouled: set[str] = set()

    def only_params(expr) -> bool:
        names = set(_names(expr))
        if names & _IMPURE:
            return False
        loads = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
        return loads <= known | derived | _bound_names(expr)

    def key_of(expr) -> str | None:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return expr.value
        if isinstance(expr, ast.JoinedStr):  # out[f"gpt.{key}"]: a pattern, matched against the keys later
            return "re:" + "".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".+?" for v in expr.values)
        return None

    def note(key_expr, value) -> None:
        key = key_of(key_expr)
        if key is None or not only_params(value):
            return
        if isinstance(value, ast.Name) and value.id in params:
            found.setdefault(key, ("set", params[value.id]))
        else:
            found.setdefault(key, ("computed", key_expr.lineno))

    def dicts(expr) -> None:
        for n in ast.walk(expr):
            if isinstance(n, ast.Dict):
                for k, v in zip(n.keys, n.values, strict=True):
                    if k is not None:
                        note(k, v)

    def targets(t) -> set[str]:
        return {n.id for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    def filled(container, values) -> None:
        if isinstance(container, ast.Name) and not all(only_params(v) for v in values):
            fouled.add(container.id)

    def walk(body) -> None:
        for stmt in body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
                dicts(stmt.value)
                goals = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                pure = only_params(stmt.value) and not isinstance(stmt, ast.AugAssign)
                for t in goals:
                    if isinstance(t, ast.Subscript):  # out["p2.ratio"] = …
                        note(t.slice, stmt.value)
                        filled(t.value, [stmt.value])
                    elif pure:
                        derived.update(targets(t) - spoiled)
                    else:
                        derived.difference_update(targets(t))
            elif isinstance(stmt, ast.For):
                if only_params(stmt.iter):
                    derived.update(targets(stmt.target) - spoiled)
                else:
                    derived.difference_update(targets(stmt.target))
                walk(stmt.body)
                walk(stmt.orelse)
            elif isinstance(stmt, (ast.If, ast.While, ast.With, ast.Try)):
                for field in ("body", "orelse", "finalbody", "handlers"):
                    walk(getattr(stmt, field, []) or [])
            elif isinstance(stmt, ast.ExceptHandler):
                walk(stmt.body)
            elif isinstance(stmt, (ast.Expr, ast.Return)) and stmt.value is not None:
                dicts(stmt.value)  # out.update({...}), return {...}
                call = stmt.value
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _MUTATORS:
                    filled(call.func.value, [*call.args, *(k.value for k in call.keywords)])

    walk(run.body)
    return found, fouled


def parameter_of(found: dict, vid: str) -> tuple[str, int] | None:
    """`parameters()`'s entry for a value id, exact or through an f-string key pattern."""
    import re

    if vid in found:
        return found[vid]
    return next((v for k, v in found.items() if k.startswith("re:") and re.fullmatch(k[3:], vid)), None)
