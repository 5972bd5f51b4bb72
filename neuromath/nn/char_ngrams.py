"""Character n-gram embeddings of source words (``model.char_ngrams``): the idea of fastText (Bojanowski et al. 2017,
"Enriching Word Vectors with Subword Information"), trained here with the model.

A word, lower-cased and marked at both ends (``<apples>``), is cut into its character n-grams of 3 to 5 characters
(``<ap``, ``app``, ..., ``les>``); each n-gram is hashed (CRC-32, the same in every process) into one of ``buckets``
rows, and the word's vector is the mean of those rows (which start at zero, so an n-gram never trained adds
nothing). Added to the word's own embedding, it gives a word the vocabulary does not know (``<unk>`` for the word
table) a vector from the n-grams it shares with training words ("watermelons" with "melons"). A model leans on the
n-grams where the word table cannot help it: with ``data.word_dropout``, training words are read as ``<unk>`` now
and then, while their n-grams stay. The words come from the batch (``source_words``: the tokens as the task wrote them),
so the tasks that carry them (word problems) can use it.
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
    """The n-gram embedding of ``model.char_ngrams`` buckets (None for 0); a task whose batches carry no words as
    written cannot have one."""
    if not buckets:
        return None
    if not carries_words:
        raise ConfigError("model.char_ngrams reads the source words as written, which only the word-problem tasks "
                          "carry; set it to 0 for this task")
    return CharNgramEmbedding(dim, buckets)
