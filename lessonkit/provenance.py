"""Where a number comes from: the experiment's source lines that stored it, highlighted at build time."""

from __future__ import annotations

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
    import hashlib
    import json

    text = "\n".join(_source(path)) + "\n"
    stored = cache / f"{hashlib.sha256(text.encode()).hexdigest()[:20]}.json" if cache else None
    try:
        lines = json.loads(stored.read_text("utf-8")) if stored is not None else None
        if isinstance(lines, list) and all(isinstance(x, str) for x in lines):
            return lines
    except (OSError, ValueError):  # missing or damaged: highlight again
        pass
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
        try:
            stored.parent.mkdir(parents=True, exist_ok=True)
            stored.write_text(json.dumps(lines), "utf-8")
        except OSError:
            pass
    return lines


def snippet(root: Path, experiment: str, lines: list[int], context: int = 1, most: int = 12,
            cache: Path | None = None) -> dict | None:
    """The given lines, each with `context` lines above, highlighted: {"first", "last", "html"}."""
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
    return {"first": keep[0], "last": keep[-1], "html": "\n".join(out)}
