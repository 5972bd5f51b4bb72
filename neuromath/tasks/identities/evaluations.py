"""Function-evaluation equations: numbers as evidence for the equation classifiers (Arabshahi, Singh, Anandkumar
2018, "Combining symbolic expressions and black-box function evaluations in neural programs", Sec. 2-3).

Besides identities, that paper trains its tree networks on equations that state one evaluation of a function,
``sin(0.37) = 0.3616`` or ``2.5 ^ 0.5 = 1.5811``, some right and some wrong; the model reads each decimal through a
number encoder (``model.number_encoder``), and learns what the functions do to values as well as which symbolic
rewrites keep an equation true. Here every equation is one function of the grammar applied to its arguments on the
left and one decimal on the right:

- arguments: a decimal with two places drawn from a range where the function is defined (``ARGUMENT_RANGES``), or,
  with probability ``constant_share``, one of the number leaves the identities themselves use (``CONSTANTS``: small
  integers, 1/2, -1/2, 2/5, pi), so the evaluations also tie those symbols to values;
- the right side: the value rounded to ``places`` decimals, written as a Float leaf; a wrong equation (half of them,
  exactly) moves it by a random share between 10% and 100% of max(1, |value|), in either direction. Values beyond
  ``max_abs`` or outside the function's domain are drawn again.

Labels are decided by the construction (the rounded value is right, the moved one wrong), not by the numeric check,
whose tolerance (1e-8) is finer than the rounding. Equations have depth 2, so a training set keeps them whatever its
``data.train_depths``; join them to a run with ``data.train_extra``.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from neuromath.expr.equation_tree import PI, EquationNode, apply, leaf, number
from neuromath.tasks.identities.equations import EquationExample
from neuromath.tasks.identities.numeric_evaluation import OutsideDomain, evaluate

EVALUATED_FUNCTIONS = (
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "asec", "acsc", "exp", "log",
    "Add", "Mul", "Pow",
)
# where arguments are drawn (the inverse secant and cosecant: |a| >= 1, so both signs of [1, 4])
ARGUMENT_RANGES = {
    **{f: (-3.5, 3.5) for f in ("sin", "cos", "tan", "cot", "sec", "csc", "atan", "acot")},
    "asin": (-1.0, 1.0), "acos": (-1.0, 1.0), "asec": (1.0, 4.0), "acsc": (1.0, 4.0),
    "exp": (-3.0, 3.0), "log": (0.01, 10.0),
    "Add": (-10.0, 10.0), "Mul": (-5.0, 5.0), "Pow": (0.01, 4.0),
}
POWER_EXPONENTS = (-3.0, 3.0)  # the exponent of Pow; its base is drawn from ARGUMENT_RANGES["Pow"] (positive)
CONSTANT_VALUES = (-3, -2, -1, 0, 1, 2, 3, 4, Fraction(1, 2), Fraction(-1, 2), Fraction(2, 5))
CONSTANTS = tuple(number(value) for value in CONSTANT_VALUES) + (PI,)


@dataclass(frozen=True)
class EvaluationSettings:
    places: int = 4  # decimals of the right side
    constant_share: float = 0.25  # an argument is one of CONSTANTS with this probability
    max_abs: float = 100.0  # values beyond this are drawn again

    def __post_init__(self) -> None:
        if not 1 <= self.places <= 8:
            raise ValueError(f"places must be in 1..8, got {self.places}")
        if not 0.0 <= self.constant_share <= 1.0:
            raise ValueError(f"constant_share must be in [0, 1], got {self.constant_share}")
        if not self.max_abs > 0:
            raise ValueError(f"max_abs must be > 0, got {self.max_abs}")


def decimal_leaf(value: float, places: int) -> EquationNode:
    """A Float leaf of ``value`` rounded to ``places`` decimals (``-0.0`` written as ``0.0``)."""
    rounded = round(value, places) + 0.0
    return leaf("Float", repr(rounded))


def _argument(rng: random.Random, low: float, high: float, settings: EvaluationSettings) -> EquationNode:
    if rng.random() < settings.constant_share:
        return rng.choice(CONSTANTS)
    return decimal_leaf(rng.uniform(low, high), 2)


def _left_side(func: str, rng: random.Random, settings: EvaluationSettings) -> EquationNode:
    low, high = ARGUMENT_RANGES[func]
    if func in ("asec", "acsc"):
        argument = _argument(rng, low, high, settings)
        if rng.random() < 0.5 and argument.func == "Float":
            argument = decimal_leaf(-float(argument.value), 2)
        return apply(func, argument)
    if func == "Pow":
        return apply(func, _argument(rng, low, high, settings), _argument(rng, *POWER_EXPONENTS, settings))
    if func in ("Add", "Mul"):
        return apply(func, _argument(rng, low, high, settings), _argument(rng, low, high, settings))
    return apply(func, _argument(rng, low, high, settings))


def evaluation_equation(func: str, label: bool, rng: random.Random,
                        settings: EvaluationSettings = EvaluationSettings()) -> EquationExample:
    """One equation ``func(arguments) = decimal``, right (the value rounded) when ``label`` else moved away from it."""
    while True:
        left = _left_side(func, rng, settings)
        try:
            value = evaluate(left, {})  # finite, or OutsideDomain
        except OutsideDomain:
            continue
        if abs(value) > settings.max_abs:
            continue
        if not label:
            value += rng.choice((-1, 1)) * max(1.0, abs(value)) * rng.uniform(0.1, 1.0)
        right = decimal_leaf(value, settings.places)
        return EquationExample(apply("Equality", left, right), label)


def generate_evaluations(n: int, rng: random.Random, settings: EvaluationSettings = EvaluationSettings(),
                         functions: tuple[str, ...] = EVALUATED_FUNCTIONS) -> list[EquationExample]:
    """``n`` evaluation equations in a seeded order: the functions take equal shares (within one), and within each
    function half are right (within one, the odd ones alternating), so neither the function nor the overall
    balance gives the label away; overall, half are right within one. The same ``rng`` state gives the same list."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    unknown = sorted(set(functions) - set(EVALUATED_FUNCTIONS))
    if unknown or not functions:
        raise ValueError(f"functions must be among {', '.join(EVALUATED_FUNCTIONS)}, got {functions}")
    plan: list[tuple[str, bool]] = []
    odd_right = False  # a function with an odd count gets its extra equation right and wrong in turn
    for index, func in enumerate(functions):
        count = n // len(functions) + (index < n % len(functions))
        right = count // 2 + (count % 2 and odd_right)
        odd_right ^= bool(count % 2)
        plan += [(func, True)] * right + [(func, False)] * (count - right)
    rng.shuffle(plan)
    return [evaluation_equation(func, label, rng, settings) for func, label in plan]


def evaluation_summary(examples: list[EquationExample]) -> str:
    """Markdown: equations and right share per function."""
    total, right = Counter(), Counter()
    for example in examples:
        func = example.tree.children[0].func
        total[func] += 1
        right[func] += bool(example.label)
    lines = ["| function | equations | right (%) |", "|---|---|---|"]
    for func in sorted(total, key=EVALUATED_FUNCTIONS.index):
        lines.append(f"| {func} | {total[func]} | {100 * right[func] / total[func]:.1f} |")
    lines.append(f"| all | {sum(total.values())} | {100 * sum(right.values()) / max(1, sum(total.values())):.1f} |")
    return "\n".join(lines) + "\n"
