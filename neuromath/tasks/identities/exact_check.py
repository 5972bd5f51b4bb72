"""Whether an identity a user types (``sin(x)^2 + cos(x)^2 = 1``) holds, answered only when it is shown: the
verifier behind ``neuromath check identity``. No torch here.

``check_identity_text(text, time_limit)`` reads the text without ``eval`` (``typed_equations.parse_equation``) and
returns ``(verdict, reason)``:

- ``"verified"``: proven. Both sides are numbers that exact rational arithmetic finds equal (``evaluate_exact``),
  or SymPy simplifies the difference of the sides to 0 (``identity_labels.SympyJudge``: a worker process killed at
  the time limit).
- ``"not verified"``: a point shows the sides differ. Floating point finds the gap and evaluations with 60 and 120
  digits confirm it at the same point (``numeric_check``), or exact arithmetic finds two different rationals. The reason
  names the point and both values.
- ``"unknown"``: neither within the time limit. Agreement at random points is not a proof; nor is a SymPy that
  gives up. An equation true only where both sides are defined, but not as SymPy reads it (``log(x*y) = log(x) +
  log(y)``), is unknown.

Text that cannot be read raises a ``NeuromathError`` that says where and why.
"""

from __future__ import annotations

import math
import random

from neuromath.errors import NeuromathError
from neuromath.expr.equation_tree import SYMBOL_NAMES, EquationNode
from neuromath.tasks.identities.identity_labels import SympyJudge
from neuromath.tasks.identities.numeric_evaluation import NumericCheck, OutsideDomain, evaluate_exact, numeric_check
from neuromath.tasks.identities.typed_equations import parse_equation

VERIFIED, NOT_VERIFIED, UNKNOWN = "verified", "not verified", "unknown"
VERDICTS = (VERIFIED, NOT_VERIFIED, UNKNOWN)
MAX_TIME_LIMIT = 3600.0  # seconds: the longest a caller may let SymPy try
# where the points are drawn, in this order: the generator's ranges, then a wide one (a difference far from 0)
RANGES = ((-3.0, 3.0), (0.05, 2.0), (-1.0, 1.0), (-30.0, 30.0))
POINTS_PER_RANGE = 10


def _number(value: float) -> str:
    return f"{value:.17g}"


def difference_reason(check: NumericCheck, equation: EquationNode) -> str:
    """Where and how the sides differ, from a check whose verdict is False."""
    if check.constant:
        try:
            left, right = (evaluate_exact(side) for side in equation.children)
        except OutsideDomain:
            left = right = None
        if left is not None and right is not None:
            return f"exact arithmetic: the left side is {left} and the right side {right}"
    point, left, right = check.witness
    where = ", ".join(f"{SYMBOL_NAMES.get(name, name)} = {_number(value)}" for name, value in sorted(point.items()))
    return (f"the sides differ{' at ' + where if where else ''}: the left side is {_number(left)}, the right side "
            f"{_number(right)} (the difference confirmed with 60 and 120 digits)")


def check_identity_tree(equation: EquationNode, time_limit: float = 10.0,
                        judge: SympyJudge | None = None) -> tuple[str, str]:
    """``(verdict, reason)`` for an equation tree (module docstring). ``judge`` is a SympyJudge to ask (its own time
    limit applies); without one, a judge with ``time_limit`` is started for this question and closed after."""
    if not (isinstance(time_limit, (int, float)) and math.isfinite(time_limit) and 0 < time_limit <= MAX_TIME_LIMIT):
        raise NeuromathError(f"the time limit must be a number of seconds above 0 and at most {MAX_TIME_LIMIT:g}, "
                             f"not {time_limit!r}")
    if equation.func != "Equality":
        raise NeuromathError(f"expected an equation 'left = right', got a {equation.func} expression")
    rng = random.Random(0)  # the same points every time: the same verdict for the same text
    usable = 0
    for low, high in RANGES:
        check = numeric_check(equation, rng, points=POINTS_PER_RANGE, attempts=5 * POINTS_PER_RANGE, low=low,
                              high=high)
        usable += check.points
        if check.verdict is False:
            return NOT_VERIFIED, difference_reason(check, equation)
        if check.verdict is True:
            value = evaluate_exact(equation.children[0])
            return VERIFIED, f"exact arithmetic: both sides are {value}"
        if check.constant:
            break  # without symbols every point is the same point
    own = judge is None
    judge = judge or SympyJudge(timeout=time_limit)
    try:
        proved = judge.simplifies_to_zero(equation)
    finally:
        if own:
            judge.close()
    if proved:
        return VERIFIED, "SymPy simplifies the difference of the two sides to 0"
    seen = (f"no point of the {usable} tried shows the sides differ" if usable else
            "no point tried gives both sides a real value")
    if proved is None:
        return UNKNOWN, f"{seen}, and SymPy did not prove the equation within {time_limit:g} s"
    return UNKNOWN, f"{seen}, and SymPy does not simplify the difference of the sides to 0 (no proof either way)"


def check_identity_text(text: str, time_limit: float = 10.0) -> tuple[str, str]:
    """``(verdict, reason)`` for ``"left = right"`` typed in ordinary notation over x, y, z, w, pi, e and the
    functions of the identities data (sin ... acsc, exp, log or ln, sqrt, ``^`` or ``**``): see the module
    docstring. A NeuromathError when the text cannot be read or the time limit is not a finite positive number."""
    if not isinstance(text, str):
        raise NeuromathError(f"expected the equation as text, got {type(text).__name__}")
    return check_identity_tree(parse_equation(text), time_limit)


__all__ = ["VERDICTS", "check_identity_text", "check_identity_tree"]
