"""Names an author gives, and the ids the engine derives from them.

Claim and value ids, figure, table and equation ids, element ids and language tags are each checked
where they are read, against one pattern: a name can never carry a quote, an angle bracket, a space
or a path into the page. Attribute values are escaped on the way out all the same (`attr`).
"""

from __future__ import annotations

import re
from html import escape

from lessonkit.errors import BuildError

# p2.ratio, gpt.map_bytes_h128, fig-2, table-costs: letters, digits and _, in parts joined by . or -
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:[.-][A-Za-z0-9_]+)*\Z")
# A figure is a function of a recipe module: multires.p2_gradients
FIGURE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*\Z")
# BCP 47, as far as a page's lang attribute needs: zh-CN, en, pt-BR
LANG_TAG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*\Z")
_MAX = 120
# Characters no text of a course may hold: C0 and C1 controls but tab and newline, DEL, the line and
# paragraph separators (they split a JSON line and a terminal's), and the bidi overrides, which show
# characters in another order than the text's. (Embeddings, isolates and marks are what right-to-left text
# is written with: they are kept.)
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202d\u202e]")


def control_in(text: str) -> str | None:
    """"U+202E RIGHT-TO-LEFT OVERRIDE" for the first character of CONTROLS in text, else None."""
    import unicodedata

    found = CONTROLS.search(text)
    if found is None:
        return None
    c = found.group()
    return f"U+{ord(c):04X} {unicodedata.name(c, 'a control character')}"
# Ids every page's template writes (base.html, page.html, glossary.html): no author's id may take one.
TEMPLATE_IDS = ("top", "main", "page-end")

_SAY = {NAME.pattern: "letters, digits and _, in parts joined by '.' or '-', starting with a letter",
        FIGURE.pattern: "<recipe module>.<function>, both Python names",
        LANG_TAG.pattern: "a language tag such as zh-CN or en"}


def check(kind: str, name, pattern: re.Pattern = NAME) -> str:
    """The name, if it fits the pattern; else a one-line error that says what a name may be."""
    if not isinstance(name, str) or len(name) > _MAX or not pattern.match(name):
        shown = repr(name) if not isinstance(name, str) or len(name) <= 60 else repr(name[:60] + "…")
        raise BuildError(f"{kind} {shown} is not a valid name: {_SAY[pattern.pattern]}")
    return name


def attr(value) -> str:
    """A value for an HTML attribute, quotes included in the escaping."""
    return escape(str(value), quote=True)


def anchor(prefix: str, name: str) -> str:
    """The element id the engine derives from a name: claim-p2-vanishing for p2.vanishing."""
    return prefix + name.replace(".", "-").replace("_", "-")


def claim_anchor(key: str) -> str:
    return anchor("claim-", key)


def experiment_anchor(name: str) -> str:
    return f"experiment-{name}"


def panel_id(target: str) -> str:
    """The provenance panel for a claim or an experiment anchor."""
    return f"prov-{target}"


def evidence_url(url: str) -> str:
    """A page's evidence page, beside it: zh/lesson-l5.html -> zh/lesson-l5.evidence.html."""
    return url.removesuffix(".html") + ".evidence.html"


def did_you_mean(wrong: str, known, *, cutoff: float = 0.6, shown=repr) -> str:
    """" (did you mean …?)" with the closest of `known`, or "". When what was written holds characters the
    suggestion does not (a Cyrillic і for an i, a zero-width space), it names them: the two may look the same."""
    import difflib
    import unicodedata

    close = difflib.get_close_matches(wrong, sorted(known), n=1, cutoff=cutoff)
    if not close:
        return ""
    odd = sorted({c for c in wrong if c not in close[0] and (not c.isascii() or not c.isprintable())})
    differs = "; what you wrote holds " + ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'a control')}"
                                                   for c in odd) + ", which it does not" if odd else ""
    return f" (did you mean {shown(close[0])}?{differs})"
