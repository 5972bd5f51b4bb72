"""A majority vote of several runs' word-problem predictions: per problem, the answer most runs predicted.

Two predicted values are one answer when they agree within the relative tolerance that value accuracy uses
(``neuromath.tasks.word_problems.answer_scoring.VALUE_REL_TOL``). A run that predicted no value (an ill-formed or
unevaluable equation) does not vote. A tie goes to the answer of the earliest run (in the order given) among the
tied ones, so a vote of two runs is the first run wherever they disagree and the order is part of the method. The
voted record of a problem is the prediction record of the earliest run that gave the winning answer (its equation,
value and correctness), with ``votes`` (how many runs gave that answer), ``voters`` (how many gave any) and
``member`` (the index of the run whose record it is) added.
"""

from __future__ import annotations

import math
from typing import Sequence

from neuromath.errors import NeuromathError
from neuromath.tasks.word_problems.answer_scoring import VALUE_REL_TOL


def predicted(record: dict) -> float | None:
    """The record's predicted value as a finite float, or None when it has none."""
    value = record.get("predicted_value")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def vote(records: Sequence[dict]) -> dict:
    """The voted record of one problem from its prediction records, one per run, in the runs' order."""
    if not records:
        raise NeuromathError("a vote needs at least one run's prediction")
    answers: list[tuple[float, list[int]]] = []  # (the answer, the runs that gave it) in order of first appearance
    for index, record in enumerate(records):
        value = predicted(record)
        if value is None:
            continue
        for answer, runs in answers:
            if math.isclose(value, answer, rel_tol=VALUE_REL_TOL):
                runs.append(index)
                break
        else:
            answers.append((value, [index]))
    voters = sum(len(runs) for _, runs in answers)
    if not answers:
        return {**records[0], "votes": 0, "voters": 0, "member": 0}
    _, runs = max(answers, key=lambda answer: len(answer[1]))  # max keeps the first of equals: the earliest run's
    return {**records[runs[0]], "votes": len(runs), "voters": voters, "member": runs[0]}


def vote_runs(runs: Sequence[Sequence[dict]], names: Sequence[str]) -> list[dict]:
    """The voted records of runs that predicted the same problems in the same order (``names``: what to call each
    run in an error)."""
    if len(runs) < 2:
        raise NeuromathError("a vote needs the predictions of at least two runs")
    counts = {len(records) for records in runs}
    if len(counts) != 1:
        sizes = ", ".join(f"{name}: {len(records)}" for name, records in zip(names, runs))
        raise NeuromathError(f"the runs of a vote must predict the same problems; they hold {sizes} records")
    voted = []
    for position, records in enumerate(zip(*runs), start=1):
        ids = [str(record.get("id")) for record in records]
        if len(set(ids)) != 1:
            which = ", ".join(f"{name}: {problem!r}" for name, problem in zip(names, ids))
            raise NeuromathError(f"record {position} is not the same problem in every run of the vote ({which})")
        voted.append(vote(records))
    return voted
