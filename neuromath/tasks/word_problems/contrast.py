"""Contrast problems for a question-aware objective (``data.contrast``): a training problem varied so that its own
equation no longer answers it, paired with that equation, which training pushes down instead of up
(``neuromath.training.module.SequenceModule.loss``, weighted by ``optim.contrast_weight``).

- ``question_removed``: the story without its question. The story alone does not say what is asked, so a solver that
  still writes the equation reads cues in the story (Patel et al. 2021), not the question.
- ``question_changed``: the same story under another question (a total asked as a difference, or the reverse). The
  original equation answers the old question, not this one.

A contrast problem is an ``UnlikelyExample``: an ``Example`` with the same fields, so it is read, written and
rewritten (``data.targets: canonical``) as any other, and marked by its class alone (``unlikely``), which
``neuromath.models.batching.EncodedExamples`` carries into the batch. No torch here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Sequence

from neuromath.tasks.word_problems.records import Example
from neuromath.tasks.word_problems.variations import vary


@dataclass(frozen=True)
class UnlikelyExample(Example):
    """A problem whose ``equation`` is one training must make unlikely: the original problem's, which does not answer
    this one. ``answer`` is that equation's value, so the pair stays consistent for every reader of examples."""

    unlikely: ClassVar[bool] = True


def contrasts(examples: Sequence[Example], kinds: Sequence[str], seed: int = 0) -> tuple[list[Example], dict[str, int]]:
    """One contrast problem per problem of ``examples`` and kind of ``kinds`` (``question_removed``,
    ``question_changed``) where the kind's rule applies, and how many each kind made. Each carries its original
    problem's equation and answer: question_removed keeps them already (its numbers renumbered with the story's),
    question_changed keeps the story's numbering, so the original equation names the same numbers."""
    made: list[Example] = []
    counts: dict[str, int] = {}
    for kind in kinds:
        varied = vary(examples, kind, seed)
        for position, example in varied:
            original = examples[position]
            equation, answer = ((example.equation, example.answer) if kind == "question_removed"
                                else (original.equation, original.answer))
            made.append(UnlikelyExample(id=f"{example.id}#contrast", text=example.text,
                                        masked_text=example.masked_text, numbers=example.numbers, equation=equation,
                                        answer=answer))
        counts[kind] = len(varied)
    return made, counts
