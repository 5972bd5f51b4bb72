"""Retrieval baselines for word problems (the Jaccard and cosine rows of Li et al. 2019, Table 2, after Robaidek et
al. 2018): answer a test problem with the equation template of its most similar training problem, filled with the
test problem's own numbers.

A template is a training equation over the masked number tokens ``n0``, ``n1``, ... (``Example.equation``); filling
it with another problem's numbers is what ``word_problems.is_correct`` does when it evaluates those tokens with the
test example's numbers. Problems are compared on their masked text's word tokens, number tokens excluded:

- ``jaccard``: |A ∩ B| / |A ∪ B| over the sets of words;
- ``cosine``: the cosine of TF-IDF weighted bag-of-words vectors (idf = log((1 + N) / (1 + df)) + 1 over the N
  training problems).

Ties go to the earliest training problem, so a run is deterministic.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

from neuromath.config.models import model_names
from neuromath.config.rules import RETRIEVAL
from neuromath.errors import ConfigError
from neuromath.tasks.word_problems import MASK_REGEX, Example
from neuromath.text import word_tokens


def problem_words(example: Example) -> list[str]:
    return [token for token in word_tokens(example.masked_text) if not MASK_REGEX.fullmatch(token)]


def retrieval_baseline(config) -> "RetrievalBaseline":
    """The baseline of the model ``config.name`` (its similarity), not yet fitted."""
    return RetrievalBaseline(config.name)


class RetrievalBaseline:
    """``fit(train)`` then ``predict(example) -> equation tokens`` (the nearest training problem's template)."""

    def __init__(self, similarity: str = "jaccard"):
        known = model_names(RETRIEVAL)  # each similarity is a model of kind retrieval (neuromath.config.models)
        if similarity not in known:
            raise ConfigError(f"retrieval similarity must be one of {', '.join(known)}, not {similarity!r}")
        self.similarity = similarity
        self.train: list[Example] = []

    def fit(self, train: Sequence[Example]) -> "RetrievalBaseline":
        if not train:
            raise ConfigError("a retrieval baseline needs at least one training problem")
        self.train = list(train)
        words = [problem_words(example) for example in self.train]
        self.sets = [set(w) for w in words]
        document_frequency = Counter(word for word_set in self.sets for word in word_set)
        n = len(self.train)
        self.idf = {word: math.log((1 + n) / (1 + df)) + 1 for word, df in document_frequency.items()}
        self.vectors = [self.tfidf(w) for w in words]
        return self

    def tfidf(self, words: list[str]) -> dict[str, float]:
        counts = Counter(words)
        vector = {word: count * self.idf.get(word, 0.0) for word, count in counts.items()}
        norm = math.sqrt(sum(v * v for v in vector.values()))
        return {word: v / norm for word, v in vector.items()} if norm else {}

    def scores(self, example: Example) -> list[float]:
        """Similarity of ``example`` to every training problem, in training order."""
        words = problem_words(example)
        if self.similarity == "jaccard":
            query = set(words)
            return [len(query & other) / len(query | other) if query | other else 0.0 for other in self.sets]
        vector = self.tfidf(words)
        return [sum(weight * other.get(word, 0.0) for word, weight in vector.items()) for other in self.vectors]

    def nearest(self, example: Example) -> Example:
        scores = self.scores(example)
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))  # ties: the earliest problem
        return self.train[best]

    def predict(self, example: Example) -> tuple[str, ...]:
        return self.nearest(example).equation
