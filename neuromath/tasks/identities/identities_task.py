"""The task ``identities`` (Arabshahi, Singh, Anandkumar 2018; Mali et al. 2021: is an equation an identity?): its
description, registered in ``neuromath.registry.TASKS``."""

from __future__ import annotations

import threading

from neuromath.registry import TASKS
from neuromath.tasks.base import CardText, Completion, EquationTask
from neuromath.tasks.identities.blanks import candidate_classes, make_blanks, right_rank, summarise_ranks, token_key
from neuromath.tasks.identities.equations import is_correct, read_candidates, read_equations, write_equations
from neuromath.tasks.identities.exact_check import NOT_VERIFIED, VERIFIED, check_identity_tree
from neuromath.tasks.identities.identity_generator import generate
from neuromath.tasks.identities.identity_labels import SympyJudge
from neuromath.tasks.identities.typed_equations import parse_equation

REFERENCE_TIME_LIMIT = 5.0  # seconds SymPy may take to prove an equation typed to solve
_reference_judge: list[SympyJudge] = []  # one SymPy worker for the process, started at the first question
_reference_lock = threading.Lock()  # serve asks from several threads; the worker answers one question at a time


def numeric_verdict(tree) -> bool | None:
    """The exact check (``exact_check``): True when proven, False when a point shows the sides differ, None when
    neither within the time limit (seeded points: the same verdict every time)."""
    with _reference_lock:
        if not _reference_judge:
            _reference_judge.append(SympyJudge(timeout=REFERENCE_TIME_LIMIT))
        verdict, _ = check_identity_tree(tree, REFERENCE_TIME_LIMIT, judge=_reference_judge[0])
    return True if verdict == VERIFIED else False if verdict == NOT_VERIFIED else None


IDENTITIES = EquationTask(
    name="identities",
    read=read_equations,
    generate=generate,
    write=write_equations,
    is_correct=is_correct,
    prepare=parse_equation,
    reference_check=numeric_verdict,
    completion=Completion(
        read_candidates=read_candidates,
        token_key=token_key,
        candidate_classes=candidate_classes,
        make_blanks=make_blanks,
        right_rank=right_rank,
        summarise_ranks=summarise_ranks,
    ),
    card=CardText(
        purpose="reads an equation as a tree (functions, the symbols x y z w, pi, e and numbers) and says whether it "
                "is an identity, with a probability",
        pipeline="text-classification",
        example="sin(x)^2 + cos(x)^2 = 1",
        limits=(
            "Equations over the functions of its training data: a function it never saw is read as <unk>.",
            "Accuracy falls with depth beyond the depths it was trained on (data.train_depths in config.yaml); the "
            "test depths (data.test_depths) measure exactly that.",
            "A probability, not a proof: `neuromath solve` prints a numeric check beside it.",
        ),
    ),
)

TASKS.add(IDENTITIES.name, IDENTITIES)
