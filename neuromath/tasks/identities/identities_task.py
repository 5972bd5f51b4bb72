"""The task ``identities`` (Arabshahi, Singh, Anandkumar 2018; Mali et al. 2021: is an equation an identity?): its
description, registered in ``neuromath.registry.TASKS``."""

from __future__ import annotations

import random

from neuromath.registry import TASKS
from neuromath.tasks.base import CardText, EquationTask
from neuromath.tasks.identities.equations import is_correct, read_equations, write_equations
from neuromath.tasks.identities.identity_generator import generate
from neuromath.tasks.identities.numeric_evaluation import numeric_check
from neuromath.tasks.identities.typed_equations import parse_equation


def numeric_verdict(tree) -> bool | None:
    """Both sides evaluated at random points (seeded: the same verdict every time)."""
    return numeric_check(tree, random.Random(0)).verdict


IDENTITIES = EquationTask(
    name="identities",
    read=read_equations,
    generate=generate,
    write=write_equations,
    is_correct=is_correct,
    prepare=parse_equation,
    reference_check=numeric_verdict,
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
