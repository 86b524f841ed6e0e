"""A page's outline: its blocks (top-level and nested), their kinds, section by section.

Two uses. The build compares a translation's outline with its source's (a paragraph left out or
added shows as "section 'redundancy' has 5 paragraphs where … has 6"). And each top-level block is
preceded in the body by a marker, so that the side-by-side page can pair block with block; the
single-language page drops the markers.
"""

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from lessonkit.markdown.plugins.lines import line_of

# A top-level token's type -> the kind of block it opens.
KINDS = {
    "heading_open": "heading", "paragraph_open": "paragraph", "bullet_list_open": "list",
    "ordered_list_open": "list", "table_open": "table", "fence": "code", "code_block": "code",
    "math_block": "math", "math_block_label": "math", "blockquote_open": "quote", "hr": "rule",
    "footnote_block_open": "footnotes", "list_item_open": "item",
}
MARKER = re.compile(r"<!--lk-block-->\n?")


def kind_of(token) -> str | None:
    if token.type in KINDS:
        return KINDS[token.type]
    if token.type.startswith("container_") and token.type.endswith("_open"):
        return token.type[len("container_"):-len("_open")]  # figure, table, exercise, note …
    return None


def outline_plugin(md: MarkdownIt) -> None:
    def rule(state):
        ctx = state.env["ctx"]
        if state.env.get("title"):
            return
        out, section = [], ""
        for token in state.tokens:
            kind = kind_of(token)
            if kind is None or token.hidden:
                out.append(token)
                continue
            if kind == "heading" and token.tag in ("h2", "h3"):
                section = token.attrGet("id") or section
            # Nested blocks count too (a paragraph inside a callout), with their depth.
            ctx.out.outline.append((section, kind, line_of(token, ctx), token.level))
            if token.level == 0:
                marker = Token("html_block", "", 0)
                marker.content = "<!--lk-block-->\n"
                # A wrapper another plugin opened around the block (its corrections) is part of the block.
                at = len(out) - 1 if out and out[-1].meta.get("wraps") else len(out)
                out.insert(at, marker)
            out.append(token)
        state.tokens[:] = out

    # Last: headings have their ids, containers are known.
    md.core.ruler.push("lessonkit_outline", rule)


def blocks(body: str) -> list[str]:
    """A body cut at its markers: one string per top-level block (the text before the first, if any, first)."""
    parts = MARKER.split(body)
    return parts[1:] if not parts[0].strip() else parts


def strip_markers(html: str) -> str:
    return MARKER.sub("", html)
