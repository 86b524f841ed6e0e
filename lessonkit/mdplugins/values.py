"""{val}`key` shows a measured value; {claim}`key` shows a claim's status.

A value renders as an element carrying its key and full-precision value, so the
checks and the browser tests can compare what is shown with what was measured.
"""

from __future__ import annotations

from html import escape

from ..errors import BuildError
from ..numbers import FormatError, format_value, raw
from .cjk import glue_closing
from .lines import line_of


def claim_anchor(key: str) -> str:
    return "claim-" + key.replace(".", "-").replace("_", "-")


def experiment_anchor(name: str) -> str:
    return f"experiment-{name}"


def panel_id(target: str) -> str:
    """The provenance panel for a claim or an experiment anchor."""
    return f"prov-{target}"


def render_value(ctx, key: str, spec: str | None, mark: bool = True) -> str:
    m = ctx.measurements
    value = m.value(key)
    try:
        text = format_value(value, spec, ctx.lang)
    except FormatError as exc:
        raise BuildError(str(exc)) from None
    ctx.use_value(key)
    claim_key = m.claim_of_value.get(key)
    s = ctx.strings
    attrs = f'data-key="{escape(key)}" data-value="{escape(raw(value))}"'
    if spec:
        attrs += f' data-format="{escape(spec)}"'
    if claim_key:
        ctx.show_claim(claim_key)
        target, label, symbol = claim_anchor(claim_key), s["verified"], "✓"
        attrs += f' data-claim="{escape(claim_key)}"'
    else:
        name = key.split(".", 1)[0]
        ctx.show_experiment(name)
        target, label, symbol = experiment_anchor(name), s["measured_by"], "ⓘ"
    button = ""
    if mark:
        # A declarative popover: opens by click, tap or keyboard, with JavaScript off too.
        button = (f'<button type="button" class="mark" popovertarget="{panel_id(target)}" '
                  f'aria-label="{escape(label)}: {escape(key)}">{symbol}</button>')
    return f'<span class="value" {attrs}><span class="num">{escape(text)}</span>{button}</span>'



def render_claim_status(ctx, key: str) -> str:
    claim = ctx.measurements.claim(key)
    ctx.show_claim(key)
    s = ctx.strings
    status = s["refuted_holds"] if claim.refuted else s["passed"]
    return (f'<a class="claim-status" data-claim="{escape(key)}" href="#{claim_anchor(key)}">'
            f'✓ {escape(status)}</a>')


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
                return glue_closing(tokens, idx, render_value(ctx, key.strip(), spec.strip() or None))
            if name == "claim":
                return render_claim_status(ctx, content)
            raise BuildError(f"unknown role {{{name}}}: use {{val}} or {{claim}}")
        except BuildError as exc:
            raise exc.located(ctx.path, line_of(token, ctx)) from None

    md.add_render_rule("myst_role", render)
