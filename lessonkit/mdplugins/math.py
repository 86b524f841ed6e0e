"""$…$ and $$…$$ to MathML at build time (latex2mathml), refusing what it would garble.

latex2mathml passes unknown commands through as text (<mi>\\foo</mi>) and
ignores a missing brace; both are caught here and reported with the line.
"""

import re
from html import escape
from pathlib import Path

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

from ..errors import BuildError
from ..memo import Memo
from . import number_label
from .lines import line_of
from .punct import glue_closing

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


def _made_by() -> str:
    from ..memo import source_digest
    from ..versions import package_version

    return f"latex2mathml {package_version('latex2mathml')} {source_digest(Path(__file__))}"


CACHE = Memo(_made_by)


def tex_to_mathml(tex: str, display: bool) -> str:
    return CACHE.get(f"{'block' if display else 'inline'}:{tex}", lambda: _convert(tex, display))


def _convert(tex: str, display: bool) -> str:
    from latex2mathml.converter import convert

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
            if token.type == "math_block_label":  # $$ … $$ (label): numbered, named by {ref}`eq:label`
                number, anchor = ctx.out.labels[f"eq:{token.info}"]
                return (f'<div class="math-display numbered" id="{escape(anchor)}" tabindex="0">{mathml}'
                        f'<span class="eq-number">({number})</span></div>\n')
            if token.block:
                return f'<div class="math-display" tabindex="0">{mathml}</div>\n'
            # Display math inside a paragraph must stay phrasing content: no <div> in <p>.
            if display:
                return f'<span class="math-display" tabindex="0">{mathml}</span>'
            return glue_closing(tokens, idx, mathml, ctx.strings["closing"])
        return rule

    md.add_render_rule("math_inline", render(False))
    md.add_render_rule("math_inline_double", render(True))
    md.add_render_rule("math_block", render(True))
    md.add_render_rule("math_block_label", render(True))

    def number(state):
        ctx = state.env["ctx"]
        for token in state.tokens:
            if token.type == "math_block_label":
                if not re.fullmatch(r"[A-Za-z][\w-]*", token.info):
                    raise BuildError(f"equation label {token.info!r}: letters, digits, - and _ (e.g. (softmax))",
                                     ctx.path, line_of(token, ctx))
                number_label(ctx, f"eq:{token.info}", f"eq-{token.info}", token)

    md.core.ruler.push("lessonkit_equations", number)
