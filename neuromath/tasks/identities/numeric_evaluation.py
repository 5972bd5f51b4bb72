"""Numeric evaluation of identities equation trees (``neuromath.expr.equation_tree``) at real points: the value of an
expression at one point (``evaluate``) or at many at once on NumPy arrays (``evaluate_arrays``, NaN where there is
no value), the float of a number leaf (``leaf_float``), and the task's numeric check, which compares both sides of
an Equality at random points (``numeric_check``). A point outside an expression's real domain (log of a negative,
a pole, overflow) raises ``OutsideDomain``. No torch here.

(``evaluations`` is something else: equations that state one evaluation of a function, as training data.)
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from neuromath.errors import ExpressionError
from neuromath.expr.equation_tree import EquationNode, postorder, symbols_of


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


def evaluate(node: EquationNode, point: dict[str, float]) -> float:
    """The real value of an expression (not an Equality) at ``point``; OutsideDomain where it has none."""
    values: list[float] = []  # a value stack: post-order visits children before parents
    for current in postorder(node):
        if current.is_leaf:
            values.append(leaf_value(current, point))
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
                if base < 0 and exponent != int(exponent):
                    raise OutsideDomain("negative number to a fractional power")
                result = base ** exponent
            elif current.func in REAL_FUNCTIONS:
                result = REAL_FUNCTIONS[current.func](args[0])
            else:
                raise ExpressionError(f"cannot evaluate {current.func}")
        except (ValueError, OverflowError, ZeroDivisionError) as error:
            raise OutsideDomain(str(error)) from None
        if isinstance(result, complex) or not math.isfinite(result) or abs(result) > MAGNITUDE_LIMIT:
            raise OutsideDomain(f"{current.func} gives {result}")
        values.append(result)
    return values[0]


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


@dataclass(frozen=True)
class NumericCheck:
    """The outcome of comparing both sides at random points."""

    verdict: bool | None  # True: equal at every usable point; False: clearly different; None: cannot tell
    points: int  # usable points (both sides defined)
    agreeing: int


def numeric_check(
    equation: EquationNode,
    rng: random.Random,
    points: int = 8,
    attempts: int = 40,
    low: float = -3.0,
    high: float = 3.0,
    agree_tolerance: float = 1e-8,
    differ_tolerance: float = 1e-5,
) -> NumericCheck:
    """Evaluate both sides of an Equality at up to ``points`` random points, skipping points outside either side's
    domain (at most ``attempts`` draws). Two sides agree at a point when their difference is within
    ``agree_tolerance`` relative to their size, differ when it is beyond ``differ_tolerance``.

    The verdict is True when at least 3 points were usable and all agree, False when at least 2 points differ
    (one could be a near-pole accident), and None otherwise (too few usable points, or values in between).
    """
    if equation.func != "Equality":
        raise ExpressionError(f"expected an Equality, got {equation.func}")
    left, right = equation.children
    names = symbols_of(equation)
    usable = agreeing = differing = 0
    for _ in range(attempts):
        if usable >= points:
            break
        point = {name: rng.uniform(low, high) for name in names}
        try:
            a, b = evaluate(left, point), evaluate(right, point)
        except OutsideDomain:
            continue
        usable += 1
        gap = abs(a - b) / max(1.0, abs(a), abs(b))
        if gap <= agree_tolerance:
            agreeing += 1
        elif gap > differ_tolerance:
            differing += 1
    if differing >= 2 or (differing >= 1 and not names):  # a constant equation: one point says everything
        return NumericCheck(False, usable, agreeing)
    if usable >= (3 if names else 1) and agreeing == usable:
        return NumericCheck(True, usable, agreeing)
    return NumericCheck(None, usable, agreeing)
