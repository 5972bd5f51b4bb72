"""Expressions as trees: number literals, infix / prefix / postfix notation, exact evaluation. No torch here."""

from neuromath.expr.evaluate import evaluate, to_sympy
from neuromath.expr.notation import format_infix, from_postfix, from_prefix, parse_infix, to_postfix, to_prefix
from neuromath.expr.numbers import NUMBER_REGEX, format_number, is_number, parse_number
from neuromath.expr.tree import (
    ARITY,
    BINARY_OPERATORS,
    OPERATORS,
    UNARY_OPERATORS,
    Node,
    check_arity,
    depth,
    node_paths,
    preorder,
    substitute,
)

__all__ = [
    "ARITY",
    "BINARY_OPERATORS",
    "NUMBER_REGEX",
    "OPERATORS",
    "UNARY_OPERATORS",
    "Node",
    "check_arity",
    "depth",
    "evaluate",
    "format_infix",
    "format_number",
    "from_postfix",
    "from_prefix",
    "is_number",
    "node_paths",
    "preorder",
    "parse_infix",
    "parse_number",
    "substitute",
    "to_postfix",
    "to_prefix",
    "to_sympy",
]
