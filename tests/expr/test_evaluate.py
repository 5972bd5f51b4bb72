import math
from fractions import Fraction

import pytest
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from neuromath.errors import ExpressionError
from neuromath.expr.exact import evaluate
from neuromath.expr.notation import parse_infix
from neuromath.expr.sympy_bridge import to_sympy
from neuromath.expr.tree import Node


def value_of(text, bindings=None):
    return evaluate(parse_infix(text), bindings)


@pytest.mark.parametrize(
    "text, value",
    [
        ("1 + 2 * 3", Fraction(7)),
        ("1 - 2 - 3", Fraction(-4)),
        ("8 / 4 / 2", Fraction(1)),
        ("2 ^ 3 ^ 2", Fraction(512)),
        ("-2 ^ 2", Fraction(-4)),
        ("(-2) ^ 2", Fraction(4)),
        ("2 ^ -2", Fraction(1, 4)),
        ("(2/3) ^ 3", Fraction(8, 27)),
        ("1 / 3 + 1 / 6", Fraction(1, 2)),
        ("2.50 * 30%", Fraction(3, 4)),
        ("1(1/2) + (2/5)", Fraction(19, 10)),
        ("2 * -3", Fraction(-6)),
        ("4 ^ 0.5", Fraction(2)),
        ("0 ^ 0", Fraction(1)),
        ("1 ^ 100000", Fraction(1)),
        ("(-1) ^ 100001", Fraction(-1)),
    ],
)
def test_evaluate_exact(text, value):
    result = evaluate(parse_infix(text))
    assert isinstance(result, Fraction)
    assert result == value


def test_non_integer_exponent_goes_through_float():
    assert math.isclose(value_of("2 ^ (1/2)"), math.sqrt(2), rel_tol=1e-15)
    assert math.isclose(value_of("27 ^ (1/3)"), 3, rel_tol=1e-12)


def test_bindings_accept_fractions_ints_and_literals():
    tree = parse_infix("n0 * n1 - x")
    assert evaluate(tree, {"n0": "1(1/2)", "n1": 4, "x": Fraction(1, 3)}) == Fraction(17, 3)
    # a number literal keeps its own value
    assert evaluate(parse_infix("2 + x"), {"x": "30%"}) == Fraction(23, 10)


@pytest.mark.parametrize(
    "text, bindings, message",
    [
        ("1 / (2 - 2)", None, "division by zero"),
        ("0 ^ -1", None, "division by zero"),
        ("n0 + 1", None, "unknown identifier 'n0'"),
        ("x + 1", {"x": "abc"}, "'abc' is not a number literal"),
        ("x + 1", {"x": 1.5}, "is not a Fraction, int or number literal"),
        ("(-8) ^ (1/3)", None, "negative base"),
        ("9 ^ 9 ^ 9", None, "power too large"),
        ("2 ^ 10001", None, "power too large"),
        ("10 ^ 30000", None, "power too large"),
        ("(1/2) ^ -30000", None, "power too large"),
        ("2 ^ 10000.5", None, "power too large"),
        ("10 ^ 400.5", None, "overflows a float"),
        ("1(1/0) + 1", None, "zero denominator"),
    ],
)
def test_evaluate_errors(text, bindings, message):
    with pytest.raises(ExpressionError, match=message):
        evaluate(parse_infix(text), bindings)


@pytest.mark.parametrize(
    "tree, message",
    [
        (Node("$"), "unknown identifier '\\$'"),
        (Node("sin", (Node("1"),)), "unknown operator 'sin'"),
        (Node("-", (Node("1"),)), "needs 2"),
    ],
)
def test_evaluate_bad_tokens(tree, message):
    with pytest.raises(ExpressionError, match=message):
        evaluate(tree)


def test_large_but_allowed_power_is_exact():
    assert value_of("10 ^ 1000") == 10**1000


x, y = sympy.symbols("x y")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2*x + 3/4", sympy.sympify("2*x + 3/4")),
        ("x^2 - y/3", x**2 - y / 3),
        ("-x^2", -(x**2)),
        ("(2/5) * x - 2.5 * y", sympy.sympify("2/5*x - 5/2*y")),
        ("30% * (x + 1(1/2))", sympy.sympify("3/10*(x + 3/2)")),
        ("2 ^ (1/2)", sympy.sqrt(2)),
        ("x ^ 100000", x**100000),
    ],
)
def test_to_sympy_matches_sympy(text, expected):
    result = to_sympy(parse_infix(text))
    assert result == expected
    assert sympy.simplify(result - expected) == 0


def test_to_sympy_uses_exact_rationals_and_bindings():
    result = to_sympy(parse_infix("0.1 * n0 + x"), {"n0": "30%"})
    assert result == sympy.Rational(3, 100) + x
    assert result.subs(x, 1) == sympy.Rational(103, 100)


def test_to_sympy_refuses_huge_numeric_powers():
    with pytest.raises(ExpressionError, match="power too large"):
        to_sympy(parse_infix("9 ^ 9 ^ 9"))
    with pytest.raises(ExpressionError, match="power too large"):
        to_sympy(parse_infix("(2 ^ (1/2)) ^ 1000000"))


# ---------------------------------------------------------------- evaluate agrees with SymPy on random trees

VARIABLES = ("x", "y", "n0")
numeric_leaves = st.one_of(
    st.integers(0, 30).map(str),
    st.sampled_from(["2.5", ".25", "0.75", "(2/3)", "(7/4)", "30%", "12.5%", "1(1/2)", "2(3/5)"]),
    st.sampled_from(VARIABLES),
).map(Node)
small_exponents = st.one_of(
    st.sampled_from(["0", "1", "2", "3"]).map(Node),
    st.sampled_from(["1", "2"]).map(lambda exponent: Node("neg", (Node(exponent),))),
)
numeric_trees = st.recursive(
    numeric_leaves,
    lambda children: st.one_of(
        st.builds(
            lambda operator, left, right: Node(operator, (left, right)), st.sampled_from("+-*/"), children, children
        ),
        st.builds(lambda base, exponent: Node("^", (base, exponent)), children, small_exponents),
        children.map(lambda operand: Node("neg", (operand,))),
    ),
    max_leaves=10,
)
bindings = st.fixed_dictionaries(
    {name: st.fractions(min_value=-10, max_value=10, max_denominator=12) for name in VARIABLES}
)


@settings(max_examples=200, deadline=None)
@given(numeric_trees, bindings)
def test_evaluate_agrees_with_to_sympy(tree, values):
    try:
        value = evaluate(tree, values)
    except ExpressionError:
        assume(False)  # division by zero
    assert to_sympy(tree, values) == sympy.Rational(value.numerator, value.denominator)


def test_evaluate_has_no_recursion_limit():
    # Trees built by hand may be deeper than the MAX_DEPTH of trees read from text.
    negated, total = Node("7"), Node("0")
    for _ in range(5001):
        negated = Node("neg", (negated,))
        total = Node("+", (total, Node("1")))
    assert evaluate(negated) == -7
    assert evaluate(total) == 5001
    with pytest.raises(ExpressionError, match="division by zero"):
        evaluate(Node("/", (total, Node("-", (Node("1"), Node("1"))))))
