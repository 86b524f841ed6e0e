"""Closing punctuation that may not begin a line (Chinese "。", "，" …): keep it with the math or number
before it. Which marks those are is the language's (its interface strings' `closing`).

A core rule moves such a mark from the text after a value or a formula onto that token (once, before
anything is rendered: a span's contents may be rendered twice, in the text and in the audit list);
the token's render rule then writes both, unbreakable, with `glued`.
"""

from markdown_it import MarkdownIt

GLUED = ("myst_role", "math_inline", "math_inline_double")


def glued(token, html: str) -> str:
    punct = token.meta.get("closing")
    return f'<span class="nobr">{html}{punct}</span>' if punct else html


def punct_plugin(md: MarkdownIt) -> None:
    def rule(state):
        closing = state.env["ctx"].strings["closing"]
        if not closing:
            return
        for block in state.tokens:
            kids = block.children or []
            for token, following in zip(kids, kids[1:], strict=False):
                if token.type in GLUED and following.type == "text" and following.content[:1] in closing \
                        and following.content[:1]:
                    token.meta["closing"] = following.content[0]
                    following.content = following.content[1:]

    md.core.ruler.after("inline", "lessonkit_punct", rule)
