"""The course's static assets (templates/static/), copied into the site; stylesheets compacted, the math font
cut to the formulas the site has (write/mathfont.py)."""

from __future__ import annotations

import re
from pathlib import Path

from lessonkit.errors import BuildError
from lessonkit.io import STATIC_LIMIT
from lessonkit.load import theme
from lessonkit.load.texts import read_bytes, read_text
from lessonkit.write import mathfont


def static_files(root: Path, math: set[str], cache: Path) -> dict[str, bytes]:
    """The course's static assets (its own templates/static/ over the default theme's); a link that leads outside
    the course, or outside the default theme, is refused, never published. `math`: the characters of the site's
    formulas, which the published math font holds."""
    files = {}
    root = root.resolve()
    for rel, p in theme.listing(root, "static").items():
        shown = theme.shown(root, p)
        if not any(p.resolve().is_relative_to(top) for top in (root, theme.DEFAULT)):
            raise BuildError("links to a file outside the course; it would be published: refused", shown)
        if rel == mathfont.SOURCE:
            rel, data = mathfont.PUBLISHED, mathfont.published(p, math, cache, shown)
        elif p.suffix == ".css":
            data = compact_css(read_text(p, shown)).encode("utf-8")
        else:
            data = read_bytes(p, shown, STATIC_LIMIT)
        files[f"static/{rel}"] = data
    return files


# A string (kept as written), a comment (dropped), punctuation that needs no space beside it (nor a
# colon after it; one before it may be a descendant combinator), or a run of whitespace (one space).
# Strings come first, so nothing inside one is touched.
_CSS_PART = re.compile(r"""("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')|/\*.*?\*/|\s*([{};,>])\s*|(:)\s+|(\s+)""", re.S)


def compact_css(css: str) -> str:
    """The stylesheet without comments and indentation: every page loads it before it can be read."""
    def part(m: re.Match) -> str:
        string, punct, colon, space = m.groups()
        return string or punct or colon or (" " if space else "")

    return _CSS_PART.sub(part, css).strip() + "\n"
