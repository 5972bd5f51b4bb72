"""The tasks ``word_problems`` and ``word_problems_normalized``: their descriptions, registered in
``neuromath.registry.TASKS``, and the generator hook they share.

``word_problems_normalized`` (Wang et al. 2018a, equation normalisation) has the data, reader, generator and source
side of ``word_problems``; its targets are normalised postfix equations, scored after conversion to prefix.
"""

from __future__ import annotations

import dataclasses
import math

from neuromath.expr import ARITY
from neuromath.expr.grammar import WORD_PROBLEM_GRAMMAR, TreeGrammar
from neuromath.registry import TASKS
from neuromath.tasks.base import SequenceTask
from neuromath.tasks.word_problems import templates
from neuromath.tasks.word_problems.files import read_examples, write_jsonl
from neuromath.tasks.word_problems.normalisation import (
    describe_postfix_prediction,
    equation_matches_normalized,
    is_correct_postfix,
    is_well_formed_postfix,
    normalized_target_tokens,
)
from neuromath.tasks.word_problems.records import Example, number_value, prepare_problem
from neuromath.tasks.word_problems.scoring import describe_prediction, equation_matches, is_correct, is_well_formed
from neuromath.text import word_tokens


def number_values(example: Example) -> list[float]:
    """The values of ``n0, n1, ...`` in order (graph2tree's quantity comparison graph); a value too large for a float
    is +-inf, which keeps its order."""
    values = []
    for number in example.numbers:
        value = number_value(number)
        try:
            values.append(float(value))
        except OverflowError:
            values.append(math.copysign(math.inf, value))
    return values


def generate(n: int, rng, **params) -> list[Example]:
    """``n`` template-based synthetic problems (see ``neuromath.tasks.word_problems.templates``)."""
    return templates.generate(n, rng, **params)


WORD_PROBLEMS = SequenceTask(
    name="word_problems",
    vocab_level="word",
    read=read_examples,
    generate=generate,
    source_tokens=lambda example: word_tokens(example.masked_text),
    target_tokens=lambda example: list(example.equation),
    is_correct=is_correct,
    equation_matches=equation_matches,
    describe=describe_prediction,
    write=write_jsonl,
    target_grammar=WORD_PROBLEM_GRAMMAR,
    verify=is_well_formed,
    prepare=prepare_problem,
    folds=True,
    number_values=number_values,
)

WORD_PROBLEMS_NORMALIZED = dataclasses.replace(
    WORD_PROBLEMS,
    name="word_problems_normalized",
    target_tokens=normalized_target_tokens,
    is_correct=is_correct_postfix,
    equation_matches=equation_matches_normalized,
    describe=describe_postfix_prediction,
    target_grammar=TreeGrammar(arities=dict(ARITY), notation="postfix"),
    verify=is_well_formed_postfix,
)

TASKS.add(WORD_PROBLEMS.name, WORD_PROBLEMS)
TASKS.add(WORD_PROBLEMS_NORMALIZED.name, WORD_PROBLEMS_NORMALIZED)
