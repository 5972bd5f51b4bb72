"""Vocabularies and tokenizers."""

from neuromath.text.vocabulary import BOS, EOS, PAD, SPECIALS, UNK, Vocabulary, char_tokens, word_tokens

__all__ = ["BOS", "EOS", "PAD", "SPECIALS", "UNK", "Vocabulary", "char_tokens", "word_tokens"]
