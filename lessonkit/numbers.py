"""Format measured values for prose: 1.1 × 10⁻⁷, never 1.1e-07.

What a reader sees must not depend on which BLAS kernel or SIMD path computed the value:
values at the level of floating-point error are shown as bounds ("below 10⁻¹²"), and a
value that sits so close to a rounding boundary of its format that the last bits of the
arithmetic could change its digits is refused (`fragile`).
"""

from __future__ import annotations

import json
import math
import re

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
# e-notation as Python's format() writes it: 1.55431e-15, 2E+06.
E_NOTATION = re.compile(r"(\d(?:\.\d*)?)[eE]([+-]?)(\d+)")
# Relative changes this small are what another machine's kernels make of a value.
MACHINE_NOISE = 1e-10


class FormatError(ValueError):
    pass


def _power(exponent: int) -> str:
    return "10" + str(exponent).translate(_SUPERSCRIPT)


def scientific(x: float, decimals: int) -> str:
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(abs(x)))
    mantissa = round(x / 10**exponent, decimals)
    if abs(mantissa) >= 10:  # 9.96 rounded to one decimal is 10.0
        mantissa /= 10
        exponent += 1
    return f"{mantissa:.{decimals}f} × {_power(exponent)}".replace("-", "−", 1)


def _no_e_notation(text: str) -> str:
    """1.55431e-15 -> 1.55431 × 10⁻¹⁵: prose never shows e-notation."""
    def power(m):
        exponent = int(m.group(3)) * (-1 if m.group(2) == "-" else 1)
        return f"{m.group(1)} × {_power(exponent)}"
    return E_NOTATION.sub(power, text)


_WIDER = {".2f": ".3f", ".3f": ".4f", ".4f": ".5f", ".5f": ".6f", ".6f": ".7f", "e.1": "e.2", "e.2": "e.3", "e.3": "e.4"}


def default_spec(x) -> str:
    if isinstance(x, int):
        return "d"
    if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e5):
        return "e.1"
    if x != 0 and abs(x) < 0.1:  # two significant digits: 0.00245 is 0.0025, not 0.00
        return f".{1 - math.floor(math.log10(abs(x)))}f"
    return ".2f"


# Wider than any number needs, narrower than a page should hold (a format is the author's input).
_MAX_WIDTH = 40


def format_number(x, spec: str | None = None) -> str:
    if spec is None:
        spec = default_spec(x)
        # Without an author's format, take a digit more rather than one another machine could round the other way.
        while fragile(x, spec) is not None and spec in _WIDER:
            spec = _WIDER[spec]
    if spec.startswith("e."):
        try:
            decimals = int(spec[2:])
        except ValueError:
            raise FormatError(f"bad format {spec!r}: 'e.' takes a number of decimals, e.g. e.1") from None
        if not 0 <= decimals <= 15:
            raise FormatError(f"bad format {spec!r}: between e.0 and e.15 decimals")
        return scientific(float(x), decimals)
    sizes = [int(n) for n in re.findall(r"\d+", spec)]
    if any(n > _MAX_WIDTH for n in sizes):
        raise FormatError(f"bad format {spec!r}: widths and precisions above {_MAX_WIDTH} are refused")
    try:
        text = format(x, spec)
    except (ValueError, TypeError) as exc:
        raise FormatError(f"bad format {spec!r} for {x!r}: {exc}") from None
    return _no_e_notation(text).replace("-", "−")  # a real minus sign


def format_value(value, spec: str | None, list_sep: str = ", ") -> str:
    """A value as prose; a list joined by the language's separator (its strings' list_sep)."""
    if isinstance(value, list):
        return list_sep.join(format_number(v, spec) for v in value)
    return format_number(value, spec)


def format_bound(op: str, limit: float, words: dict) -> str:
    """A bound as prose: "below 10⁻¹²" / "低于 10⁻¹²"; words holds the language's bound_below/bound_above."""
    exponent = math.floor(math.log10(abs(limit)))
    mantissa = limit / 10**exponent
    power = _power(exponent) if math.isclose(mantissa, 1) else f"{mantissa:g} × {_power(exponent)}"
    return words["bound_below" if op == "<" else "bound_above"].format(power.replace("-", "−", 1))


def fragile(value, spec: str | None) -> float | None:
    """A number of `value` whose shown digits could differ on another machine: it lies within
    MACHINE_NOISE (relative) of a rounding boundary of the format. None when all are safe
    (or when no format is given: the default widens itself)."""
    if spec is None:
        return None
    for x in value if isinstance(value, list) else [value]:
        if isinstance(x, int) or x == 0:
            continue
        low, high = x * (1 - MACHINE_NOISE), x * (1 + MACHINE_NOISE)
        if format_number(low, spec) != format_number(high, spec):
            return x
    return None


def raw(value) -> str:
    """The full-precision value as it goes into data-value: repr for floats, JSON for lists."""
    if isinstance(value, list):
        return json.dumps(value)
    return repr(value)
