"""Math notation in the texts the build writes as plain text (a claim's statement, an audit's why, scope and
place, a glossary definition): d_k, d_model, W_Q as a letter with its subscript, not as a raw underscore.

Only the course's notation is read so (a base among d, W, f, T, h, QW, KW, VW and a subscript among k, v, q,
i, Q, K, V, O, a digit, model, head, infer, max, min; and σ_max, σ_min): a configuration key (n_head, x_scale) or a file name
stays as it is written. A transpose or a small power (QK^T, n^2) is a superscript.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

_SUBSCRIPTED = re.compile(r"(?<![\w./\\-])(d|W|f|T|h|QW|KW|VW)_(model|head|infer|max|min|[kvqiQKVO]|[0-9])(?![\w(/])")


# σ_max(W), σ_min: a singular value's bound, also before its matrix's parenthesis.
_SIGMA = re.compile(r"(?<![\w./\\-])σ_(max|min)(?![\w/])")


def _letters(text: str) -> str:
    return "".join(f"<var>{c}</var>" if c.isalpha() else c for c in text) if len(text) <= 2 else text


# A transpose or a small power after a symbol (QK^T, W_K^T, n^2): as a superscript. Not after a space or a digit
# run that is a number's own (10^6 stays as written: a number is shown by the build, not typed).
_SUPERSCRIPTED = re.compile(r"(?<=[A-Za-z>])\^(T|[2-4])(?![\w^])")


def notation(text) -> Markup:
    """The text, escaped, with each subscripted symbol as <var>d</var><sub><var>k</var></sub> and each transpose
    or small power as a superscript (QK^T, n^2)."""
    if isinstance(text, Markup):
        return text
    html = _SUBSCRIPTED.sub(lambda m: f'<span class="notation">{_letters(m.group(1))}'
                                      f'<sub>{_letters(m.group(2)) if len(m.group(2)) == 1 else m.group(2)}'
                                      f'</sub></span>', str(escape(text)))
    html = _SIGMA.sub(lambda m: f'<span class="notation"><var>σ</var><sub>{m.group(1)}</sub></span>', html)
    return Markup(_SUPERSCRIPTED.sub(lambda m: f'<sup>{_letters(m.group(1))}</sup>', html))
