"""Expression trees: an immutable node, the arithmetic operators and small tree utilities.

``Node`` is the tree of word-problem equations (and of every infix / prefix / postfix notation in ``notation``).
The identities task has its own node, ``neuromath.expr.equation_tree.EquationNode(func, value, children)``, and the
two stay separate classes on purpose:

* an identities leaf has a kind beside its text, and the kind is data: ``Integer 1`` and ``One 1``, ``Rational 1/2``
  and ``Half 1/2`` are different records of the released files, kept apart on reading and written back as they came
  (``equation_record``), and ``Float 0.7`` is not an exact number. A ``Node`` leaf is one literal, and its kind
  follows from its spelling (``2.50``, ``(2/5)``, ``30%``, ``x``, ``n0``), which ``evaluate`` and ``notation`` rely on;
* the operators differ in name and meaning: ``+ - * / ^ neg`` here, SymPy's ``Equality Add Mul Pow`` and fourteen
  unary functions there (a - b is ``Add(a, Mul(-1, b))``), with the operator in ``func`` and an empty ``value``;
* one class would need a third field that one task never uses, would change what ``==`` compares for the other,
  and would break positional construction at every call site (``Node(value, children)`` against
  ``EquationNode(func, value, children)``).

What both share needs only ``children``: ``preorder`` below walks either kind of tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from neuromath.errors import ExpressionError

BINARY_OPERATORS = ("+", "-", "*", "/", "^")
UNARY_OPERATORS = ("neg",)  # unary minus
OPERATORS = BINARY_OPERATORS + UNARY_OPERATORS
ARITY = {**{operator: 2 for operator in BINARY_OPERATORS}, **{operator: 1 for operator in UNARY_OPERATORS}}

# Trees read from text (prefix, postfix, infix) are refused deeper than this: formatting, normalising, comparing
# and converting trees recurse, and no word-problem equation comes near it.
MAX_DEPTH = 100


@dataclass(frozen=True)
class Node:
    """One node of an expression tree: an operator with its operands, or a leaf.

    A leaf's value is a number literal exactly as written (``"2.50"``, ``"(2/5)"``, ``"30%"``)
    or an identifier (``"x"``, ``"n0"``). Children given as a list are stored as a tuple.
    """

    value: str
    children: tuple[Node, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "children", tuple(self.children))

    @property
    def is_leaf(self) -> bool:
        return not self.children


def check_arity(node: Node) -> None:
    """Raise ExpressionError unless ``node`` itself (not its descendants) is a leaf that is not an
    operator name, or a known operator with its number of operands."""
    if node.value in ARITY:
        if len(node.children) != ARITY[node.value]:
            raise ExpressionError(
                f"operator {node.value!r} needs {ARITY[node.value]} operand(s), got {len(node.children)}"
            )
    elif not node.is_leaf:
        raise ExpressionError(f"unknown operator {node.value!r} (known: {', '.join(OPERATORS)})")


def depth(node: Node) -> int:
    """Number of nodes on the longest root-to-leaf path; a leaf has depth 1."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        current, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in current.children)
    return deepest


def check_depth(node: Node) -> None:
    """Raise ExpressionError when the tree is more than MAX_DEPTH levels deep."""
    levels = depth(node)
    if levels > MAX_DEPTH:
        raise ExpressionError(f"expression nested too deeply: {levels} levels, at most {MAX_DEPTH} are read")


def preorder(node):
    """Every node of a tree in pre-order, without recursion; works for any node with a ``children`` tuple
    (``Node`` here, ``EquationNode`` of the identities task)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def node_paths(node: Node) -> list[tuple[int, ...]]:
    """Each node's path of child indices from the root, in pre-order; the root's path is ``()``."""
    paths = []
    stack: list[tuple[tuple[int, ...], Node]] = [((), node)]
    while stack:
        path, current = stack.pop()
        paths.append(path)
        for index in reversed(range(len(current.children))):
            stack.append((path + (index,), current.children[index]))
    return paths


def substitute(node: Node, mapping: Mapping[str, Node | str]) -> Node:
    """Replace every leaf whose value is a key of ``mapping`` by the mapped node (a string becomes a leaf)."""
    if node.is_leaf:
        if node.value not in mapping:
            return node
        replacement = mapping[node.value]
        return replacement if isinstance(replacement, Node) else Node(replacement)
    return Node(node.value, tuple(substitute(child, mapping) for child in node.children))
