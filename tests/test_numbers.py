import pytest

from lessonkit.numbers import FormatError, format_bound, format_value, fragile, raw, scientific


@pytest.mark.parametrize("x, decimals, text", [
    (1.08e-7, 1, "1.1 × 10⁻⁷"),
    (9.96e-8, 1, "1.0 × 10⁻⁷"),  # the mantissa rounds up to 10: carry into the exponent
    (-2.5e6, 2, "−2.50 × 10⁶"),
    (0.0, 1, "0"),
])
def test_scientific(x, decimals, text):
    assert scientific(x, decimals) == text


def test_defaults_by_magnitude_and_type():
    assert format_value(4, None) == "4"
    assert format_value(2.3861, None) == "2.39"
    assert format_value(8.83e-8, None) == "8.8 × 10⁻⁸"
    assert format_value(4.3e15, None) == "4.3 × 10¹⁵"
    # Below 0.1, two significant digits (two decimals would show 0.00245 as 0.00).
    assert format_value(0.0528, None) == "0.053"
    assert format_value(0.00312, None) == "0.0031"
    assert format_value(-0.0123, None) == "−0.012"
    assert format_value(0.00245, None) == "0.00245"  # 0.0025 or 0.0024 by the machine's last bit: a digit more


def test_explicit_formats_and_lists_per_language():
    assert format_value(21.0775, ".1f") == "21.1"
    assert format_value(-0.5, ".2f") == "−0.50"
    assert format_value([4, 4, 4], None) == "4, 4, 4"
    assert format_value([4, 4], None, "、") == "4、4"
    with pytest.raises(FormatError):
        format_value(1.0, "e.x")
    with pytest.raises(FormatError):
        format_value(1.0, "q")


def test_raw_keeps_full_precision():
    assert float(raw(0.1 + 0.2)) == 0.1 + 0.2
    assert raw([1, 2.5]) == "[1, 2.5]"


def test_e_notation_never_reaches_prose():
    assert format_value(1.5543122344752192e-15, "g") == "1.55431 × 10⁻¹⁵"
    assert format_value(2.5e6, ".2e") == "2.50 × 10⁶"
    assert format_value(0.0, "g") == "0"


def test_bounds_read_as_words_and_powers_of_ten():
    words = {"bound_below": "below {}", "bound_above": "more than {}"}
    assert format_bound("<", 1e-12, words) == "below 10⁻¹²"
    assert format_bound(">", 1e12, words) == "more than 10¹²"
    assert format_bound("<", 5e-10, words) == "below 5 × 10⁻¹⁰"
    assert format_bound("<", 1e-9, {"bound_below": "低于 {}", "bound_above": ""}) == "低于 10⁻⁹"


def test_a_value_on_a_rounding_boundary_is_fragile_only_under_an_authors_format():
    assert fragile(0.125, ".2f") == 0.125  # 0.12 here, 0.13 if the last bit went up
    assert fragile(0.1251, ".2f") is None
    assert fragile([0.3, 0.125], ".2f") == 0.125
    assert fragile(0.125, None) is None
    assert format_value(0.125, None) == "0.125"  # the default takes a digit more instead
    assert format_value(0.1251, None) == "0.13"


def test_format_widths_are_capped():
    with pytest.raises(FormatError):
        format_value(1.0, ">50000000")
    with pytest.raises(FormatError):
        format_value(1.0, "e.99")
