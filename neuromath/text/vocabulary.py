"""Word- and character-level vocabularies with pad / bos / eos / unk, saved with each run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from neuromath.errors import DataFormatError
from neuromath.fileio import write_text_atomic
from neuromath.safe_read import VOCABULARY_LIMIT, load_json, read_run_file

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)


def word_tokens(text: str, lowercase: bool = True) -> list[str]:
    """Split already-spaced text (e.g. an Example's masked text) into word tokens, lower-cased unless ``lowercase``
    is False."""
    return (text.lower() if lowercase else text).split()


def char_tokens(text: str) -> list[str]:
    return list(text)


class Vocabulary:
    """A fixed token <-> id table. Ids 0-3 are always pad, bos, eos, unk."""

    pad_id, bos_id, eos_id, unk_id = 0, 1, 2, 3

    def __init__(self, tokens: Iterable[str], level: str = "word"):
        if level not in ("word", "char"):
            raise ValueError(f"level must be 'word' or 'char', got {level!r}")
        self.level = level
        self.tokens: list[str] = list(SPECIALS)
        for token in tokens:
            if token not in SPECIALS:
                self.tokens.append(token)
        self.index = {token: i for i, token in enumerate(self.tokens)}
        if len(self.index) != len(self.tokens):
            raise ValueError("vocabulary tokens must be unique")

    @classmethod
    def build(cls, texts: Iterable[Sequence[str]], level: str = "word", min_count: int = 1,
              reserved: Iterable[str] = ()) -> "Vocabulary":
        """Build from token sequences: the tokens seen at least ``min_count`` times, ordered by frequency, then
        alphabetically. ``reserved`` tokens are always kept: those seen (however rarely) take their place by
        frequency, those never seen follow in the order given."""
        counts = Counter(token for tokens in texts for token in tokens)
        reserved = list(dict.fromkeys(reserved))
        always = set(reserved)
        kept = sorted((t for t, c in counts.items() if c >= min_count or t in always), key=lambda t: (-counts[t], t))
        unseen = [token for token in reserved if token not in counts]
        return cls(kept + unseen, level=level)

    def __len__(self) -> int:
        return len(self.tokens)

    def __contains__(self, token: str) -> bool:
        return token in self.index

    def encode(self, tokens: Sequence[str], add_bos: bool = False, add_eos: bool = False) -> list[int]:
        ids = [self.index.get(token, self.unk_id) for token in tokens]
        if add_bos:
            ids.insert(0, self.bos_id)
        if add_eos:
            ids.append(self.eos_id)
        return ids

    def count_unknown(self, tokens: Sequence[str]) -> int:
        return sum(token not in self.index for token in tokens)

    def decode(self, ids: Iterable[int], strip_specials: bool = True) -> list[str]:
        """Map ids back to tokens; stops at eos and drops pad/bos when ``strip_specials``."""
        tokens = []
        for i in ids:
            i = int(i)
            if strip_specials:
                if i == self.eos_id:
                    break
                if i in (self.pad_id, self.bos_id):
                    continue
            tokens.append(self.tokens[i] if 0 <= i < len(self.tokens) else UNK)
        return tokens

    def save(self, path: str | Path) -> None:
        write_text_atomic(path, json.dumps({"level": self.level, "tokens": self.tokens}, ensure_ascii=False, indent=0))

    @classmethod
    def load(cls, path: str | Path) -> "Vocabulary":
        """The vocabulary saved at ``path``: a regular file of at most ``VOCABULARY_LIMIT`` bytes (a FIFO, a device or
        a larger file is refused unread) holding what ``save`` writes; anything else is a DataFormatError."""
        path = Path(path)
        data = read_run_file(path, VOCABULARY_LIMIT, "vocabulary")
        try:
            data = load_json(data, path)  # nested too deep: a DataFormatError naming the file
            tokens, level = data["tokens"], data["level"]
        except RecursionError:
            raise DataFormatError(path, None, "not a vocabulary file (JSON nested too deeply)") from None
        except (ValueError, KeyError, TypeError) as error:
            raise DataFormatError(path, None, f"not a vocabulary file ({error})") from None
        if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
            raise DataFormatError(path, None, "not a vocabulary file (tokens must be a list of strings)")
        if level not in ("word", "char"):
            raise DataFormatError(path, None, f"not a vocabulary file (level must be 'word' or 'char', not {level!r})")
        if tokens[: len(SPECIALS)] != list(SPECIALS):
            raise DataFormatError(path, None, "vocabulary does not start with the special tokens")
        if len(set(tokens)) != len(tokens):
            raise DataFormatError(path, None, "not a vocabulary file (a token is listed twice)")
        return cls(tokens[len(SPECIALS):], level=level)
