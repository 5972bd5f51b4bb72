"""Problems a training set has not seen (``neuromath data unseen``): another corpus's test set less the stories also
in training, to measure transfer. The same rule keeps held-out problems out of ``data.train_extra``.

Two problems are the same story when their masked texts agree lower-cased and reduced to letters (numbers,
punctuation, spacing ignored): a copy with changed numbers is left out, a story differing by one word is kept.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from neuromath.tasks.word_problems.records import Example

NOT_LETTERS = re.compile(r"[^\w]+|[\d_]+")


def story_key(example: Example) -> str:
    """``example``'s masked-text words, lower-cased, without digits, punctuation or mask numbers."""
    return " ".join(NOT_LETTERS.sub(" ", example.masked_text.lower()).split())


def unseen(test: Sequence[Example], train: Iterable[Example],
           similarity: float = 1.0) -> tuple[list[Example], dict[str, int]]:
    """``test`` problems whose story is not in ``train``, each story once (first kept), and counts: read, in_train,
    near_train (``similarity`` < 1: word-set Jaccard at least ``similarity`` with a training story), repeated
    (within ``test``), kept."""
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
    """``extra`` problems (``data.train_extra``) that may join training: each story once, none a training or held-out
    story. Corpora share problems with a name or word edited, so with ``similarity`` < 1 a word-set Jaccard match
    with a held-out story is a copy too. Returns them and counts: read, in_held_out, near_held_out, in_train,
    repeated, kept."""
    held = {story_key(example) for example in held_out}
    trained = {story_key(example) for example in train}
    return sift(extra, [("in_held_out", held, set(), 1.0), ("near_held_out", set(), held, similarity),
                        ("in_train", trained, set(), 1.0)])


def sift(examples: Sequence[Example],
         rules: Sequence[tuple[str, set[str], set[str], float]]) -> tuple[list[Example], dict[str, int]]:
    """``examples`` no rule leaves out, each story once, and counts: read, one per rule, repeated, kept. A rule
    ``(name, stories, near, similarity)`` leaves out a story in ``stories`` or (``similarity`` < 1) a near copy of
    one in ``near``; the first matching rule counts it."""
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
