"""The identities check answers true only when it is shown (neuromath/tasks/identities/numeric_evaluation.py,
exact_check.py, identity_labels.py): floating point may reject, confirmed with 60 and 120 digits; only exact arithmetic
or SymPy accepts."""

import math
import random
from fractions import Fraction

import pytest

from neuromath.errors import NeuromathError
from neuromath.tasks.identities.exact_check import (
    NOT_VERIFIED,
    UNKNOWN,
    VERIFIED,
    check_identity_text,
    check_identity_tree,
)
from neuromath.tasks.identities.identity_generator import generate_with_counts
from neuromath.tasks.identities.identity_labels import SympyJudge, numeric_label
from neuromath.tasks.identities.numeric_evaluation import (
    PRECISE_DIFFER,
    OutsideDomain,
    evaluate,
    evaluate_exact,
    evaluate_precise,
    numeric_check,
    precise_gap,
    sides_differ,
)
from neuromath.tasks.identities.rewrites import GeneratorSettings
from neuromath.tasks.identities.typed_equations import parse_equation

# each differs from an identity by far less than the old float tolerance (1e-8 relative)
NEARLY_IDENTITIES = ["x + 10^(-9) = x", "x*10^(-9) = 0", "cos(x)^2 + sin(x)^2 = 1 + 10^(-10)"]


@pytest.fixture(scope="module")
def judge():
    with SympyJudge(timeout=10.0) as sympy_judge:
        yield sympy_judge


def check(text: str, **options):
    return numeric_check(parse_equation(text), random.Random(0), **options)


@pytest.mark.parametrize("text", NEARLY_IDENTITIES)
def test_a_tiny_difference_is_rejected_at_a_confirmed_point(text):
    result = check(text, prover=lambda equation: pytest.fail("a prover was asked about a false equation"))
    assert result.verdict is False and not result.agrees
    point, left, right = result.witness
    equation = parse_equation(text)
    exact_point = {name: Fraction(value) for name, value in point.items()}
    a, b = (evaluate_precise(side, exact_point) for side in equation.children)
    assert abs(a - b) > 1e-12 * max(1, abs(a))  # the sides really differ there, with 60 digits
    assert (left, right) == tuple(evaluate(side, point) for side in equation.children)


def test_agreement_at_points_is_never_true_without_a_proof():
    result = check("sin(x)^2 + cos(x)^2 = 1")
    assert result.verdict is None and result.agrees and result.points >= 3
    assert check("sin(x)^2 + cos(x)^2 = 1", prover=lambda equation: True).verdict is True
    assert check("sin(x)^2 + cos(x)^2 = 1", prover=lambda equation: False).verdict is None


def test_cancellation_in_floating_point_does_not_reject_a_true_identity():
    text = "(9*10^11 + sin(x)) + (-1)*9*10^11 = sin(x)"
    equation = parse_equation(text)
    rng = random.Random(0)
    gaps = []
    for _ in range(20):
        point = {"var_0": rng.uniform(-3, 3)}
        a, b = (evaluate(side, point) for side in equation.children)
        gaps.append(abs(a - b) / max(1.0, abs(a), abs(b)))
    assert max(gaps) > 1e-5  # the old check's "differ" tolerance: floating point alone would have rejected it
    result = check(text)
    assert result.verdict is None and result.agrees


def test_cancellation_beyond_60_digits_does_not_reject_a_true_identity(judge):
    """cos(pi/2 - asin(exp(3x))) is exp(3x); at x = -27.3 (1e-36) cos loses 36 of 60 digits, and the gap left
    looked like a difference (an equation of the 40k evidence, labelled true, that the check called false)."""
    equation = parse_equation("2*log(cos(pi/2 - asin(exp(3*x)))) = 6*x")
    point = {"var_0": -27.28595592806326}
    assert precise_gap(*equation.children, point) > PRECISE_DIFFER  # 60 digits alone would reject it
    assert not sides_differ(*equation.children, point)
    assert sides_differ(*parse_equation("2*log(cos(pi/2 - asin(exp(3*x)))) = 6*x + 10^(-20)").children, point)
    assert check_identity_tree(equation, judge=judge)[0] == VERIFIED


def test_numbers_alone_are_decided_exactly():
    assert check("4^(1/2) = 2").how == "exact" and check("4^(1/2) = 2").verdict is True
    assert check("1/3 + 1/3 = 2/3").verdict is True
    assert check("0 = 10^(-20)").verdict is False
    assert check("1/3 = 0.3333333333333333").verdict is False
    root_two_squared = check("2^(1/2)*2^(1/2) = 2")  # irrational on the way: exact fractions cannot say, nor reject
    assert root_two_squared.verdict is None and root_two_squared.agrees
    assert check("sin(pi/6) = 1/2").verdict is None


def test_exact_and_precise_values():
    assert evaluate_exact(parse_equation("(2/3)^2*9 + 8^(1/3) = 0").children[0]) == 6
    assert evaluate_exact(parse_equation("cos(0) + log(1) = 0").children[0]) == 1
    for irrational in ("2^(1/2)", "pi", "sin(1)", "x"):
        assert evaluate_exact(parse_equation(f"{irrational} = 0").children[0]) is None
    with pytest.raises(OutsideDomain):
        evaluate_exact(parse_equation("(-4)^(1/2) = 0").children[0])
    for text in ("log(-1) = 0", "asin(2) = 0", "0^(-1) = 0", "(-2)^(1/2) = 0"):
        with pytest.raises(OutsideDomain):
            evaluate_precise(parse_equation(text).children[0], {})
    expression = parse_equation("sec(x) + acot(x)*exp(x)^(1/3) + asec(x + 2) = 0").children[0]
    for value in (-0.7, 0.3, 1.9):
        assert float(evaluate_precise(expression, {"var_0": value})) == pytest.approx(
            evaluate(expression, {"var_0": value}), rel=1e-12)


@pytest.mark.parametrize("text", NEARLY_IDENTITIES)
def test_the_generator_never_takes_a_nearly_identity_for_a_candidate(text):
    assert numeric_label(parse_equation(text), random.Random(3)) is False


def test_check_identity_text_on_nearly_identities_and_on_pythagoras():
    for text in NEARLY_IDENTITIES:
        verdict, reason = check_identity_text(text)
        assert verdict == NOT_VERIFIED and "x = " in reason and "120 digits" in reason, (text, reason)
    verdict, reason = check_identity_text("sin(x)^2 + cos(x)^2 = 1", time_limit=30)
    assert verdict == VERIFIED and "SymPy" in reason


def test_check_identity_tree_verdicts(judge):
    def verdict(text):
        return check_identity_tree(parse_equation(text), judge=judge)

    assert verdict("sqrt(x^2) = x")[0] == NOT_VERIFIED  # |x| is not x
    assert verdict("2^(1/2)*2^(1/2) = 2")[0] == VERIFIED
    assert verdict("4^(1/2) = 2") == (VERIFIED, "exact arithmetic: both sides are 2")
    assert verdict("1/3 = 1/4") == (NOT_VERIFIED, "exact arithmetic: the left side is 1/3 and the right side 1/4")
    # equal wherever both sides are defined, but not as SymPy reads it: no proof either way
    assert verdict("log(x*y) = log(x) + log(y)")[0] == UNKNOWN
    nowhere, reason = verdict("log(-1 - x^2) = x")
    assert nowhere == UNKNOWN and "real value" in reason


def test_a_timeout_is_unknown():
    with SympyJudge(timeout=0.01) as impatient:
        verdict, reason = check_identity_tree(parse_equation("sin(x)^2 + cos(x)^2 = 1"), 0.01, judge=impatient)
    assert verdict == UNKNOWN and "within 0.01 s" in reason


@pytest.mark.parametrize("text", ["2x = 1", "sin(x) = ", "x + 1", "import os = 1", "f(x) = 1"])
def test_unreadable_text_is_an_error(text):
    with pytest.raises(NeuromathError):
        check_identity_text(text)


@pytest.mark.parametrize("limit", [0, -1, math.inf, math.nan, 1e9])
def test_the_time_limit_is_positive_and_finite(limit):
    with pytest.raises(NeuromathError, match="time limit"):
        check_identity_text("x = x", time_limit=limit)


@pytest.mark.parametrize("style", ["chain", "paper"])
def test_generated_labels_agree_with_the_check(judge, style):
    examples, counts = generate_with_counts(40, random.Random(5), max_depth=6, judge=judge,
                                            settings=GeneratorSettings(style=style))
    assert len(examples) >= 30
    for example in examples:
        verdict, reason = check_identity_tree(example.tree, judge=judge)
        if example.label:
            assert verdict == VERIFIED, (str(example.tree), reason)
        else:
            assert verdict != VERIFIED, (str(example.tree), reason)
    false_ones = [example for example in examples if not example.label]
    refuted = sum(check_identity_tree(e.tree, judge=judge)[0] == NOT_VERIFIED for e in false_ones)
    assert refuted >= 0.9 * len(false_ones)
