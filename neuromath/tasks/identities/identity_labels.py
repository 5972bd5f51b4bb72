"""How the identities generator decides a candidate's label (never trusted from construction): the numeric check at
random points (``numeric_label``), the skip of constants that are 0 on paper but not in floating point
(``has_inexact_zero``), and SymPy's ``simplify`` in a worker process with a time limit (``SympyJudge``), which
proves every true label. Used by the chunks (``identity_chunks``) and the driver (``identity_generator``). No torch
here.

How labels are decided
    A label is True only when it is proven, and False only when a point shows the sides differ.

    ``numeric_label``: both sides are evaluated at random points with ``identities.numeric_check`` (points outside a
    side's domain are skipped), first on [-3, 3], and when that cannot tell, on (0.05, 2) and (-1, 1) as well. It
    says False when a point shows the sides differ (a floating-point gap confirmed with 60 and 120 digits), True
    when every usable point agrees (or exact arithmetic shows two numbers equal), and None otherwise. True here is a
    candidate, not yet a label: the driver asks SymPy (``simplify(lhs - rhs) == 0``, ``SympyJudge``, in worker
    processes killed and replaced when they run past their time limit) about every candidate it would keep as true,
    and drops (and counts) the ones SymPy does not prove in time. Numerically undecided candidates go to SymPy as
    well, only while a depth still lacks true equations. A chain state whose check says False is dropped (and ends
    its chain); a mutation whose check says True is kept as a True example, once proven, when its depth still needs
    true ones. Candidates holding a constant that is 0 on paper but not in floating point (``cos(pi/2)``) are
    skipped.

    An identity here means: both sides are equal wherever both are defined over the reals, and SymPy proves it.
    Equations that hold only where both sides are defined but that SymPy cannot prove (``log(x*y) = log(x) +
    log(y)``, whose sides differ as complex numbers for negative x and y) are not kept as true.
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
    """False when a point shows the sides differ; True when every usable point of every range tried agrees (a
    candidate true label, which the driver proves before keeping it) or exact arithmetic shows two numbers equal;
    None when the points cannot tell (see the module docstring)."""
    first = numeric_check(equation, rng, points=10, attempts=50)
    if first.verdict is not None:
        return first.verdict
    if first.agrees:
        return True
    checks = [first]
    for low, high in ((0.05, 2.0), (-1.0, 1.0)):
        check = numeric_check(equation, rng, points=10, attempts=50, low=low, high=high)
        if check.verdict is False:
            return False
        checks.append(check)
    if any(check.agrees for check in checks) and all(check.agreeing == check.points for check in checks):
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
    flat however deep the tree is); the difference as SymPy builds it, and then expanded, are tried first (both
    are 0 only when the difference is). Runs in ``SympyJudge``'s worker."""
    expression = equation_to_sympy(parse_preorder(func, variables))
    difference = expression.lhs - expression.rhs
    if difference == 0 or sympy.expand(difference) == 0:  # most generated equations: far cheaper than simplify
        return True
    return bool(sympy.simplify(difference) == 0)


def warm_sympy() -> None:
    """SymPy's first ``simplify`` in a process loads parts of it; ``SympyJudge``'s worker runs one before its first
    question, so that the time limit measures the question alone."""
    x = sympy.Symbol("x")
    sympy.simplify(sympy.sin(x) ** 2 + sympy.cos(x) ** 2 - 1)


class SympyJudge:
    """Asks SymPy whether ``simplify(lhs - rhs) == 0`` in worker processes with a time limit (a ``TimeLimitedPool``
    of ``workers`` processes): when the limit passes, the worker is killed and a new one is started for the next
    question (no SIGALRM). Called with an equation, it is a ``prover`` for ``numeric_check``."""

    def __init__(self, timeout: float = 2.0, start_method: str = "spawn", startup_timeout: float = 120.0,
                 workers: int = 1):
        self.pool = TimeLimitedPool(simplify_difference_is_zero, workers=workers, time_limit=timeout,
                                    startup_timeout=startup_timeout, start_method=start_method, warm_up=warm_sympy)
        self.errors: list[str] = []

    @property
    def timeouts(self) -> int:
        return self.pool.timeouts

    def start(self) -> None:
        """Start the workers now (their start-up, importing and warming SymPy, is never charged to a question)."""
        self.pool.start()

    def simplifies_to_zero(self, equation: EquationNode) -> bool | None:
        """True when SymPy simplifies lhs - rhs to 0, False when it finishes with something else (not a proof that
        the equation is false), None when the time limit passed or SymPy failed."""
        return self.prove_many([equation])[0]

    def prove_many(self, equations: list[EquationNode]) -> list[bool | None]:
        """``simplifies_to_zero`` for each equation, in order, spread over the workers."""
        outcomes = self.pool.map([to_preorder(equation) for equation in equations])
        answers = []
        for outcome in outcomes:
            if outcome.status == "error":
                self.errors.append(f"error: {outcome.value}")
            answers.append(outcome.value if outcome.ok else None)
        return answers

    def __call__(self, equation: EquationNode) -> bool:
        """Whether SymPy proves the equation within the time limit (``numeric_check``'s ``prover``)."""
        return self.simplifies_to_zero(equation) is True

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> SympyJudge:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
