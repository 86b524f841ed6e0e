"""How a measured value is shown: its text (digits, or a bound), the element that carries its key and
full-precision value for the checks, and the mark that opens its provenance.

The Markdown plugin ({val}) and the verification summary both show values through here.
"""

from __future__ import annotations

from html import escape

from .errors import BuildError
from .numbers import FormatError, default_spec, format_bound, format_value, fragile, raw


def claim_anchor(key: str) -> str:
    return "claim-" + key.replace(".", "-").replace("_", "-")


def experiment_anchor(name: str) -> str:
    return f"experiment-{name}"


def panel_id(target: str) -> str:
    """The provenance panel for a claim or an experiment anchor."""
    return f"prov-{target}"


def text(m, strings: dict, key: str, value, spec: str | None) -> str:
    """What the reader sees for a value: its digits, or its bound when it is floating-point noise."""
    from .claims import split_index

    bound = m.bounds.get(split_index(key)[0])
    if bound:
        return format_bound(*bound, strings)
    try:
        shown = format_value(value, spec, strings["list_sep"])
    except FormatError as exc:
        raise BuildError(str(exc)) from None
    edge = fragile(value, spec)
    if edge is not None:
        raise BuildError(f"value {key} = {edge!r} sits on a rounding boundary of format {spec or default_spec(edge)!r}: "
                         f"another machine may show other digits; choose another format")
    return shown


def target(m, key: str) -> tuple[str | None, str]:
    """Where a value's mark leads: (the claim that verifies it, or None; the experiment's name)."""
    from .claims import split_index

    return m.claim_of_value.get(split_index(key)[0]), key.split(".", 1)[0]


def value_html(m, strings: dict, key: str, spec: str | None, mark: bool = True, spread: bool = False) -> str:
    """A value as the page shows it; with spread, also its range over the seeds (data-min/data-max).

    Marks stay quiet: a value a claim verifies carries a small ✓ that opens the claim's provenance;
    a parameter (no claim) is itself the control that opens its experiment's provenance, with no
    badge; mark=False (a repeat in the same paragraph, the summary table) shows the number alone."""
    value = m.value(key)
    shown = text(m, strings, key, value, spec)
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
            extra = strings["range_same"].format(n=len(m.seeds))
        else:
            span = f"{text(m, strings, key, low, spec)} – {text(m, strings, key, high, spec)}"
            extra = strings["range"].format(range=span, n=len(m.seeds))
        extra = f'<br><small class="range">{escape(extra)}</small>'
    claim, experiment = target(m, key)
    # Declarative popovers: they open by click, tap or keyboard, with JavaScript off too.
    if claim:
        attrs += f' data-claim="{escape(claim)}"'
        number = f'<span class="num">{escape(shown)}</span>'
        if mark:
            number += (f'<button type="button" class="mark" popovertarget="{panel_id(claim_anchor(claim))}" '
                       f'aria-label="{escape(strings["verified"])}: {escape(key)}">✓</button>')
    elif mark:
        number = (f'<button type="button" class="num param" popovertarget="{panel_id(experiment_anchor(experiment))}" '
                  f'aria-label="{escape(shown)}, {escape(strings["measured_by"])} {escape(key)}">{escape(shown)}</button>')
    else:
        number = f'<span class="num">{escape(shown)}</span>'
    return f'<span class="value" {attrs}>{number}</span>{extra}'


def claim_status_html(m, strings: dict, key: str) -> str:
    claim = m.claim(key)
    status = strings["refuted_holds"] if claim.refuted else strings["passed"]
    return (f'<a class="claim-status" data-claim="{escape(key)}" href="#{claim_anchor(key)}">'
            f'✓ {escape(status)}</a>')
