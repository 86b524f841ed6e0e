"""Spans `[text]{.term}` (glossary) and `[text]{.claim audit=…}` (the claims audit)."""

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.attrs import attrs_plugin

from lessonkit import names
from lessonkit.errors import BuildError
from lessonkit.markdown.plugins.lines import line_of
from lessonkit.markdown.plugins.math import inline_math
from lessonkit.markup import Mark
from lessonkit.measure import shown

# What the evidence says of an author's statement, and what each status needs to say it.
AUDITS = {
    "verified": ("key",),  # a claim of ours tests it, in the scope it speaks of
    "partly": ("key", "scope"),  # a claim tests it in a narrower setting; scope says how it is narrower
    "cited": ("ref", "at"),  # a source says it; at: the exact place (section, table, page); quote: its words
    "unverified": (),  # neither; why: what is missing (optional)
    "refuted": ("why", "fix"),  # our measurement (key) or a source (ref) contradicts it; fix: the correction
}
# A correction is shown beside its statement without a click: one line, not the panel's explanation.
FIX_MAX = 160
# A source's own words, as its panel quotes them: a passage, not a page of the paper.
QUOTE_MAX = 300
# What `{…}` may set, per element: enough for the course's markup, nothing that could restyle or
# script the page (style, on…, href on a span …).
ALLOWED = {
    "span_open": {"class", "id", "key", "audit", "ref", "at", "why", "scope", "fix", "quote", "quote_at"},
    "link_open": {"href", "title", "class", "id"},
    "image": {"src", "alt", "title", "class", "id"},
    "code_inline": {"class", "id"},
}
# Ids the page templates and plugins write themselves.
RESERVED_IDS = {*names.TEMPLATE_IDS, "claims-audit", "verification-summary", "verification-evidence", "references"}
RESERVED_PREFIXES = ("audit-", "ref-", "exercise-", "claim-", "experiment-", "fig-", "prov-", "term-tip-", "s-", "fn",
                     "fix-", "home-", "table-", "eq-")


def check_id(ctx, hid: str) -> None:
    """An id an author gives (a heading's or a span's): a name, unique on the page, not one the build writes,
    and not one a language's column takes on the side-by-side page (en-…, zh-…)."""
    names.check("id", hid)
    if hid.partition("-")[0] in ctx.inputs.strings:
        raise BuildError(f"id {hid!r} begins like the side-by-side page's ids for the {hid.partition('-')[0]} "
                         f"column; choose another")
    if hid in RESERVED_IDS or hid.startswith(RESERVED_PREFIXES):
        raise BuildError(f"id {hid!r} is reserved for the page's own elements; choose another")
    if hid in ctx.ids:
        raise BuildError(f"duplicate id {hid!r}")
    ctx.ids.add(hid)


# "[text]{.term …}" left as plain text means the attributes did not parse (the text may stop at a formula the
# failed attributes held).
_UNPARSED = re.compile(r"\]\{[.#]")


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
        fixes: dict[int, list[str]] = {}  # block index -> the corrections of its refuted statements
        for b, block in enumerate(state.tokens):
            if block.type != "inline" or not block.children:
                continue
            out = list(block.children)
            i = 0
            while i < len(out):
                token = out[i]
                if token.type == "text" and _UNPARSED.search(token.content):
                    raise BuildError("malformed span attributes (quote values with dots or spaces: "
                                     'key="kvcache.gqa_saving"; a value holds no { or })', ctx.path, line_of(token, ctx))
                if token.attrs and token.type in ALLOWED:
                    try:
                        _check_attrs(ctx, token)
                    except BuildError as exc:
                        ctx.report(exc, token)
                if token.type == "span_open":
                    classes = (token.attrGet("class") or "").split()
                    text, close = _text_between(out, i)
                    try:
                        if "term" in classes:
                            tip = _term(ctx, token, text)
                            out.insert(close, _html(tip))
                        elif "claim" in classes:
                            badge = _audit(ctx, token, *_label(state, out[i + 1:close]))
                            entry = ctx.out.audits[-1]
                            if entry["status"] == "refuted":
                                fixes.setdefault(b, []).append((entry["n"], entry["fix"]))
                            after = out[close + 1] if close + 1 < len(out) else None
                            closing = ctx.strings["closing"]
                            if after is not None and after.type == "text" and after.content[:1] \
                                    and after.content[0] in closing:  # "。" stays on the badge's line
                                badge = f'<span class="nobr">{badge}{after.content[0]}</span>'
                                after.content = after.content[1:]
                            out.insert(close + 1, _html(badge))
                    except BuildError as exc:
                        ctx.report(exc, token)
                i += 1
            block.children = out
        _place_corrections(ctx, state.tokens, fixes)

    md.core.ruler.push("lessonkit_spans", rule)


def _place_corrections(ctx, tokens: list, fixes: dict) -> None:
    """Each block holding a refuted statement (a paragraph, a heading, a whole table) is wrapped with its
    corrections after it: the stylesheet sets them in the margin beside it when the page is wide enough,
    and after it when not. One wrapper per block, its corrections in reading order; statements with the
    same correction (a table's column) share one."""
    blocks: dict[tuple[int, int], dict[str, list[int]]] = {}
    for b, notes in fixes.items():
        start = b - 1
        if tokens[start].type in ("th_open", "td_open"):
            while tokens[start].type != "table_open":
                start -= 1
        depth, end = 0, start
        for end in range(start, len(tokens)):
            depth += tokens[end].nesting
            if depth == 0:
                break
        same = blocks.setdefault((start, end), {})
        for n, fix in notes:
            same.setdefault(fix, []).append(n)
    for (start, end), same in sorted(blocks.items(), reverse=True):
        notes = "".join(ctx.inputs.parts("correction", numbers=numbers, fix=fix, strings=ctx.strings)
                        for fix, numbers in sorted(same.items(), key=lambda item: item[1][0]))
        after = Token("html_block", "", 0)
        after.content = f'<div class="corrections">{notes}</div></div>\n'
        before = Token("html_block", "", 0)
        before.content, before.meta = '<div class="corrected">\n', {"wraps": True}  # (outline.py)
        tokens.insert(end + 1, after)
        tokens.insert(start, before)


def _check_attrs(ctx, token) -> None:
    allowed = ALLOWED[token.type]
    for name in token.attrs:
        if name not in allowed:
            raise BuildError(f"attribute {name!r} is not allowed here (allowed: {', '.join(sorted(allowed))})")
    if "id" in token.attrs:
        check_id(ctx, str(token.attrs["id"]))


def _term(ctx, token, text: str) -> str:
    """A glossary term: its counterparts in the course's other languages show on hover and focus."""
    entry = ctx.inputs.glossary_entry(ctx.lang, text, token.attrGet("key"))
    tip_id = f"term-tip-{len(ctx.out.terms) + 1}"
    ctx.out.terms.append(entry["id"])
    token.attrs = {"class": "term", "tabindex": "0", "data-term": entry["id"], "aria-describedby": tip_id,
                   "lang": ctx.lang_tag(ctx.lang)}
    others = [(ctx.lang_tag(lang), entry[lang]) for lang in ctx.inputs.strings if lang != ctx.lang]
    return ctx.inputs.parts("term_tip", id=tip_id, others=others, strings=ctx.strings)


# What a statement keeps when the audit list and its panel name it: no links, marks or tooltips (the
# name is itself a link), no ids (they would repeat).
_LABEL_TOKENS = {"text", "code_inline", "math_inline", "softbreak", "strong_open", "strong_close",
                 "em_open", "em_close", "s_open", "s_close"}


def _label(state, children) -> tuple[str, str]:
    """The statement as its audit entry names it: words, values as shown and math, nothing interactive.

    Second, a spoken name for a statement that is all math: a link's name leaves MathML out, so such an
    entry would be an empty link to a screen reader; it is read as the formula's LaTeX instead."""
    ctx = state.env["ctx"]
    kept, words = [], []
    for t in children:
        if t.type == "myst_role" and t.meta.get("name") == "val":
            key, _, spec = t.content.strip().partition(":")
            m = ctx.measurements
            number = Token("text", "", 0)
            number.content = shown.text(m, ctx.strings, key.strip(), m.value(key.strip()), spec.strip() or None)
            number.content += t.meta.get("closing", "")  # the "，" the punctuation rule moved onto the value
            kept.append(number)
            words.append(number.content)
        elif t.type == "quarto_xref" or (t.type == "text" and "@" in t.content):
            from lessonkit.markdown.plugins.citations import as_words

            for part in as_words(t):
                kept.append(part)
                words.append(part.content)
        elif t.type in _LABEL_TOKENS:
            kept.append(t)
            if t.type in ("text", "code_inline"):
                words.append(t.content)
    html = state.md.renderer.renderInline(kept, state.md.options, state.env)
    if "".join(words).strip():
        return html, ""
    return html, " ".join(t.content.strip() if t.type == "math_inline" else t.content for t in kept).strip()


def _audit(ctx, token, label: str, name: str) -> str:
    status = token.attrGet("audit")
    if status not in AUDITS:
        raise BuildError(f"audit must be one of {', '.join(AUDITS)}, got {status!r}")
    missing = [name for name in AUDITS[status] if not (token.attrGet(name) or "").strip()]
    if status == "refuted" and not (token.attrGet("key") or token.attrGet("ref")):
        missing.append("key or ref (the evidence)")
    if missing:
        raise BuildError(f"audit={status} needs {' and '.join(missing)}")
    fix = " ".join((token.attrGet("fix") or "").split())
    if fix and status != "refuted":
        raise BuildError(f"fix= is the correction of a refuted statement; this one is audit={status}")
    if len(fix) > FIX_MAX:
        raise BuildError(f"fix= is {len(fix)} characters: a correction is one line (at most {FIX_MAX}); "
                         f"the explanation goes in why=")
    quote = " ".join((token.attrGet("quote") or "").split())
    if quote and not token.attrGet("ref"):
        raise BuildError("quote= holds a source's own words: it needs the source, ref=")
    if token.attrGet("quote_at") and not quote:
        raise BuildError("quote_at= is where the quoted words stand in the source: it needs quote=")
    if len(quote) > QUOTE_MAX:
        raise BuildError(f"quote= is {len(quote)} characters: quote the passage the statement rests on (at most "
                         f"{QUOTE_MAX}), and cut with …")
    n = len(ctx.out.audits) + 1
    entry = {"n": n, "status": status, "label": label, "name": name, "id": f"audit-{n}",
             "why": token.attrGet("why") or "", "scope": token.attrGet("scope") or "", "claims": [],
             "ref": None, "ref_key": "", "at": "", "fix": inline_math(ctx, fix) if fix else "",
             "quote": quote, "quote_lang": _language_of(ctx, quote), "line": line_of(token, ctx),
             "quote_at": " ".join((token.attrGet("quote_at") or "").split()) if quote else ""}
    for key in (token.attrGet("key") or "").replace(",", " ").split():
        claim = ctx.measurements.claim(key)
        if status in ("verified", "partly") and not claim.measures:
            raise BuildError(f"audit={status} rests on claim {key}, whose criterion reads only parameters (values "
                             f"set in PARAMS or computed from them alone): it tests nothing measured; key a claim "
                             f"that measures, or cite a source")
        if status in ("verified", "partly") and claim.on_course_seed and not claim.fails_when:
            raise BuildError(f"audit={status} rests on claim {key}, whose criterion {claim.criterion!r} no move of "
                             f"the measured values it reads can make fail (halved, doubled, negated, zeroed, ten "
                             f"times larger or smaller, set to the numbers and values it compares with, swapped): it "
                             f"cannot fail, so it verifies nothing; key a claim that can, or mark the statement "
                             f"unverified")
        ctx.show_claim(key)
        entry["claims"].append(claim.key)
    if token.attrGet("ref"):
        entry["ref_key"], entry["at"] = token.attrGet("ref"), token.attrGet("at") or ""
        entry["ref"] = ctx.inputs.reference(entry["ref_key"])
    ctx.out.audits.append(entry)
    token.attrs = Mark(status, entry["id"], tuple(entry["claims"])).attrs(f"audit audit-{status}")
    return ctx.inputs.parts("audit_mark", status=status, n=n, label=ctx.strings[f"audit_{status}"],
                            strings=ctx.strings)


def unchecked(entry: dict) -> bool:
    """A statement that rests on a source (cited, or refuted by one) whose words it does not quote: its place
    was not checked against the source's text."""
    return bool(entry.get("ref_key")) and entry["status"] in ("cited", "refuted") and not entry.get("quote")


def _language_of(ctx, text: str) -> str:
    """The language a quote is in, for its lang attribute: Chinese if it holds Han characters, else English."""
    if not text:
        return ""
    if re.search("[\u3400-\u9fff]", text):
        return ctx.lang_tag("zh") if "zh" in ctx.inputs.strings else "zh"
    return ctx.lang_tag("en") if "en" in ctx.inputs.strings else "en"
