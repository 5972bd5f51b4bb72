"""Verification of symbolic integrals and first-order ODE solutions (Lample & Charton 2020, "Deep learning for
symbolic mathematics", section 4: a hypothesis is right when SymPy confirms it, whatever form it takes). No torch.

Integration: the hypothesis H is right when dH/dx equals the integrand f. An ODE (``ode1``): the problem is an
expression P in x, Y, Y' (and Y'') that is 0 along every solution; H (in x and the constant c) is right when
P(x, H, dH/dx, d2H/dx2) is 0. Two ways to decide, the ``mode`` of ``check``:

* ``numeric_first`` (the default): evaluate both sides at random real points (x in several ranges, c in
  ``CONSTANT_RANGE``) with NumPy on complex arrays. Points where a side is infinite, NaN or has an imaginary part
  (outside the real domain) are skipped. The hypothesis is right when at least ``MIN_AGREEING_POINTS`` points are
  left and all agree within ``AGREE_TOLERANCE`` (relative to max(1, |values|)); it is wrong when a point differs by
  more than ``DISAGREE_TOLERANCE`` and an evaluation with ``CONFIRM_DIGITS`` significant digits (SymPy's ``evalf``)
  confirms it, so a float64 cancellation never rejects a right answer. Otherwise the numbers are inconclusive and
  ``simplify(difference) == 0`` decides; when it does not reach 0 the verdict is ``undecided``.
* ``simplify_only``: ``simplify(dH/dx - f) == 0`` (or of the substituted ODE), the check of the paper; the
  baseline of ``benchmarks/symbolic.py``.

Verdicts (``VERDICTS``): ``correct``; ``wrong``; ``unparsable`` (not a prefix expression: wrong arity, unknown token,
stray digit); ``invalid`` (the hypothesis holds ``I``, is undefined like ``div x INT+ 0``, or, for an integral, it and
its derivative are real at none of the points where the integrand is); ``undecided``; ``timeout`` (the time limit
ended the check: building, differentiating or simplifying some expressions never finishes); ``error`` (the check
raised, e.g. the problem itself is malformed). Only ``correct`` counts as right.

What counts as right: a hypothesis may use x and c (c is an arbitrary constant, also in an antiderivative); any other
symbol (``Y``, ...) makes it wrong. An antiderivative that differs from a real one by an imaginary constant is right
(``log(-1 - x**2)`` for 2x/(1 + x**2), as SymPy's ``integrate`` writes ``log(x - 3)``: its derivative is compared
where the integrand is real). A solution of an ODE that does not use c (a particular solution) is right when it
satisfies the equation.

``check`` is a pure module-level function; ``verdicts`` / ``verify_examples`` run it in a ``TimeLimitedPool``
(untrusted SymPy calls can hang); the pools persist between calls (one per worker count and time limit) and close
at interpreter exit. The random points are seeded by the problem's tokens, so verdicts never change between runs.
"""

from __future__ import annotations

import atexit
import functools
import math
import os
import threading
import zlib
from typing import Callable, Sequence

import numpy as np
import sympy

from neuromath.errors import ExpressionError, NeuromathError
from neuromath.expr.symbolic_prefix import FUNCTION_LEAVES, check_prefix
from neuromath.expr.sympy_bridge import prefix_to_sympy, symbol
from neuromath.timelimit import Outcome, TimeLimitedPool

VERDICTS = ("correct", "wrong", "unparsable", "invalid", "undecided", "timeout", "error")
MODES = ("numeric_first", "simplify_only")
KINDS = ("integration", "ode1")
DEFAULT_TIME_LIMIT = 5.0  # seconds per hypothesis: parse, numbers and simplify together

# x is drawn from each range (low, high, how many points): narrow domains around 0 (asin(5x)), a positive domain
# (ln, sqrt, acosh), both signs, and larger values on each side (domains such as x > 5). NumPy evaluates all the
# points of an operator at once, so more points cost little.
SAMPLE_RANGES = (
    (-0.1, 0.1, 8), (-0.5, 0.5, 8), (-1.0, 1.0, 12), (0.0, 3.0, 12), (-3.0, 3.0, 12), (-10.0, 10.0, 16),
    (3.0, 30.0, 12), (-30.0, -3.0, 12),
)
CONSTANT_RANGE = (-5.0, 5.0)  # c of an ODE solution
MIN_AGREEING_POINTS = 4
AGREE_TOLERANCE = 1e-7
DISAGREE_TOLERANCE = 1e-4
IMAGINARY_TOLERANCE = 1e-9  # |imaginary part| relative to max(1, |real part|) below which a value is real
CONFIRM_DIGITS = 30
CONFIRM_TOLERANCE = 1e-6
CONFIRM_POINTS = 1  # clearly differing points re-evaluated with CONFIRM_DIGITS digits before rejecting

X = symbol("x")
C = symbol("c")
Y, Y1, Y2 = (symbol(name) for name in FUNCTION_LEAVES)
HYPOTHESIS_SYMBOLS = frozenset({X, C})


# --------------------------------------------------------------------------------------- numeric evaluation


def complex_sign(z):
    magnitude = np.abs(z)
    return np.where(magnitude == 0, 0, z / np.where(magnitude == 0, 1, magnitude))


def dirac_delta(z):
    return np.where(z == 0, np.inf, 0.0)


def heaviside(z):
    return np.where(z.real > 0, 1.0, np.where(z.real < 0, 0.0, 0.5))


# SymPy's functions on complex NumPy arrays, with SymPy's definitions of the reciprocal ones.
NUMPY_FUNCTIONS: dict = {
    sympy.exp: np.exp, sympy.log: np.log, sympy.Abs: np.abs, sympy.sign: complex_sign,
    sympy.sin: np.sin, sympy.cos: np.cos, sympy.tan: np.tan,
    sympy.cot: lambda z: 1 / np.tan(z), sympy.sec: lambda z: 1 / np.cos(z), sympy.csc: lambda z: 1 / np.sin(z),
    sympy.asin: np.arcsin, sympy.acos: np.arccos, sympy.atan: np.arctan,
    sympy.acot: lambda z: np.arctan(1 / z), sympy.asec: lambda z: np.arccos(1 / z),
    sympy.acsc: lambda z: np.arcsin(1 / z),
    sympy.sinh: np.sinh, sympy.cosh: np.cosh, sympy.tanh: np.tanh,
    sympy.coth: lambda z: 1 / np.tanh(z), sympy.sech: lambda z: 1 / np.cosh(z), sympy.csch: lambda z: 1 / np.sinh(z),
    sympy.asinh: np.arcsinh, sympy.acosh: np.arccosh, sympy.atanh: np.arctanh,
    sympy.acoth: lambda z: np.arctanh(1 / z), sympy.asech: lambda z: np.arccosh(1 / z),
    sympy.acsch: lambda z: np.arcsinh(1 / z),
    sympy.re: np.real, sympy.im: np.imag, sympy.arg: np.angle, sympy.conjugate: np.conj,
    sympy.DiracDelta: dirac_delta, sympy.Heaviside: heaviside,
}


def principal(z):
    """``z`` with every imaginary -0.0 made +0.0, so that ``sqrt`` and ``log`` of a negative real take SymPy's
    principal value (``sqrt(-3) = I*sqrt(3)``) whatever sign a product left on the zero."""
    return z + 0j


NUMBER_SYMBOLS = {sympy.pi: complex(math.pi), sympy.E: complex(math.e), sympy.I: 1j}


def number_value(number) -> complex:
    """A SymPy number (an atom) as a complex; integers and rationals without SymPy's slower ``evalf``."""
    try:
        if number.is_Rational:  # Python's int / int is correctly rounded, even for long integers
            return complex(number.p / number.q if number.q != 1 else float(number.p))
        if number in NUMBER_SYMBOLS:
            return NUMBER_SYMBOLS[number]
        return complex(number)
    except OverflowError:  # a number too large for a float: only its sign survives
        return complex(math.copysign(math.inf, 1 if number.is_positive else -1))
    except TypeError:  # zoo, nan
        return complex(math.nan, math.nan)


def evaluate(expression, values: dict, memo: dict | None = None):
    """The values of a SymPy expression at the points in ``values`` (symbol -> complex NumPy array), as a complex
    array or scalar; ``ExpressionError`` for a symbol or function it cannot evaluate. Call under
    ``np.errstate(all="ignore")``: poles and overflows become inf and nan."""
    if memo is None:
        memo = {}
    if expression in memo:
        return memo[expression]
    if expression.is_Symbol:
        if expression not in values:
            raise ExpressionError(f"no values for the symbol {expression}")
        result = values[expression]
    elif expression.is_number and not expression.args:  # Integer, Rational, Float, pi, E, I, zoo
        result = number_value(expression)
    elif expression.is_Add:
        result = 0j
        for term in expression.args:
            result = result + evaluate(term, values, memo)
    elif expression.is_Mul:
        result = 1 + 0j
        for factor in expression.args:
            result = result * evaluate(factor, values, memo)
    elif expression.is_Pow:
        base = principal(evaluate(expression.base, values, memo))
        exponent = expression.exp
        if exponent == sympy.S.Half:
            result = np.sqrt(base)
        elif exponent == -sympy.S.Half:
            result = 1 / np.sqrt(base)
        elif exponent.is_Integer and abs(int(exponent)) <= 64:
            result = np.power(base, int(exponent))
        else:
            result = np.power(base, principal(evaluate(exponent, values, memo)))
    elif expression.func in NUMPY_FUNCTIONS and len(expression.args) == 1:
        argument = principal(np.asarray(evaluate(expression.args[0], values, memo), dtype=complex))
        result = principal(NUMPY_FUNCTIONS[expression.func](argument))
    else:
        raise ExpressionError(f"cannot evaluate {type(expression).__name__} numerically: {expression}")
    memo[expression] = result
    return result


def evaluate_at(expression, values: dict, n_points: int, memo: dict | None = None) -> np.ndarray:
    """``evaluate`` broadcast to one complex value per point: shape (n_points,)."""
    return np.broadcast_to(np.asarray(evaluate(expression, values, memo), dtype=complex), (n_points,))


def is_real_and_finite(values: np.ndarray) -> np.ndarray:
    return np.isfinite(values) & (np.abs(values.imag) <= IMAGINARY_TOLERANCE * np.maximum(1.0, np.abs(values.real)))


def sample_points(rng: np.random.Generator) -> dict:
    """Random real x (every range of ``SAMPLE_RANGES``) and c, as complex arrays of the same length."""
    xs = np.concatenate([rng.uniform(low, high, count) for low, high, count in SAMPLE_RANGES])
    cs = rng.uniform(*CONSTANT_RANGE, xs.size)
    return {X: xs.astype(complex), C: cs.astype(complex)}


def problem_rng(problem_tokens: Sequence[str], seed: int) -> np.random.Generator:
    """The points of a problem depend on its tokens and ``seed`` only, so verdicts are the same in every run."""
    return np.random.default_rng([seed, zlib.crc32(" ".join(problem_tokens).encode("utf-8"))])


def high_precision_value(expression, point: dict) -> complex:
    """``expression`` at one point with ``CONFIRM_DIGITS`` digits (``point``: symbol -> number), as a complex."""
    substitutions = {name: sympy.Float(value, CONFIRM_DIGITS) if isinstance(value, float) else value
                     for name, value in point.items()}
    return complex(expression.evalf(CONFIRM_DIGITS, subs=substitutions))


def judge_points(difference: np.ndarray, scale: np.ndarray, valid: np.ndarray,
                 confirms_difference: Callable[[int], bool]) -> str | None:
    """The verdict of the differences at the valid points: "correct", "wrong" or None (inconclusive).
    ``confirms_difference(i)`` re-evaluates point i precisely and says whether its difference is real."""
    indices = np.flatnonzero(valid)
    relative = np.abs(difference[indices]) / scale[indices]
    differing = indices[relative > DISAGREE_TOLERANCE]
    if differing.size:
        smallest_first = sorted(differing.tolist(), key=lambda i: scale[i])  # the least cancellation first
        if any(confirms_difference(i) for i in smallest_first[:CONFIRM_POINTS]):
            return "wrong"
        return None
    if indices.size >= MIN_AGREEING_POINTS and bool(np.all(relative <= AGREE_TOLERANCE)):
        return "correct"
    return None


def simplifies_to_zero(expression) -> bool:
    if expression == 0:
        return True
    simplified = sympy.simplify(expression)
    return simplified == 0 or simplified.is_zero is True


def point_at(values: dict, index: int) -> dict:
    return {name: complex(array[index]).real for name, array in values.items()}


# ------------------------------------------------------------------------------------------- integration


def numeric_antiderivative_verdict(integrand, antiderivative, derivative, rng: np.random.Generator) -> str | None:
    points = sample_points(rng)
    n_points = points[X].size
    with np.errstate(all="ignore"):
        try:
            f = evaluate_at(integrand, points, n_points)
            h = evaluate_at(antiderivative, points, n_points)
            d = evaluate_at(derivative, points, n_points)
        except (ExpressionError, ArithmeticError, ValueError, TypeError, RecursionError):
            return None
        f_real = is_real_and_finite(f)
        valid = f_real & is_real_and_finite(d)
        if f_real.any() and not valid.any() and not is_real_and_finite(h).any():
            return "invalid"  # the problem is real somewhere; the hypothesis and its derivative nowhere it is
        scale = np.maximum(1.0, np.maximum(np.abs(f), np.abs(d)))
        difference = d - f

    def confirms_difference(index: int) -> bool:
        point = point_at(points, index)
        try:
            exact_f = high_precision_value(integrand, point)
            exact_d = high_precision_value(derivative, point)
        except Exception:  # SymPy raises many kinds of errors on odd input; then nothing is confirmed
            return False
        if not (np.isfinite(exact_f) and np.isfinite(exact_d)):
            return False
        return abs(exact_d - exact_f) > CONFIRM_TOLERANCE * max(1.0, abs(exact_d), abs(exact_f))

    return judge_points(difference, scale, valid, confirms_difference)


def check_antiderivative(integrand, antiderivative, mode: str, rng: np.random.Generator) -> str:
    derivative = sympy.diff(antiderivative, X)
    if mode == "numeric_first":
        verdict = numeric_antiderivative_verdict(integrand, antiderivative, derivative, rng)
        if verdict is not None:
            return verdict
        return "correct" if simplifies_to_zero(derivative - integrand) else "undecided"
    return "correct" if simplifies_to_zero(derivative - integrand) else "wrong"


# --------------------------------------------------------------------------------------------------- ODEs


def solution_derivatives(equation, solution) -> dict:
    """Y, Y' (and Y'' when the equation has it) of the solution: symbol -> SymPy expression."""
    first = sympy.diff(solution, X)
    derivatives = {Y: solution, Y1: first}
    if equation.has(Y2):
        derivatives[Y2] = sympy.diff(first, X)
    return derivatives


def numeric_ode_verdict(equation, derivatives: dict, rng: np.random.Generator) -> str | None:
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
            return None
        valid = np.logical_and.reduce([is_real_and_finite(v) for v in function_values.values()])
        valid &= np.logical_and.reduce([np.isfinite(v) for v in term_values])
        residual = np.sum(term_values, axis=0)
        magnitudes = [np.abs(v) for v in (*function_values.values(), *term_values)]
        scale = np.maximum.reduce([np.ones(n_points), *magnitudes])

    def confirms_difference(index: int) -> bool:
        point = point_at(points, index)
        try:
            exact = {name: sympy.sympify(high_precision_value(value, point)) for name, value in derivatives.items()}
            exact_residual = high_precision_value(equation, {**point, **exact})
        except Exception:  # SymPy raises many kinds of errors on odd input; then nothing is confirmed
            return False
        return bool(np.isfinite(exact_residual)) and abs(exact_residual) > CONFIRM_TOLERANCE * scale[index]

    return judge_points(residual, scale, valid, confirms_difference)


def check_ode_solution(equation, solution, mode: str, rng: np.random.Generator) -> str:
    derivatives = solution_derivatives(equation, solution)
    if mode == "numeric_first":
        verdict = numeric_ode_verdict(equation, derivatives, rng)
        if verdict is not None:
            return verdict
        return "correct" if simplifies_to_zero(equation.xreplace(derivatives)) else "undecided"
    return "correct" if simplifies_to_zero(equation.xreplace(derivatives)) else "wrong"


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


def check(kind: str, problem_tokens: Sequence[str], hypothesis_tokens: Sequence[str], mode: str = "numeric_first",
          seed: int = 0) -> str:
    """The verdict (one of ``VERDICTS`` but ``timeout`` and ``error``) on a hypothesis: an antiderivative of the
    integrand when ``kind`` is "integration", a solution of the equation when it is "ode1". Pure and deterministic;
    raises ``ExpressionError`` when the problem itself is malformed. Run it with a time limit on untrusted input."""
    if mode not in MODES:
        raise NeuromathError(f"unknown verification mode {mode!r}; expected one of {', '.join(MODES)}")
    if kind not in KINDS:
        raise NeuromathError(f"unknown symbolic kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        check_prefix(hypothesis_tokens)
    except ExpressionError:
        return "unparsable"
    problem = read_problem(kind, tuple(problem_tokens))
    try:
        hypothesis = prefix_to_sympy(hypothesis_tokens)
    except ExpressionError:  # zoo, nan or oo
        return "invalid"
    if hypothesis.has(sympy.I):
        return "invalid"
    if not hypothesis.free_symbols <= HYPOTHESIS_SYMBOLS:
        return "wrong"
    rng = problem_rng(problem_tokens, seed)
    if kind == "integration":
        return check_antiderivative(problem, hypothesis, mode, rng)
    return check_ode_solution(problem, hypothesis, mode, rng)


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
