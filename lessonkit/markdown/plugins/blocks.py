"""`::: kind` blocks: exercises with collapsed hints, callouts, epigraphs, numbered figures and
tables, and the place of the verification summary.

Figures (`::: figure <id> <alt text>`, the block's content is the caption) and tables
(`::: table <id> <caption>` around a Markdown table) are numbered in page order; their
label ("图 2", "Table 1") opens the caption, and {ref}`fig:<id>` / {ref}`table:<id>` name them.
"""

from markdown_it import MarkdownIt
from mdit_py_plugins.container import container_plugin

from lessonkit import names
from lessonkit.errors import BuildError
from lessonkit.markdown.plugins import SUMMARY_SLOT, figure_slot, number_label
from lessonkit.markdown.plugins.lines import line_of

CALLOUTS = ("note", "warning", "insight", "what", "why", "how", "philosophy")
KINDS = ("exercise", "hint", "answer", "epigraph", "figure", "table", "verification-summary", *CALLOUTS)


def _param(token) -> str:
    """The text after the kind on the opening line."""
    return token.info.strip().partition(" ")[2].strip()


def blocks_plugin(md: MarkdownIt) -> None:
    def render(kind):
        def rule(self, tokens, idx, options, env):
            token, ctx = tokens[idx], env["ctx"]
            s, part = ctx.strings, ctx.inputs.parts
            opening = token.nesting == 1
            if kind == "figure":
                if not opening:
                    return part("figure", opening=False, strings=s) + "\n"
                fid, _, alt = _param(token).partition(" ")
                if not alt.strip():
                    raise BuildError(f"figure {fid!r} needs alt text after its id", ctx.path, line_of(token, ctx))
                # Sizes are known once the figures are drawn: the render stage fills these slots.
                return part("figure", opening=True, id=fid, anchor=names.anchor("fig-", fid),
                            src=f"{ctx.root}figures/{fid}.{ctx.lang}.svg", alt=alt.strip(),
                            width=figure_slot(fid, "w"), height=figure_slot(fid, "h"), strings=s) + "\n"
            if kind == "table":
                if not opening:
                    return part("table", opening=False, strings=s) + "\n"
                tid, _, caption = _param(token).partition(" ")
                number, anchor = ctx.out.labels[f"table:{tid}"]
                return part("table", opening=True, anchor=anchor, number=number, caption=caption.strip(),
                            label=s["table_label"].format(n=number), strings=s) + "\n"
            n = None
            if kind == "exercise" and opening:
                ctx.exercises += 1
                n = ctx.exercises
            label = s[f"callout_{kind}"] if kind in CALLOUTS else s.get(kind, "")
            html = part("block", kind=kind, callout=kind in CALLOUTS, opening=opening, label=label,
                        title=_param(token) if opening else "", n=n, strings=s) + "\n"
            if kind == "verification-summary" and not opening:
                html += f"{SUMMARY_SLOT}\n"
            return html
        return rule

    for kind in KINDS:
        md.use(container_plugin, name=kind, render=render(kind))

    def collect(state):
        """Before rendering: which figures the page needs, their and the tables' numbers, epigraph attributions."""
        ctx = state.env["ctx"]
        depth = 0
        tokens = state.tokens
        for i, token in enumerate(tokens):
            if token.type == "container_figure_open":
                fid = _param(token).partition(" ")[0]
                if not fid:
                    raise BuildError("figure block needs an id: ::: figure <id> <alt text>",
                                     ctx.path, line_of(token, ctx))
                try:  # before anything is imported: a figure is a function of a module in figures/, nothing else
                    names.check("figure id", fid, names.FIGURE)
                except BuildError as exc:
                    raise exc.located(ctx.path, line_of(token, ctx)) from None
                ctx.need_figure(fid, line_of(token, ctx))
                number = number_label(ctx, f"fig:{fid}", names.anchor("fig-", fid), token)
                _quoted(ctx, fid, tokens, i)
                caption = next((t for t in tokens[i + 1:] if t.type == "inline"), None)
                if caption is not None:  # the caption opens with the figure's label: "图 2：…"
                    label = ctx.inputs.parts("caption_label", label=ctx.strings["figure_label"].format(n=number),
                                             strings=ctx.strings)
                    caption.children.insert(0, _html(label))
            elif token.type == "container_table_open":
                tid = _param(token).partition(" ")[0]
                if not tid:
                    raise BuildError("table block needs an id: ::: table <id> <caption>", ctx.path,
                                     line_of(token, ctx))
                try:
                    names.check("table id", tid)
                except BuildError as exc:
                    raise exc.located(ctx.path, line_of(token, ctx)) from None
                number_label(ctx, f"table:{tid}", f"table-{tid}", token)
            elif token.type == "container_epigraph_open":
                depth += 1
            elif token.type == "container_epigraph_close":
                depth -= 1
            elif depth and token.type == "inline":
                _attribution(token)

    md.core.ruler.push("lessonkit_blocks", collect)


def _quoted(ctx, fid: str, tokens: list, start: int) -> None:
    """The values a figure's caption quotes, with their lines: the build holds them to what the figure drew."""
    depth = 0
    for token in tokens[start:]:
        depth += token.nesting if token.type.startswith("container_") else 0
        if depth == 0:
            return
        for child in token.children or () if token.type == "inline" else ():
            if child.type == "myst_role" and child.meta.get("name") == "val":
                key = child.content.partition(":")[0].strip().partition("[")[0]
                ctx.out.captions.setdefault(fid, []).append((key, line_of(token, ctx)))


def _attribution(inline) -> None:
    """'quotation⏎— source' inside an epigraph: the source becomes a <cite>."""
    from markdown_it.token import Token

    kids = inline.children
    for i, child in enumerate(kids):
        if child.type == "softbreak" and i + 1 < len(kids) and kids[i + 1].content.lstrip().startswith("—"):
            start, end = Token("html_inline", "", 0), Token("html_inline", "", 0)
            start.content, end.content = '<br><cite class="attribution">', "</cite>"
            inline.children = kids[:i] + [start] + kids[i + 1:] + [end]
            return


def _html(content: str):
    from markdown_it.token import Token

    token = Token("html_inline", "", 0)
    token.content = content
    return token

