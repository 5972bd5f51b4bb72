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
    return sift(test, [("in_train", seen, set(), 1.0), ("near_train", set(), seen, similarity)])


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
    held = {story_key(example) for example in held_out}
    trained = {story_key(example) for example in train}
    return sift(extra, [("in_held_out", held, set(), 1.0), ("near_held_out", set(), held, similarity),
                        ("in_train", trained, set(), 1.0)])


def sift(examples: Sequence[Example],
         rules: Sequence[tuple[str, set[str], set[str], float]]) -> tuple[list[Example], dict[str, int]]:
    """The problems of ``examples`` that no rule leaves out, each story once, and the counts: read, one per rule,
    repeated, kept. A rule ``(name, stories, near, similarity)`` leaves out a problem whose story is in ``stories``,
    or (``similarity`` below 1) whose story's word set shares at least ``similarity`` with one of ``near``'s; the
    first rule that applies counts it."""
    near_words = [[frozenset(key.split()) for key in near] if similarity < 1 else []
                  for _, _, near, similarity in rules]
    counts = {"read": len(examples), **{name: 0 for name, *_ in rules}, "repeated": 0}
    kept: list[Example] = []
    own: set[str] = set()
    for example in examples:
        key = story_key(example)
        rule = next((name for (name, stories, _, similarity), words in zip(rules, near_words)
                     if key in stories or (words and near_copy(frozenset(key.split()), words, similarity))), None)
        if rule is not None:
            counts[rule] += 1
        elif key in own:
            counts["repeated"] += 1
        else:
            own.add(key)
            kept.append(example)
    counts["kept"] = len(kept)
    return kept, counts
