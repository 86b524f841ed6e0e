"""markdown-it-py plugins: each is ``plugin(md, **options)`` and registers rules.

They share one convention: the render ``env`` carries the page's context
(``env["ctx"]``, a ``PageContext``) and collects what the page uses.
"""

import re

# Where the verification summary goes; the blocks plugin writes it, the page renderer fills it.
SUMMARY_SLOT = "<!--lessonkit:verification-summary-->"


def figure_slot(fid: str, dimension: str) -> str:
    """Where a figure's width ("w") or height ("h") goes, once the figures are drawn (the render stage)."""
    return f"\x00{dimension}:{fid}\x00"


_FIGURE_SLOT = re.compile("\x00([wh]):([^\x00]+)\x00")


def fill_figure_slots(body: str, sizes: dict, lang: str) -> str:
    """Put each figure's width and height (CSS pixels) where the page asks for them."""
    return _FIGURE_SLOT.sub(lambda m: str(sizes[m.group(2), lang][0 if m.group(1) == "w" else 1]), body)
