"""The tasks ``word_problems`` and ``word_problems_normalized``: their descriptions, registered in
``neuromath.registry.TASKS``, and the generator hook they share.

``word_problems_normalized`` (Wang et al. 2018a, equation normalisation) has the data, reader, generator and source
side of ``word_problems``; its targets are normalised postfix equations, scored after conversion to prefix.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

from neuromath.expr import ARITY
from neuromath.expr.grammar import WORD_PROBLEM_GRAMMAR, TreeGrammar
from neuromath.registry import TASKS
from neuromath.tasks.base import CardText, SequenceTask, SourceText, Verifier
from neuromath.tasks.word_problems import templates
from neuromath.tasks.word_problems.answer_scoring import (
    describe_prediction,
    equation_matches,
    is_correct,
    is_well_formed,
)
from neuromath.tasks.word_problems.files import write_jsonl
from neuromath.tasks.word_problems.formats import read_examples
from neuromath.tasks.word_problems.normalisation import (
    describe_postfix_prediction,
    equation_matches_normalized,
    is_correct_postfix,
    is_well_formed_postfix,
    normalized_target_tokens,
)
from neuromath.tasks.word_problems.preparation import prepare_splits, vocabulary_options
from neuromath.tasks.word_problems.records import MASK_REGEX, Example, number_value, prepare_problem
from neuromath.tasks.word_problems.spans import SPAN_BREAKS
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
            values.append(math.inf if value > 0 else -math.inf)  # copysign would convert value to a float too
    return values


def source_tokens(example: Example) -> list[str]:
    """The words of the masked text, lower-cased (the default of ``data.lowercase``)."""
    return word_tokens(example.masked_text)


def source_tokens_for(data) -> Callable[[Example], list[str]]:
    """The source tokens of a run with the data section ``data``: lower-cased words, or as written with
    ``data.lowercase: false``."""
    if data.lowercase:
        return source_tokens
    return lambda example: word_tokens(example.masked_text, lowercase=False)


def keeps_token(token: str) -> bool:
    """Word dropout never hides a masked number (``n0``, ``n1``, ...: the equation points at them) nor a comma or full
    stop (group attention splits the problem into clauses at them)."""
    return MASK_REGEX.fullmatch(token) is not None or token in SPAN_BREAKS


def reserved_tokens(train: Sequence[Example]) -> tuple[list[str], list[str]]:
    """``n0 .. n{K-1}`` on both sides, K the most numbers of any training problem: a source vocabulary keeps every
    number slot whatever ``data.min_count``, and a target vocabulary can name every number slot, used in a training
    equation or not (tree decoders point at a problem's numbers)."""
    most = max((len(example.numbers) for example in train), default=0)
    numbers = [f"n{index}" for index in range(most)]
    return numbers, list(numbers)


def generate(n: int, rng, **params) -> list[Example]:
    """``n`` template-based synthetic problems (see ``neuromath.tasks.word_problems.templates``)."""
    return templates.generate(n, rng, **params)


CARD = CardText(
    purpose="reads a math word problem and writes an equation over the problem's numbers, which is evaluated exactly "
            "to give the answer",
    pipeline="text2text-generation",
    example="Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?",
    limits=(
        "Numbers are masked: the model reads `n0, n1, ...` in place of the problem's numbers (Graph2Tree also "
        "compares their sizes) and writes an equation over those slots and the constants its training equations "
        "used; it never sees what the numbers are worth, and cannot use a constant it was not trained with.",
        "One language: the language of its training data (English for MAWPS, ASDiv-A, SVAMP and the built-in "
        "generator, Chinese for Math23K). Problems with more numbers than any training problem, several unknowns "
        "or units to convert are beyond it.",
        "A wrong equation still has a value: an answer is the model's guess, not a checked result (`verified` only "
        "says that the equation is well-formed).",
    ),
)

def read_options(data, role: str) -> dict:
    """Keywords of ``read_examples`` for a run's split: ``data.strict`` refuses rows whose answer contradicts their
    own equation; otherwise they are kept and counted."""
    return {"strict": data.strict}


WORD_PROBLEMS = SequenceTask(
    name="word_problems",
    vocab_level="word",
    read=read_examples,
    read_options=read_options,
    generate=generate,
    source_tokens=source_tokens,
    target_tokens=lambda example: list(example.equation),
    is_correct=is_correct,
    equation_matches=equation_matches,
    describe=describe_prediction,
    write=write_jsonl,
    target_grammar=WORD_PROBLEM_GRAMMAR,
    prepare=prepare_problem,
    folds=True,
    prepare_splits=prepare_splits,
    card=CARD,
    verifier=Verifier(is_well_formed),
    source_text=SourceText(
        tokens_for=source_tokens_for,
        keeps_token=keeps_token,
        reserved_tokens=reserved_tokens,
        vocabulary_options=vocabulary_options,
        in_batches=True,
        number_values=number_values,
    ),
)

WORD_PROBLEMS_NORMALIZED = dataclasses.replace(
    WORD_PROBLEMS,
    name="word_problems_normalized",
    target_tokens=normalized_target_tokens,
    is_correct=is_correct_postfix,
    equation_matches=equation_matches_normalized,
    describe=describe_postfix_prediction,
    target_grammar=TreeGrammar(arities=dict(ARITY), notation="postfix"),
    verifier=Verifier(is_well_formed_postfix),
)

TASKS.add(WORD_PROBLEMS.name, WORD_PROBLEMS)
TASKS.add(WORD_PROBLEMS_NORMALIZED.name, WORD_PROBLEMS_NORMALIZED)
