"""Format measured values for prose: 1.1 × 10⁻⁷, never 1.1e-07.

What a reader sees must not depend on which BLAS kernel or SIMD path computed the value.
Another machine is played here, on any machine: every float is moved by a relative
MACHINE_NOISE and an absolute ABSOLUTE_NOISE, both ways (`variants`), and its text must stay
the same (`unstable` names the number that does not). Values at the level of floating-point
error are shown as bounds ("below 10⁻¹²"); a float below NOISE_FLOOR that is a real
measurement is declared tiny and moved by the relative amount only.
"""

from __future__ import annotations

import json
import math
import re

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
# e-notation as Python's format() writes it: 1.55431e-15, 2E+06.
E_NOTATION = re.compile(r"(\d(?:\.\d*)?)[eE]([+-]?)(\d+)")
# Relative changes this small are what another machine's kernels make of a value ...
MACHINE_NOISE = 1e-10
# ... and absolute ones this small what they make of a difference that cancels to about zero.
ABSOLUTE_NOISE = 1e-13
# A shown float smaller than this cannot be told from noise unless its experiment says what it is.
NOISE_FLOOR = 1e-9


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
    # Decided on 9 significant digits: 0.001 and the 0.000999999999 another machine computes take one format.
    x = float(f"{x:.8e}")
    if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e5):
        return "e.1"
    if x != 0 and abs(x) < 0.1:  # two significant digits: 0.00245 is 0.0025, not 0.00
        return f".{1 - math.floor(math.log10(abs(x)))}f"
    return ".2f"


# Wider than any number needs, narrower than a page should hold (a format is the author's input).
_MAX_WIDTH = 40


def format_number(x, spec: str | None = None, tiny: bool = False) -> str:
    if spec is None and isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 10_000:
        # Grouped in threes by a narrow no-break space, in every language (SI's style): a comma would read as
        # a list's, and a line never breaks inside the number.
        return format(x, ",").replace(",", "\u202f").replace("-", "−")
    if spec is None:
        spec = default_spec(x)
        # Without an author's format, take a digit more rather than one another machine could round the
        # other way (looking twice as far as `unstable` does, so that a nearby machine widens alike).
        while spec in _WIDER and _changes(x, spec, tiny, 2):
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


def format_value(value, spec: str | None, list_sep: str = ", ", tiny: bool = False) -> str:
    """A value as prose; a list joined by the language's separator (its strings' list_sep)."""
    if isinstance(value, list):
        return list_sep.join(format_number(v, spec, tiny) for v in value)
    return format_number(value, spec, tiny)


def format_bound(op: str, limit: float, words: dict, every: bool = False) -> str:
    """A bound as prose: "below 10⁻¹²" / "低于 10⁻¹²" (every: "all below 10⁻¹²", for a whole list);
    words holds the language's bound_below/bound_above (bound_all_below/bound_all_above)."""
    exponent = math.floor(math.log10(abs(limit)))
    mantissa = limit / 10**exponent
    power = _power(exponent) if math.isclose(mantissa, 1) else f"{mantissa:g} × {_power(exponent)}"
    word = ("bound_all_" if every else "bound_") + ("below" if op == "<" else "above")
    return words[word].format(power.replace("-", "−", 1))


def element_bounds(bound, n: int) -> list | None:
    """A declared bound as one (op, limit) or None per element of a list of n: [op, limit] bounds every
    element, a list gives each element its own."""
    if bound is None:
        return None
    if isinstance(bound[0], str):
        return [tuple(bound)] * n
    return [tuple(b) if b else None for b in bound]


def show(value, spec: str | None, words: dict, bound=None, tiny: bool = False) -> str:
    """What a reader sees of a value: its digits, its bound, or for a list each element's."""
    if bound is None:
        return format_value(value, spec, words["list_sep"], tiny)
    if not isinstance(value, list):
        return format_bound(*bound, words)
    if isinstance(bound[0], str):
        return format_bound(*bound, words, every=True)
    return words["list_sep"].join(format_bound(*b, words) if b else format_number(x, spec, tiny)
                                  for x, b in zip(value, bound, strict=True))


def _moved(x: float, tiny: bool, scale: float = 1) -> list[float]:
    out = [x * (1 - scale * MACHINE_NOISE), x * (1 + scale * MACHINE_NOISE)]
    if not tiny:
        out += [x - scale * ABSOLUTE_NOISE, x + scale * ABSOLUTE_NOISE]
    return out


def _changes(x: float, spec: str, tiny: bool, scale: float = 1) -> bool:
    shown = format_number(x, spec)
    return any(format_number(y, spec) != shown for y in _moved(x, tiny, scale))


def variants(value, tiny: bool = False) -> list:
    """The value as other machines might compute it: every float moved the same way, by a relative
    MACHINE_NOISE and (unless it is a declared tiny measurement) an absolute ABSOLUTE_NOISE, both ways.
    Integers are exact and stay."""
    def move(x, i):
        return x if isinstance(x, int) else _moved(x, tiny)[i]

    count = 2 if tiny else 4
    if isinstance(value, list):
        return [[move(x, i) for x in value] for i in range(count)]
    return [move(value, i) for i in range(count)]


def unstable(value, spec: str | None, tiny: bool = False) -> float | None:
    """A number of `value` whose shown text another machine could change (see `variants`), or None."""
    for x in value if isinstance(value, list) else [value]:
        if isinstance(x, int):
            continue
        shown = format_number(x, spec, tiny)
        if any(format_number(y, spec, tiny) != shown for y in variants(x, tiny)):
            return x
    return None


def raw(value) -> str:
    """The full-precision value as it goes into data-value: repr for floats, JSON for lists."""
    if isinstance(value, list):
        return json.dumps(value)
    return repr(value)
