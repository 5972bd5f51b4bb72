"""What the word-problem encoders add to each source word's embedding from the word as written: the mean embedding of
a bag of rows per word (its character n-grams, ``neuromath.nn.char_ngrams``; its subword pieces,
``neuromath.nn.subwords``). A subclass says which rows a word has (``word_rows``); this class caches them per word and
embeds a batch's words."""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn


class WordBag(nn.Module):
    """The mean of each source word's rows of one table, (B, S, dim) for a batch's words; a word without rows and the
    positions after a row's words (end of sequence, padding) get zeros. The rows start at zero: a row training never
    meets adds nothing to a word."""

    def __init__(self, rows: int, dim: int):
        super().__init__()
        self.bag = nn.EmbeddingBag(rows, dim, mode="mean")
        self._rows: dict[str, list[int]] = {}  # word -> its rows, computed once per word
        self.init_parameters()

    def init_parameters(self) -> None:
        """Zeros (the models' own initialisation calls this after theirs)."""
        nn.init.zeros_(self.bag.weight)

    def word_rows(self, word: str) -> list[int]:
        raise NotImplementedError

    def rows_of(self, word: str) -> list[int]:
        rows = self._rows.get(word)
        if rows is None:
            rows = self.word_rows(word)
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


def with_word_parts(embedded: torch.Tensor, parts: Sequence[WordBag | None], batch: dict) -> torch.Tensor:
    """``embedded`` (B, S, dim), the source's word embeddings, plus each of ``parts`` that is not None: the words'
    n-gram embeddings (``model.char_ngrams``), their subword pieces' (``model.subwords``)."""
    for part in parts:
        if part is not None:
            embedded = embedded + part(batch["source_words"].rows, embedded.shape[1])
    return embedded
