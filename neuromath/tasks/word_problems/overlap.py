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


def unseen(test: Sequence[Example], train: Iterable[Example],
           similarity: float = 1.0) -> tuple[list[Example], dict[str, int]]:
    """The problems of ``test`` whose story no problem of ``train`` has, each story once (the first kept), and the
    counts: read, in_train (left out as seen), near_train (left out as a near copy of a training story: with
    ``similarity`` below 1, their word sets share at least that Jaccard share), repeated (left out as a repeat
    within ``test``), kept."""
    seen = {story_key(example) for example in train}
    seen_words = [frozenset(key.split()) for key in seen] if similarity < 1 else []
    kept: list[Example] = []
    counts = {"read": len(test), "in_train": 0, "near_train": 0, "repeated": 0}
    own: set[str] = set()
    for example in test:
        key = story_key(example)
        if key in seen:
            counts["in_train"] += 1
        elif seen_words and near_copy(frozenset(key.split()), seen_words, similarity):
            counts["near_train"] += 1
        elif key in own:
            counts["repeated"] += 1
        else:
            own.add(key)
            kept.append(example)
    counts["kept"] = len(kept)
    return kept, counts


def near_copy(words: frozenset[str], others: Sequence[frozenset[str]], similarity: float) -> bool:
    """Whether the word set ``words`` shares at least ``similarity`` of its union (Jaccard) with one of ``others``."""
    size = len(words)
    for other in others:
        # |A & B| / |A | B| can reach similarity only when the smaller set is at least that share of the larger one
        if min(size, len(other)) >= similarity * max(size, len(other)):
            shared = len(words & other)
            if shared >= similarity * (size + len(other) - shared):
                return True
    return False


def new_stories(extra: Sequence[Example], held_out: Iterable[Example], train: Iterable[Example],
                similarity: float = 1.0) -> tuple[list[Example], dict[str, int]]:
    """The problems of ``extra`` (``data.train_extra``) that may join a training set: each story once, and none
    whose story is a training problem's or a held-out (validation, test) problem's. Two corpora share problems with
    a name changed or a word edited, so with ``similarity`` below 1 a problem whose story's word set shares that
    Jaccard share with a held-out one's counts as its copy too. Returns them and the counts read, in_held_out
    (the same story), near_held_out (a copy by ``similarity``), in_train, repeated and kept."""
    held_keys = {story_key(example) for example in held_out}
    held_words = [frozenset(key.split()) for key in held_keys] if similarity < 1 else []
    train_keys = {story_key(example) for example in train}
    counts = dict.fromkeys(("read", "in_held_out", "near_held_out", "in_train", "repeated", "kept"), 0)
    kept: list[Example] = []
    own: set[str] = set()
    for example in extra:
        key = story_key(example)
        counts["read"] += 1
        if key in held_keys:
            counts["in_held_out"] += 1
        elif held_words and near_copy(frozenset(key.split()), held_words, similarity):
            counts["near_held_out"] += 1
        elif key in train_keys:
            counts["in_train"] += 1
        elif key in own:
            counts["repeated"] += 1
        else:
            own.add(key)
            kept.append(example)
    counts["kept"] = len(kept)
    return kept, counts
