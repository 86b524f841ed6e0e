"""$…$ and $$…$$ to MathML at build time (latex2mathml), refusing what it would garble.

latex2mathml passes unknown commands through as text (<mi>\\foo</mi>) and
ignores a missing brace; both are caught here and reported with the line.
"""

import re
from html import escape

from latex2mathml.converter import convert
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from ..errors import BuildError
from .lines import line_of

_LEAKED = re.compile(r">(\\[A-Za-z]+)<")


def _balanced(tex: str) -> bool:
    depth = 0
    for m in re.finditer(r"\\.|[{}]", tex):
        if m.group() == "{":
            depth += 1
        elif m.group() == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def tex_to_mathml(tex: str, display: bool) -> str:
    if not _balanced(tex):
        raise BuildError(f"LaTeX has unbalanced braces: ${tex}$")
    try:
        mathml = convert(tex, display="block" if display else "inline")
    except Exception as exc:  # the converter raises many kinds; all mean "bad LaTeX"
        raise BuildError(f"LaTeX the converter rejects ({type(exc).__name__}): ${tex}$") from None
    leaked = _LEAKED.search(mathml)
    if leaked:
        raise BuildError(f"unknown LaTeX command {leaked.group(1)} in ${tex}$")
    # ⊤ (transpose) is a letter-like symbol, not an operator: no operator spacing in W^{K⊤}.
    mathml = mathml.replace("<mo>&#x022A4;</mo>", "<mi>&#x022A4;</mi>")
    # Keep the source for copy-paste and for readers of the raw HTML.
    return mathml.replace("<math ", f'<math alttext="{escape(tex.strip())}" ', 1)


def math_plugin(md: MarkdownIt) -> None:
    # double_inline: $$…$$ inside a paragraph is display math too.
    md.use(dollarmath_plugin, double_inline=True, allow_digits=False)

    def render(display: bool):
        def rule(self, tokens, idx, options, env):
            token = tokens[idx]
            ctx = env["ctx"]
            try:
                mathml = tex_to_mathml(token.content, display)
            except BuildError as exc:
                raise exc.located(ctx.path, line_of(token, ctx)) from None
            ctx.math_count += 1
            if token.block:
                return f'<div class="math-display" tabindex="0">{mathml}</div>\n'
            # Display math inside a paragraph must stay phrasing content: no <div> in <p>.
            return f'<span class="math-display" tabindex="0">{mathml}</span>' if display else mathml
        return rule

    md.add_render_rule("math_inline", render(False))
    md.add_render_rule("math_inline_double", render(True))
    md.add_render_rule("math_block", render(True))
    md.add_render_rule("math_block_label", render(True))
