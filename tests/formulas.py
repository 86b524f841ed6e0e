"""The formula gallery: every formula of the course and common machine-learning notation.

Temml was chosen over latex2mathml on this gallery (see lessonkit/markdown/plugins/math.py); the tests render
it as a page, check its MathML, and write its screenshots (artifacts/screenshots/formulas.*.png).
"""

import re
from pathlib import Path

ML = [
    r"\ln n", r"\log p(x)", r"\sin x + \cos\theta", r"\exp(x)",
    r"\mathrm{softmax}(z)_i = \frac{e^{z_i}}{\sum_{j=1}^{n} e^{z_j}}", r"\operatorname{softmax}(QK^\top / \sqrt{d_k})\,V",
    r"\max_i x_i", r"\arg\max_i p_i", r"\operatorname*{arg\,max}_\theta \mathcal{L}(\theta)", r"\mathbb{R}^{d}",
    r"x \in \mathbb{R}^{n \times d}", r"\|x\|_2", r"\left\| W \right\|_F", r"\begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}",
    r"\begin{bmatrix} a & b \\ c & d \end{bmatrix}", r"f(x) = \begin{cases} x & x > 0 \\ 0 & \text{otherwise} \end{cases}",
    r"\begin{aligned} h_1 &= W_1 x \\ h_2 &= W_2 h_1 \end{aligned}", r"\mathbb{E}_{x \sim p}[f(x)]",
    r"\nabla_\theta \mathcal{L}", r"\sum_{i=1}^{n} x_i", r"\prod_{l=1}^{L} \|W_l\|", r"\lim_{n \to \infty} (1 + 1/n)^n = e",
    r"\det(A) \ne 0", r"\mathrm{tr}(AB)", r"\hat{y} = \sigma(Wx + b)", r"\frac{\partial \mathcal{L}}{\partial W}",
    r"\text{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V", r"O(n^2 d)", r"\mathrm{Var}(x)", r"p(y \mid x)",
    r"\mathrm{rank}(AB) \le \min(\mathrm{rank}\,A,\ \mathrm{rank}\,B)", r"\log\det(I + W)", r"\min_{\theta} \mathcal{L}",
]


def course_formulas(root: Path) -> list[str]:
    """Every formula written in the course's pages (both languages), once."""
    found = set()
    for page in sorted((root / "content").rglob("*.md")):
        for m in re.finditer(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", page.read_text("utf-8"), re.S):
            found.add((m.group(1) or m.group(2)).strip())
    return sorted(found)


# An operator name run into an identifier ("lnn"), or an upright name spelt as single letters.
RUN_TOGETHER = re.compile(r"(?<!<msub>)(?<!<msup>)(?<!<munder>)(?<!<mover>)(?<!<msubsup>)(?<!<munderover>)"
                          r"<mi[^>]*>([A-Za-z]{2,})</mi>(?:</mpadded>|</mrow>)*<m(?:i|n)\b")
SPELT_OUT = re.compile(r'(?:<mi mathvariant="normal">[A-Za-z]</mi>){3,}')


def typesetting_problems(html: str) -> list[str]:
    return [m.group(0) for m in RUN_TOGETHER.finditer(html)] + [m.group(0) for m in SPELT_OUT.finditer(html)]
