"""Citations in prose, in Pandoc's and Quarto's syntax: `[@vaswani2017]`, `[@vaswani2017, §3.2]`,
`[@ba2016; @xiong2020]`. Each becomes the citation style's in-text form in the page's language
("(Vaswani et al., 2017)"), a link to the source's entry in the page's references, which lists it. And
Quarto's cross-references, `@fig-x`, `@tbl-x`, `@eq-x` and `@sec-x`: "Figure 3.2", "Equation (3.1)", a
section's title, linked; on this page or on the one page of the course that has the target.

A key that names no source is an error at its line, with the closest keys. A citation says only where a
statement comes from: it audits nothing (an audited statement is `[…]{.claim audit=cited …}`).
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markupsafe import escape

from lessonkit.errors import BuildError

_KEY = r"@([A-Za-z0-9_][\w:.\-/]*?)"
_CITATION = re.compile(r"\[(" + _KEY + r"(?:,[^;\]\n]*)?(?:;\s*" + _KEY + r"(?:,[^;\]\n]*)?)*)\]")
_ITEM = re.compile(r"\s*" + _KEY + r"(?:,\s*([^;]*))?(?:;|$)")
_BRACKETS = ("()", "[]", "（）")


def citations_plugin(md: MarkdownIt) -> None:
    def inline(state, silent):
        if not state.src.startswith("[@", state.pos):
            return False
        m = _CITATION.match(state.src, state.pos)
        if m is None:
            return False
        if not silent:
            token = state.push("citation", "", 0)
            token.content = m.group(0)
            token.meta = {"items": [(key, locator.strip()) for key, locator in _ITEM.findall(m.group(1))]}
        state.pos = m.end()
        return True

    def resolve(state):
        ctx = state.env["ctx"]
        for block in state.tokens:
            if block.children and any(t.type == "text" and "@" in t.content for t in block.children):
                block.children = _with_xrefs(block.children)
            for token in block.children or []:
                if token.type == "citation":
                    token.meta["html"] = _html(ctx, token)
                elif token.type == "quarto_xref":
                    token.meta["html"] = _xref(ctx, token, *token.meta["target"])

    md.inline.ruler.before("link", "citation", inline)
    md.core.ruler.push("lessonkit_citations", resolve)
    for kind in ("citation", "quarto_xref"):
        md.add_render_rule(kind, lambda self, tokens, idx, options, env: tokens[idx].meta.get("html", ""))


# Quarto's cross-references: @fig-x, @tbl-x, @eq-x to a figure, table or equation ({ref}`fig:x` …), @sec-x to a
# heading's id; on this page, else on the one page of the course that has it.
_QUARTO_XREF = re.compile(r"(?<![\w@])@(fig|tbl|eq|sec)-([\w.\-]*\w)")
QUARTO_KINDS = {"fig": "fig", "tbl": "table", "eq": "eq", "sec": "sec"}  # @tbl-x names the label table:x


def _with_xrefs(children: list) -> list:
    """The inline tokens with Quarto's cross-references split out of their text, outside links (a link in a
    link's text is no HTML: there @fig-x stays as written)."""
    out, depth = [], 0
    for token in children:
        depth += token.type == "link_open"
        depth -= token.type == "link_close"
        out += [token] if depth else _split_xrefs(token)
    return out


def _split_xrefs(token) -> list:
    """A text token as text and Quarto cross-references (markdown-it's text rule reads @ as text)."""
    from markdown_it.token import Token

    if token.type != "text" or not _QUARTO_XREF.search(token.content):
        return [token]
    parts, at = [], 0
    for m in _QUARTO_XREF.finditer(token.content):
        if m.start() > at:
            parts.append(Token("text", "", 0, content=token.content[at:m.start()], meta=dict(token.meta)))
        parts.append(Token("quarto_xref", "", 0, content=m.group(0), meta={**token.meta, "target": m.groups()}))
        at = m.end()
    if at < len(token.content):
        parts.append(Token("text", "", 0, content=token.content[at:], meta=dict(token.meta)))
    return parts


def as_words(token) -> list:
    """A text token, or a cross-reference, as an audit entry names its statement: Quarto's cross-references as
    their words ("Figure 3.1"), unlinked (the entry is itself a link)."""
    from markdown_it.token import Token

    from lessonkit.markdown.plugins import ANYWHERE, ref_slot

    out = []
    for part in [token] if token.type == "quarto_xref" else _split_xrefs(token):
        if part.type == "quarto_xref":
            kind, name = part.meta["target"]
            part = Token("html_inline", "", 0, content=ref_slot(ANYWHERE, f"{QUARTO_KINDS[kind]}:{name}", linked=False))
        out.append(part)
    return out


def _xref(ctx, token, kind: str, name: str) -> str:
    from lessonkit.markdown.plugins import ANYWHERE, ref_slot
    from lessonkit.markdown.plugins.lines import line_of

    label = f"{QUARTO_KINDS[kind]}:{name}"
    ctx.out.refs.append((ANYWHERE, label, line_of(token, ctx)))
    return ref_slot(ANYWHERE, label)


def _html(ctx, token) -> str:
    """The citation as the page shows it: the style's in-text form of each source, linked to its entry;
    [@fig-x] (Quarto's, a cross-reference in brackets) as the cross-reference."""
    links, brackets = [], ("", "")
    items = token.meta["items"]
    quarto = [re.fullmatch(r"(fig|tbl|eq|sec)-([\w.\-]*\w)", key) for key, _ in items]
    if all(quarto) and not any(key in ctx.inputs.references for key, _ in items):
        return ", ".join(_xref(ctx, token, *m.groups()) for m in quarto)
    for key, locator in items:
        try:
            ref = ctx.inputs.reference(key)
        except BuildError as exc:
            return ctx.report(exc, token)
        if all(r["key"] != ref["key"] for r in ctx.out.citations):
            ctx.out.citations.append(ref)
        cite = ref["cite"][ctx.lang]
        # One pair of brackets around them all: "(Ba et al., 2016; Xiong et al., 2020)".
        for pair in _BRACKETS:
            if len(cite) > 1 and cite[0] == pair[0] and cite[-1] == pair[1]:
                brackets, cite = (pair[0], pair[1]), cite[1:-1]
                break
        where = f", {escape(locator)}" if locator else ""
        links.append(f'<a class="cite" href="#ref-{escape(ref["key"])}">{cite}{where}</a>')
    return f'<span class="citation">{brackets[0]}{"; ".join(links)}{brackets[1]}</span>'
