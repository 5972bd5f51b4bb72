"""What both kinds of loaded run (``sequence_solver.Solver``, ``equation_classifier.LoadedClassifier``) share when
they answer: numbers that JSON can hold (``finite_or_none``, ``json_safe``) and the conventions of ``solve_many``
(one attention flag per text, one text's answer or its error raised)."""

from __future__ import annotations

import math
from typing import Sequence

from neuromath.errors import NeuromathError


def finite_or_none(value: float | None) -> float | None:
    """A number for JSON: None in place of inf and nan, which JSON has no words for."""
    return value if value is None or math.isfinite(value) else None


def json_safe(value):
    """``value`` with every non-finite float (NaN, inf, -inf, which strict JSON has no words for) replaced by None,
    in dicts, lists and tuples at any depth; the convention of ``finite_or_none``, so that a NaN in a run's
    summary.json or in attention weights is null in every answer of ``neuromath serve`` and ``solve --json``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def attention_flags(attention: bool | Sequence[bool], count: int) -> list[bool]:
    """``solve_many``'s ``attention``, one flag for all texts or one per text, as one flag per text."""
    flags = [attention] * count if isinstance(attention, bool) else list(attention)
    if len(flags) != count:
        raise ValueError(f"{len(flags)} attention flags for {count} texts")
    return flags


def answer_or_raise(result):
    """The one result of a ``solve_many`` of one text: the answer, or its NeuromathError raised."""
    if isinstance(result, NeuromathError):
        raise result
    return result
