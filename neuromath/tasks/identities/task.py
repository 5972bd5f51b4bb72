"""The task ``identities`` (Arabshahi, Singh, Anandkumar 2018; Mali et al. 2021: is an equation an identity?): its
description, registered in ``neuromath.registry.TASKS``."""

from __future__ import annotations

from neuromath.registry import TASKS
from neuromath.tasks.base import EquationTask
from neuromath.tasks.identities.equations import is_correct, read_equations, write_equations
from neuromath.tasks.identities.generator import generate

IDENTITIES = EquationTask(
    name="identities",
    read=read_equations,
    generate=generate,
    write=write_equations,
    is_correct=is_correct,
)

TASKS.add(IDENTITIES.name, IDENTITIES)
