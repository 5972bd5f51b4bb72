"""``solve`` for the symbolic task: a user's integrand or ODE in ordinary notation (``x*cos(x)``, ``Y' - Y = x``) read
without ``eval`` (``neuromath.expr.ordinary``) and written in the canonical prefix form the generators write (SymPy's
form of the expression, as ``sympy_to_prefix`` gives it), and a hypothesis written back in ordinary notation.

Both steps go through SymPy, whose automatic simplification of what a user typed can take unbounded time (``2^10^10``
is computed), so they run in a worker process with a time limit (``neuromath.timelimit``). Before that, a constant
whose exact value would have more than ``MAX_NUMBER_DIGITS`` digits (``9^9^9``, ``2^100000``) is refused at once:
SymPy would spend the whole time limit computing it, holding up every other ``solve`` behind the one worker, and
its digits could not be written out anyway.
"""

from __future__ import annotations

import atexit
import functools
import threading
from fractions import Fraction
from typing import Sequence

from neuromath.errors import ExpressionError, NeuromathError
from neuromath.expr.numbers import MAX_NUMBER_BITS, MAX_NUMBER_DIGITS
from neuromath.expr.ordinary import parse_ordinary, parse_ordinary_equation
from neuromath.expr.symbolic_prefix import FUNCTION_LEAVES, LEAVES, PrefixNode, check_prefix, fold, node_tokens
from neuromath.expr.sympy_bridge import prefix_to_sympy, sympy_to_prefix
from neuromath.tasks.symbolic.pairs import SymbolicExample, kind_of
from neuromath.timelimit import TimeLimitedPool

TIME_LIMIT = 10.0  # seconds for SymPy to write one expression


def convert(job: str, tokens: Sequence[str]) -> list[str] | str:
    """In the worker: ``canonical`` prefix tokens of an expression, or its ``readable`` ordinary notation."""
    expression = prefix_to_sympy(tokens)
    return sympy_to_prefix(expression) if job == "canonical" else str(expression)


@functools.cache
def conversion_pool() -> TimeLimitedPool:
    """One worker for ``convert``, started on first use and kept; stopped at exit."""
    pool = TimeLimitedPool(convert, workers=1, time_limit=TIME_LIMIT)
    atexit.register(pool.close)
    return pool


_conversion_lock = threading.Lock()  # one map at a time: a TimeLimitedPool is not thread-safe (neuromath serve)


def in_worker(job: str, tokens: Sequence[str]):
    with _conversion_lock:
        outcome = conversion_pool().map([(job, list(tokens))])[0]
    if outcome.status == "timeout":
        raise ExpressionError(f"SymPy took more than {TIME_LIMIT:g} s to write the expression")
    if not outcome.ok:
        raise ExpressionError(str(outcome.value))
    return outcome.value


def _bits(value: Fraction) -> int:
    return max(value.numerator.bit_length(), value.denominator.bit_length())


def _constant_leaf(node: PrefixNode) -> Fraction | None:
    return Fraction(node.value) if node.token == "INT" else None


def _constant_operation(node: PrefixNode, args: list[Fraction | None]) -> Fraction | None:
    """The exact value of an operation on constants, None when it is not one (a symbol, a function, a root); an
    ExpressionError when it has more than ``MAX_NUMBER_BITS`` bits, found before a power is computed."""
    if any(arg is None for arg in args) or node.token not in ("add", "sub", "mul", "div", "pow"):
        return None
    left, right = args
    if node.token == "add":
        value = left + right
    elif node.token == "sub":
        value = left - right
    elif node.token == "mul":
        value = left * right
    elif node.token == "div":
        if right == 0:
            return None
        value = left / right
    else:
        if right.denominator != 1 or (left == 0 and right < 0):
            return None  # a root or a division by zero: SymPy keeps it as it is
        # |left| of b bits is at least 2 ** (b - 1): the power has at least (b - 1) * |right| bits
        if abs(left) != 1 and (_bits(left) - 1) * abs(right) > MAX_NUMBER_BITS:
            raise ExpressionError(f"a power of {left} has more than {MAX_NUMBER_DIGITS} digits, too many to compute")
        value = left ** int(right)
    if _bits(value) > MAX_NUMBER_BITS:
        raise ExpressionError(f"a constant of the expression has more than {MAX_NUMBER_DIGITS} digits")
    return value


def check_constants(tree: PrefixNode) -> None:
    """Raise ExpressionError when a constant part of the expression (``9^9^9``) would have more than
    ``MAX_NUMBER_DIGITS`` digits. Costs a pass over the tree and arithmetic on numbers of bounded size."""
    fold(tree, _constant_leaf, _constant_operation)


# Prefix tokens of a typed problem: Lample & Charton's models read at most 512, the CPU presets 256
# (data.max_source_len); a longer one could not be read by any preset, and SymPy's canonical form of it can take
# seconds, so it is refused before SymPy sees it.
MAX_PROBLEM_TOKENS = 512


def prepare_problem(text: str) -> SymbolicExample:
    """An integrand (``x*cos(x)``) or a first-order ODE in ``x``, ``Y`` and ``Y'`` (``Y' - Y = x``, read as
    ``Y' - Y - x = 0``; the solution is in ``x`` and the constant ``c``) as an example for ``solve``."""
    try:
        if "=" in text:
            left, right = parse_ordinary_equation(text, LEAVES)
            tree = PrefixNode("sub", (left, right))
        else:
            tree = parse_ordinary(text, LEAVES)
        check_constants(tree)
        tokens = node_tokens(tree)
        if len(tokens) > MAX_PROBLEM_TOKENS:
            raise ExpressionError(f"the expression is {len(tokens)} prefix tokens long; the symbolic models read at "
                                  f"most {MAX_PROBLEM_TOKENS}")
        source = in_worker("canonical", tokens)
    except ExpressionError as error:
        raise NeuromathError(str(error)) from None
    kind = kind_of(source)
    if "=" in text and kind != "ode1":
        raise NeuromathError(f"{text!r}: an equation is an ODE in Y and Y' ({', '.join(FUNCTION_LEAVES[:2])}); "
                             "to integrate, type the integrand alone")
    return SymbolicExample(tuple(source), (), method=kind, id="solve")


def readable(tokens: Sequence[str], example: SymbolicExample) -> tuple[str, str]:
    """A hypothesis in ordinary notation, or why it has none (not a well-formed expression, undefined, too slow)."""
    try:
        check_prefix(tokens)
    except ExpressionError as error:
        return "", f"not a well-formed expression ({error})"
    try:
        return in_worker("readable", tokens), ""
    except ExpressionError as error:  # undefined (zoo, nan), or SymPy past its time limit
        return "", str(error)
