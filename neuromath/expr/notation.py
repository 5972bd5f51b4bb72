"""Infix, prefix and postfix notation for expression trees: parsing and formatting.

Infix grammar, loosest first (``-`` ``/`` are left-associative, ``^`` right-associative)::

    sum     := product (("+" | "-") product)*
    product := unary (("*" | "/") unary)*
    unary   := ("-" | "+") unary | power          -x^2 is neg(x^2); 2*-3 is allowed
    power   := primary ("^" unary)?               2^-3^2 is 2^(neg(3^2))
    primary := number | identifier | "(" sum ")"

``×`` ``÷`` ``−`` and ``**`` are read as ``*`` ``/`` ``-`` ``^``; ``[ ]``, ``{ }`` and ``（ ）`` are
parentheses. A leaf is a number literal kept as written (``(2/5)`` without spaces is one literal)
or an identifier such as ``x``, ``n0``, ``pi``; ``neg`` is reserved for unary minus.
Prefix and postfix notation are token lists whose operator tokens are ``+ - * / ^`` and ``neg``;
every other token is a leaf. Trees read in any notation are at most ``MAX_DEPTH`` (100) levels deep; deeper
input is an ExpressionError rather than a RecursionError further on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from neuromath.errors import ExpressionError
from neuromath.expr.numbers import NUMBER_REGEX, is_number, shorten
from neuromath.expr.tree import ARITY, MAX_DEPTH, Node, check_arity, check_depth

_IDENTIFIER_REGEX = re.compile(r"[^\W\d]\w*")
_OPERATOR_SPELLINGS = {"**": "^", "+": "+", "-": "-", "−": "-", "*": "*", "×": "*", "/": "/", "÷": "/", "^": "^"}
_OPENING_BRACKETS = {"(": ")", "（": ")", "[": "]", "{": "}"}
_CLOSING_BRACKETS = {")": ")", "）": ")", "]": "]", "}": "}"}  # spelling -> canonical closing bracket

# Binding strength in infix; a leaf binds tightest.
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "^": 4}
_LEAF_PRECEDENCE = 5


@dataclass(frozen=True)
class _Token:
    kind: str  # "number", "identifier", "operator", "open" or "close"
    text: str  # as written, except operators, which are canonical
    position: int


class _InfixParser:
    """Recursive-descent parser for the grammar in the module docstring."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = self.tokenize()
        self.index = 0
        self.nesting = 0  # how many parse_unary calls are open: brackets, signs and exponents each add one

    def error(self, reason: str, position: int) -> ExpressionError:
        return ExpressionError(f"cannot parse {shorten(self.text, 60)!r} at position {position}: {reason}")

    def tokenize(self) -> list[_Token]:
        tokens = []
        position = 0
        while position < len(self.text):
            char = self.text[position]
            if char.isspace():
                position += 1
                continue
            match = NUMBER_REGEX.match(self.text, position)
            kind = "number"
            if match is None:
                match = _IDENTIFIER_REGEX.match(self.text, position)
                kind = "identifier"
            if match is not None:
                tokens.append(_Token(kind, match.group(), position))
                position = match.end()
            elif self.text.startswith("**", position):
                tokens.append(_Token("operator", "^", position))
                position += 2
            elif char in _OPERATOR_SPELLINGS:
                tokens.append(_Token("operator", _OPERATOR_SPELLINGS[char], position))
                position += 1
            elif char in _OPENING_BRACKETS or char in _CLOSING_BRACKETS:
                tokens.append(_Token("open" if char in _OPENING_BRACKETS else "close", char, position))
                position += 1
            else:
                raise self.error(f"unknown character {char!r}", position)
        return tokens

    def peek_operator(self, operators: str) -> str | None:
        """The next token's operator if it is one of ``operators``, else None."""
        if self.index < len(self.tokens):
            token = self.tokens[self.index]
            if token.kind == "operator" and token.text in operators:
                return token.text
        return None

    def parse(self) -> Node:
        if not self.tokens:
            raise self.error("empty expression", 0)
        tree = self.parse_sum()
        if self.index < len(self.tokens):
            token = self.tokens[self.index]
            if token.kind == "close":
                raise self.error(f"unmatched {token.text!r}", token.position)
            raise self.error(f"missing operator before {token.text!r}", token.position)
        return tree

    def parse_sum(self) -> Node:
        tree = self.parse_product()
        while operator := self.peek_operator("+-"):
            self.index += 1
            tree = Node(operator, (tree, self.parse_product()))
        return tree

    def parse_product(self) -> Node:
        tree = self.parse_unary()
        while operator := self.peek_operator("*/"):
            self.index += 1
            tree = Node(operator, (tree, self.parse_unary()))
        return tree

    def parse_unary(self) -> Node:
        if self.nesting >= MAX_DEPTH:
            position = self.tokens[self.index].position if self.index < len(self.tokens) else len(self.text)
            raise self.error(f"expression nested too deeply (more than {MAX_DEPTH} levels)", position)
        self.nesting += 1
        operator = self.peek_operator("+-")
        if operator is None:
            tree = self.parse_power()
        else:
            self.index += 1
            operand = self.parse_unary()
            tree = Node("neg", (operand,)) if operator == "-" else operand
        self.nesting -= 1
        return tree

    def parse_power(self) -> Node:
        base = self.parse_primary()
        if self.peek_operator("^"):
            self.index += 1
            return Node("^", (base, self.parse_unary()))
        return base

    def parse_primary(self) -> Node:
        if self.index == len(self.tokens):
            raise self.error("incomplete expression: a number, identifier or '(' is missing at the end", len(self.text))
        token = self.tokens[self.index]
        self.index += 1
        if token.kind == "number":
            return Node(token.text)
        if token.kind == "identifier":
            if token.text in ARITY:
                raise self.error(f"{token.text!r} is reserved for an operator, not a name", token.position)
            return Node(token.text)
        if token.kind == "open":
            inner = self.parse_sum()
            self.expect_closing(token)
            return inner
        if token.kind == "operator":
            raise self.error(f"stray operator {token.text!r}", token.position)
        raise self.error(f"expected a number, identifier or '(' but found {token.text!r}", token.position)

    def expect_closing(self, opening: _Token) -> None:
        if self.index == len(self.tokens):
            raise self.error(f"unclosed {opening.text!r}", opening.position)
        token = self.tokens[self.index]
        if token.kind != "close":
            raise self.error(f"missing operator before {token.text!r}", token.position)
        if _CLOSING_BRACKETS[token.text] != _OPENING_BRACKETS[opening.text]:
            raise self.error(
                f"{token.text!r} does not match the {opening.text!r} at position {opening.position}", token.position
            )
        self.index += 1


def parse_infix(text: str) -> Node:
    """Parse an infix expression such as ``"3 * (2.5 - x) ^ 2"``; positions in errors count from 0."""
    try:
        tree = _InfixParser(text).parse()
    except RecursionError:
        raise ExpressionError(f"cannot parse {shorten(text, 60)!r}: expression nested too deeply") from None
    check_depth(tree)  # a long chain such as 1+1+...+1 is deep without nesting
    return tree


def _format_with_precedence(node: Node) -> tuple[str, int]:
    check_arity(node)
    if node.is_leaf:
        if not (is_number(node.value) or _IDENTIFIER_REGEX.fullmatch(node.value)):
            raise ExpressionError(f"leaf {node.value!r} is neither a number literal nor an identifier")
        return node.value, _LEAF_PRECEDENCE
    precedence = _PRECEDENCE[node.value]
    if node.value == "neg":
        return "-" + _format_operand(node.children[0], precedence), precedence
    if node.value == "^":
        # The base must bind tighter than ^; the exponent may itself be a power or a unary minus.
        left_minimum, right_minimum = _LEAF_PRECEDENCE, _PRECEDENCE["neg"]
    else:
        # Left-associative: a right operand of equal precedence needs parentheses.
        left_minimum, right_minimum = precedence, precedence + 1
    left, right = node.children
    return (
        f"{_format_operand(left, left_minimum)} {node.value} {_format_operand(right, right_minimum)}",
        precedence,
    )


def _format_operand(node: Node, minimum_precedence: int) -> str:
    text, precedence = _format_with_precedence(node)
    return f"({text})" if precedence < minimum_precedence else text


def format_infix(node: Node) -> str:
    """Write a tree in infix with single spaces around binary operators and only the parentheses
    needed, so that ``parse_infix(format_infix(tree)) == tree``."""
    return _format_with_precedence(node)[0]


def to_prefix(node: Node) -> list[str]:
    """The tree's values in pre-order: ``+ a * b c``."""
    tokens = []
    stack = [node]
    while stack:
        current = stack.pop()
        check_arity(current)
        tokens.append(current.value)
        stack.extend(reversed(current.children))
    return tokens


def to_postfix(node: Node) -> list[str]:
    """The tree's values in post-order: ``a b c * +``."""
    # Post-order is the reverse of a pre-order walk that visits children right to left.
    tokens = []
    stack = [node]
    while stack:
        current = stack.pop()
        check_arity(current)
        tokens.append(current.value)
        stack.extend(current.children)
    return tokens[::-1]


def _as_token_list(tokens: Iterable[str] | str) -> list[str]:
    token_list = tokens.split() if isinstance(tokens, str) else list(tokens)
    if not token_list:
        raise ExpressionError("empty token list")
    return token_list


def _single_tree(stack: list[Node], tokens: list[str], notation: str) -> Node:
    if len(stack) != 1:
        raise ExpressionError(
            f"{notation} tokens {shorten(' '.join(tokens), 60)!r} form {len(stack)} expressions instead of one "
            "(missing operator)"
        )
    return stack[0]


def from_prefix(tokens: Iterable[str] | str) -> Node:
    """Build a tree from prefix tokens (a list, or one string split on whitespace)."""
    token_list = _as_token_list(tokens)
    stack: list[Node] = []
    for position in reversed(range(len(token_list))):
        token = token_list[position]
        arity = ARITY.get(token, 0)
        if len(stack) < arity:
            raise ExpressionError(
                f"prefix tokens {shorten(' '.join(token_list), 60)!r}: operator {token!r} at position {position} "
                f"has {len(stack)} of its {arity} operands"
            )
        operands = tuple(stack.pop() for _ in range(arity))  # the top of the stack is the first operand
        stack.append(Node(token, operands))
    tree = _single_tree(stack, token_list, "prefix")
    check_depth(tree)
    return tree


def from_postfix(tokens: Iterable[str] | str) -> Node:
    """Build a tree from postfix tokens (a list, or one string split on whitespace)."""
    token_list = _as_token_list(tokens)
    stack: list[Node] = []
    for position, token in enumerate(token_list):
        arity = ARITY.get(token, 0)
        if len(stack) < arity:
            raise ExpressionError(
                f"postfix tokens {shorten(' '.join(token_list), 60)!r}: operator {token!r} at position {position} "
                f"has {len(stack)} of its {arity} operands"
            )
        operands = tuple(stack[len(stack) - arity :])
        del stack[len(stack) - arity :]
        stack.append(Node(token, operands))
    tree = _single_tree(stack, token_list, "postfix")
    check_depth(tree)
    return tree
