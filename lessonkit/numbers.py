"""Format measured values for prose: 1.1 × 10⁻⁷, never 1.1e-07."""

from __future__ import annotations

import json
import math

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
# How a list is joined in each language's prose.
_LIST_SEP = {"zh": "、", "en": ", "}


class FormatError(ValueError):
    pass


def scientific(x: float, decimals: int) -> str:
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(abs(x)))
    mantissa = round(x / 10**exponent, decimals)
    if abs(mantissa) >= 10:  # 9.96 rounded to one decimal is 10.0
        mantissa /= 10
        exponent += 1
    return f"{mantissa:.{decimals}f} × 10{str(exponent).translate(_SUPERSCRIPT)}".replace("-", "−", 1)


def default_spec(x) -> str:
    if isinstance(x, int):
        return "d"
    if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e5):
        return "e.1"
    return ".2f"


def format_number(x, spec: str | None = None) -> str:
    spec = spec or default_spec(x)
    if spec.startswith("e."):
        try:
            return scientific(float(x), int(spec[2:]))
        except ValueError:
            raise FormatError(f"bad format {spec!r}: 'e.' takes a number of decimals, e.g. e.1") from None
    try:
        text = format(x, spec)
    except (ValueError, TypeError) as exc:
        raise FormatError(f"bad format {spec!r} for {x!r}: {exc}") from None
    return text.replace("-", "−")  # a real minus sign


def format_value(value, spec: str | None, lang: str) -> str:
    if isinstance(value, list):
        return _LIST_SEP[lang].join(format_number(v, spec) for v in value)
    return format_number(value, spec)


def raw(value) -> str:
    """The full-precision value as it goes into data-value: repr for floats, JSON for lists."""
    if isinstance(value, list):
        return json.dumps(value)
    return repr(value)
