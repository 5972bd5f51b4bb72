"""Forests of binary trees flattened for the level-batched tree engine (``neuromath.nn.tree_engine``).

A tree is nested tuples: a leaf ``(id, ())`` or ``(id, (), value)``, a unary node ``(id, (child,))``, a binary node
``(id, (left, right))``. ``flatten_tree`` numbers one tree's nodes in pre-order once (``FlatTree``: ids, children,
heights and leaf values as arrays); ``make_tree_batch`` merges trees, nested or already flat, into a ``TreeBatch``
sorted by (height, operator id for internal nodes, tree index, pre-order position), with array operations only, so
a dataset that keeps its trees flat (``models.classifiers.EncodedEquations``) pays no per-node Python work per batch.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import torch

from neuromath.errors import ExpressionError

Tree = tuple  # (id, ()) | (id, (), value) | (id, (child,)) | (id, (left, right))


@dataclass(frozen=True)
class FlatTree:
    """One tree's nodes in pre-order: ``ids``, the children's positions ``first`` and ``second`` (-1: none),
    ``heights``, and ``values`` (NaN where a leaf carries none) with ``has_values`` (some leaf carried a value)."""

    ids: np.ndarray  # (n,) int64
    first: np.ndarray  # (n,) int64
    second: np.ndarray  # (n,) int64
    heights: np.ndarray  # (n,) int64
    values: np.ndarray  # (n,) float64
    has_values: bool

    def __len__(self) -> int:
        return len(self.ids)


def flatten_tree(tree: Tree, tree_index: int = 0) -> FlatTree:
    """``tree``'s nodes in pre-order (iteratively: no recursion limit for deep trees). Raises ExpressionError naming
    ``tree_index`` for a malformed node."""
    ids: list[int] = []
    first: list[int] = []
    second: list[int] = []
    values: dict[int, float] = {}  # node number -> the value its leaf carries
    pending = [(tree, -1, 0)]  # (node, parent number, child slot)
    while pending:
        node, parent, slot = pending.pop()
        try:
            node_id, children, *value = node
            node_id = operator.index(node_id)
            n_children = len(children)
            if value and (len(value) > 1 or n_children):
                raise ValueError
            value = float(value[0]) if value else None
        except (TypeError, ValueError):
            raise ExpressionError(
                f"tree {tree_index}: a node must be (id, children) with an integer id, or a leaf "
                f"(id, (), value) with a number, got {node!r:.80}"
            ) from None
        if node_id < 0 or n_children > 2:
            raise ExpressionError(
                f"tree {tree_index}: node id must be >= 0 and a node has at most 2 children, "
                f"got id {node_id} with {n_children} children"
            )
        number = len(ids)
        if value is not None:
            values[number] = value
        ids.append(node_id)
        first.append(-1)
        second.append(-1)
        if parent >= 0:
            (first if slot == 0 else second)[parent] = number
        for child_slot in range(n_children - 1, -1, -1):  # left child popped first: pre-order
            pending.append((children[child_slot], number, child_slot))
    heights = [0] * len(ids)
    for number in range(len(ids) - 1, -1, -1):  # children before parents (reverse pre-order)
        if first[number] >= 0:
            heights[number] = 1 + max(heights[first[number]], heights[second[number]] if second[number] >= 0 else 0)
    value_array = np.full(len(ids), math.nan)
    for number, value in values.items():
        value_array[number] = value
    return FlatTree(np.array(ids, dtype=np.int64), np.array(first, dtype=np.int64), np.array(second, dtype=np.int64),
                    np.array(heights, dtype=np.int64), value_array, bool(values))


@dataclass
class TreeBatch:
    """A forest of binary trees flattened so that nodes are sorted by height (leaves, height 0, first).

    ``level_starts`` has one entry per level plus the total node count, so level k is
    ``level_starts[k] .. level_starts[k + 1] - 1``. ``segments`` is indexed by level like ``level_starts``:
    ``segments[0]`` (the leaves) is empty and ``segments[k]`` for k >= 1 lists that level's (operator_id, start,
    end) runs, start and end relative to ``level_starts[k]``.
    """

    node_ids: torch.Tensor  # (N,) long: leaf-token id for height-0 nodes, operator id for internal nodes
    left: torch.Tensor  # (N,) long: index of the left (or only) child; -1 for a leaf
    right: torch.Tensor  # (N,) long: index of the right child; -1 for a leaf or a unary node
    level_starts: list[int]
    segments: list[list[tuple[int, int, int]]]
    roots: torch.Tensor  # (T,) long: node index of each tree's root, in the order the trees were given
    tree_index: torch.Tensor | None = None  # (N,) long: the tree (its position in the input) each node belongs to
    # (L,) float: the value of each leaf (the first L = level_starts[1] nodes), NaN where a leaf has none; None when
    # no leaf of the batch has a value
    leaf_values: torch.Tensor | None = None

    @property
    def n_levels(self) -> int:
        return len(self.level_starts) - 1

    @property
    def n_nodes(self) -> int:
        return self.level_starts[-1]

    @property
    def n_trees(self) -> int:
        return int(self.roots.shape[0])

    def to(self, device) -> "TreeBatch":
        return TreeBatch(
            node_ids=self.node_ids.to(device),
            left=self.left.to(device),
            right=self.right.to(device),
            level_starts=self.level_starts,
            segments=self.segments,
            roots=self.roots.to(device),
            tree_index=self.tree_index.to(device) if self.tree_index is not None else None,
            leaf_values=self.leaf_values.to(device) if self.leaf_values is not None else None,
        )


def make_tree_batch(trees: Sequence[Tree | FlatTree]) -> TreeBatch:
    """Flatten ``trees`` (nested tuples, or ``FlatTree``s from ``flatten_tree``) into one ``TreeBatch``. Raises
    ExpressionError naming the tree for a malformed node."""
    if len(trees) == 0:
        raise ExpressionError("make_tree_batch needs at least one tree")
    flat = [tree if isinstance(tree, FlatTree) else flatten_tree(tree, index) for index, tree in enumerate(trees)]
    sizes = np.array([len(tree) for tree in flat], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])  # each tree's first node number
    node_offset = np.repeat(offsets, sizes)  # (n,)
    ids = np.concatenate([tree.ids for tree in flat])
    heights = np.concatenate([tree.heights for tree in flat])
    first = np.concatenate([tree.first for tree in flat])
    second = np.concatenate([tree.second for tree in flat])
    first = np.where(first >= 0, first + node_offset, -1)
    second = np.where(second >= 0, second + node_offset, -1)
    n_nodes = len(ids)

    # by height, then (internal levels) by operator id; stable, so ties keep the numbering: tree, then pre-order
    order = np.lexsort((np.where(heights > 0, ids, 0), heights))
    position = np.empty(n_nodes, dtype=np.int64)
    position[order] = np.arange(n_nodes)
    counts = np.bincount(heights)  # every height up to the largest has nodes: a parent sits one above a child
    level_starts = [0, *np.cumsum(counts).tolist()]
    sorted_ids = ids[order]
    segments: list[list[tuple[int, int, int]]] = [[]]
    for level in range(1, len(counts)):
        run_ids = sorted_ids[level_starts[level]: level_starts[level + 1]]
        edges = [0, *(np.flatnonzero(run_ids[1:] != run_ids[:-1]) + 1).tolist(), len(run_ids)]
        segments.append([(int(run_ids[start]), start, end) for start, end in zip(edges[:-1], edges[1:])])
    left, right = first[order], second[order]
    left = np.where(left >= 0, position[np.maximum(left, 0)], -1)
    right = np.where(right >= 0, position[np.maximum(right, 0)], -1)
    leaf_values = None
    if any(tree.has_values for tree in flat):
        leaf_values = torch.from_numpy(np.concatenate([tree.values for tree in flat])[order[: level_starts[1]]])
        leaf_values = leaf_values.to(torch.get_default_dtype())
    return TreeBatch(
        node_ids=torch.from_numpy(sorted_ids),
        left=torch.from_numpy(left),
        right=torch.from_numpy(right),
        level_starts=level_starts,
        segments=segments,
        roots=torch.from_numpy(position[offsets]),
        tree_index=torch.from_numpy(np.repeat(np.arange(len(flat)), sizes)[order]),
        leaf_values=leaf_values,
    )
