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
digits, numbers without digits, nesting deeper than ``MAX_DEPTH`` levels), so a malformed sequence is an
``ExpressionError`` that says which token is wrong and why; ``node_tokens`` writes a tree back. Both are iterative:
no input makes them raise ``RecursionError``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from neuromath.errors import ExpressionError
from neuromath.expr.numbers import MAX_NUMBER_DIGITS

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
FLATTENED = ("add", "mul")  # chains of these are one n-ary node in SymPy, one level of nesting
# Deepest nesting read (nesting_depth). SymPy recurses once per level in building, differentiating and printing an
# expression, several frames a level: sympy.diff of 140 nested sin exceeds Python's default recursion limit of 1000.
# 100 levels leave room for the caller's frames and are far beyond real data (Lample & Charton's expressions have at
# most 15 operators before differentiation and 512 tokens).
MAX_DEPTH = 100
T = TypeVar("T")


@dataclass(frozen=True)
class PrefixNode:
    """A checked prefix expression: ``token`` is an operator, a leaf, or ``"INT"`` with ``value`` set."""

    token: str
    children: tuple["PrefixNode", ...] = ()
    value: int | None = None

    def size(self) -> int:
        """Nodes in the tree (iterative, for any nesting)."""
        count, stack = 0, [self]
        while stack:
            current = stack.pop()
            count += 1
            stack.extend(current.children)
        return count


def check_prefix(tokens: Sequence[str]) -> PrefixNode:
    """Parse ``tokens`` into a ``PrefixNode`` tree or raise ``ExpressionError`` naming the position and the reason.

    The parse is iterative, so any nesting is read without a ``RecursionError``; an expression nested deeper than
    ``MAX_DEPTH`` levels (``nesting_depth``) is refused, because SymPy, which every check of an expression ends in,
    recurses once per level."""
    tokens = list(tokens)
    if not tokens:
        raise ExpressionError("empty expression")
    position = 0
    # Operators still waiting for operands: (token, operands needed, operands so far, depth below the root). The
    # depth counts a chain of add (or of mul) as one level, as SymPy flattens it (nesting_depth).
    open_operators: list[tuple[str, int, list[PrefixNode], int]] = []
    while True:
        if position >= len(tokens):
            raise ExpressionError(f"wrong arity: the {len(tokens)} tokens end before every operator has its operands")
        start, token = position, tokens[position]
        position += 1
        if token in ARITIES:
            depth = 0
            if open_operators:
                parent, _, _, parent_depth = open_operators[-1]
                depth = parent_depth if token == parent and token in FLATTENED else parent_depth + 1
            if depth >= MAX_DEPTH:
                raise ExpressionError(f"expression nested deeper than {MAX_DEPTH} levels (at position {start})")
            open_operators.append((token, ARITIES[token], [], depth))
            continue
        node = read_leaf(tokens, start)
        position = start + leaf_length(tokens, start)
        while open_operators:  # hand the finished subtree up, closing every operator it completes
            operator, needed, operands, _ = open_operators[-1]
            operands.append(node)
            if len(operands) < needed:
                break
            open_operators.pop()
            node = PrefixNode(operator, tuple(operands))
        if not open_operators:
            break
    if position != len(tokens):
        if tokens[position] in DIGIT_TOKENS:
            raise ExpressionError(
                f"stray digit {tokens[position]!r} at position {position}: digits only follow INT+ or INT-"
            )
        raise ExpressionError(
            f"{len(tokens) - position} extra token(s) from position {position} after a complete expression"
        )
    return node


def leaf_length(tokens: Sequence[str], start: int) -> int:
    """How many tokens the leaf at ``start`` takes: an integer's sign token and its digits, else one."""
    if tokens[start] not in NUMBER_STARTS:
        return 1
    end = start + 1
    while end < len(tokens) and tokens[end] in DIGIT_TOKENS:
        end += 1
    return end - start


def read_leaf(tokens: Sequence[str], start: int) -> PrefixNode:
    """The leaf (a name or an integer) at ``start``, or ``ExpressionError`` naming the position and the reason."""
    token = tokens[start]
    if token in NUMBER_STARTS:
        digits = tokens[start + 1:start + leaf_length(tokens, start)]
        if not digits:
            raise ExpressionError(f"{token} at position {start} has no digits")
        if len(digits) > 1 and digits[0] == "0":
            raise ExpressionError(f"the number at position {start} has a leading zero")
        if len(digits) > MAX_NUMBER_DIGITS:  # Python refuses int() of longer digit strings
            raise ExpressionError(f"the number at position {start} has more than {MAX_NUMBER_DIGITS} digits")
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


def nesting_depth(node: PrefixNode) -> int:
    """Levels of operators above the deepest leaf, a chain of ``add`` (or of ``mul``) counting as one level, as in
    SymPy, which flattens ``x + (y + z)`` into one sum (``check_prefix`` refuses more than ``MAX_DEPTH``)."""
    deepest = 0
    stack = [(node, 0)]
    while stack:
        current, depth = stack.pop()
        if current.children:
            deepest = max(deepest, depth + 1)
        for child in current.children:
            stack.append((child, depth if child.token == current.token and child.token in FLATTENED else depth + 1))
    return deepest


def integer_tokens(value: int) -> list[str]:
    return ["INT-" if value < 0 else "INT+", *str(abs(value))]


def node_tokens(node: PrefixNode) -> list[str]:
    """The prefix tokens of a ``PrefixNode`` tree (the inverse of ``check_prefix``); iterative, for any nesting."""
    out: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.token == "INT":
            out += integer_tokens(current.value)
        else:
            out.append(current.token)
            stack.extend(reversed(current.children))
    return out


def fold(node: PrefixNode, leaf: Callable[[PrefixNode], T], combine: Callable[[PrefixNode, list[T]], T]) -> T:
    """A tree's value built bottom-up: ``leaf(node)`` for each leaf (an ``INT`` included), ``combine(node, values of
    its children)`` for each operator. Iterative (a value stack in post-order), so any nesting or chain is folded
    without a ``RecursionError``."""
    values: list[T] = []
    stack: list[tuple[PrefixNode, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if not current.children:
            values.append(leaf(current))
        elif not expanded:
            stack.append((current, True))
            stack.extend((child, False) for child in reversed(current.children))
        else:
            args = values[-len(current.children):]
            del values[-len(current.children):]
            values.append(combine(current, args))
    return values[0]


def prefix_size(tokens: Sequence[str]) -> int:
    """The number of operators in a prefix sequence (its size in Lample & Charton's sense)."""
    return sum(token in ARITIES for token in tokens)
