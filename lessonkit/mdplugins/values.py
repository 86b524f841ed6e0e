"""{val}`key` shows a measured value; {claim}`key` shows a claim's status.

A value renders as an element carrying its key and full-precision value, so the
checks and the browser tests can compare what is shown with what was measured.
"""

from __future__ import annotations

from html import escape

from ..errors import BuildError
from ..numbers import FormatError, default_spec, format_bound, format_value, fragile, raw
from .cjk import glue_closing
from .lines import line_of


def claim_anchor(key: str) -> str:
    return "claim-" + key.replace(".", "-").replace("_", "-")


def experiment_anchor(name: str) -> str:
    return f"experiment-{name}"


def panel_id(target: str) -> str:
    """The provenance panel for a claim or an experiment anchor."""
    return f"prov-{target}"


def shown_text(ctx, key: str, value, spec: str | None) -> str:
    """What the reader sees for a value: its digits, or its bound when it is floating-point noise."""
    bound = ctx.measurements.bounds.get(key)
    if bound:
        return format_bound(*bound, ctx.strings)
    try:
        text = format_value(value, spec, ctx.lang)
    except FormatError as exc:
        raise BuildError(str(exc)) from None
    edge = fragile(value, spec)
    if edge is not None:
        raise BuildError(f"value {key} = {edge!r} sits on a rounding boundary of format {spec or default_spec(edge)!r}: "
                         f"another machine may show other digits; choose another format")
    return text


def render_value(ctx, key: str, spec: str | None, mark: bool = True, spread: bool = False) -> str:
    """A value as the page shows it; with spread, also its range over the seeds (data-min/data-max)."""
    m = ctx.measurements
    value = m.value(key)
    text = shown_text(ctx, key, value, spec)
    ctx.use_value(key)
    claim_key = m.claim_of_value.get(key)
    s = ctx.strings
    attrs = f'data-key="{escape(key)}" data-value="{escape(raw(value))}"'
    if spec:
        attrs += f' data-format="{escape(spec)}"'
    if key in m.bounds:
        op, limit = m.bounds[key]
        attrs += f' data-bound="{escape(op)}{limit!r}"'
    extra = ""
    if spread and key in m.ranges and len(m.seeds) > 1:
        low, high = m.ranges[key]
        attrs += f' data-min="{escape(raw(low))}" data-max="{escape(raw(high))}"'
        if low == high:
            extra = s["range_same"].format(n=len(m.seeds))
        else:
            span = f"{shown_text(ctx, key, low, spec)} – {shown_text(ctx, key, high, spec)}"
            extra = s["range"].format(range=span, n=len(m.seeds))
        extra = f'<br><small class="range">{escape(extra)}</small>'
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
    return f'<span class="value" {attrs}><span class="num">{escape(text)}</span>{button}</span>{extra}'


def _warn_if_noise(ctx, key: str, line: int) -> None:
    """A float this close to zero is usually rounding error: its digits depend on the machine."""
    value = ctx.measurements.values[key]
    if key not in ctx.measurements.bounds and isinstance(value, float) and abs(value) < 1e-13:
        ctx.warnings.append((line, f"value {key} = {value!r} is at the level of floating-point error: its digits "
                                   f"depend on the machine; return it as harness.below(x, tolerance)"))


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
                html = render_value(ctx, key.strip(), spec.strip() or None)
                _warn_if_noise(ctx, key.strip(), line_of(token, ctx))
                return glue_closing(tokens, idx, html)
            if name == "claim":
                return render_claim_status(ctx, content)
            raise BuildError(f"unknown role {{{name}}}: use {{val}} or {{claim}}")
        except BuildError as exc:
            raise exc.located(ctx.path, line_of(token, ctx)) from None

    md.add_render_rule("myst_role", render)
