"""Subword pieces of source words (``model.subwords``): byte-pair encoding (Sennrich et al. 2016, "Neural Machine
Translation of Rare Words with Subword Units") learned from the run's own source vocabulary, its pieces' embeddings
trained with the model.

The merges are learned from the word types of the source vocabulary (the tokens that hold a letter, lower-cased and
marked at both ends: ``<apples>``), each type counted once: starting from characters, the most frequent adjacent
pair of symbols becomes one symbol, up to ``merges`` times (or until no pair occurs twice). The vocabulary is saved
with every run, so a loaded run learns the same merges again and needs no file of its own. A word, seen or not, is
cut into pieces by applying the merges in the order they were learned; its vector is the mean of its pieces'
embeddings (rows start at zero, so a piece never trained adds nothing; a character no training word has is left
out). Added to the word's own embedding, it gives a word the vocabulary lacks (``<unk>`` for the word table) a vector
from the pieces it shares with training words ("watermelons": ``<water``, ``mel``, ``ons>``). Where
``model.char_ngrams`` hashes every overlapping 3- to 5-gram, this cuts each word into few pieces the training words
share; ``data.word_dropout`` teaches a model to read a word from its pieces, as it does for the n-grams.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable, Sequence

from neuromath.errors import ConfigError
from neuromath.nn.word_bags import WordBag
from neuromath.text.vocabulary import SPECIALS

Pair = tuple[str, str]


def symbols_of(word: str) -> list[str]:
    """The starting symbols of ``word``: its lower-cased characters between ``<`` and ``>``."""
    return ["<", *word.lower(), ">"]


def has_letter(token: str) -> bool:
    """Whether ``token`` is a word to cut into pieces: it holds a letter and no digit (not a number, a number mask
    such as ``n0``, or punctuation), and is not one of the vocabulary's specials (``<unk>``, ...)."""
    return (token not in SPECIALS and any(character.isalpha() for character in token)
            and not any(character.isdigit() for character in token))


def learn_merges(words: Iterable[str], merges: int) -> list[Pair]:
    """Up to ``merges`` merges, in the order learned, from the distinct lower-cased ``words`` that hold a letter;
    ties between equally frequent pairs go to the pair that sorts first, so the merges depend on the words alone."""
    spelled = [symbols_of(word) for word in sorted({word.lower() for word in words if has_letter(word)})]
    counts: Counter[Pair] = Counter()
    holders: dict[Pair, set[int]] = defaultdict(set)  # pair -> the words that hold it
    for index, symbols in enumerate(spelled):
        for pair in zip(symbols, symbols[1:]):
            counts[pair] += 1
            holders[pair].add(index)
    learned: list[Pair] = []
    while len(learned) < merges and counts:
        best = min(counts, key=lambda pair: (-counts[pair], pair))
        if counts[best] < 2:
            break
        learned.append(best)
        for index in sorted(holders.pop(best)):
            old = spelled[index]
            for pair in zip(old, old[1:]):
                counts[pair] -= 1
                if counts[pair] <= 0:
                    del counts[pair]
            new = merge_pair(old, best)
            spelled[index] = new
            for pair in zip(new, new[1:]):
                counts[pair] += 1
                holders[pair].add(index)
    return learned


def merge_pair(symbols: Sequence[str], pair: Pair) -> list[str]:
    """``symbols`` with every occurrence of ``pair``, left to right, made one symbol."""
    merged: list[str] = []
    position = 0
    while position < len(symbols):
        if position + 1 < len(symbols) and (symbols[position], symbols[position + 1]) == pair:
            merged.append(symbols[position] + symbols[position + 1])
            position += 2
        else:
            merged.append(symbols[position])
            position += 1
    return merged


def segment(word: str, ranks: dict[Pair, int]) -> list[str]:
    """The pieces of ``word``: the merges of ``ranks`` (pair -> order learned) applied, earliest first."""
    symbols = symbols_of(word)
    while len(symbols) > 1:
        pairs = [pair for pair in zip(symbols, symbols[1:]) if pair in ranks]
        if not pairs:
            break
        symbols = merge_pair(symbols, min(pairs, key=ranks.__getitem__))
    return symbols


class SubwordEmbedding(WordBag):
    """The mean embedding of each source word's pieces, (B, S, dim) for a batch's words; a token that is no word
    (``has_letter``: numbers, masks, punctuation) has no pieces."""

    def __init__(self, dim: int, words: Iterable[str], merges: int):
        words = [word for word in words if has_letter(word)]
        learned = learn_merges(words, merges)
        pieces = sorted({symbol for word in words for symbol in symbols_of(word)} | {a + b for a, b in learned})
        super().__init__(len(pieces), dim)
        self.merges = learned
        self.ranks = {pair: rank for rank, pair in enumerate(learned)}
        self.piece_index = {piece: row for row, piece in enumerate(pieces)}

    def pieces_of(self, word: str) -> list[str]:
        return segment(word, self.ranks) if has_letter(word) else []

    def word_rows(self, word: str) -> list[int]:
        """The rows of the word's pieces; a character no training word has is left out."""
        return [self.piece_index[piece] for piece in self.pieces_of(word) if piece in self.piece_index]


def build_subwords(merges: int, dim: int, inputs) -> SubwordEmbedding | None:
    """The piece embedding of ``model.subwords`` merges learned from ``inputs.source_tokens`` (None for 0); a task
    whose batches carry no words as written cannot have one."""
    if not merges:
        return None
    if not inputs.source_words or inputs.source_tokens is None:
        raise ConfigError("model.subwords reads the source words as written, which only the word-problem tasks "
                          "carry; set it to 0 for this task")
    return SubwordEmbedding(dim, inputs.source_tokens, merges)
