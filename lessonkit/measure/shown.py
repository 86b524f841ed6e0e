"""How a measured value is shown: its text (digits, or a bound), the element that carries its key and
full-precision value for the checks, and the mark that opens its provenance.

The Markdown plugin ({val}) and the verification summary both show values through here.
"""

from __future__ import annotations

from markupsafe import Markup

from lessonkit.errors import BuildError
from lessonkit.markup import Shown
from lessonkit.names import claim_anchor, experiment_anchor, panel_id
from lessonkit.numbers import NOISE_FLOOR, FormatError, default_spec, element_bounds, raw, show, unstable


def text(m, strings: dict, key: str, value, spec: str | None) -> str:
    """What the reader sees for a value: its digits, or its bound when it is floating-point noise.

    Refused, at the experiment's line: a float below the noise floor that its experiment did not declare
    (as a bound, or as a tiny measurement), and a number whose text another machine could change."""
    from lessonkit.measure.claims import split_index

    base = split_index(key)[0]
    entry = m.entry(key)
    bound, tiny = m.bound_of(key), bool(entry.tiny)
    try:
        shown = show(value, spec, strings, bound, tiny)
    except FormatError as exc:
        raise BuildError(str(exc)) from None
    many = isinstance(value, list)
    each = (element_bounds(bound, len(value)) or [None] * len(value)) if many else [bound]
    for i, (x, b) in enumerate(zip(value if many else [value], each, strict=True)):
        if b is not None or isinstance(x, int):
            continue
        name = f"{base}[{i}]" if many else key
        path, line = entry.file, entry.line
        if abs(x) < NOISE_FLOOR and not tiny:
            raise BuildError(f"value {name} = {x!r} is below {NOISE_FLOOR:g}: it cannot be told from floating-point "
                             f"noise; return it as harness.below(x, limit), or as harness.tiny(x, why=...) if it is "
                             f"the measurement", path, line)
        if unstable(x, spec, tiny) is not None:
            raise BuildError(f"value {name} = {x!r} sits on a rounding boundary of format "
                             f"{spec or default_spec(x)!r}: another machine may show other digits; choose another "
                             f"format", path, line)
    return shown


def parameter_label(m, strings: dict, key: str, short: bool = False) -> str | None:
    """Where a value that is not a measurement comes from: "set by experiments/heads.py (PARAMS, line 43)",
    "computed from the parameters alone (…)", "counted by the build (…)"; None for a measurement."""
    entry = m.entry(key)
    if entry.counted:
        return strings["counted"].format(file=entry.file)
    if entry.parameter is None:
        return None
    kind, line = entry.parameter
    # short: in the experiment's own panel, which names the file already
    return strings[f"param_{kind}{'_here' if short else ''}"].format(file=entry.file, line=line)


def target(m, key: str) -> tuple[str | None, str]:
    """Where a value's mark leads: (the claim that verifies it, or None; the experiment's name)."""
    return m.entry(key).claim, key.split(".", 1)[0]


def value_html(parts, m, strings: dict, key: str, spec: str | None, mark: bool = True, spread: bool = False) -> str:
    """A value as the page shows it (the partial parts/value.html); with spread, also its range over the seeds
    (data-min/data-max).

    Marks stay quiet: a value a claim verifies carries a small ✓ that opens the claim's provenance;
    a parameter (no claim) is itself the control that opens its experiment's provenance, with no
    badge; mark=False (a repeat in the same paragraph, the summary table) shows the number alone."""
    value, entry = m.value(key), m.entry(key)
    shown = text(m, strings, key, value, spec)
    bound = m.bound_of(key)
    extra, low, high = None, None, None
    if spread and entry.key == key and entry.range and len(m.seeds) > 1:
        low, high = entry.range
        if low == high:
            extra = strings["range_same"].format(n=len(m.seeds))
        else:
            span = f"{text(m, strings, key, low, spec)} – {text(m, strings, key, high, spec)}"
            extra = strings["range"].format(range=span, n=len(m.seeds))
    claim, experiment = target(m, key)
    attrs = Shown(key=key, value=raw(value), format=spec, bound=None if bound is None else bound_attr(bound),
                  tiny=bool(entry.tiny), low=None if low is None else raw(low),
                  high=None if high is None else raw(high), claim=claim).attrs()
    source = ""
    if mark and not claim:
        label = parameter_label(m, strings, key)
        source = f"{key} {label}" if label else f'{strings["measured_by"]} {key}'
    # Declarative popovers: they open by click, tap or keyboard, with JavaScript off too.
    panel = panel_id(claim_anchor(claim)) if claim else panel_id(experiment_anchor(experiment))
    return parts("value", key=key, shown=shown, attrs=Markup(attrs), claim=claim, mark=mark, panel=panel,
                 verified=strings["verified"], source=source, range=extra, strings=strings)


def bound_attr(bound) -> str:
    """A bound as the page's markup holds it: "<1e-12", or a JSON list of those (null: shown as digits) per element."""
    import json

    if isinstance(bound[0], str):
        return f"{bound[0]}{bound[1]!r}"
    return json.dumps([f"{b[0]}{b[1]!r}" if b else None for b in bound])


def claim_status_html(parts, m, strings: dict, key: str) -> str:
    """{claim}`key` (the partial parts/claim_status.html); a derivation from the parameters holds, but it is
    no measurement: it carries no tick."""
    claim = m.claim(key)
    label = strings["derived"] if not claim.measures else strings["refuted_holds"] if claim.refuted else strings["passed"]
    return parts("claim_status", key=key, anchor=claim_anchor(key), measures=claim.measures,
                 refuted=bool(claim.refuted), label=label, strings=strings)
