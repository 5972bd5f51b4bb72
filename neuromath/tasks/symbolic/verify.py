"""Verification of symbolic integrals and first-order ODE solutions (Lample & Charton 2020, "Deep learning for
symbolic mathematics", section 4: a hypothesis is right when SymPy shows it right, whatever form it takes). No torch.

Integration: the hypothesis H is right when dH/dx equals the integrand f. An ODE (``ode1``): the problem is an
expression P in x, Y, Y' (and Y'') that is 0 along every solution; H (in x and the constant c) is right when
P(x, H, dH/dx, d2H/dx2) is 0. The *difference* is dH/dx - f, or that substituted P.

A hypothesis is ``correct`` only when it is proven: the difference reduces to exactly 0 under SymPy (as written,
``cancel``, ``simplify``, or ``simplify`` after writing trigonometric and hyperbolic functions as exponentials), or
it reduces to a constant that exact arithmetic shows to be 0 (a rational, or an algebraic number whose minimal
polynomial is x): ``proof``. Numbers (``numeric_points``) never accept. Two ways to decide, the ``mode`` of
``check``:

* ``numeric_first`` (the default): first evaluate both sides at random real points (x in several ranges, c in
  ``CONSTANT_RANGE``) with NumPy on complex arrays; points where a side is infinite, NaN or has an imaginary part
  (outside the real domain) are skipped. A point that differs by more than ``DISAGREE_TOLERANCE`` (relative to
  max(1, |values|)), confirmed by an evaluation with ``CONFIRM_DIGITS`` significant digits (SymPy's ``evalf``, so a
  float64 cancellation never rejects a right answer), rejects the hypothesis at once: ``wrong``. Otherwise the
  proof is tried. The difference is ``wrong`` when it reduces to a constant that is not 0 (``x/10^9`` added to an
  antiderivative), or when, unproven, it is clearly not 0 at one of ``PRECISE_POINTS`` valid points evaluated with
  ``CONFIRM_DIGITS`` digits (above ``PRECISE_TOLERANCE``: a term of size 1e-9 that float64 cannot see). Anything
  else is ``undecided``: not proven, whatever the numbers say (a spike such as ``exp(-10^6 x^2)`` that no sampled
  point meets).
* ``simplify_only``: ``simplify(difference) == 0``, the check of the paper; the baseline of
  ``benchmarks/symbolic.py``.

Verdicts (``VERDICTS``): ``correct`` (proven); ``wrong``; ``unparsable`` (not a prefix expression: wrong arity,
unknown token, stray digit); ``invalid`` (the hypothesis holds ``I``, is undefined like ``div x INT+ 0``, or, for an
integral, it and its derivative are real at none of the points where the integrand is); ``undecided`` (not proven
and not shown wrong); ``timeout`` (the time limit ended the check: building, differentiating or simplifying some
expressions never finishes); ``error`` (the check raised, e.g. the problem itself is malformed). Only ``correct``
counts as right: a timeout or an undecided hypothesis is not verified. ``user_verdict`` writes a verdict in the three
words that ``neuromath check``, ``solve``, ``evaluate`` and the server show: ``verified`` (``correct``), ``unknown``
(``error``: the check could not run) and ``not verified`` (every other verdict); ``check_explained`` also says why.

What counts as right: a hypothesis may use x and c (c is an arbitrary constant, also in an antiderivative); any other
symbol (``Y``, ...) makes it wrong. An antiderivative that differs from a real one by an imaginary constant is right
(``log(-1 - x**2)`` for 2x/(1 + x**2), as SymPy's ``integrate`` writes ``log(x - 3)``): its derivative is what is
compared, and that difference reduces to 0. A solution of an ODE that does not use c (a particular solution) is right
when it satisfies the equation.

``check`` is a pure module-level function; ``verdicts`` / ``verify_examples`` run it in a ``TimeLimitedPool``
(untrusted SymPy calls can hang); the pools persist between calls (one per worker count and time limit) and close
at interpreter exit. The random points are seeded by the problem's tokens, so verdicts never change between runs.
"""

from __future__ import annotations

import atexit
import functools
import os
import threading
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import sympy

from neuromath.errors import ExpressionError, NeuromathError
from neuromath.expr.symbolic_prefix import FUNCTION_LEAVES, check_prefix
from neuromath.expr.sympy_bridge import prefix_to_sympy, symbol
from neuromath.tasks.symbolic.numeric_points import (
    CONFIRM_DIGITS,
    C,
    X,
    evaluate_at,
    high_precision_value,
    is_real_and_finite,
    problem_rng,
    sample_points,
)
from neuromath.tasks.symbolic.proof import reduce_to_zero, simplifies_to_zero
from neuromath.timelimit import Outcome, TimeLimitedPool

VERDICTS = ("correct", "wrong", "unparsable", "invalid", "undecided", "timeout", "error")
USER_VERDICTS = ("verified", "not verified", "unknown")  # what users see (user_verdict)
MODES = ("numeric_first", "simplify_only")
KINDS = ("integration", "ode1")
DEFAULT_TIME_LIMIT = 5.0  # seconds per hypothesis: parse, numbers and simplify together

AGREE_TOLERANCE = 1e-7
DISAGREE_TOLERANCE = 1e-4
CONFIRM_TOLERANCE = 1e-6
CONFIRM_POINTS = 1  # clearly differing points re-evaluated with CONFIRM_DIGITS digits before rejecting
PRECISE_POINTS = 3  # valid points at which an unproven difference is evaluated with CONFIRM_DIGITS digits
PRECISE_TOLERANCE = 1e-15  # relative: above it an unproven difference is wrong (float64 sees only 1e-4)

Y, Y1, Y2 = (symbol(name) for name in FUNCTION_LEAVES)
HYPOTHESIS_SYMBOLS = frozenset({X, C})


@dataclass
class Sampled:
    """What the numbers of ``numeric_first`` found: ``wrong`` (a confirmed difference, described in ``reason``),
    ``invalid``, or None (nothing rejects); the valid points, the clearest first, for the precise look of an unproven
    difference (``precise_points``: (point, scale)); how many points were valid and how many agreed."""

    verdict: str | None = None
    reason: str = ""
    precise_points: list = field(default_factory=list)
    valid: int = 0
    agreeing: int = 0


def describe_point(point: dict, expression) -> str:
    """``x = 1.5`` (and ``c = ...`` when ``expression`` holds c)."""
    shown = [X] + ([C] if expression.has(C) else [])
    return ", ".join(f"{name} = {point[name]:.6g}" for name in shown if name in point)


def judge_points(difference: np.ndarray, scale: np.ndarray, valid: np.ndarray, points: dict,
                 confirms_difference: Callable[[dict, float], str | None]) -> Sampled:
    """What the differences at the valid points show. ``confirms_difference(point, scale)`` re-evaluates a point
    precisely and describes the difference when it is real (None when it is not)."""
    indices = np.flatnonzero(valid)
    relative = np.abs(difference[indices]) / scale[indices]
    clearest_first = [int(i) for i in indices[np.argsort(scale[indices], kind="stable")]]  # the least cancellation
    sampled = Sampled(precise_points=[(point_at(points, i), float(scale[i])) for i in clearest_first[:PRECISE_POINTS]],
                      valid=int(indices.size), agreeing=int(np.sum(relative <= AGREE_TOLERANCE)))
    differing = set(indices[relative > DISAGREE_TOLERANCE].tolist())
    for index in [i for i in clearest_first if i in differing][:CONFIRM_POINTS]:
        reason = confirms_difference(point_at(points, index), float(scale[index]))
        if reason is not None:
            sampled.verdict, sampled.reason = "wrong", reason
            break
    return sampled


def point_at(values: dict, index: int) -> dict:
    return {name: complex(array[index]).real for name, array in values.items()}


def precise_difference(difference, points: Sequence[tuple[dict, float]], what: str) -> str | None:
    """Where an unproven difference is clearly not 0 at one of ``points`` ((point, scale), evaluated with
    ``CONFIRM_DIGITS`` digits): its description; None when it is not."""
    for point, scale in points:
        try:
            value = high_precision_value(difference, point)
        except Exception:  # SymPy raises many kinds of errors on odd input; then nothing is shown
            continue
        if np.isfinite(value) and abs(value) > PRECISE_TOLERANCE * scale:
            where = describe_point(point, difference)
            return f"{what} is {value.real:.3g} at {where} ({CONFIRM_DIGITS} digits), not 0"
    return None


def decide(difference, sampled: Sampled, what: str) -> tuple[str, str]:
    """The verdict and its reason once the numbers rejected nothing: the proof, else a precise look at the valid
    points, else undecided."""
    proof = reduce_to_zero(difference)
    if proof.outcome == "zero":
        return "correct", f"proven: {what} reduces to 0 ({proof.how})"
    if proof.outcome == "nonzero":
        return "wrong", f"{what} is the constant {proof.value}, not 0"
    shown = precise_difference(difference, sampled.precise_points, what)
    if shown is not None:
        return "wrong", shown
    agreeing = (f"; the numbers agree at {sampled.agreeing} of {sampled.valid} sampled points"
                if sampled.valid else "; no sampled point is in the real domain")
    return "undecided", f"not proven: SymPy does not reduce {what} to 0{agreeing}"


# ------------------------------------------------------------------------------------------- integration

INTEGRAL_DIFFERENCE = "the derivative minus the integrand"
ODE_DIFFERENCE = "the equation with the solution substituted"


def numeric_antiderivative(integrand, antiderivative, derivative, rng: np.random.Generator) -> Sampled:
    points = sample_points(rng)
    n_points = points[X].size
    with np.errstate(all="ignore"):
        try:
            f = evaluate_at(integrand, points, n_points)
            h = evaluate_at(antiderivative, points, n_points)
            d = evaluate_at(derivative, points, n_points)
        except (ExpressionError, ArithmeticError, ValueError, TypeError, RecursionError):
            return Sampled()
        f_real = is_real_and_finite(f)
        valid = f_real & is_real_and_finite(d)
        if f_real.any() and not valid.any() and not is_real_and_finite(h).any():
            return Sampled("invalid", "the hypothesis and its derivative are not real at any sampled point where the "
                                      "integrand is")
        scale = np.maximum(1.0, np.maximum(np.abs(f), np.abs(d)))
        difference = d - f

    def confirms_difference(point: dict, scale: float) -> str | None:
        try:
            exact_f = high_precision_value(integrand, point)
            exact_d = high_precision_value(derivative, point)
        except Exception:  # SymPy raises many kinds of errors on odd input; then nothing is confirmed
            return None
        if not (np.isfinite(exact_f) and np.isfinite(exact_d)):
            return None
        if abs(exact_d - exact_f) > CONFIRM_TOLERANCE * max(1.0, abs(exact_d), abs(exact_f)):
            return (f"at {describe_point(point, antiderivative)} the derivative is {exact_d.real:.6g} and the "
                    f"integrand {exact_f.real:.6g}")
        return None

    return judge_points(difference, scale, valid, points, confirms_difference)


def check_antiderivative(integrand, antiderivative, mode: str, rng: np.random.Generator) -> tuple[str, str]:
    derivative = sympy.diff(antiderivative, X)
    difference = derivative - integrand
    if mode == "simplify_only":
        if simplifies_to_zero(difference):
            return "correct", f"proven: {INTEGRAL_DIFFERENCE} simplifies to 0"
        return "wrong", f"{INTEGRAL_DIFFERENCE} does not simplify to 0"
    sampled = numeric_antiderivative(integrand, antiderivative, derivative, rng)
    if sampled.verdict is not None:
        return sampled.verdict, sampled.reason
    return decide(difference, sampled, INTEGRAL_DIFFERENCE)


# --------------------------------------------------------------------------------------------------- ODEs


def solution_derivatives(equation, solution) -> dict:
    """Y, Y' (and Y'' when the equation has it) of the solution: symbol -> SymPy expression."""
    first = sympy.diff(solution, X)
    derivatives = {Y: solution, Y1: first}
    if equation.has(Y2):
        derivatives[Y2] = sympy.diff(first, X)
    return derivatives


def numeric_ode(equation, derivatives: dict, rng: np.random.Generator) -> Sampled:
    points = sample_points(rng)
    n_points = points[X].size
    terms = equation.args if equation.is_Add else (equation,)
    with np.errstate(all="ignore"):
        try:
            memo: dict = {}
            function_values = {name: evaluate_at(value, points, n_points, memo) for name, value in derivatives.items()}
            known = {**points, **function_values}
            term_memo: dict = {}
            term_values = [evaluate_at(term, known, n_points, term_memo) for term in terms]
        except (ExpressionError, ArithmeticError, ValueError, TypeError, RecursionError):
            return Sampled()
        valid = np.logical_and.reduce([is_real_and_finite(v) for v in function_values.values()])
        valid &= np.logical_and.reduce([np.isfinite(v) for v in term_values])
        residual = np.sum(term_values, axis=0)
        magnitudes = [np.abs(v) for v in (*function_values.values(), *term_values)]
        scale = np.maximum.reduce([np.ones(n_points), *magnitudes])

    def confirms_difference(point: dict, scale: float) -> str | None:
        try:
            exact = {name: sympy.sympify(high_precision_value(value, point)) for name, value in derivatives.items()}
            exact_residual = high_precision_value(equation, {**point, **exact})
        except Exception:  # SymPy raises many kinds of errors on odd input; then nothing is confirmed
            return None
        if bool(np.isfinite(exact_residual)) and abs(exact_residual) > CONFIRM_TOLERANCE * scale:
            return f"at {describe_point(point, derivatives[Y])} the equation is {exact_residual.real:.6g}, not 0"
        return None

    return judge_points(residual, scale, valid, points, confirms_difference)


def check_ode_solution(equation, solution, mode: str, rng: np.random.Generator) -> tuple[str, str]:
    derivatives = solution_derivatives(equation, solution)
    residual = equation.xreplace(derivatives)
    if mode == "simplify_only":
        if simplifies_to_zero(residual):
            return "correct", f"proven: {ODE_DIFFERENCE} simplifies to 0"
        return "wrong", f"{ODE_DIFFERENCE} does not simplify to 0"
    sampled = numeric_ode(equation, derivatives, rng)
    if sampled.verdict is not None:
        return sampled.verdict, sampled.reason
    return decide(residual, sampled, ODE_DIFFERENCE)


# ------------------------------------------------------------------------------------------------ check


@functools.lru_cache(maxsize=1024)
def read_problem(kind: str, problem_tokens: tuple[str, ...]):
    """The problem as a SymPy expression (cached: an n-best list checks many hypotheses of one problem)."""
    expression = prefix_to_sympy(problem_tokens)
    allowed = {X, C} if kind == "integration" else {X, C, Y, Y1, Y2}
    unknown = expression.free_symbols - allowed
    if unknown:
        raise ExpressionError(f"the {kind} problem has unexpected symbols: {sorted(map(str, unknown))}")
    return expression


def check_explained(kind: str, problem_tokens: Sequence[str], hypothesis_tokens: Sequence[str],
                    mode: str = "numeric_first", seed: int = 0) -> tuple[str, str]:
    """The verdict (one of ``VERDICTS`` but ``timeout`` and ``error``) on a hypothesis, and why: an antiderivative of
    the integrand when ``kind`` is "integration", a solution of the equation when it is "ode1". Pure and
    deterministic; raises ``ExpressionError`` when the problem itself is malformed. Run it with a time limit on
    untrusted input."""
    if mode not in MODES:
        raise NeuromathError(f"unknown verification mode {mode!r}; expected one of {', '.join(MODES)}")
    if kind not in KINDS:
        raise NeuromathError(f"unknown symbolic kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        check_prefix(hypothesis_tokens)
    except ExpressionError as error:
        return "unparsable", f"not a well-formed expression: {error}"
    problem = read_problem(kind, tuple(problem_tokens))
    try:
        hypothesis = prefix_to_sympy(hypothesis_tokens)
    except ExpressionError as error:  # zoo, nan or oo
        return "invalid", f"the hypothesis is undefined: {error}"
    if hypothesis.has(sympy.I):
        return "invalid", "the hypothesis holds the imaginary unit I"
    foreign = hypothesis.free_symbols - HYPOTHESIS_SYMBOLS
    if foreign:
        return "wrong", f"the hypothesis uses {', '.join(sorted(map(str, foreign)))}; only x and c may appear"
    rng = problem_rng(problem_tokens, seed)
    if kind == "integration":
        return check_antiderivative(problem, hypothesis, mode, rng)
    return check_ode_solution(problem, hypothesis, mode, rng)


def check(kind: str, problem_tokens: Sequence[str], hypothesis_tokens: Sequence[str], mode: str = "numeric_first",
          seed: int = 0) -> str:
    """The verdict of ``check_explained`` alone."""
    return check_explained(kind, problem_tokens, hypothesis_tokens, mode, seed)[0]


def user_verdict(verdict: str) -> str:
    """A verdict of ``VERDICTS`` in the words users see (``USER_VERDICTS``): ``verified`` when ``correct`` (proven),
    ``unknown`` when the check could not run (``error``), else ``not verified`` (a timeout included)."""
    if verdict == "correct":
        return "verified"
    return "unknown" if verdict == "error" else "not verified"


# ----------------------------------------------------------------------------------------- worker pools

_pools: dict[tuple[int, float], TimeLimitedPool] = {}
_pools_lock = threading.Lock()  # one map at a time: a TimeLimitedPool is not thread-safe


def shared_pool(workers: int, time_limit: float) -> TimeLimitedPool:
    """The persistent pool of ``check`` for this worker count and time limit, created on first use. Its workers are
    reused between calls; one killed at the limit is replaced."""
    key = (int(workers), float(time_limit))
    if key not in _pools:
        _pools[key] = TimeLimitedPool(check, workers=key[0], time_limit=key[1])
    return _pools[key]


def close_pools() -> None:
    """Stop every worker of the shared pools (they start again on the next call)."""
    with _pools_lock:
        for pool in _pools.values():
            pool.close()
        _pools.clear()


atexit.register(close_pools)


def verdict_of(outcome: Outcome) -> str:
    if outcome.ok:
        return outcome.value
    return "timeout" if outcome.status == "timeout" else "error"


def verdicts(pairs: Sequence[tuple[Sequence[str], object]], workers: int | None = None,
             time_limit: float | None = None, mode: str = "numeric_first", seed: int = 0) -> list[str]:
    """The verdict on every (hypothesis tokens, ``SymbolicExample``) pair, in order. Malformed hypotheses are
    ``unparsable`` without reaching a worker; identical (problem, hypothesis) pairs are checked once; the rest run
    in a shared pool of ``workers`` processes (default min(2, CPUs)) with ``time_limit`` seconds each (default
    ``DEFAULT_TIME_LIMIT``)."""
    if mode not in MODES:
        raise NeuromathError(f"unknown verification mode {mode!r}; expected one of {', '.join(MODES)}")
    workers = workers or min(2, os.cpu_count() or 1)
    time_limit = time_limit or DEFAULT_TIME_LIMIT
    results: list[str | None] = [None] * len(pairs)
    waiting: dict[tuple, list[int]] = {}  # (kind, problem, hypothesis) -> positions in pairs
    for position, (tokens, example) in enumerate(pairs):
        tokens = tuple(tokens)
        try:
            check_prefix(tokens)
        except ExpressionError:
            results[position] = "unparsable"
            continue
        waiting.setdefault((example.kind, tuple(example.source), tokens), []).append(position)
    if waiting:
        jobs = [(kind, problem, hypothesis, mode, seed) for kind, problem, hypothesis in waiting]
        with _pools_lock:
            outcomes = shared_pool(workers, time_limit).map(jobs)
        for positions, outcome in zip(waiting.values(), outcomes):
            for position in positions:
                results[position] = verdict_of(outcome)
    return results  # type: ignore[return-value]


def verify_examples(pairs: Sequence[tuple[Sequence[str], object]], workers: int | None = None,
                    time_limit: float | None = None, mode: str = "numeric_first") -> list[bool]:
    """Whether each (hypothesis tokens, ``SymbolicExample``) pair verifies: its verdict is ``correct``."""
    return [verdict == "correct" for verdict in verdicts(pairs, workers, time_limit, mode)]


def verify_example(tokens: Sequence[str], example) -> bool:
    """One check in the shared one-worker pool (no process start per call once the worker is up)."""
    return verdicts([(tokens, example)], workers=1, time_limit=DEFAULT_TIME_LIMIT)[0] == "correct"


def check_with_time_limit(kind: str, problem_tokens: Sequence[str], hypothesis_tokens: Sequence[str],
                          time_limit: float = DEFAULT_TIME_LIMIT) -> tuple[str, str]:
    """``check_explained`` in a worker process of its own, ended after ``time_limit`` seconds: (verdict, reason), with
    ``timeout`` when the limit ended it and ``error`` when it raised. One process per call (``neuromath check``)."""
    with TimeLimitedPool(check_explained, workers=1, time_limit=time_limit) as pool:
        outcome = pool.run(kind, list(problem_tokens), list(hypothesis_tokens))
    if outcome.ok:
        return outcome.value
    if outcome.status == "timeout":
        return "timeout", f"not proven within the time limit of {time_limit:g} s"
    return "error", f"the check could not run: {outcome.value}"
