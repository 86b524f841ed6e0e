"""The math font as the site publishes it: the theme's OpenType math font (templates/static/fonts/math.otf)
cut down to the characters the site's formulas use (markdown/plugins/math.py collects them per page), with
the glyphs its MATH table builds them from (large operators, stretchy delimiters, script-size forms), as WOFF2. The whole font is 525,008 bytes; the cut one for
a course of formulas is a few tens of kilobytes, and pages without math never fetch it.

Kept in the cache by the digest of the font, the characters and the code that cuts it: a page edit that
adds no new character to the formulas costs a lookup."""

from __future__ import annotations

import base64
from pathlib import Path

from lessonkit.io import digest, read_cache, write_cache

SOURCE = "fonts/math.otf"  # below the theme's static/: never published as it is
PUBLISHED = "fonts/math.woff2"

# Digits and the commonest signs, always in: an edit that adds only these to a formula does not cut again.
_ALWAYS = set("0123456789+-=()[]{}.,;:!/|<>'*^_ ") | {"\u2212", "\u00d7", "\u22c5", "\u2061", "\u2062"}


def published(font: Path, chars: set[str], cache: Path, shown) -> bytes:
    """The WOFF2 cut of `font` holding `chars` (and the few the site's formulas are likely to need next).
    `shown`: the font's path as an error names it."""
    wanted = "".join(sorted(chars | _ALWAYS))
    data = font.read_bytes()
    key = digest(data, wanted, Path(__file__).read_bytes())
    kept = read_cache(cache / "math-font.json", {})
    if isinstance(kept, dict) and kept.get("key") == key and isinstance(kept.get("woff2"), str):
        try:
            return base64.b64decode(kept["woff2"], validate=True)
        except ValueError:
            pass  # a damaged entry is a miss
    try:
        out = _CUT[key] if key in _CUT else _cut(data, wanted)
    except Exception as exc:  # a theme's font is the course's input: whatever fontTools finds wrong in it
        from lessonkit.errors import BuildError

        raise BuildError(f"not an OpenType math font the build can cut ({type(exc).__name__}: {exc})", shown) from None
    _CUT[key] = out
    write_cache(cache / "math-font.json", {"key": key, "woff2": base64.b64encode(out).decode("ascii")})
    return out


_CUT: dict = {}  # key -> the cut made in this process: another course (or a fresh .cache/) need not cut again


def _cut(data: bytes, chars: str) -> bytes:
    import io

    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]  # ssty (script-size forms), the MATH table's variants
    options.name_IDs = ["*"]  # the licence and the font's names stay with it
    options.name_languages = ["*"]
    options.notdef_outline = True
    options.glyph_names = False
    options.drop_tables += ["FFTM"]  # FontForge's timestamps: nothing a browser reads
    # Same bytes from the same font and characters: head.modified is the font's own, not today's.
    font = TTFont(io.BytesIO(data), recalcTimestamp=False)
    cutter = subset.Subsetter(options)
    cutter.populate(text=chars)
    cutter.subset(font)
    out = io.BytesIO()
    font.flavor = "woff2"
    font.save(out)
    return out.getvalue()
