"""A symbolic hypothesis is verified only when it is proven: SymPy reduces the difference to 0, or exact arithmetic
decides a constant. Sampled numbers may reject, never accept; a timeout is not verified. The wrong answers below were
all accepted by sampling alone (they agree with the right ones to 1e-7 at every sampled point)."""

import time

import pytest
import sympy

from neuromath.expr.sympy_bridge import symbol, sympy_to_prefix
from neuromath.tasks.symbolic import SymbolicExample, proof
from neuromath.tasks.symbolic import verify as sv

x, c = symbol("x"), symbol("c")
Y, Y1 = symbol("Y"), symbol("Y'")
TINY = sympy.Rational(1, 10**9)

WRONG = [  # (kind, problem, hypothesis): each differs from a right answer by a term sampling cannot see
    ("integration", x, x**2 / 2 + x * TINY),
    ("integration", x * sympy.cos(x), x * sympy.sin(x) + sympy.cos(x) + x / 10**12),
    ("integration", x, x**2 / 2 + sympy.exp(-10**6 * x**2)),  # a spike between the sampled points
    ("integration", x, x**2 / 2 + sympy.exp(-(x - 100) ** 2)),  # a bump outside the sampled |x| <= 30
    ("integration", x, x**2 / 2 + TINY * x**2),  # not a constant: only a precise evaluation shows it
    ("ode1", Y1 - Y, c * sympy.exp(x) + sympy.Rational(1, 10**10)),
]
RIGHT = [
    ("integration", x, x**2 / 2),
    ("integration", x * sympy.cos(x), x * sympy.sin(x) + sympy.cos(x) + 5),
    ("ode1", Y1 - Y, c * sympy.exp(x)),
    ("integration", 2 * x / (1 + x**2), sympy.log(-1 - x**2)),  # an imaginary constant away from log(1 + x**2)
    # tanh as exponentials is a rational function of exp(x): cancel proves what simplify takes seconds for
    ("integration", 4 * sympy.cosh(4 * x) / sympy.cosh(sympy.sinh(4 * x)), sympy.asin(sympy.tanh(sympy.sinh(4 * x)))),
    # a constant difference decided by exact arithmetic on algebraic numbers
    ("integration", sympy.Integer(1), x * (sympy.sqrt(2) + sympy.sqrt(3)) ** 2 - 2 * sympy.sqrt(6) * x - 4 * x),
]


def explained(kind, problem, hypothesis):
    return sv.check_explained(kind, sympy_to_prefix(problem), sympy_to_prefix(hypothesis))


@pytest.fixture(scope="module", autouse=True)
def stop_workers_at_the_end():
    yield
    sv.close_pools()


@pytest.mark.parametrize("kind, problem, hypothesis", WRONG)
def test_an_answer_that_only_sampling_accepts_is_not_verified(kind, problem, hypothesis):
    verdict, reason = explained(kind, problem, hypothesis)
    assert verdict in ("wrong", "undecided"), reason
    assert sv.user_verdict(verdict) == "not verified"


@pytest.mark.parametrize("kind, problem, hypothesis", WRONG)
def test_the_sampled_numbers_of_those_answers_do_agree(kind, problem, hypothesis):
    """What made them dangerous: no sampled point shows a difference above the old acceptance tolerance."""
    problem_tokens = sympy_to_prefix(problem)
    problem_expression = sv.read_problem(kind, tuple(problem_tokens))
    rng = sv.problem_rng(problem_tokens, 0)
    if kind == "integration":
        sampled = sv.numeric_antiderivative(problem_expression, hypothesis, sympy.diff(hypothesis, x), rng)
    else:
        sampled = sv.numeric_ode(problem_expression, sv.solution_derivatives(problem_expression, hypothesis), rng)
    assert sampled.verdict is None and sampled.valid >= 4  # the numbers agree at several points: they cannot accept
    assert sampled.agreeing == sampled.valid


@pytest.mark.parametrize("kind, problem, hypothesis", RIGHT)
def test_a_right_answer_is_proven(kind, problem, hypothesis):
    verdict, reason = explained(kind, problem, hypothesis)
    assert verdict == "correct", reason
    assert reason.startswith("proven") and sv.user_verdict(verdict) == "verified"


def test_a_constant_difference_is_decided_exactly():
    verdict, reason = explained("integration", x, x**2 / 2 + x * TINY)
    assert (verdict, reason) == ("wrong", "the derivative minus the integrand is the constant 1/1000000000, not 0")
    assert proof.constant_is_zero((sympy.sqrt(2) + sympy.sqrt(3)) ** 2 - 5 - 2 * sympy.sqrt(6)) is True
    assert proof.constant_is_zero(sympy.sqrt(2) - sympy.Rational(14142135623730951, 10**16)) is False
    assert proof.constant_is_zero(sympy.Integer(0)) is True


def test_a_proof_step_that_raises_is_skipped(monkeypatch):
    def raises(expression):
        raise sympy.polys.polyerrors.PolynomialError("no")

    monkeypatch.setattr(proof, "PROOF_STEPS", (("raising", raises), *proof.PROOF_STEPS))
    assert explained("integration", sympy.sin(2 * x), sympy.sin(x) ** 2)[0] == "correct"


def test_a_timeout_is_not_verified():
    never_built = "pow INT+ 9 9 9 pow INT+ 9 9 9 INT+ 9 9 9".split()  # SymPy never finishes building it
    started = time.monotonic()
    verdict, reason = sv.check_with_time_limit("integration", ["x"], never_built, time_limit=1.0)
    assert (verdict, reason) == ("timeout", "not proven within the time limit of 1 s")
    assert sv.user_verdict(verdict) == "not verified"
    example = SymbolicExample(("x",), ())
    assert sv.verdicts([(never_built, example)], workers=1, time_limit=1.0) == ["timeout"]
    assert sv.verify_examples([(never_built, example)], workers=1, time_limit=1.0) == [False]
    assert time.monotonic() - started < 60


def test_user_verdicts_are_three_words():
    assert {sv.user_verdict(verdict) for verdict in sv.VERDICTS} == set(sv.USER_VERDICTS)
    assert [name for name in sv.VERDICTS if sv.user_verdict(name) == "verified"] == ["correct"]
