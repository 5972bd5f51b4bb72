"""Expressions as trees, their notations, exact evaluation and the one bridge to SymPy. No torch here.

``tree`` (word-problem expression trees) with ``notation`` (infix / prefix / postfix), ``numbers`` (number literals)
and ``evaluate`` (exact values); ``equation_tree`` (the identities task's trees in SymPy's function names);
``symbolic_prefix`` (Lample & Charton's prefix tokens); ``grammar`` (token grammars of prefix / postfix sequences);
``sympy_bridge``, the only module that converts any of these to or from SymPy.
"""

from neuromath.expr.exact import evaluate
from neuromath.expr.notation import format_infix, from_postfix, from_prefix, parse_infix, to_postfix, to_prefix
from neuromath.expr.numbers import NUMBER_REGEX, format_number, is_number, parse_number
from neuromath.expr.sympy_bridge import to_sympy
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
