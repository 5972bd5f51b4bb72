"""Typed input of any length or magnitude ends in a result or one ExpressionError, never in a RecursionError,
OverflowError or Python's ValueError about converting long integers."""

import math

import pytest

from neuromath.errors import ExpressionError
from neuromath.expr.equation_tree import apply, format_infix, number, symbol
from neuromath.expr.ordinary import MAX_ORDINARY_DIGITS, number_node, parse_ordinary
from neuromath.tasks.identities.numeric_evaluation import leaf_float


@pytest.mark.parametrize("digits", [5000, 4300])
def test_an_integer_of_thousands_of_digits_is_an_expression_error_with_its_place(digits):
    with pytest.raises(ExpressionError, match=f"at position 2: the number '9+…' has {digits} digits; at most 4299"):
        parse_ordinary("x*" + "9" * digits, ["x"], [])
    with pytest.raises(ExpressionError, match=f"has {digits + 1} digits"):
        number_node("0." + "1" * digits)


def test_the_longest_number_read_keeps_its_exact_value():
    integer = "7" * MAX_ORDINARY_DIGITS
    assert parse_ordinary(integer, [], []).value == int(integer)
    decimal = number_node("0." + "1" * (MAX_ORDINARY_DIGITS - 1))  # its denominator has MAX_ORDINARY_DIGITS digits
    assert str(decimal.children[1].value) == "1" + "0" * (MAX_ORDINARY_DIGITS - 1)


def test_format_infix_shows_a_tree_of_any_depth():
    tree = symbol("var_0")
    for _ in range(5000):  # far deeper than the recursion limit
        tree = apply("Add", tree, symbol("var_0"))
    shown = format_infix(apply("Equality", tree, number(1)))
    assert shown.startswith("(" * 4999 + "x + x)") and shown.endswith(" + x = 1")
    # shallow trees are shown as before
    assert format_infix(apply("Equality", apply("Add", symbol("var_0"), number(-1)), number(1))) == "x + (-1) = 1"
    assert format_infix(apply("sin", apply("Add", symbol("var_0"), number(2)))) == "sin(x + 2)"


def test_a_number_beyond_the_floats_is_an_infinity_of_its_sign():
    assert leaf_float("Integer", "1" + "0" * 400) == math.inf
    assert leaf_float("Integer", "-1" + "0" * 400) == -math.inf
    assert leaf_float("Rational", "1" + "0" * 400 + "/3") == math.inf
    assert leaf_float("Rational", "1/3") == pytest.approx(1 / 3)
