"""Token grammars of expressions written in prefix or postfix notation (no torch).

A ``TreeGrammar`` says which tokens are operators and how many children each takes; every other
token is a leaf. Numbers written digit by digit after a sign token (Lample & Charton's
``INT+ 1 6`` for 16) are described by ``number_starts`` and ``digits``: a digit that follows a
number start or another digit continues that number instead of filling a new slot of the tree.
Tree positional encodings, tree relative attention and grammar-constrained decoding all read
token sequences through this one description, turned into per-id tables by ``token_classes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from neuromath.expr import symbolic_prefix
from neuromath.expr.tree import ARITY

DIGITS = frozenset("0123456789")


@dataclass(frozen=True)
class TokenClasses:
    """Per-id tables for one vocabulary: ``arity[i]`` (0 for leaves), ``number_start[i]``, ``digit[i]``."""

    arity: tuple[int, ...]
    number_start: tuple[bool, ...]
    digit: tuple[bool, ...]
    notation: str


@dataclass(frozen=True)
class TreeGrammar:
    arities: Mapping[str, int]  # operator token -> number of children (>= 1); others are leaves
    notation: str = "prefix"  # or "postfix"
    number_starts: frozenset[str] = frozenset()  # tokens that begin a digit run, e.g. INT+ INT-
    digits: frozenset[str] = field(default=DIGITS)

    def __post_init__(self):
        if self.notation not in ("prefix", "postfix"):
            raise ValueError(f"notation must be prefix or postfix, not {self.notation!r}")
        bad = {token: n for token, n in self.arities.items() if not isinstance(n, int) or n < 1}
        if bad:
            raise ValueError(f"operator arities must be integers >= 1: {bad}")

    def arity(self, token: str) -> int:
        return self.arities.get(token, 0)

    def token_classes(self, tokens: Sequence[str]) -> TokenClasses:
        """Tables indexed by token id, for a vocabulary whose id ``i`` is ``tokens[i]``."""
        return TokenClasses(
            arity=tuple(self.arity(token) for token in tokens),
            number_start=tuple(token in self.number_starts for token in tokens),
            digit=tuple(bool(self.number_starts) and token in self.digits for token in tokens),
            notation=self.notation,
        )


# The equations of the word-problem task: prefix over + - * / ^ and unary neg; numbers are whole tokens.
WORD_PROBLEM_GRAMMAR = TreeGrammar(arities=dict(ARITY), notation="prefix")


# Lample & Charton's prefix expressions of the symbolic task: integers are a sign token followed by digits.
SYMBOLIC_GRAMMAR = TreeGrammar(
    arities=dict(symbolic_prefix.ARITIES), notation="prefix", number_starts=frozenset(symbolic_prefix.NUMBER_STARTS)
)
