"""Spans `[text]{.term}` (glossary) and `[text]{.claim audit=…}` (the claims audit)."""

import re
from html import escape

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.attrs import attrs_plugin

from ..errors import BuildError
from .lines import line_of

AUDITS = ("verified", "cited", "unverified")
# "[text]{.term …}" left as plain text means the attributes did not parse.
_UNPARSED = re.compile(r"\]\{[.#][^}]*\}")


def _html(content: str) -> Token:
    t = Token("html_inline", "", 0)
    t.content = content
    return t


def _text_between(children, start: int) -> tuple[str, int]:
    depth, parts = 0, []
    for j in range(start, len(children)):
        c = children[j]
        if c.type == "span_open":
            depth += 1
        elif c.type == "span_close":
            depth -= 1
            if depth == 0:
                return "".join(parts), j
        elif c.type in ("text", "code_inline"):
            parts.append(c.content)
    return "".join(parts), len(children) - 1


def spans_plugin(md: MarkdownIt) -> None:
    md.use(attrs_plugin, spans=True)

    def rule(state):
        ctx = state.env["ctx"]
        for block in state.tokens:
            if block.type != "inline" or not block.children:
                continue
            out = list(block.children)
            i = 0
            while i < len(out):
                token = out[i]
                if token.type == "text" and _UNPARSED.search(token.content):
                    raise BuildError("malformed span attributes (quote values with dots or spaces: "
                                     'key="kvcache.gqa_saving")', ctx.path, line_of(token, ctx))
                if token.type == "span_open":
                    classes = (token.attrGet("class") or "").split()
                    text, close = _text_between(out, i)
                    try:
                        if "term" in classes:
                            tip = _term(ctx, token, text)
                            out.insert(close, _html(tip))
                        elif "claim" in classes:
                            # The audit list repeats the statement as rendered (values, math and all).
                            html = state.md.renderer.renderInline(out[i + 1:close], state.md.options, state.env)
                            badge = _audit(ctx, token, text, html)
                            out.insert(close + 1, _html(badge))
                    except BuildError as exc:
                        raise exc.located(ctx.path, line_of(token, ctx)) from None
                i += 1
            block.children = out

    md.core.ruler.push("lessonkit_spans", rule)


def _term(ctx, token, text: str) -> str:
    key = token.attrGet("key")
    entry = ctx.glossary_entry(text, key)
    other = "en" if ctx.lang == "zh" else "zh"
    tip_id = f"term-tip-{len(ctx.terms) + 1}"
    ctx.terms.append(entry["id"])
    token.attrs = {"class": "term", "tabindex": "0", "data-term": entry["id"], "aria-describedby": tip_id,
                   "lang": ctx.lang_tag(ctx.lang)}
    return f'<span class="term-tip" role="tooltip" id="{tip_id}" lang="{ctx.lang_tag(other)}">{escape(entry[other])}</span>'


def _audit(ctx, token, text: str, html: str) -> str:
    status = token.attrGet("audit")
    if status not in AUDITS:
        raise BuildError(f"audit must be one of {', '.join(AUDITS)}, got {status!r}")
    n = len(ctx.audits) + 1
    entry = {"n": n, "status": status, "text": text, "html": html, "id": f"audit-{n}"}
    if status == "verified":
        key = token.attrGet("key") or ""
        claim = ctx.measurements.claim(key)
        ctx.show_claim(key)
        entry["claim"] = claim.key
    elif status == "cited":
        ref = token.attrGet("ref") or ""
        entry["ref"] = ctx.reference(ref)
        entry["ref_key"] = ref
    else:
        entry["why"] = token.attrGet("why") or ""
    ctx.audits.append(entry)
    token.attrs = {"class": f"audit audit-{status}", "data-audit": status, "id": entry["id"]}
    label = escape(ctx.strings[f"audit_{status}"])
    return f'<a class="audit-mark audit-mark-{status}" href="#audit-list-{n}" title="{label}">{label}</a>'
