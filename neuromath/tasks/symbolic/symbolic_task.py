"""The task ``symbolic`` (Lample & Charton 2020: integrals and first-order ODEs in prefix notation): its description,
registered in ``neuromath.registry.TASKS``, and its generator settings."""

from __future__ import annotations

import os

from neuromath.expr.grammar import SYMBOLIC_GRAMMAR
from neuromath.registry import TASKS
from neuromath.tasks.base import CardText, SequenceTask, Streaming, Verifier
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
from neuromath.tasks.symbolic.symbolic_generator import generate
from neuromath.tasks.symbolic.typed_problems import prepare_problem, readable


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
    shared_vocab=True,
    generate_options=generate_options,
    accuracy_label="verified accuracy",
    equation_label="exact match",
    evaluation="symbolic",
    prepare=prepare_problem,
    answer_text=readable,
    card=CardText(
        purpose="reads an integrand or a first-order ODE (prefix notation; ordinary notation through `neuromath "
                "solve`) and writes its antiderivative or solution, which the task's verifier checks by "
                "differentiating or substituting",
        pipeline="text2text-generation",
        example="x*cos(x)",
        limits=(
            "Expressions like those it was trained on: the operators, sizes and kinds of problem of its training "
            "data (the generator method in config.yaml, or Lample & Charton's files). A longer or unfamiliar "
            "expression is likely to fail, and the verifier says so.",
            "An answer is verified only when SymPy proves it, within a time limit; sampled numbers may reject one "
            "but never accept it. An answer whose check the time limit ends is not verified (`timeout`), which is "
            "not the same as wrong.",
        ),
    ),
    verifier=Verifier(
        verify=is_correct,  # the problem itself says whether a hypothesis is right
        verify_many=verify_many,
        verdicts_many=verdicts_many,  # a check ended by the time limit is "timeout", not just wrong
    ),
    streaming=Streaming(record_files),
)

TASKS.add(SYMBOLIC.name, SYMBOLIC)
