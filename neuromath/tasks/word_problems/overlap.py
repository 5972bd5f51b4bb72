"""Problems a training set has not seen (``neuromath data unseen``): a test set from another corpus, less the problems
whose story is also in the training files, measures how a model carries over to problems it was not tuned for. The
same rule keeps the held-out problems out of another corpus's problems joined to training (``data.train_extra``).

Two problems are the same story when their masked texts agree once lower-cased and reduced to their letters: the
numbers (masked, or written out), punctuation and spacing do not count. So a problem copied from one corpus into
another, with its numbers changed or not, is left out; a story that differs by one word is kept.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from neuromath.tasks.word_problems.records import Example

NOT_LETTERS = re.compile(r"[^\w]+|[\d_]+")


def story_key(example: Example) -> str:
    """The story of ``example`` as compared across corpora: its masked text's words, lower-cased, without digits,
    punctuation or mask numbers."""
    return " ".join(NOT_LETTERS.sub(" ", example.masked_text.lower()).split())


def unseen(test: Sequence[Example], train: Iterable[Example]) -> tuple[list[Example], dict[str, int]]:
    """The problems of ``test`` whose story no problem of ``train`` has, each story once (the first kept), and the
    counts: read, in_train (left out as seen), repeated (left out as a repeat within ``test``), kept."""
    seen = {story_key(example) for example in train}
    kept: list[Example] = []
    counts = {"read": len(test), "in_train": 0, "repeated": 0}
    own: set[str] = set()
    for example in test:
        key = story_key(example)
        if key in seen:
            counts["in_train"] += 1
        elif key in own:
            counts["repeated"] += 1
        else:
            own.add(key)
            kept.append(example)
    counts["kept"] = len(kept)
    return kept, counts


def new_stories(extra: Sequence[Example], held_out: Iterable[Example],
                train: Iterable[Example]) -> tuple[list[Example], dict[str, int]]:
    """The problems of ``extra`` (``data.train_extra``) that may join a training set: those whose story is in no
    held-out problem (validation, test) and in no training problem, each story once; with the counts read,
    in_held_out, in_train, repeated and kept."""
    outside, counts = unseen(extra, held_out)
    kept, second = unseen(outside, train)
    return kept, {"read": counts["read"], "in_held_out": counts["in_train"], "in_train": second["in_train"],
                  "repeated": counts["repeated"], "kept": len(kept)}
