"""Where a number comes from: the experiment's source lines that computed it, highlighted at build time."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path


def _source(path: Path) -> list[str]:
    # Keyed by modification time: a long-running preview must see edited experiments.
    return _read(path, path.stat().st_mtime_ns)


@lru_cache(maxsize=64)
def _read(path: Path, mtime_ns: int) -> list[str]:
    return path.read_text("utf-8").splitlines()


def value_line(root: Path, experiment: str, value_id: str) -> int | None:
    """The line of experiments/<name>.py that stores the value: where `"<value id>":` is written."""
    pattern = re.compile(r'["\']' + re.escape(value_id) + r'["\']\s*:')
    for number, line in enumerate(_source(root / experiment), start=1):
        if pattern.search(line):
            return number
    return None


# Token classes the stylesheet colours; spans of any other class are dropped to keep pages light.
_STYLED = {"k", "kn", "kc", "s", "s1", "s2", "mi", "mf", "c", "c1", "nf", "nc", "o", "ow"}
_SPAN = re.compile(r'<span class="([\w ]+)">([^<]*)</span>')


def _light(html: str) -> str:
    return _SPAN.sub(lambda m: m.group(0) if m.group(1) in _STYLED else m.group(2), html)


def snippet(root: Path, experiment: str, lines: list[int], context: int = 1, most: int = 12) -> dict | None:
    """The given lines, each with `context` lines above, highlighted: {"first", "last", "html"}."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    wanted = sorted(set(n for n in lines if n))
    if not wanted:
        return None
    source = _source(root / experiment)
    keep = sorted({k for n in wanted for k in range(max(1, n - context), n + 1)})[:most]
    code = "\n".join(source[k - 1] for k in keep) + "\n"
    html = _light(highlight(code, PythonLexer(), HtmlFormatter(nowrap=True))).rstrip("\n").split("\n")
    out, previous = [], None
    for number, text in zip(keep, html, strict=True):
        if previous is not None and number > previous + 1:
            out.append('<span class="ln">  ⋮</span>')
        out.append(f'<span class="ln{" hl" if number in wanted else ""}">{number:>3}</span> {text}')
        previous = number
    return {"first": keep[0], "last": keep[-1], "html": "\n".join(out)}
