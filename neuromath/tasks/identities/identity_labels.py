"""How the identities generator labels a candidate (never trusted from construction): the numeric check at random
points (``numeric_label``), skipping constants 0 on paper but not in floating point (``has_inexact_zero``), and
SymPy's ``simplify`` in a time-limited worker (``SympyJudge``), which proves every true label. Used by
``identity_chunks`` and ``identity_generator``. No torch.

How labels are decided
    True only when proven; False only when a point shows the sides differ.

    ``numeric_label`` evaluates both sides at random points (``identities.numeric_check``; points outside a side's
    domain skipped) on [-3, 3], then if undecided on (0.05, 2) and (-1, 1). False: a point shows a gap (confirmed
    with 60 and 120 digits); True: every usable point agrees (or exact arithmetic shows equality); else None. True
    is only a candidate: the driver asks ``SympyJudge`` (``simplify(lhs - rhs) == 0``, workers killed and replaced
    past their time limit) and drops, counting them, those not proven in time. Undecided candidates go to SymPy
    only while a depth still lacks true equations. A chain state checked False is dropped and ends its chain; a
    mutation checked True is kept, once proven, while its depth needs true ones. Candidates with an inexact zero
    (``cos(pi/2)``) are skipped.

    An identity: both sides equal wherever both are defined over the reals, and SymPy proves it. Equations SymPy
    cannot prove (``log(x*y) = log(x) + log(y)``, false as complex numbers for negative x and y) are not kept true.
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
    """False when a point shows the sides differ; True (a candidate, proven later by the driver) when every usable
    point of every range agrees or exact arithmetic shows equality; None when undecided (see the module docstring)."""
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
    """Whether a symbol-free subtree evaluates in floating point to a tiny non-zero number (``cos(pi/2)`` = 6e-17),
    which in a base or under a root can fake a difference in the numeric check."""
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
    """Whether ``simplify(lhs - rhs) == 0`` for the pre-order ``func`` / ``vars`` strings (they pickle flat however
    deep the tree). The raw and expanded differences are tried first. Runs in ``SympyJudge``'s worker."""
    expression = equation_to_sympy(parse_preorder(func, variables))
    difference = expression.lhs - expression.rhs
    if difference == 0 or sympy.expand(difference) == 0:  # most generated equations: far cheaper than simplify
        return True
    return bool(sympy.simplify(difference) == 0)


def warm_sympy() -> None:
    """Run one ``simplify`` so SymPy's lazy loading is not charged to the worker's first time-limited question."""
    x = sympy.Symbol("x")
    sympy.simplify(sympy.sin(x) ** 2 + sympy.cos(x) ** 2 - 1)


class SympyJudge:
    """Asks SymPy whether ``simplify(lhs - rhs) == 0`` in a ``TimeLimitedPool`` of ``workers`` (a worker past the
    limit is killed and replaced; no SIGALRM). Callable on an equation: a ``prover`` for ``numeric_check``."""

    def __init__(self, timeout: float = 2.0, start_method: str = "spawn", startup_timeout: float = 120.0,
                 workers: int = 1):
        self.pool = TimeLimitedPool(simplify_difference_is_zero, workers=workers, time_limit=timeout,
                                    startup_timeout=startup_timeout, start_method=start_method, warm_up=warm_sympy)
        self.errors: list[str] = []

    @property
    def timeouts(self) -> int:
        return self.pool.timeouts

    def start(self) -> None:
        """Start the workers now (start-up is never charged to a question)."""
        self.pool.start()

    def simplifies_to_zero(self, equation: EquationNode) -> bool | None:
        """True when SymPy simplifies lhs - rhs to 0, False when it gets something else (not a disproof), None on
        timeout or failure."""
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
