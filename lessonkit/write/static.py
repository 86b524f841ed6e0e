"""The course's static assets (templates/static/), copied into the site; stylesheets compacted."""

from __future__ import annotations

import re
from pathlib import Path

from lessonkit.errors import BuildError
from lessonkit.load.inputs import skipped


def static_files(static_dir: Path, root: Path) -> dict[str, bytes]:
    """The course's static assets; a link that leads outside the course is refused, never published."""
    files = {}
    root = root.resolve()
    for p in sorted(static_dir.rglob("*")):
        if not p.is_file() or any(skipped(x) for x in p.relative_to(static_dir).parts):
            continue
        if not p.resolve().is_relative_to(root):
            raise BuildError("links to a file outside the course; it would be published: refused",
                             p.relative_to(root))
        if p.suffix == ".css":
            from lessonkit.load.content import read_text

            data = compact_css(read_text(p, p.relative_to(root))).encode("utf-8")
        else:
            data = p.read_bytes()
        files[f"static/{p.relative_to(static_dir).as_posix()}"] = data
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
