"""Prefix notation of Lample & Charton (2020, "Deep learning for symbolic mathematics", section 2): the tokens,
checking a sequence, and its tree. No SymPy here (conversions both ways: ``neuromath.expr.sympy_bridge``).

A token sequence is one expression in prefix (Polish) notation:

* binary operators ``add sub mul div pow``; unary ``inv sqrt exp ln abs sign`` and the circular, hyperbolic and
  inverse functions ``sin cos tan cot sec csc asin acos atan acot asec acsc sinh cosh tanh coth sech csch asinh
  acosh atanh acoth asech acsch``; ``pow2 pow3 pow4 pow5`` are read (their files use them) but never written;
* integers digit by digit after a sign token: ``INT+ 1 6`` is 16, ``INT- 3`` is -3 (no leading zeros, no ``INT- 0``);
  a rational is ``div`` of two integers (``div INT- 1 INT+ 2`` is -1/2);
* leaves ``x`` (the variable), ``c`` (the constant of an ODE solution), ``Y``, ``Y'``, ``Y''`` (the unknown function
  of an ODE and its derivatives), and the constants ``pi``, ``E`` and ``I``.

``check_prefix`` parses a sequence into a ``PrefixNode`` tree and checks it on the way (arity, unknown tokens, stray
digits, numbers without digits), so a malformed sequence is an ``ExpressionError`` that says which token is wrong
and why; ``node_tokens`` writes a tree back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from neuromath.errors import ExpressionError

BINARY = ("add", "sub", "mul", "div", "pow")
FUNCTIONS = (
    "exp", "ln", "sqrt", "abs", "sign", "inv",
    "sin", "cos", "tan", "cot", "sec", "csc",
    "asin", "acos", "atan", "acot", "asec", "acsc",
    "sinh", "cosh", "tanh", "coth", "sech", "csch",
    "asinh", "acosh", "atanh", "acoth", "asech", "acsch",
)
READ_ONLY_UNARY = ("pow2", "pow3", "pow4", "pow5")
ARITIES: dict[str, int] = {**{op: 2 for op in BINARY}, **{op: 1 for op in FUNCTIONS + READ_ONLY_UNARY}}
NUMBER_STARTS = ("INT+", "INT-")
DIGIT_TOKENS = tuple("0123456789")
VARIABLE = "x"
CONSTANT = "c"  # the integration constant of an ODE solution
FUNCTION_LEAVES = ("Y", "Y'", "Y''")  # the unknown function of an ODE and its first two derivatives
CONSTANTS = ("pi", "E", "I")
LEAVES = (VARIABLE, CONSTANT) + FUNCTION_LEAVES + CONSTANTS


@dataclass(frozen=True)
class PrefixNode:
    """A checked prefix expression: ``token`` is an operator, a leaf, or ``"INT"`` with ``value`` set."""

    token: str
    children: tuple["PrefixNode", ...] = ()
    value: int | None = None

    def size(self) -> int:
        return 1 + sum(child.size() for child in self.children)


def check_prefix(tokens: Sequence[str]) -> PrefixNode:
    """Parse ``tokens`` into a ``PrefixNode`` tree or raise ``ExpressionError`` naming the position and the reason."""
    tokens = list(tokens)
    if not tokens:
        raise ExpressionError("empty expression")
    position = 0

    def parse() -> PrefixNode:
        nonlocal position
        if position >= len(tokens):
            raise ExpressionError(f"wrong arity: the {len(tokens)} tokens end before every operator has its operands")
        start, token = position, tokens[position]
        position += 1
        if token in ARITIES:
            return PrefixNode(token, tuple(parse() for _ in range(ARITIES[token])))
        if token in NUMBER_STARTS:
            digits = []
            while position < len(tokens) and tokens[position] in DIGIT_TOKENS:
                digits.append(tokens[position])
                position += 1
            if not digits:
                raise ExpressionError(f"{token} at position {start} has no digits")
            if len(digits) > 1 and digits[0] == "0":
                raise ExpressionError(f"the number at position {start} has a leading zero")
            value = int("".join(digits))
            if token == "INT-":
                if value == 0:
                    raise ExpressionError(f"INT- 0 at position {start}: zero is written INT+ 0")
                value = -value
            return PrefixNode("INT", (), value)
        if token in DIGIT_TOKENS:
            raise ExpressionError(f"stray digit {token!r} at position {start}: digits only follow INT+ or INT-")
        if token in LEAVES:
            return PrefixNode(token)
        raise ExpressionError(f"unknown token {token!r} at position {start}")

    tree = parse()
    if position != len(tokens):
        if tokens[position] in DIGIT_TOKENS:
            raise ExpressionError(
                f"stray digit {tokens[position]!r} at position {position}: digits only follow INT+ or INT-"
            )
        raise ExpressionError(
            f"{len(tokens) - position} extra token(s) from position {position} after a complete expression"
        )
    return tree


def integer_tokens(value: int) -> list[str]:
    return ["INT-" if value < 0 else "INT+", *str(abs(value))]


def node_tokens(node: PrefixNode) -> list[str]:
    """The prefix tokens of a ``PrefixNode`` tree (the inverse of ``check_prefix``)."""
    if node.token == "INT":
        return integer_tokens(node.value)
    out = [node.token]
    for child in node.children:
        out += node_tokens(child)
    return out


def prefix_size(tokens: Sequence[str]) -> int:
    """The number of operators in a prefix sequence (its size in Lample & Charton's sense)."""
    return sum(token in ARITIES for token in tokens)
