"""Random expressions of Lample & Charton (2020, "Deep learning for symbolic mathematics", section 2.1 and appendix C:
the counts D(e, n) and the sampling probabilities L(e, n)), the raw material of the symbolic generators, as prefix
tokens (``neuromath.expr.symbolic_prefix``) or SymPy expressions. No torch here.

The shape is drawn uniformly among the unary-binary trees with exactly ``n`` internal nodes (``sample_shape``),
then labelled: each binary node by one of ``BINARY_WEIGHTS``, each unary node by one of ``UNARY_WEIGHTS``, each
leaf by ``x`` or a non-zero integer in [-5, 5] (``LEAF_WEIGHTS``; ``c`` too for ODE solutions). When no leaf is
``x`` (or, for ODEs, no leaf is ``c``), one leaf drawn at random becomes one. The number of operators of an
expression is drawn uniformly in 1..max_ops.
"""

from __future__ import annotations

import random
from typing import Mapping

from neuromath.errors import NeuromathError
from neuromath.expr.symbolic_prefix import integer_tokens
from neuromath.expr.sympy_bridge import prefix_to_sympy

BINARY_WEIGHTS = {"add": 4, "sub": 2, "mul": 4, "div": 2}
# pow2 / pow3 are squares and cubes (read-only tokens of symbolic_prefix: the written form is ``pow a INT+ 2``)
UNARY_WEIGHTS = {
    "exp": 2, "ln": 2, "sqrt": 2, "pow2": 2, "pow3": 1,
    "sin": 2, "cos": 2, "tan": 1, "asin": 1, "acos": 1, "atan": 1,
    "sinh": 1, "cosh": 1, "tanh": 1,
}
INTEGER_LEAVES = tuple(value for value in range(-5, 6) if value != 0)
LEAF_WEIGHTS = {"x": 3, "integer": 2}  # integration: a leaf is x with probability 3/5, else an integer
ODE_LEAF_WEIGHTS = {"x": 3, "c": 2, "integer": 2}  # the solution F(x, c) of a first-order ODE


# ---------------------------------------------------------------------------------------------- tree shapes


def tree_count_table(max_internal: int) -> list[list[int]]:
    """``table[n][e]`` = D(e, n), the number of unary-binary trees with ``n`` internal nodes that can be built from
    ``e`` empty nodes (Lample & Charton, appendix C), for 0 <= n <= max_internal and 0 <= e <= max_internal + 1 - n
    (all that sampling a tree with ``max_internal`` internal nodes needs):

        D(0, n) = 0 for n > 0,   D(e, 0) = 1,   D(e, n) = D(e - 1, n) + D(e, n - 1) + D(e + 1, n - 1).

    The first empty node is a leaf (D(e - 1, n)), a unary node (D(e, n - 1)) or a binary node (D(e + 1, n - 1)).
    D(1, n) are the large Schroeder numbers 1, 2, 6, 22, 90, ... Exact Python integers."""
    if max_internal < 0:
        raise NeuromathError(f"max_internal must be at least 0, not {max_internal}")
    top = max_internal + 1
    table = [[1] * (top + 1)]
    for n in range(1, max_internal + 1):
        row = [0]
        for e in range(1, top - n + 1):
            row.append(row[e - 1] + table[n - 1][e] + table[n - 1][e + 1])
        table.append(row)
    return table


def sample_shape(n_internal: int, rng: random.Random, table: list[list[int]] | None = None) -> list[int]:
    """A unary-binary tree with ``n_internal`` internal nodes drawn uniformly among all of them, as the arity of
    each node in prefix order (0 leaf, 1 unary, 2 binary).

    Lample & Charton's algorithm (appendix C): the tree grows from one empty node. With ``e`` empty nodes (in prefix
    order) and ``n`` internal nodes still to place, the next internal node goes to the (k+1)-th empty node, the k
    before it becoming leaves, and has arity a, with probability

        L(e, n)(k, 1) = D(e - k, n - 1) / D(e, n),    L(e, n)(k, 2) = D(e - k + 1, n - 1) / D(e, n),   0 <= k < e;

    then e becomes e - k - 1 + a and n becomes n - 1; when n is 0 the remaining empty nodes are leaves. The
    probabilities multiply to 1 / D(1, n_internal) for every tree. Drawn exactly with integer weights."""
    if n_internal < 0:
        raise NeuromathError(f"the number of internal nodes must be at least 0, not {n_internal}")
    if table is None or len(table) <= n_internal:
        table = tree_count_table(n_internal)
    arities: list[int] = []
    empty = 1
    for remaining in range(n_internal, 0, -1):
        draw = rng.randrange(table[remaining][empty])
        for skipped in range(empty):
            unary = table[remaining - 1][empty - skipped]
            binary = table[remaining - 1][empty - skipped + 1]
            if draw < unary:
                arity = 1
                break
            draw -= unary
            if draw < binary:
                arity = 2
                break
            draw -= binary
        else:  # unreachable: the weights add up to D(empty, remaining)
            raise AssertionError("tree sampling weights do not add up to D(e, n)")
        arities += [0] * skipped + [arity]
        empty = empty - skipped - 1 + arity
    return arities + [0] * empty


# ---------------------------------------------------------------------------------------------- random expressions


def weighted_choice(weights: Mapping[str, int], rng: random.Random) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def random_expression_tokens(
    n_ops: int, rng: random.Random, leaf_weights: Mapping[str, int] = LEAF_WEIGHTS, table=None
) -> list[str]:
    """Prefix tokens of a random expression with ``n_ops`` operators: a uniform shape (``sample_shape``) labelled
    with the operator and leaf weights of this module. Every leaf kind in ``leaf_weights`` other than ``integer``
    that is missing is given to one leaf drawn at random (that is not the only one of an earlier kind), when there
    are enough leaves."""
    arities = sample_shape(n_ops, rng, table)
    labels: list[str | int] = []
    for arity in arities:
        if arity == 2:
            labels.append(weighted_choice(BINARY_WEIGHTS, rng))
        elif arity == 1:
            labels.append(weighted_choice(UNARY_WEIGHTS, rng))
        else:
            kind = weighted_choice(leaf_weights, rng)
            labels.append(rng.choice(INTEGER_LEAVES) if kind == "integer" else kind)
    leaves = [position for position, arity in enumerate(arities) if arity == 0]
    for name in (kind for kind in leaf_weights if kind != "integer"):
        if name in labels:
            continue
        free = [p for p in leaves if labels[p] not in leaf_weights or labels.count(labels[p]) > 1]
        if free:
            labels[rng.choice(free)] = name
    tokens: list[str] = []
    for label in labels:
        tokens += integer_tokens(label) if isinstance(label, int) else [label]
    return tokens


def random_expression(n_ops: int, rng: random.Random, leaf_weights: Mapping[str, int] = LEAF_WEIGHTS, table=None):
    """The SymPy expression of ``random_expression_tokens`` (built with automatic evaluation);
    ``ExpressionError`` when it is undefined (a division by zero, ln 0)."""
    return prefix_to_sympy(random_expression_tokens(n_ops, rng, leaf_weights, table))
