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
from typing import Sequence

import torch
from torch import nn

from neuromath.errors import ConfigError

MIN_N, MAX_N = 3, 5


def char_ngrams(word: str, min_n: int = MIN_N, max_n: int = MAX_N) -> list[str]:
    """The character n-grams of ``word`` lower-cased between ``<`` and ``>``; a marked word shorter than ``min_n``
    characters is its own one n-gram."""
    marked = f"<{word.lower()}>"
    grams = [marked[start:start + n] for n in range(min_n, max_n + 1) for start in range(len(marked) - n + 1)]
    return grams or [marked]


class CharNgramEmbedding(nn.Module):
    """The mean embedding of each source word's hashed character n-grams, (B, S, dim) for a batch's words; the
    positions after a row's words (end of sequence, padding) get zeros."""

    def __init__(self, dim: int, buckets: int):
        super().__init__()
        self.buckets = buckets
        self.bag = nn.EmbeddingBag(buckets, dim, mode="mean")
        self._rows: dict[str, list[int]] = {}  # word -> its n-grams' rows, computed once per word
        self.init_parameters()

    def init_parameters(self) -> None:
        """Zeros: an n-gram that training never meets adds nothing to a word, rather than noise (the models'
        own initialisation calls this after theirs)."""
        nn.init.zeros_(self.bag.weight)

    def rows_of(self, word: str) -> list[int]:
        rows = self._rows.get(word)
        if rows is None:
            rows = [zlib.crc32(gram.encode("utf-8")) % self.buckets for gram in char_ngrams(word)]
            if len(self._rows) < 1_000_000:  # a bound on the cache, whatever a served model is sent
                self._rows[word] = rows
        return rows

    def forward(self, words: Sequence[Sequence[str]], length: int) -> torch.Tensor:
        indices: list[int] = []
        offsets: list[int] = []
        for row in words:
            for position in range(length):
                offsets.append(len(indices))
                if position < len(row):
                    indices.extend(self.rows_of(row[position]))
        device = self.bag.weight.device
        bags = self.bag(torch.tensor(indices, dtype=torch.long, device=device),
                        torch.tensor(offsets, dtype=torch.long, device=device))  # (B * S, dim); empty bags: zeros
        return bags.view(len(words), length, -1)


def build_char_ngrams(buckets: int, dim: int, carries_words: bool) -> CharNgramEmbedding | None:
    """The n-gram embedding of ``model.char_ngrams`` buckets (None for 0); a task whose batches carry no words as
    written cannot have one."""
    if not buckets:
        return None
    if not carries_words:
        raise ConfigError("model.char_ngrams reads the source words as written, which only the word-problem tasks "
                          "carry; set it to 0 for this task")
    return CharNgramEmbedding(dim, buckets)


def with_word_parts(embedded: torch.Tensor, parts: Sequence[nn.Module | None], batch: dict) -> torch.Tensor:
    """``embedded`` (B, S, dim), the source's word embeddings, plus each of ``parts`` that is not None: the words'
    n-gram embeddings (``model.char_ngrams``), their subword pieces' (``model.subwords``, neuromath.nn.subwords)."""
    for part in parts:
        if part is not None:
            embedded = embedded + part(batch["source_words"].rows, embedded.shape[1])
    return embedded
