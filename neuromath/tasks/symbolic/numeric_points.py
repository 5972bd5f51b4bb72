"""The numbers of the symbolic verifier (``verify``): a SymPy expression evaluated with NumPy at many real points at
once, on complex arrays with SymPy's principal values, the points themselves (seeded by the problem), and one point
evaluated with ``CONFIRM_DIGITS`` significant digits (SymPy's ``evalf``). Numbers only ever reject a hypothesis:
``verify`` accepts one only when ``proof`` proves it. No torch."""

from __future__ import annotations

import math
import zlib
from typing import Sequence

import numpy as np
import sympy

from neuromath.errors import ExpressionError
from neuromath.expr.sympy_bridge import symbol

# x is drawn from each range (low, high, how many points): narrow domains around 0 (asin(5x)), a positive domain
# (ln, sqrt, acosh), both signs, and larger values on each side (domains such as x > 5). NumPy evaluates all the
# points of an operator at once, so more points cost little.
SAMPLE_RANGES = (
    (-0.1, 0.1, 8), (-0.5, 0.5, 8), (-1.0, 1.0, 12), (0.0, 3.0, 12), (-3.0, 3.0, 12), (-10.0, 10.0, 16),
    (3.0, 30.0, 12), (-30.0, -3.0, 12),
)
CONSTANT_RANGE = (-5.0, 5.0)  # c of an ODE solution
IMAGINARY_TOLERANCE = 1e-9  # |imaginary part| relative to max(1, |real part|) below which a value is real
CONFIRM_DIGITS = 30  # significant digits of a precise evaluation

X = symbol("x")
C = symbol("c")


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
