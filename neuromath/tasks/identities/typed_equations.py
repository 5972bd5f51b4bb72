"""An equation a user types (``sin(x)^2 + cos(x)^2 = 1``) as an equation tree of the identities task, read without
``eval`` (``neuromath.expr.ordinary``) and without SymPy: the tree is exactly what was typed, in the data's
convention (``a - b`` is ``Add(a, Mul(-1, b))``, ``a / b`` is ``Mul(a, Pow(b, -1))``, ``sqrt(a)`` is ``Pow(a, 1/2)``,
``ln`` is ``log``, ``e`` is ``exp(1)``, the symbols ``x y z w`` are ``var_0 .. var_3``)."""

from __future__ import annotations

import math
import sys
from fractions import Fraction

from neuromath.errors import ExpressionError, NeuromathError
from neuromath.expr.equation_tree import (
    PI,
    SYMBOL_OF_NAME,
    UNARY_FUNCTIONS,
    EquationNode,
    apply,
    height,
    number,
    symbol,
)
from neuromath.expr.numbers import shorten
from neuromath.expr.ordinary import parse_ordinary_equation
from neuromath.expr.symbolic_prefix import MAX_DEPTH, PrefixNode, fold
from neuromath.expr.tree import preorder
from neuromath.tasks.identities.numeric_evaluation import leaf_float

# The highest equation tree a user may type: the nesting limit of ordinary notation. The equations of the data are
# far lower; a sum of 500 terms (500 levels) would hold a tree model up for long.
MAX_EQUATION_HEIGHT = MAX_DEPTH

# the functions of the identities data, in the parser's spelling (log is ln there)
FUNCTIONS = tuple("ln" if name == "log" else name for name in UNARY_FUNCTIONS) + ("sqrt",)


def equation_tree(node: PrefixNode) -> EquationNode:
    """The equation tree of one side parsed in ordinary notation (folded iteratively: any nesting)."""
    return fold(node, leaf, operation)


def leaf(node: PrefixNode) -> EquationNode:
    name = node.token
    if name == "INT":
        return number(node.value)
    if name in SYMBOL_OF_NAME:
        return symbol(SYMBOL_OF_NAME[name])
    if name == "pi":
        return PI
    if name == "E":
        return apply("exp", number(1))
    raise ExpressionError(f"unknown name {name!r}")


def operation(node: PrefixNode, args: list[EquationNode]) -> EquationNode:
    token = node.token
    if token == "add":
        return apply("Add", *args)
    if token == "mul":
        return apply("Mul", *args)
    if token == "pow":
        return apply("Pow", *args)
    if token == "sub":
        return apply("Add", args[0], apply("Mul", number(-1), args[1]))
    if token == "div":
        return apply("Mul", args[0], apply("Pow", args[1], number(-1)))
    if token == "sqrt":
        return apply("Pow", args[0], number(Fraction(1, 2)))
    return apply("log" if token == "ln" else token, *args)


def parse_equation(text: str) -> EquationNode:
    """``left = right`` as an ``Equality`` tree; a ``NeuromathError`` says what cannot be read and where. Refused
    too: a tree higher than ``MAX_EQUATION_HEIGHT`` (a tree model reads an equation level by level, and its time
    grows faster than the height) and a number beyond the floats (``10^310`` written out), to which the numeric
    check could give no value."""
    try:
        left, right = parse_ordinary_equation(text, [*SYMBOL_OF_NAME, "pi", "E"], FUNCTIONS)
        tree = apply("Equality", equation_tree(left), equation_tree(right))
        if (levels := height(tree)) > MAX_EQUATION_HEIGHT:
            raise ExpressionError(
                f"the equation is {levels} levels deep (a sum or product of n terms is n levels); at most "
                f"{MAX_EQUATION_HEIGHT} are read")
        for node in preorder(tree):
            if node.is_leaf and node.func != "Symbol" and math.isinf(leaf_float(node.func, node.value)):
                raise ExpressionError(
                    f"the number {shorten(node.token)!r} is too large: numbers up to {sys.float_info.max:.4g} "
                    "can be checked")
        return tree
    except ExpressionError as error:
        raise NeuromathError(str(error)) from None
