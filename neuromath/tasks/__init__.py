"""Task families, one package each: plain-Python records, readers, generators and scorers (no torch here).

``base`` holds the descriptions a family fills in (``SequenceTask`` with its optional capabilities ``Verifier``,
``Streaming`` and ``SourceText``; ``EquationTask``) and the types they hand the trainer (``Splits``,
``VocabularyOptions``, ``Completion``); ``streams`` reads corpora too large for memory, for any task with
``Streaming`` (its names are re-exported here). Importing this package imports the four families, and each registers
its tasks in ``neuromath.registry.TASKS``:

- ``word_problems``: ``word_problems`` and ``word_problems_normalized`` (problem text -> equation -> number);
- ``mathematics_dataset``: ``mathematics_dataset`` (DeepMind's questions, characters in and out);
- ``symbolic``: ``symbolic`` (Lample & Charton's integrals and ODEs in prefix notation);
- ``identities``: ``identities`` (equation trees to verify or complete).

Training, decoding and evaluation only go through a task's description (``get_task``).
"""

from __future__ import annotations

from neuromath.registry import TASKS
from neuromath.tasks import identities, mathematics_dataset, symbolic, word_problems  # noqa: F401  (register the tasks)
from neuromath.tasks.base import (
    Completion,
    EquationTask,
    SequenceTask,
    SourceText,
    Splits,
    Streaming,
    Verifier,
    VocabularyOptions,
    no_options,
)
from neuromath.tasks.streams import MALFORMED, InterleavedReader, RecordFiles, ShardPlan, ShardStream

__all__ = [
    "MALFORMED",
    "Completion",
    "EquationTask",
    "InterleavedReader",
    "RecordFiles",
    "SequenceTask",
    "ShardPlan",
    "ShardStream",
    "SourceText",
    "Splits",
    "Streaming",
    "Verifier",
    "VocabularyOptions",
    "get_task",
    "no_options",
]


def get_task(name: str) -> SequenceTask | EquationTask:
    """The description of the task ``name`` (``ConfigError`` naming the known tasks when there is none)."""
    return TASKS.get(name)
