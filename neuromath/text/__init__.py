"""Vocabularies and tokenizers: word and character tokens, and the token <-> id tables saved with every run. No
tasks, models or torch; task descriptions name their tokenizer from here."""

from neuromath.text.vocabulary import BOS, EOS, PAD, SPECIALS, UNK, Vocabulary, char_tokens, word_tokens

__all__ = ["BOS", "EOS", "PAD", "SPECIALS", "UNK", "Vocabulary", "char_tokens", "word_tokens"]
