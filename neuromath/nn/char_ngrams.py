"""Character n-gram embeddings of source words (``model.char_ngrams``): the idea of fastText (Bojanowski et al. 2017,
"Enriching Word Vectors with Subword Information"), trained here with the model.

A word, lower-cased and marked (``<apples>``), is cut into its 3- to 5-character n-grams (``<ap``, ``app``, ...,
``les>``), each hashed (CRC-32, stable across processes) into one of ``buckets`` rows; the word's vector is their
mean (rows start at zero, so an untrained n-gram adds nothing). Added to the word embedding, it gives an unknown
word a vector from n-grams shared with training words ("watermelons", "melons"); ``data.word_dropout`` teaches the
model to lean on it. Words come from the batch's ``source_words``, so only tasks that carry them (word problems)
can use it.
"""

from __future__ import annotations

import zlib

from neuromath.errors import ConfigError
from neuromath.nn.word_bags import WordBag

MIN_N, MAX_N = 3, 5


def char_ngrams(word: str, min_n: int = MIN_N, max_n: int = MAX_N) -> list[str]:
    """The character n-grams of ``word`` lower-cased between ``<`` and ``>``; a marked word shorter than ``min_n``
    characters is its own one n-gram."""
    marked = f"<{word.lower()}>"
    grams = [marked[start:start + n] for n in range(min_n, max_n + 1) for start in range(len(marked) - n + 1)]
    return grams or [marked]


class CharNgramEmbedding(WordBag):
    """The mean embedding of each source word's hashed character n-grams, (B, S, dim) for a batch's words."""

    def __init__(self, dim: int, buckets: int):
        super().__init__(buckets, dim)
        self.buckets = buckets

    def word_rows(self, word: str) -> list[int]:
        return [zlib.crc32(gram.encode("utf-8")) % self.buckets for gram in char_ngrams(word)]


def build_char_ngrams(buckets: int, dim: int, carries_words: bool) -> CharNgramEmbedding | None:
    """The n-gram embedding with ``model.char_ngrams`` buckets (None for 0); needs batches that carry raw words."""
    if not buckets:
        return None
    if not carries_words:
        raise ConfigError("model.char_ngrams reads the source words as written, which only the word-problem tasks "
                          "carry; set it to 0 for this task")
    return CharNgramEmbedding(dim, buckets)
