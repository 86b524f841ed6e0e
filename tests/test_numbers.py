import pytest

from lessonkit.numbers import (
    ABSOLUTE_NOISE,
    MACHINE_NOISE,
    FormatError,
    format_bound,
    format_value,
    raw,
    scientific,
    show,
    unstable,
    variants,
)


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
    # Integers of five digits and more in groups of three, by a narrow no-break space (a comma would read
    # as a list's); an author's own format is kept as written.
    assert format_value(9999, None) == "9999"
    assert format_value(549755813888, None) == "549\u202f755\u202f813\u202f888"
    assert format_value(-12345, None) == "−12\u202f345"
    assert format_value([65536, 2], None, "、") == "65\u202f536、2"
    assert format_value(549755813888, "d") == "549755813888"


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


def test_a_value_on_a_rounding_boundary_is_unstable_under_an_authors_format():
    assert unstable(0.125, ".2f") == 0.125  # 0.12 here, 0.13 if the last bit went up
    assert unstable(0.1251, ".2f") is None
    assert unstable([0.3, 0.125], ".2f") == 0.125
    assert unstable(0.125, None) is None  # the default takes a digit more instead
    assert format_value(0.125, None) == "0.125"
    assert format_value(0.1251, None) == "0.13"


def test_other_machines_are_played_by_moving_every_float_both_ways():
    moved = variants(2.0)
    assert sorted(moved) == sorted([2.0 * (1 - MACHINE_NOISE), 2.0 * (1 + MACHINE_NOISE),
                                    2.0 - ABSOLUTE_NOISE, 2.0 + ABSOLUTE_NOISE])
    assert variants([3, 0.5])[0][0] == 3  # integers are exact
    assert all(v == 0.0 for v in variants(0.0, tiny=True))  # a declared tiny value moves relatively only
    assert len(variants(1e-20, tiny=True)) == 2


def test_noise_level_values_are_unstable_unless_declared_tiny():
    # 1.6e-15 with one kernel, 1.7e-15 or 0.0 with another: no digits of it survive another machine
    assert unstable(1.6e-15, None) == 1.6e-15
    assert unstable([0.0, 0.0, 1.6e-15], None) == 0.0  # a float zero from cancellation is noise too
    assert unstable(1.6e-15, None, tiny=True) is None  # a real measurement of that size keeps its digits
    assert unstable([0, 3], None) is None  # integer zeros are exact
    assert unstable(2.38, None) is None


def test_a_list_shows_its_bounds_whole_or_element_by_element():
    words = {"list_sep": ", ", "bound_below": "below {}", "bound_above": "more than {}",
             "bound_all_below": "all below {}", "bound_all_above": "all more than {}"}
    assert show([0.0, 1.6e-15], None, words, ["<", 1e-12]) == "all below 10⁻¹²"
    assert show(0.0, None, words, ["<", 1e-12]) == "below 10⁻¹²"
    assert show([0.0032, 1.6e-15], None, words, [None, ["<", 1e-12]]) == "0.0032, below 10⁻¹²"
    assert show([0.5, 2.0], ".1f", words) == "0.5, 2.0"


def test_format_widths_are_capped():
    with pytest.raises(FormatError):
        format_value(1.0, ">50000000")
    with pytest.raises(FormatError):
        format_value(1.0, "e.99")
