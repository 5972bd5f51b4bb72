from fractions import Fraction

import pytest

from neuromath.errors import ExpressionError
from neuromath.expr.exact import evaluate
from neuromath.expr.notation import parse_infix
from neuromath.expr.numbers import MAX_NUMBER_DIGITS, NUMBER_REGEX, format_number, is_number, parse_number


@pytest.mark.parametrize(
    "token, value",
    [
        ("135", Fraction(135)),
        ("007", Fraction(7)),
        ("2.5", Fraction(5, 2)),
        ("2.50", Fraction(5, 2)),
        (".5", Fraction(1, 2)),
        ("(2/5)", Fraction(2, 5)),
        ("(4/6)", Fraction(2, 3)),
        ("30%", Fraction(3, 10)),
        ("2.5%", Fraction(1, 40)),
        ("1(1/2)", Fraction(3, 2)),
        ("12(3/4)", Fraction(51, 4)),
    ],
)
def test_parse_number_is_exact(token, value):
    assert is_number(token)
    assert parse_number(token) == value


@pytest.mark.parametrize("token", ["", "-3", "2.", "1/2", "( 2/5)", "(2 / 5)", "x", "2e3", "30 %", "1 (1/2)", "1.2.3"])
def test_not_a_number(token):
    assert not is_number(token)
    with pytest.raises(ExpressionError, match="not a number literal"):
        parse_number(token)


def test_zero_denominator_literal():
    assert is_number("(1/0)")
    with pytest.raises(ExpressionError, match="zero denominator"):
        parse_number("(1/0)")


def test_number_regex_finds_whole_literals_in_text():
    text = "He ate 1(1/2) cakes, 30% of (2/5) and .5 of 2.25 pies."
    assert [match.group() for match in NUMBER_REGEX.finditer(text)] == ["1(1/2)", "30%", "(2/5)", ".5", "2.25"]


@pytest.mark.parametrize(
    "value, text",
    [
        (Fraction(116), "116"),
        (Fraction(0), "0"),
        (Fraction(5, 2), "2.5"),
        (Fraction(1, 1024), "0.0009765625"),
        (Fraction(3, 100), "0.03"),
        (Fraction(7, 3), "(7/3)"),
        (Fraction(1, 6), "(1/6)"),
        (Fraction(-5, 2), "-2.5"),
        (Fraction(-7, 3), "-(7/3)"),
        (-4, "-4"),
    ],
)
def test_format_number(value, text):
    assert format_number(value) == text


@pytest.mark.parametrize(
    "value", [Fraction(3, 8), Fraction(22, 7), Fraction(-1, 3), Fraction(-120), Fraction(10**20 + 1, 10**5)]
)
def test_formatted_number_reads_back_as_the_same_value(value):
    assert evaluate(parse_infix(format_number(value))) == value


def test_a_literal_of_more_than_4300_digits_is_an_expression_error_not_a_value_error():
    assert parse_number("9" * MAX_NUMBER_DIGITS) == 10**MAX_NUMBER_DIGITS - 1
    with pytest.raises(ExpressionError, match="number literal '9999.*' has 5000 digits; at most 4300 are read"):
        parse_number("9" * 5000)
    with pytest.raises(ExpressionError, match="has 4301 digits"):
        parse_number("1" * 4000 + "." + "1" * 301)  # the digits after the point count too


@pytest.mark.parametrize(
    "value", [Fraction(10**4300), Fraction(1, 10**4300), Fraction(1, 2**20000), Fraction(2, 3**9100)]
)
def test_format_number_refuses_a_value_of_more_than_4300_digits(value):
    with pytest.raises(ExpressionError, match="more than 4300 digits, too many to write out"):
        format_number(value)


def test_format_number_writes_values_up_to_4300_digits():
    assert format_number(Fraction(10**4299)) == "1" + "0" * 4299
    assert format_number(Fraction(1, 2**1000)) == str(5**1000).rjust(1000, "0").join(["0.", ""])
