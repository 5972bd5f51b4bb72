"""Equation trees of the identities task (Arabshahi, Singh, Anandkumar 2018; Mali et al. 2021), in SymPy's function
names: the node class, its leaf kinds and small tree utilities. No torch here.

An equation is a binary tree with an ``Equality`` root. Internal nodes are ``Add``, ``Mul``, ``Pow`` and unary
functions (``sin`` ... ``acsc``, ``exp``, ``log``); there is no subtraction, division or square root node:
a - b is ``Add(a, Mul(-1, b))``, a / b is ``Mul(a, Pow(b, -1))``, sqrt(a) is ``Pow(a, 1/2)``. Leaves are symbols
(``var_0`` .. ``var_3`` shown as x, y, z, w) and numbers (``Integer``, ``Rational``, ``Float``, ``One``,
``NegativeOne``, ``Half``, ``Pi``). The released files, numeric evaluation and labels are the task's
(``neuromath.tasks.identities``); SymPy conversions are in ``neuromath.expr.sympy_bridge``. Why this is not
``neuromath.expr.tree.Node``: see that module's docstring.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

from neuromath.errors import ExpressionError
from neuromath.expr.tree import preorder

BINARY_FUNCTIONS = ("Add", "Mul", "Pow")
UNARY_FUNCTIONS = (
    "sin", "cos", "tan", "cot", "sec", "csc",
    "asin", "acos", "atan", "acot", "asec", "acsc",
    "exp", "log",
)
NUMBER_KINDS = ("Integer", "Rational", "Float", "One", "NegativeOne", "Half", "Pi")
LEAF_KINDS = ("Symbol",) + NUMBER_KINDS
ARITY = {"Equality": 2, **{f: 2 for f in BINARY_FUNCTIONS}, **{f: 1 for f in UNARY_FUNCTIONS}}
SYMBOLS = ("var_0", "var_1", "var_2", "var_3")
SYMBOL_NAMES = {"var_0": "x", "var_1": "y", "var_2": "z", "var_3": "w"}  # how describe() prints them
SYMBOL_OF_NAME = {name: variable for variable, name in SYMBOL_NAMES.items()}  # x -> var_0 (axioms, SymPy)


@dataclass(frozen=True)
class EquationNode:
    """One node: ``func`` is the operator or the leaf kind; ``value`` the leaf's text (``var_0``, ``2``, ``1/2``,
    ``0.7``, ``pi``), empty for operators."""

    func: str
    value: str = ""
    children: tuple[EquationNode, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "children", tuple(self.children))

    @property
    def is_leaf(self) -> bool:
        return not self.children

    @property
    def token(self) -> str:
        """The node's symbol for a model: the operator name, a symbol's name, or a number in one canonical
        spelling (``Integer 1`` and ``One 1`` are both ``1``; ``Half`` is ``1/2``)."""
        return self.func if self.children else leaf_token(self.func, self.value)

    def __str__(self) -> str:
        return format_infix(self)


@functools.lru_cache(maxsize=8192)
def leaf_token(func: str, value: str) -> str:
    if func in ("Symbol", "Float"):
        return value
    if func == "Pi":
        return "pi"
    return str(Fraction(value))




def leaf(func: str, value: str) -> EquationNode:
    return EquationNode(func, value)


def number(value: int | Fraction | str) -> EquationNode:
    """A number leaf with the kind SymPy would give it (``One``, ``NegativeOne``, ``Half``, ``Integer``,
    ``Rational``)."""
    fraction = Fraction(value)
    if fraction == 1:
        return EquationNode("One", "1")
    if fraction == -1:
        return EquationNode("NegativeOne", "-1")
    if fraction == Fraction(1, 2):
        return EquationNode("Half", "1/2")
    if fraction.denominator == 1:
        return EquationNode("Integer", str(fraction.numerator))
    return EquationNode("Rational", f"{fraction.numerator}/{fraction.denominator}")


def symbol(name: str) -> EquationNode:
    return EquationNode("Symbol", name)


PI = EquationNode("Pi", "pi")


def apply(func: str, *children: EquationNode) -> EquationNode:
    if func not in ARITY:
        raise ExpressionError(f"unknown function {func!r}")
    if len(children) != ARITY[func]:
        raise ExpressionError(f"{func} takes {ARITY[func]} argument(s), got {len(children)}")
    return EquationNode(func, "", children)


def height(node: EquationNode) -> int:
    """Height as the released files count it: a leaf is 0, a node is 1 + its highest child. Counted level by level
    (the levels below the root), without recursion: generated trees can be deep."""
    levels, level = -1, [node]
    while level:
        levels += 1
        level = [child for current in level for child in current.children]
    return levels


def size(node: EquationNode) -> int:
    return sum(1 for _ in preorder(node))


def postorder(node: EquationNode) -> Iterator[EquationNode]:
    stack: list[tuple[EquationNode, bool]] = [(node, False)]
    while stack:
        current, expanded = stack.pop()
        if expanded or current.is_leaf:
            yield current
            continue
        stack.append((current, True))
        stack.extend((child, False) for child in reversed(current.children))


def subtree_at(node: EquationNode, index: int) -> EquationNode:
    """The node with pre-order number ``index`` (the ``nodeNum`` / ``blankNodeNum`` of the files)."""
    for number_, current in enumerate(preorder(node)):
        if number_ == index:
            return current
    raise IndexError(f"the tree has no node {index} (it has {size(node)} nodes)")


def replace_at(node: EquationNode, index: int, replacement: EquationNode) -> EquationNode:
    """A copy of ``node`` whose pre-order node ``index`` is ``replacement``."""
    if not 0 <= index < size(node):
        raise IndexError(f"the tree has no node {index} (it has {size(node)} nodes)")
    return replace_path(node, path_to(node, index), replacement)


def path_to(node: EquationNode, index: int) -> tuple[int, ...]:
    """The child indices leading from the root to the node with pre-order number ``index``."""
    path: list[int] = []
    current, remaining = node, index
    while remaining:
        remaining -= 1  # step past ``current`` itself
        for child_index, child in enumerate(current.children):
            child_size = size(child)
            if remaining < child_size:
                path.append(child_index)
                current = child
                break
            remaining -= child_size
        else:
            raise IndexError(f"the tree has no node {index} (it has {size(node)} nodes)")
    return tuple(path)


def replace_path(node: EquationNode, path: tuple[int, ...], replacement: EquationNode) -> EquationNode:
    """A copy of ``node`` with the subtree at ``path`` replaced; only the nodes on the path are rebuilt, every other
    subtree is shared with ``node``."""
    if not path:
        return replacement
    children = list(node.children)
    children[path[0]] = replace_path(children[path[0]], path[1:], replacement)
    return EquationNode(node.func, node.value, tuple(children))


def blank_ancestors(equation: EquationNode, path: tuple[int, ...]) -> list[tuple[EquationNode, int]]:
    """The nodes above a blank inside its side of an Equality, from the side's root down to the blank's parent,
    each with the slot of its child on the path (``path`` as ``path_to`` gives it: ``path[0]`` is the side)."""
    if equation.func != "Equality" or not path or path[0] not in (0, 1):
        raise ValueError(f"a blank must lie inside one side of an Equality, got path {path}")
    ancestors, node = [], equation.children[path[0]]
    for slot in path[1:]:
        ancestors.append((node, slot))
        node = node.children[slot]
    return ancestors


def symbols_of(node: EquationNode) -> list[str]:
    return sorted({n.value for n in preorder(node) if n.func == "Symbol"})


FUNCTIONS_SHOWN_WITH_ARGUMENT = UNARY_FUNCTIONS  # shown as sin(...), exp(...)


def format_infix(node: EquationNode) -> str:
    """A readable infix string (x, y, z, w for var_0 .. var_3); not meant to be parsed back. Built bottom-up in
    post-order without recursion, so an equation of any depth is shown (a sum of 500 terms typed by a user is 500
    deep)."""

    def show(current: EquationNode, parts: list[str]) -> str:
        if current.is_leaf:
            if current.func == "Symbol":
                return SYMBOL_NAMES.get(current.value, current.value)
            text = current.token
            return f"({text})" if text.startswith("-") or "/" in text else text
        if current.func in ("Equality", *FUNCTIONS_SHOWN_WITH_ARGUMENT):  # a sum needs no brackets of its own here
            parts = [part[1:-1] if child.func == "Add" else part for child, part in zip(current.children, parts)]
        if current.func == "Equality":
            return f"{parts[0]} = {parts[1]}"
        if current.func == "Add":
            return f"({parts[0]} + {parts[1]})"
        if current.func == "Mul":
            return f"{parts[0]}*{parts[1]}"
        if current.func == "Pow":
            base, exponent = (
                f"({part})" if child.func in ("Mul", "Pow") else part  # Add is bracketed already
                for child, part in zip(current.children, parts)
            )
            return f"{base}^{exponent}"
        return f"{current.func}({parts[0]})"

    shown: list[str] = []  # a stack of the strings of finished subtrees: post-order visits children before parents
    for current in postorder(node):
        count = len(current.children)
        parts = shown[len(shown) - count:] if count else []
        del shown[len(shown) - count:]
        shown.append(show(current, parts))
    text = shown[0]
    return text[1:-1] if text.startswith("(") and text.endswith(")") and node.func == "Add" else text
