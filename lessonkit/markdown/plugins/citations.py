"""Citations in prose, in Pandoc's and Quarto's syntax: `[@vaswani2017]`, `[@vaswani2017, §3.2]`,
`[@ba2016; @xiong2020]`. Each becomes the citation style's in-text form in the page's language
("(Vaswani et al., 2017)"), a link to the source's entry in the page's references, which lists it.

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
            for token in block.children or []:
                if token.type == "citation":
                    token.meta["html"] = _html(ctx, token)
                elif token.type == "text" and (m := _QUARTO_XREF.search(token.content)):
                    ctx.report(_quarto_xref(m.group(1), m.group(2)), token)

    md.inline.ruler.before("link", "citation", inline)
    md.core.ruler.push("lessonkit_citations", resolve)
    md.add_render_rule("citation", lambda self, tokens, idx, options, env: tokens[idx].meta.get("html", ""))


# Quarto's cross-references (@fig-x, @tbl-x, @eq-x, @sec-x) are written here as {ref}s: said, not printed as text.
_QUARTO_XREF = re.compile(r"(?<![\w@])@(fig|tbl|eq|sec)-([\w.\-]*\w)")
_REF_KIND = {"fig": "fig", "tbl": "table", "eq": "eq"}


def _quarto_xref(kind: str, name: str) -> BuildError:
    if kind == "sec":
        return BuildError(f"@sec-{name} is Quarto's reference to a section: here, link to its heading's id, "
                          f"[the section](#{name}) (on another page: [the section](page.md#{name}))")
    return BuildError(f"@{kind}-{name} is Quarto's cross-reference: here, write {{ref}}`{_REF_KIND[kind]}:{name}` "
                      f"(on another page: {{ref}}`page.md#{_REF_KIND[kind]}:{name}`)")


def _html(ctx, token) -> str:
    """The citation as the page shows it: the style's in-text form of each source, linked to its entry."""
    links, brackets = [], ("", "")
    for key, locator in token.meta["items"]:
        quarto = re.fullmatch(r"(fig|tbl|eq|sec)-([\w.\-]*\w)", key)
        if quarto and key not in ctx.inputs.references:
            return ctx.report(_quarto_xref(*quarto.groups()), token)
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
