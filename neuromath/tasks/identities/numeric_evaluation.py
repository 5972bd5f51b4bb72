"""Numeric evaluation of identities equation trees (``neuromath.expr.equation_tree``) at real points: the value of an
expression at one point (``evaluate``) or at many at once on NumPy arrays (``evaluate_arrays``, NaN where there is
no value), the float of a number leaf (``leaf_float``), the value at one point to 60 significant digits
(``evaluate_precise``), the exact rational value of an expression without symbols where it has one
(``evaluate_exact``), and the task's numeric check (``numeric_check``). A point outside an expression's real domain
(log of a negative, a pole, overflow) raises ``OutsideDomain``. No torch here.

What the numeric check's verdict means
    ``True`` only when it is shown: both sides are numbers without symbols and exact rational arithmetic finds them
    equal, or the caller's ``prover`` (SymPy simplifying lhs - rhs to 0 in a worker process with a time limit,
    ``identity_labels.SympyJudge``) proves it after every sampled point agreed. ``False`` only when a point shows
    the sides differ: floating point finds a gap there and evaluations with 60 and 120 digits confirm it (so
    cancellation never rejects a true identity), or exact arithmetic finds two different rationals. ``None``
    otherwise: agreement at random points is evidence, never a proof (``x + 10^(-9) = x`` agrees in floating point
    to 1e-9 and is false). ``NumericCheck.agrees`` says that every usable point agreed; the generator takes that as
    a candidate for a true label and keeps it only once proven (``identity_labels``).

(``evaluations`` is something else: equations that state one evaluation of a function, as training data.)
"""

from __future__ import annotations

import functools
import math
import operator
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import mpmath
import numpy as np

from neuromath.errors import ExpressionError
from neuromath.expr.equation_tree import EquationNode, postorder, symbols_of
from neuromath.expr.exact import check_power_size


class OutsideDomain(ArithmeticError):
    """The expression has no real value at this point (log of a negative, pole, overflow, ...)."""


def _inverse(value: float) -> float:
    if value == 0:
        raise OutsideDomain("division by zero")
    return 1.0 / value


def _acot(value: float) -> float:
    return math.pi / 2 if value == 0 else math.atan(1.0 / value)


REAL_FUNCTIONS = {
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "cot": lambda v: _inverse(math.tan(v)),
    "sec": lambda v: _inverse(math.cos(v)),
    "csc": lambda v: _inverse(math.sin(v)),
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "acot": _acot,
    "asec": lambda v: math.acos(_inverse(v)),
    "acsc": lambda v: math.asin(_inverse(v)),
    "exp": math.exp,
    "log": lambda v: math.log(v) if v > 0 else (_ for _ in ()).throw(OutsideDomain("log of a non-positive number")),
}
MAGNITUDE_LIMIT = 1e12  # values beyond this are treated as outside the domain (near a pole, or overflowing)


def leaf_value(node: EquationNode, point: dict[str, float]) -> float:
    if node.func == "Symbol":
        if node.value not in point:
            raise ExpressionError(f"no value for symbol {node.value!r}")
        return point[node.value]
    return leaf_float(node.func, node.value)


@functools.lru_cache(maxsize=8192)
def leaf_float(func: str, value: str) -> float:
    """The float of a number leaf, parsed once (the numeric checks evaluate the same leaves many times). A number
    beyond the floats (``10**310``) is an infinity of its sign, as ``float("1e310")`` is: any operation on it gives
    no finite value, so the numeric checks find it outside the domain rather than overflowing."""
    if func == "Pi":
        return math.pi
    if func == "Float":
        return float(value)
    fraction = Fraction(value)
    try:
        return float(fraction)
    except OverflowError:
        return math.inf if fraction > 0 else -math.inf


def _walk(node: EquationNode, leaf: Callable, functions: dict, power: Callable, fractional: Callable,
          is_value: Callable):
    """The value of an expression (not an Equality), its nodes taken in post-order over a value stack: ``leaf(node)``
    values a leaf, ``functions`` the unary functions, ``power(base, exponent)`` a power whose exponent ``fractional``
    says is not an integer; a result ``is_value`` refuses, or an arithmetic error, is OutsideDomain. ``evaluate``
    and ``evaluate_precise`` are this walk in floats and in mpmath."""
    values: list = []
    for current in postorder(node):
        if current.is_leaf:
            values.append(leaf(current))
            continue
        args = values[-len(current.children):]
        del values[-len(current.children):]
        try:
            if current.func == "Add":
                result = args[0] + args[1]
            elif current.func == "Mul":
                result = args[0] * args[1]
            elif current.func == "Pow":
                base, exponent = args
                if base == 0 and exponent <= 0:
                    raise OutsideDomain("zero to a non-positive power")
                if base < 0 and fractional(exponent):
                    raise OutsideDomain("negative number to a fractional power")
                result = power(base, exponent)
            elif current.func in functions:
                result = functions[current.func](args[0])
            else:
                raise ExpressionError(f"cannot evaluate {current.func}")
        except (ValueError, OverflowError, ZeroDivisionError) as error:
            raise OutsideDomain(str(error)) from None
        if not is_value(result):
            raise OutsideDomain(f"{current.func} gives {result}")
        values.append(result)
    return values[0]


def _is_real_float(value) -> bool:
    return not isinstance(value, complex) and math.isfinite(value) and abs(value) <= MAGNITUDE_LIMIT


def evaluate(node: EquationNode, point: dict[str, float]) -> float:
    """The real value of an expression (not an Equality) at ``point``; OutsideDomain where it has none."""
    return _walk(node, lambda leaf: leaf_value(leaf, point), REAL_FUNCTIONS, operator.pow,
                 lambda exponent: exponent != int(exponent), _is_real_float)


def _array_inverse(values):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(values == 0, np.nan, 1.0 / np.where(values == 0, 1.0, values))


ARRAY_FUNCTIONS = {  # REAL_FUNCTIONS on arrays: NaN wherever the scalar version raises OutsideDomain
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "cot": lambda v: _array_inverse(np.tan(v)),
    "sec": lambda v: _array_inverse(np.cos(v)),
    "csc": lambda v: _array_inverse(np.sin(v)),
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "acot": lambda v: np.where(v == 0, math.pi / 2, np.arctan(_array_inverse(v))),
    "asec": lambda v: np.arccos(_array_inverse(v)),
    "acsc": lambda v: np.arcsin(_array_inverse(v)),
    "exp": np.exp,
    "log": lambda v: np.log(np.where(v > 0, v, np.nan)),
}


def apply_to_arrays(func: str, args: list) -> np.ndarray:
    """``func`` applied elementwise to float arrays (broadcast), NaN where ``evaluate`` finds no value."""
    with np.errstate(all="ignore"):
        if func == "Add":
            result = args[0] + args[1]
        elif func == "Mul":
            result = args[0] * args[1]
        elif func == "Pow":
            base, exponent = np.broadcast_arrays(*args)
            outside = ((base == 0) & (exponent <= 0)) | ((base < 0) & (exponent != np.round(exponent)))
            result = np.where(outside, np.nan, np.power(np.where(outside, 1.0, base), exponent))
        elif func in ARRAY_FUNCTIONS:
            result = ARRAY_FUNCTIONS[func](args[0])
        else:
            raise ExpressionError(f"cannot evaluate {func}")
        defined = np.isfinite(result) & (np.abs(result) <= MAGNITUDE_LIMIT)
        for argument in args:  # IEEE gives NaN ** 0 = 1 ** NaN = 1: an undefined argument must stay undefined
            defined &= ~np.isnan(argument)
        return np.where(defined, result, np.nan)


def evaluate_arrays(node: EquationNode, points: Callable[[str], np.ndarray],
                    known: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """The values of an expression at many points at once: ``points(name)`` gives a symbol's values (an array, one
    entry per point); NaN where the expression has no value (the same domain rules as ``evaluate``). ``known`` maps
    ``id(subtree)`` to values already computed (subtrees shared between trees are evaluated once) and is filled in.
    """
    known = {} if known is None else known
    values: list[np.ndarray] = []
    pending: list[tuple[EquationNode, bool]] = [(node, False)]
    while pending:  # post-order with a stack, skipping subtrees whose values are known
        current, children_done = pending.pop()
        if id(current) in known:
            values.append(known[id(current)])
            continue
        if current.is_leaf:
            result = points(current.value) if current.func == "Symbol" else np.float64(
                leaf_float(current.func, current.value))
        elif not children_done:
            pending.append((current, True))
            pending.extend((child, False) for child in reversed(current.children))
            continue
        else:
            count = len(current.children)
            result = apply_to_arrays(current.func, values[-count:])
            del values[-count:]
        known[id(current)] = result
        values.append(result)
    return values[0]


# ---------------------------------------------------------------------------------------------- high precision

PRECISE_DIGITS = 60  # significant digits of evaluate_precise
PRECISE_DIFFER = 1e-30  # a relative gap beyond this, with 60 digits and with 120, is a real difference
FLOAT_CLOSE = 1e-12  # a relative gap in floating point within this is agreement, not worth a precise look


def _precise_inverse(value):
    if value == 0:
        raise OutsideDomain("division by zero")
    return 1 / value


def _precise_log(value):
    if value <= 0:
        raise OutsideDomain("log of a non-positive number")
    return mpmath.log(value)


def _inside_unit(value):
    if abs(value) > 1:
        raise OutsideDomain("an inverse sine or cosine of a number beyond [-1, 1]")
    return value


PRECISE_FUNCTIONS = {  # REAL_FUNCTIONS to PRECISE_DIGITS digits, with the same domains
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "tan": mpmath.tan,
    "cot": lambda v: _precise_inverse(mpmath.tan(v)),
    "sec": lambda v: _precise_inverse(mpmath.cos(v)),
    "csc": lambda v: _precise_inverse(mpmath.sin(v)),
    "asin": lambda v: mpmath.asin(_inside_unit(v)),
    "acos": lambda v: mpmath.acos(_inside_unit(v)),
    "atan": mpmath.atan,
    "acot": lambda v: mpmath.pi / 2 if v == 0 else mpmath.atan(1 / v),
    "asec": lambda v: mpmath.acos(_inside_unit(_precise_inverse(v))),
    "acsc": lambda v: mpmath.asin(_inside_unit(_precise_inverse(v))),
    "exp": mpmath.exp,
    "log": _precise_log,
}


def _precise_leaf(node: EquationNode, point: dict[str, Fraction]):
    if node.func == "Symbol":
        if node.value not in point:
            raise ExpressionError(f"no value for symbol {node.value!r}")
        value = Fraction(point[node.value])
        return mpmath.mpf(value.numerator) / value.denominator
    if node.func == "Pi":
        return +mpmath.pi
    if node.func == "Float":
        return mpmath.mpf(node.value)
    value = Fraction(node.value)
    return mpmath.mpf(value.numerator) / value.denominator


def evaluate_precise(node: EquationNode, point: dict[str, Fraction | float], digits: int = PRECISE_DIGITS):
    """The value of an expression at ``point`` (each coordinate taken exactly: a float is the rational it stores)
    computed with ``digits`` significant digits, as an ``mpmath.mpf``; OutsideDomain where ``evaluate`` finds no
    value (the same domains and the same magnitude limit). Cancellation can still cost digits (cos(pi/2 - 1e-36)
    keeps 24 of 60)."""
    with mpmath.workdps(digits):
        return _walk(node, lambda leaf: _precise_leaf(leaf, point), PRECISE_FUNCTIONS, mpmath.power,
                     lambda exponent: exponent != mpmath.floor(exponent), _is_real_mpf)


def _is_real_mpf(value) -> bool:
    return isinstance(value, mpmath.mpf) and mpmath.isfinite(value) and abs(value) <= MAGNITUDE_LIMIT


def precise_gap(left: EquationNode, right: EquationNode, point: dict[str, Fraction | float],
                digits: int = PRECISE_DIGITS) -> float:
    """|left - right| / max(1, |left|, |right|) at ``point``, from ``evaluate_precise`` with ``digits`` digits
    (OutsideDomain when either side has no value there)."""
    a, b = evaluate_precise(left, point, digits), evaluate_precise(right, point, digits)
    with mpmath.workdps(digits):
        return float(abs(a - b) / max(mpmath.mpf(1), abs(a), abs(b)))


def sides_differ(left: EquationNode, right: EquationNode, point: dict[str, Fraction | float]) -> bool:
    """Whether the sides differ at ``point``: the gap exceeds ``PRECISE_DIFFER`` with 60 digits, and again with 120
    digits, where it stays the same to a thousandth (a difference made by cancellation shrinks as digits are added,
    a real one does not). OutsideDomain when either side has no value there."""
    first = precise_gap(left, right, point)
    if first <= PRECISE_DIFFER:
        return False
    second = precise_gap(left, right, point, 2 * PRECISE_DIGITS)
    return second > PRECISE_DIFFER and abs(first - second) <= 1e-3 * second


# ---------------------------------------------------------------------------------------------- exact constants

EXACT_FUNCTION_VALUES = {  # the rational values of functions at rational arguments that have one
    ("sin", 0): 0, ("tan", 0): 0, ("asin", 0): 0, ("atan", 0): 0, ("cos", 0): 1, ("sec", 0): 1, ("exp", 0): 1,
    ("log", 1): 0, ("acos", 1): 0, ("asec", 1): 0,
}


def _exact_root(value: int, degree: int) -> int | None:
    """The integer ``degree``-th root of ``value`` >= 0 when there is one."""
    root = round(value ** (1 / degree)) if value.bit_length() < 1000 else None
    if root is None:
        return None
    for candidate in (root - 1, root, root + 1):
        if candidate >= 0 and candidate ** degree == value:
            return candidate
    return None


def _exact_power(base: Fraction, exponent: Fraction) -> Fraction | None:
    if base == 0 and exponent <= 0:
        raise OutsideDomain("zero to a non-positive power")
    try:
        check_power_size(base, exponent)
    except ExpressionError:
        return None
    if exponent.denominator == 1:
        return base ** exponent.numerator
    if base < 0:
        raise OutsideDomain("negative number to a fractional power")
    top, bottom = (_exact_root(part, exponent.denominator) for part in (base.numerator, base.denominator))
    if top is None or bottom is None:
        return None  # irrational
    return Fraction(top, bottom) ** exponent.numerator


def evaluate_exact(node: EquationNode) -> Fraction | None:
    """The exact rational value of an expression without symbols, computed with fractions: sums, products, integer
    powers, roots that are rational (``4^(1/2)`` is 2) and the few function values that are rational (``cos(0)``,
    ``log(1)``); None when it is not computed that way (pi, ``sin(1)``, ``2^(1/2)``, a float leaf, a power too
    large). OutsideDomain for a division by zero or an even root of a negative number."""
    values: list[Fraction | None] = []
    for current in postorder(node):
        if current.is_leaf:
            if current.func in ("Symbol", "Pi", "Float"):
                return None
            values.append(Fraction(current.value))
            continue
        args = values[-len(current.children):]
        del values[-len(current.children):]
        if any(arg is None for arg in args):
            return None
        if current.func == "Add":
            values.append(args[0] + args[1])
        elif current.func == "Mul":
            values.append(args[0] * args[1])
        elif current.func == "Pow":
            result = _exact_power(args[0], args[1])
            if result is None:
                return None
            values.append(result)
        elif (current.func, args[0]) in EXACT_FUNCTION_VALUES:
            values.append(Fraction(EXACT_FUNCTION_VALUES[(current.func, args[0])]))
        else:
            return None
    return values[0]


# ---------------------------------------------------------------------------------------------- the check


@dataclass(frozen=True)
class NumericCheck:
    """The outcome of the numeric check (module docstring: what each verdict means)."""

    verdict: bool | None  # True: shown (exact arithmetic or the prover); False: a point shows a difference; None
    points: int  # usable points (both sides defined)
    agreeing: int  # usable points at which both sides agree (in floating point, or with more digits)
    how: str = ""  # how the verdict was reached: "exact", "prover", "point", or "" (no verdict)
    witness: tuple[dict[str, float], float, float] | None = None  # (point, left, right) where the sides differ
    constant: bool = False  # the equation has no symbols

    @property
    def agrees(self) -> bool:
        """Whether every usable point agreed and there were enough of them (3 with symbols, 1 without): the sides
        may be equal, which only a proof can show."""
        return self.verdict is not False and self.agreeing == self.points >= (1 if self.constant else 3)


def numeric_check(
    equation: EquationNode,
    rng: random.Random,
    points: int = 8,
    attempts: int = 40,
    low: float = -3.0,
    high: float = 3.0,
    prover: Callable[[EquationNode], bool | None] | None = None,
) -> NumericCheck:
    """Evaluate both sides of an Equality at up to ``points`` random points, skipping points outside either side's
    domain (at most ``attempts`` draws). A point whose floating-point gap |a - b| / max(1, |a|, |b|) exceeds
    ``FLOAT_CLOSE`` is evaluated again with 60 and 120 digits (``sides_differ``): the sides differ there when the
    gap stays beyond ``PRECISE_DIFFER`` and the same at both, else they agree (the float gap was rounding).

    The verdict is False at the first point where the sides differ; True for an equation without symbols whose
    sides exact arithmetic finds equal (``evaluate_exact``), or when every usable point agrees and ``prover``
    (called with the equation) returns True; None otherwise (see the module docstring). The points are drawn from
    ``rng`` alone, so the check is deterministic for its state."""
    if equation.func != "Equality":
        raise ExpressionError(f"expected an Equality, got {equation.func}")
    left, right = equation.children
    names = symbols_of(equation)
    constant = not names
    usable = agreeing = 0
    witness = None
    for _ in range(attempts):
        if usable >= points:
            break
        point = {name: rng.uniform(low, high) for name in names}
        try:
            a, b = evaluate(left, point), evaluate(right, point)
        except OutsideDomain:
            continue
        differ = False
        if abs(a - b) / max(1.0, abs(a), abs(b)) > FLOAT_CLOSE:
            try:
                differ = sides_differ(left, right, point)
            except OutsideDomain:
                continue  # on the edge of a domain: the point says nothing
        usable += 1
        if differ:
            witness = (point, a, b)
            break
        agreeing += 1
        if constant:
            break  # without symbols every point is the same point
    if witness is not None:
        return NumericCheck(False, usable, agreeing, "point", witness, constant)
    if constant and usable:
        try:
            exact = [evaluate_exact(side) for side in (left, right)]
        except OutsideDomain:
            exact = [None, None]
        if None not in exact:
            if exact[0] == exact[1]:
                return NumericCheck(True, usable, agreeing, "exact", None, constant)
            return NumericCheck(False, usable, agreeing, "exact", ({}, float(exact[0]), float(exact[1])), constant)
    check = NumericCheck(None, usable, agreeing, "", None, constant)
    if prover is not None and check.agrees and prover(equation):
        return NumericCheck(True, usable, agreeing, "prover", None, constant)
    return check
