import pytest

from lessonkit.numbers import FormatError, format_value, raw, scientific


@pytest.mark.parametrize("x, decimals, text", [
    (1.08e-7, 1, "1.1 × 10⁻⁷"),
    (9.96e-8, 1, "1.0 × 10⁻⁷"),  # the mantissa rounds up to 10: carry into the exponent
    (-2.5e6, 2, "−2.50 × 10⁶"),
    (0.0, 1, "0"),
])
def test_scientific(x, decimals, text):
    assert scientific(x, decimals) == text


def test_defaults_by_magnitude_and_type():
    assert format_value(4, None, "en") == "4"
    assert format_value(2.3861, None, "en") == "2.39"
    assert format_value(8.83e-8, None, "zh") == "8.8 × 10⁻⁸"
    assert format_value(4.3e15, None, "en") == "4.3 × 10¹⁵"


def test_explicit_formats_and_lists_per_language():
    assert format_value(21.0775, ".1f", "en") == "21.1"
    assert format_value(-0.5, ".2f", "en") == "−0.50"
    assert format_value([4, 4, 4], None, "en") == "4, 4, 4"
    assert format_value([4, 4], None, "zh") == "4、4"
    with pytest.raises(FormatError):
        format_value(1.0, "e.x", "en")
    with pytest.raises(FormatError):
        format_value(1.0, "q", "en")


def test_raw_keeps_full_precision():
    assert float(raw(0.1 + 0.2)) == 0.1 + 0.2
    assert raw([1, 2.5]) == "[1, 2.5]"
