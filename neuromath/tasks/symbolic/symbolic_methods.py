"""One attempt of each data generator of Lample & Charton (2020, "Deep learning for symbolic mathematics"): an
integration pair by the backward, forward or integration-by-parts method (section 3.1-3.3) or a first-order ODE
(section 3.4), from the random expressions of ``random_expressions`` (section 2.1 and appendix C), written as prefix
tokens (``neuromath.expr.symbolic_prefix``), checked, or the reason there is none. The driver that runs attempts in
worker processes, counts them, journals them and writes the files is ``symbolic_generator``. No torch here.

The methods (one attempt each; ``run_attempt``)
    backward  random F with x, its additive constant terms dropped; f = simplify(F'); the pair (f, F).
    forward   random f with x; F = integrate(f, x), dropped when the result still holds an ``Integral`` or cannot be
              written in prefix (special functions such as erf).
    parts     random F and G with x, f = F', g = G'. When the integral H of f*G is known, the integral of F*g is
              F*G - H; the pair (simplify(F*g), simplify(F*G - H)). Known means found in the table ``known``
              (canonical integrand -> antiderivative tokens, e.g. ``known_integrals(earlier pairs)``), else found by
              ``integrate``; the counts say which (``integral_sources``).
    ode1      random F(x, c) with both x and c; c = G(x, y) the one solution of F(x, c) = y (none or several:
              rejected); the numerator of d/dx G(x, y(x)) = G_x + G_y y', after ``together`` and ``cancel``,
              simplified (and the numerator again, when simplify wrote fractions), with y written ``Y`` and y'
              written ``Y'``; the pair (that expression, F). Every solution y = F(x, c) makes it 0 where G inverts
              F; a pair where SymPy's inverse holds on one branch only (F = tan(x (ln c - 1)), G through atan)
              fails the check below and is rejected.

Every kept pair is checked once in the worker before it is kept, by the verifier that evaluation uses
(``neuromath.tasks.symbolic.verify.check``: numbers at random points may reject, only a proof by SymPy accepts), on
the tokens as written: a pair it finds wrong is rejected as "check failed", one it cannot prove (or finds invalid)
as "check inconclusive". So every written pair verifies.

Rejections are counted by reason (``symbolic_generator.GenerationCounts.rejected``): no x (or no c), too long (more
than ``max_tokens`` tokens on either side, default ``DEFAULT_MAX_TOKENS``), not writable in prefix, undefined (I,
zoo, nan, oo), trivial (a zero integrand, equation or antiderivative), no closed form, integrate / solve raised, not
one solution for c, no Y', check failed, check inconclusive (and, counted by the driver, duplicate input); timeouts
and errors of the pool are counted apart.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Mapping, Sequence

import sympy  # imported when the workers load this module, so no attempt is charged for it

from neuromath.errors import ExpressionError
from neuromath.expr.sympy_bridge import prefix_to_sympy, symbol, sympy_to_prefix
from neuromath.tasks.symbolic.pairs import SymbolicExample, canonical
from neuromath.tasks.symbolic.random_expressions import (
    LEAF_WEIGHTS,
    ODE_LEAF_WEIGHTS,
    random_expression,
    tree_count_table,
)
from neuromath.tasks.symbolic.verify import check

DEFAULT_MAX_TOKENS = 256  # longest input or output kept, in prefix tokens

# rejection reasons (the keys of GenerationCounts.rejected; the driver adds symbolic_generator.DUPLICATE)
NO_X = "no x"
NO_C = "no c"
TOO_LONG = "too long"
NOT_WRITABLE = "not writable in prefix"
UNDEFINED = "undefined (I, zoo, nan)"
TRIVIAL = "trivial"
NO_CLOSED_FORM = "no closed form"
INTEGRATE_FAILED = "integrate raised"
NOT_ONE_SOLUTION = "not one solution for c"
SOLVE_FAILED = "solve raised"
NO_DERIVATIVE = "no Y'"
CHECK_FAILED = "check failed"
CHECK_INCONCLUSIVE = "check inconclusive"


# ---------------------------------------------------------------------------------------------- one attempt


@dataclass(frozen=True)
class AttemptResult:
    kept: bool
    reason: str = ""  # why it was rejected
    source: tuple[str, ...] = ()
    target: tuple[str, ...] = ()
    integral_source: str = ""  # parts: "table" or "sympy", where the integral of f*G came from


class Rejected(Exception):
    """An attempt that ends without a pair; ``reason`` is one of the rejection reasons above."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def run_attempt(
    seed: int, method: str, index: int, max_ops: int, max_tokens: int = DEFAULT_MAX_TOKENS,
    known: Mapping[str, Sequence[str]] | None = None,
) -> AttemptResult:
    """Attempt ``index`` of ``method``: a checked pair, or the reason there is none. Everything random is drawn from
    ``random.Random(f"{seed}/{method}/{index}")``. Runs SymPy calls that can hang: call it in a ``TimeLimitedPool``."""
    rng = random.Random(f"{seed}/{method}/{index}")
    table = tree_count_table(max_ops)
    makers = {"backward": backward_pair, "forward": forward_pair, "parts": parts_pair, "ode1": ode1_pair}
    try:
        source, target, integral_source = makers[method](rng, max_ops, table, known or {})
        source_tokens, target_tokens = writable(source), writable(target)
        if len(source_tokens) > max_tokens or len(target_tokens) > max_tokens:
            raise Rejected(TOO_LONG)
        try:  # what is written must read back
            prefix_to_sympy(source_tokens), prefix_to_sympy(target_tokens)
        except ExpressionError:
            raise Rejected(NOT_WRITABLE) from None
        verdict = check_pair("ode1" if method == "ode1" else "integration", source_tokens, target_tokens)
        if verdict != "ok":
            raise Rejected(verdict)
    except Rejected as rejection:
        return AttemptResult(False, rejection.reason)
    return AttemptResult(True, "", tuple(source_tokens), tuple(target_tokens), integral_source)


def writable(expression) -> list[str]:
    if expression.has(sympy.I, sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise Rejected(UNDEFINED)
    try:
        return sympy_to_prefix(expression)
    except ExpressionError:
        raise Rejected(NOT_WRITABLE) from None


def draw_expression(rng: random.Random, max_ops: int, table, leaf_weights=LEAF_WEIGHTS):
    """A random expression with 1..max_ops operators (uniform) that holds x; ``Rejected`` otherwise."""
    try:
        expression = random_expression(rng.randint(1, max_ops), rng, leaf_weights, table)
    except ExpressionError:
        raise Rejected(UNDEFINED) from None
    if not expression.has(symbol("x")):
        raise Rejected(NO_X)
    return expression


def without_constant_terms(expression):
    """``expression`` without the terms of its top-level sum that do not hold x."""
    x = symbol("x")
    return sympy.Add(*(term for term in sympy.Add.make_args(expression) if term.has(x)))


def sympy_antiderivative(integrand):
    """``integrate(integrand, x)``; ``Rejected`` when SymPy leaves an ``Integral`` or gives up."""
    try:
        result = sympy.integrate(integrand, symbol("x"))
    except (NotImplementedError, sympy.PolynomialError, ValueError, TypeError, RecursionError):
        raise Rejected(INTEGRATE_FAILED) from None
    if result.has(sympy.Integral):
        raise Rejected(NO_CLOSED_FORM)
    return result


def backward_pair(rng, max_ops, table, known):
    antiderivative = without_constant_terms(draw_expression(rng, max_ops, table))
    if not antiderivative.has(symbol("x")):
        raise Rejected(NO_X)
    integrand = sympy.simplify(sympy.diff(antiderivative, symbol("x")))
    if integrand == 0:
        raise Rejected(TRIVIAL)
    return integrand, antiderivative, ""


def forward_pair(rng, max_ops, table, known):
    integrand = draw_expression(rng, max_ops, table)
    antiderivative = without_constant_terms(sympy_antiderivative(integrand))
    if not antiderivative.has(symbol("x")):
        raise Rejected(TRIVIAL)
    return integrand, antiderivative, ""


def parts_pair(rng, max_ops, table, known):
    x = symbol("x")
    big_f = draw_expression(rng, max_ops, table)
    big_g = draw_expression(rng, max_ops, table)
    small_f, small_g = sympy.diff(big_f, x), sympy.diff(big_g, x)
    integrand = sympy.simplify(big_f * small_g)
    if integrand == 0:
        raise Rejected(TRIVIAL)
    partner = small_f * big_g  # the integral of F*g is F*G minus the integral of f*G
    found = lookup_known(partner, known)
    if found is not None:
        partner_integral, integral_source = found, "table"
    else:
        partner_integral, integral_source = sympy_antiderivative(partner), "sympy"
    antiderivative = without_constant_terms(sympy.simplify(big_f * big_g - partner_integral))
    if not antiderivative.has(x):
        raise Rejected(TRIVIAL)
    return integrand, antiderivative, integral_source


def lookup_known(integrand, known: Mapping[str, Sequence[str]]):
    """The antiderivative of ``integrand`` in the table (keys: canonical prefix forms), as SymPy, or None."""
    if not known:
        return None
    for form in (integrand, sympy.simplify(integrand)):
        try:
            key = canonical(sympy_to_prefix(form))
        except ExpressionError:
            continue
        if key in known:
            try:
                return prefix_to_sympy(known[key])
            except ExpressionError:
                return None
    return None


def ode1_pair(rng, max_ops, table, known):
    x, c, y, y_prime = symbol("x"), symbol("c"), symbol("Y"), symbol("Y'")
    solution = draw_expression(rng, max_ops, table, ODE_LEAF_WEIGHTS)
    if not solution.has(c):
        raise Rejected(NO_C)
    try:
        constants = sympy.solve(sympy.Eq(solution, y), c)
    except (NotImplementedError, sympy.PolynomialError, ValueError, TypeError, RecursionError):
        raise Rejected(SOLVE_FAILED) from None
    if not isinstance(constants, list) or len(constants) != 1:
        raise Rejected(NOT_ONE_SOLUTION)
    constant = constants[0]  # c = G(x, Y)
    derivative = sympy.diff(constant, x) + sympy.diff(constant, y) * y_prime
    numerator, _ = sympy.fraction(sympy.cancel(sympy.together(derivative)))
    equation, _ = sympy.fraction(sympy.together(sympy.simplify(numerator)))  # simplify can bring fractions back
    if equation == 0:
        raise Rejected(TRIVIAL)
    if not equation.has(y_prime):
        raise Rejected(NO_DERIVATIVE)
    return equation, solution, ""


# ---------------------------------------------------------------------------------------------- the check


def check_pair(kind: str, source_tokens: Sequence[str], target_tokens: Sequence[str]) -> str:
    """"ok" when the verifier of the task (``neuromath.tasks.symbolic.verify.check``, the one evaluation uses)
    proves the output a solution of the input; ``CHECK_FAILED`` when it finds it wrong; ``CHECK_INCONCLUSIVE``
    when it can neither prove nor reject it (or the output is invalid)."""
    verdict = check(kind, source_tokens, target_tokens)
    if verdict == "correct":
        return "ok"
    return CHECK_FAILED if verdict == "wrong" else CHECK_INCONCLUSIVE


def known_integrals(examples: Sequence[SymbolicExample]) -> dict[str, tuple[str, ...]]:
    """The table ``parts`` looks integrals up in: canonical integrand -> antiderivative tokens, from integration
    pairs (the first pair of each integrand wins)."""
    table: dict[str, tuple[str, ...]] = {}
    for example in examples:
        if example.kind == "integration":
            table.setdefault(canonical(example.source), tuple(example.target))
    return table

