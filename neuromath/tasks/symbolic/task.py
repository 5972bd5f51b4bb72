"""The task ``symbolic`` (Lample & Charton 2020: integrals and first-order ODEs in prefix notation): its description,
registered in ``neuromath.registry.TASKS``, and its generator settings."""

from __future__ import annotations

import os

from neuromath.expr.grammar import SYMBOLIC_GRAMMAR
from neuromath.registry import TASKS
from neuromath.tasks.base import SequenceTask
from neuromath.tasks.symbolic.generator import generate
from neuromath.tasks.symbolic.ordinary import prepare_problem, readable
from neuromath.tasks.symbolic.pairs import (
    describe_prediction,
    exact_match,
    is_correct,
    read_pairs,
    record_files,
    verdicts_many,
    verify_many,
    write_pairs,
)


def generate_options(data, role: str) -> dict:
    """The generator's settings from the config's data section; the output does not depend on the worker count."""
    workers = max(1, min(4, os.cpu_count() or 1))
    return {"method": data.symbolic_method, "max_ops": data.symbolic_max_ops, "workers": workers}


SYMBOLIC = SequenceTask(
    name="symbolic",
    vocab_level="word",
    read=read_pairs,
    generate=generate,
    source_tokens=lambda example: list(example.source),
    target_tokens=lambda example: list(example.target),
    is_correct=is_correct,
    equation_matches=exact_match,
    describe=describe_prediction,
    write=write_pairs,
    source_grammar=SYMBOLIC_GRAMMAR,
    target_grammar=SYMBOLIC_GRAMMAR,
    verify=is_correct,  # the problem itself says whether a hypothesis is right
    verify_many=verify_many,
    verdicts_many=verdicts_many,  # a check ended by the time limit is "timeout", not just wrong
    shared_vocab=True,
    generate_options=generate_options,
    accuracy_label="verified accuracy",
    equation_label="exact match",
    evaluation="symbolic",
    record_files=record_files,
    prepare=prepare_problem,
    answer_text=readable,
)

TASKS.add(SYMBOLIC.name, SYMBOLIC)
