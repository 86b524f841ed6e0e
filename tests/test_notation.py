"""Math notation in the texts the build writes as plain text: d_k as a letter and its subscript."""

import pytest

from lessonkit.notation import notation

SUB = '<span class="notation"><var>{}</var><sub>{}</sub></span>'


@pytest.mark.parametrize("text, html", [
    ("秩不超过 d_k。", "秩不超过 " + SUB.format("d", "<var>k</var>") + "。"),
    ("all d_model dimensions", "all " + SUB.format("d", "model") + " dimensions"),
    ("a d_k-dimensional subspace", "a " + SUB.format("d", "<var>k</var>") + "-dimensional subspace"),
    ("W_Q, W_O (d_head)", SUB.format("W", "<var>Q</var>") + ", " + SUB.format("W", "<var>O</var>") + " ("
     + SUB.format("d", "head") + ")"),
    # configuration keys, code and file names stay as written; the rest is escaped
    ("config.json: n_head = 25, x_scale, repro_t8_multires.py, config.d_model", None),
    ("a < b & <script>", "a &lt; b &amp; &lt;script&gt;"),
    # a transpose or a small power is a superscript, after a symbol only
    ("QK^T and W_K^T, h · n^2", "QK<sup><var>T</var></sup> and " + SUB.format("W", "<var>K</var>")
     + "<sup><var>T</var></sup>, h · n<sup>2</sup>"),
    ("10^6 steps, x ^ 2, a^Tb, n^10", None),
    # a singular value's bound, also before its matrix
    ("σ_max(W) < 1, σ_min", SUB.format("σ", "max") + "(W) &lt; 1, " + SUB.format("σ", "min")),
    ("xσ_max, σ_maximal", None),
])
def test_subscripts_of_the_course_notation_only(text, html):
    assert str(notation(text)) == (html if html is not None else text)
