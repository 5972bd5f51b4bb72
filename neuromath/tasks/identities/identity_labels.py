"""How the identities generator decides a candidate's label (never trusted from construction): the numeric check at
random points (``numeric_label``), the skip of constants that are 0 on paper but not in floating point
(``has_inexact_zero``), and SymPy's ``simplify`` in a worker process with a time limit (``SympyJudge``) for the
candidates the numbers cannot decide. Used by the chunks (``identity_chunks``) and the driver
(``identity_generator``). No torch here.

How labels are decided
    ``numeric_label``: both sides are evaluated at random points with ``identities.numeric_check`` (points outside a
    side's domain are skipped), first on [-3, 3], and when that cannot tell, on (0.05, 2) and (-1, 1) as well. A
    candidate whose check is inconclusive goes to SymPy (``simplify(lhs - rhs) == 0``) in a worker process that is
    killed and replaced when it runs past its time limit (``SympyJudge``); SymPy can only prove equality, so such a
    candidate becomes True or is dropped; SymPy is asked only while a depth still lacks true equations after the
    numerically decided ones. A chain state whose check says False is dropped (and ends its chain); a mutation
    whose check says True is kept as a True example when its depth still needs true ones, else dropped. Candidates
    holding a constant that is 0 on paper but not in floating point (``cos(pi/2)``) are skipped.
    An identity here means: both sides are equal wherever both are defined over the reals, which is what the
    numeric check tests; every axiom of ``axioms`` holds in that sense.
"""

from __future__ import annotations

import random

import sympy

from neuromath.errors import ExpressionError
from neuromath.expr.equation_tree import EquationNode, postorder
from neuromath.expr.sympy_bridge import equation_to_sympy
from neuromath.expr.tree import preorder
from neuromath.tasks.identities.equations import parse_preorder, to_preorder
from neuromath.tasks.identities.numeric_evaluation import OutsideDomain, evaluate, numeric_check
from neuromath.timelimit import TimeLimitedPool


def numeric_label(equation: EquationNode, rng: random.Random) -> bool | None:
    """True / False when random points decide it, None when they cannot (see the module docstring). False needs
    two points where both sides are defined and differ; True needs every usable point of every range tried to
    agree."""
    first = numeric_check(equation, rng, points=10, attempts=50)
    if first.verdict is not None:
        return first.verdict
    checks = [first]
    for low, high in ((0.05, 2.0), (-1.0, 1.0)):
        check = numeric_check(equation, rng, points=10, attempts=50, low=low, high=high)
        if check.verdict is False:
            return False
        checks.append(check)
    if any(check.verdict for check in checks) and all(check.agreeing == check.points for check in checks):
        return True
    return None


def has_inexact_zero(tree: EquationNode) -> bool:
    """Whether a subtree without symbols evaluates (in floating point) to a tiny non-zero number, like
    ``cos(pi/2)`` = 6e-17: such a subtree in a base or under a root can make the numeric check see a difference
    that is not there, so candidates holding one are skipped."""
    constant: dict[int, bool] = {}
    for node in postorder(tree):
        constant[id(node)] = node.func != "Symbol" and all(constant[id(child)] for child in node.children)
    for node in preorder(tree):
        if constant[id(node)] and not node.is_leaf and node.func != "Equality":
            try:
                value = evaluate(node, {})
            except (OutsideDomain, ExpressionError):
                continue
            if 0 < abs(value) < 1e-9:
                return True
    return False


def simplify_difference_is_zero(func: str, variables: str) -> bool:
    """Whether ``simplify(lhs - rhs) == 0`` for the equation of pre-order ``func`` / ``vars`` strings (which pickle
    flat however deep the tree is). Runs in ``SympyJudge``'s worker."""
    expression = equation_to_sympy(parse_preorder(func, variables))
    return bool(sympy.simplify(expression.lhs - expression.rhs) == 0)


def warm_sympy() -> None:
    """SymPy's first ``simplify`` in a process loads parts of it; ``SympyJudge``'s worker runs one before its first
    question, so that the time limit measures the question alone."""
    x = sympy.Symbol("x")
    sympy.simplify(sympy.sin(x) ** 2 + sympy.cos(x) ** 2 - 1)


class SympyJudge:
    """Asks SymPy whether ``simplify(lhs - rhs) == 0`` in a worker process with a time limit (a one-worker
    ``TimeLimitedPool``): when the limit passes, the worker is killed and a new one is started for the next question
    (no SIGALRM)."""

    def __init__(self, timeout: float = 2.0, start_method: str = "spawn", startup_timeout: float = 120.0):
        self.pool = TimeLimitedPool(simplify_difference_is_zero, workers=1, time_limit=timeout,
                                    startup_timeout=startup_timeout, start_method=start_method, warm_up=warm_sympy)
        self.errors: list[str] = []

    @property
    def timeouts(self) -> int:
        return self.pool.timeouts

    def start(self) -> None:
        """Start the worker now (its start-up, importing and warming SymPy, is never charged to a question anyway)."""
        self.pool.start()

    def simplifies_to_zero(self, equation: EquationNode) -> bool | None:
        """True when SymPy simplifies lhs - rhs to 0, False when it finishes with something else (not a proof that
        the equation is false), None when the time limit passed or SymPy failed."""
        outcome = self.pool.run(*to_preorder(equation))
        if outcome.status == "error":
            self.errors.append(f"error: {outcome.value}")
        return outcome.value if outcome.ok else None

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> SympyJudge:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
