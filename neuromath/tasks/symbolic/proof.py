"""The proof of the symbolic verifier (``verify``): a difference (dH/dx - f, or an ODE with the solution substituted)
shown to be exactly 0 by SymPy, as written, by ``cancel`` or ``simplify`` (also after writing trigonometric and
hyperbolic functions as exponentials), or, when it reduces to a constant, by exact arithmetic (rationals; algebraic
numbers through their minimal polynomial). A constant that ``CONFIRM_DIGITS`` digits show clearly away from 0 is not
0 (a rejection, never an acceptance). Run it with a time limit: ``simplify`` can take minutes. No torch."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy

from neuromath.tasks.symbolic.numeric_points import CONFIRM_DIGITS

CONSTANT_TOLERANCE = 1e-20  # a constant difference whose CONFIRM_DIGITS digits exceed this is not 0


def simplifies_to_zero(expression) -> bool:
    """``simplify(expression) == 0``: the check of ``simplify_only``."""
    if expression == 0:
        return True
    simplified = sympy.simplify(expression)
    return simplified == 0 or simplified.is_zero is True


def constant_is_zero(value) -> bool | None:
    """Whether a constant (no free symbols) is 0: exactly for rationals and algebraic numbers (minimal polynomial),
    by SymPy's assumptions, else not 0 when ``CONFIRM_DIGITS`` digits show it clearly (a rejection, never an
    acceptance); None when nothing decides."""
    if value.is_Rational:
        return value == 0
    if value.is_zero is not None:
        return bool(value.is_zero)
    if value.is_algebraic:
        try:
            return sympy.minimal_polynomial(value, sympy.Dummy("t")).is_Symbol
        except (sympy.polys.polyerrors.PolynomialError, NotImplementedError, ValueError):
            pass
    try:
        numeric = complex(value.evalf(CONFIRM_DIGITS))
    except (TypeError, ValueError, ArithmeticError):
        return None
    if np.isfinite(numeric) and abs(numeric) > CONSTANT_TOLERANCE:
        return False
    return None


def as_exponentials(expression):
    """Trigonometric and hyperbolic functions written with ``exp`` (an identity): many identities between them
    become identities between rational functions of exponentials, which ``cancel`` decides in milliseconds."""
    return expression.rewrite(sympy.exp)


# (name, step), cheapest first: each applied to the difference as it stands; a step that raises is skipped.
# cancel decides rational functions (of x, of functions of x); simplify also knows trigonometric, logarithmic and
# inverse-function identities, at a cost of up to seconds.
PROOF_STEPS = (
    ("cancel", sympy.cancel),
    ("cancel of exponentials", lambda expression: sympy.cancel(as_exponentials(expression))),
    ("simplify", sympy.simplify),
    ("simplify of exponentials", lambda expression: sympy.simplify(as_exponentials(expression))),
)


@dataclass(frozen=True)
class Proof:
    """``outcome``: "zero" (proven 0 by ``how``), "nonzero" (a constant not 0: ``value``) or "unproven" (``value`` is
    what remained)."""

    outcome: str
    how: str = ""
    value: object = None


def reduce_to_zero(difference) -> Proof:
    """Try to prove ``difference`` is 0: as written, then each of ``PROOF_STEPS``; a constant is decided by
    ``constant_is_zero``."""
    remainder = difference
    for how, step in (("as written", None), *PROOF_STEPS):
        if step is not None:
            try:
                remainder = step(difference)
            except (ArithmeticError, ValueError, TypeError, NotImplementedError, AttributeError,
                    sympy.polys.polyerrors.PolynomialError):
                continue
        if remainder == 0 or remainder.is_zero is True:
            return Proof("zero", how)
        if not remainder.free_symbols:
            zero = constant_is_zero(remainder)
            if zero is True:
                return Proof("zero", f"{how}, then exact arithmetic")
            if zero is False:
                return Proof("nonzero", how, remainder)
    return Proof("unproven", value=remainder)
