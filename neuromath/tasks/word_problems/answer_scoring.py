"""Scoring word-problem hypotheses: the value of a prefix equation over a problem's numbers, value accuracy (the
task's ``is_correct``), equation accuracy, the verifier of n-best re-ranking (``is_well_formed``) and the record of
one prediction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from neuromath.errors import ExpressionError, NeuromathError
from neuromath.expr import Node, evaluate, format_infix, format_number, from_prefix, preorder, substitute
from neuromath.tasks.word_problems.records import MASK_REGEX, Example, number_node


def fill_numbers(equation_tokens: Sequence[str], numbers: Sequence[str]) -> Node:
    """The tree of a prefix equation with each ``nK`` replaced by the problem's K-th number."""
    tree = from_prefix(list(equation_tokens))
    for leaf in preorder(tree):
        mask = MASK_REGEX.fullmatch(leaf.value) if leaf.is_leaf else None
        if mask and int(mask[1]) >= len(numbers):
            raise ExpressionError(f"{leaf.value} refers to a number the problem does not have (it has {len(numbers)})")
    return substitute(tree, {f"n{k}": number_node(number) for k, number in enumerate(numbers)})


def equation_value(equation_tokens: Sequence[str], numbers: Sequence[str]) -> Fraction:
    """The exact value of a prefix equation over the problem's numbers; raises ExpressionError."""
    return evaluate(fill_numbers(equation_tokens, numbers))


VALUE_REL_TOL = 1e-4  # value accuracy: a predicted value within this relative tolerance of the answer is right


def is_correct(hypothesis_tokens: Sequence[str], example: Example, rel_tol: float = VALUE_REL_TOL) -> bool:
    """Value accuracy: whether the hypothesis evaluates to the gold answer within ``rel_tol``.
    An ill-formed or unevaluable hypothesis (division by zero, ...) is wrong; this never raises."""
    try:
        value = float(equation_value(hypothesis_tokens, example.numbers))
    except (NeuromathError, OverflowError, RecursionError):
        return False
    return math.isclose(value, example.answer, rel_tol=rel_tol)


def is_well_formed(hypothesis_tokens: Sequence[str], example: Example) -> bool:
    """The verifier of n-best re-ranking: the hypothesis is a complete prefix equation over the
    problem's numbers that evaluates to a finite value (it need not be the right one)."""
    try:
        return math.isfinite(float(equation_value(hypothesis_tokens, example.numbers)))
    except (NeuromathError, OverflowError, RecursionError, ZeroDivisionError):
        return False


def equation_matches(hypothesis_tokens: Sequence[str], example: Example) -> bool:
    """Equation accuracy: the hypothesis is token for token the gold equation."""
    return tuple(hypothesis_tokens) == example.equation


def describe_prediction(hypothesis_tokens: Sequence[str], example: Example) -> dict:
    """A JSON-ready record of one prediction: the equation with the problem's numbers, its value,
    and whether it is right. ``predicted_equation`` is None when the tokens are ill-formed,
    ``predicted_answer_text`` (the exact value) when the equation cannot be evaluated, and ``reason`` says why
    (``"division by zero"``, ``"no well-formed equation: ..."``; None when there is a value).
    ``predicted_value`` is also None for an exact value beyond the range of a float (``1e308 + 1e308``)."""
    record = {
        "id": example.id,
        "input": example.text,
        "masked_text": example.masked_text,
        "numbers": list(example.numbers),
        "gold_equation": list(example.equation),
        "gold_answer": example.answer,
        "predicted_tokens": list(hypothesis_tokens),
        "predicted_equation": None,
        "predicted_value": None,
        "predicted_answer_text": None,
        "correct": is_correct(hypothesis_tokens, example),
        "equation_correct": equation_matches(hypothesis_tokens, example),
        "reason": None,
    }
    try:
        tree = fill_numbers(hypothesis_tokens, example.numbers)
        record["predicted_equation"] = format_infix(tree)
    except NeuromathError as error:
        record["reason"] = f"no well-formed equation: {error}"
        return record
    try:
        value = evaluate(tree)
        record["predicted_answer_text"] = format_number(value)
    except NeuromathError as error:  # division by zero, a power or a value too large, ...
        record["reason"] = str(error)
        return record
    try:
        record["predicted_value"] = float(value)
    except OverflowError:
        pass  # the exact value is in predicted_answer_text
    return record
