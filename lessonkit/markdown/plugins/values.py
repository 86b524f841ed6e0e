"""{val}`key` shows a measured value (`key[0]`: an element of a list); {claim}`key` shows a claim's status;
{ref}`fig:id` names a numbered figure, table (`table:id`) or equation (`eq:id`), also on another page
(`lesson-l5.md#fig:id`): "图 2", "Figure 2", linked; the number is filled in once every page is parsed.

A value renders as an element carrying its key and full-precision value, so the
checks and the browser tests can compare what is shown with what was measured.
"""

from __future__ import annotations

from lessonkit.errors import BuildError
from lessonkit.markdown.plugins.lines import line_of
from lessonkit.markdown.plugins.punct import glued
from lessonkit.measure import shown


def _value(ctx, key: str, spec: str | None, paragraph) -> str:
    # The first mention of a value in a paragraph carries its mark; repeats show the number alone.
    marked = ctx.marked.setdefault(id(paragraph), set())
    html = shown.value_html(ctx.inputs.parts, ctx.measurements, ctx.strings, key, spec, mark=key not in marked)
    marked.add(key)
    ctx.use_value(key)
    m = ctx.measurements
    ctx.out.shown[key + (f":{spec}" if spec else "")] = shown.text(m, ctx.strings, key, m.value(key), spec)
    claim, experiment = shown.target(ctx.measurements, key)
    listing = m.entry(key).listing  # the row that lists it, a parameter's included
    if listing:
        ctx.show_claim(listing)
    if not claim:
        ctx.show_experiment(experiment)
    return html


def _claim_status(ctx, key: str) -> str:
    html = shown.claim_status_html(ctx.inputs.parts, ctx.measurements, ctx.strings, key)
    ctx.show_claim(key)
    return html


def _ref(ctx, content: str, line: int) -> str:
    from lessonkit.markdown.plugins import ref_slot
    from lessonkit.markdown.plugins.links import _target

    path, _, label = content.rpartition("#")
    kind = label.partition(":")[0]
    if kind not in ("fig", "table", "eq") or ":" not in label:
        raise BuildError(f"{{ref}}`{content}`: name a figure, table or equation: fig:<id>, table:<id>, eq:<label> "
                         f"(on another page: lesson-l5.md#fig:<id>)")
    url = _target(ctx, path) if path else ctx.page.url
    if url in (None, "outside", "missing"):
        raise BuildError(f"{{ref}}`{content}`: {path!r} is not a page of the course")
    ctx.out.refs.append((url, label, line))
    return ref_slot(url, label)


def values_plugin(md) -> None:
    from mdit_py_plugins.myst_role import myst_role_plugin

    md.use(myst_role_plugin)

    def render(self, tokens, idx, options, env):
        token = tokens[idx]
        ctx = env["ctx"]
        name, content = token.meta.get("name"), token.content.strip()
        try:
            if name == "val":
                key, _, spec = content.partition(":")
                html = _value(ctx, key.strip(), spec.strip() or None, tokens)
                return glued(tokens[idx], html)
            # (each keeps the "，" or "。" the punctuation rule moved onto it)
            if name == "claim":
                return glued(tokens[idx], _claim_status(ctx, content))
            if name == "ref":
                return glued(tokens[idx], _ref(ctx, content, line_of(token, ctx)))
            raise BuildError(f"unknown role {{{name}}}: use {{val}}, {{claim}} or {{ref}}")
        except BuildError as exc:
            return ctx.report(exc, token)

    md.add_render_rule("myst_role", render)


def written(body: str) -> dict[str, int]:
    """How many times a page's Markdown shows each value ({val}`key`), outside code and math: what --check
    expects to find marked on the page, whatever the theme's partials write."""
    from collections import Counter

    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.myst_role import myst_role_plugin

    md = MarkdownIt("commonmark").enable(["table"]).use(myst_role_plugin).use(dollarmath_plugin, double_inline=True)
    found: Counter = Counter()
    for token in md.parse(body):
        for child in token.children or ():
            if child.type == "myst_role" and child.meta.get("name") == "val":
                found[child.content.strip().partition(":")[0].strip()] += 1
    return dict(found)
