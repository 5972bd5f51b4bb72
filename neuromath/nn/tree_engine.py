"""Level-batched recursive tree networks (the batching of Looks et al. 2017 "Deep learning with dynamic computation
graphs", by height level, for the Tree-RNN / Tree-LSTM encoders of Arabshahi et al. 2018 and Mali et al. 2021).

A forest of binary trees is flattened by ``make_tree_batch`` so that nodes are sorted by height: leaves (height 0)
first, then every node of height 1, and so on; within a level of internal nodes the rows are sorted by operator id,
so each operator is one run (a *segment*) and a cell applies each operator's parameters with one matrix product.
``TreeEncoder.forward`` then makes one ``cell.leaf`` call for all leaves and one ``cell.node`` call per level for
the whole batch, gathering the children's states by index from the states computed so far.

Node order (what ``make_tree_batch`` produces and ``TreeEncoder.recursive_forward`` reproduces): sorted by
(height, operator id for internal nodes, tree index, pre-order position in its tree); leaves are not sorted by
token, only by (tree index, pre-order position).

Numbers as evidence (Arabshahi, Singh, Anandkumar 2018, "Combining symbolic expressions and black-box function
evaluations in neural programs", Sec. 3.2): a leaf may carry its numeric value as a third element,
``(leaf_id, (), value)``. ``make_tree_batch`` keeps the values of the leaves (``TreeBatch.leaf_values``, NaN for a
leaf without one), and a ``TreeEncoder`` built with ``number_encoder=True`` adds ``NumberEncoder(value)`` to such a
leaf's embedding, so that numbers never seen in training (``sin(0.37) = 0.3616``) still have a meaning.
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar, Protocol, runtime_checkable

import torch
from torch import nn

from neuromath.nn import tree_cells, tree_stack_cells  # noqa: F401  (register every cell in TREE_CELLS)
from neuromath.nn.dropout import apply_dropout
from neuromath.nn.operator_products import Segments, operator_slices_per_batch
from neuromath.nn.tree_batch import FlatTree, Tree, TreeBatch, flatten_tree, make_tree_batch  # noqa: F401  (its API)
from neuromath.registry import TREE_CELLS

State = tuple[torch.Tensor, ...]  # h (n, hidden) first; the LSTM cells add their memory c, the stack cells their stack


@runtime_checkable
class Cell(Protocol):
    """The contract of a tree cell run by ``TreeEncoder`` (every cell of ``TREE_CELLS``; ``tree_cells.TreeCell``
    is their base). The class flags say which ``model.*`` options its constructor takes, so the classifier builder
    passes exactly those."""

    uses_stack: ClassVar[bool]  # takes stack_depth (model.stack_depth)
    takes_activation: ClassVar[bool]  # takes activation (model.tree_activation)
    takes_candidate_dropout: ClassVar[bool]  # takes candidate_dropout (model.dropout_site candidate)
    takes_leaf: ClassVar[bool]  # takes leaf (model.tree_leaf)
    hidden_size: int

    def leaf(self, embedded: torch.Tensor) -> State:
        """The states of n leaves from their embeddings (n, hidden)."""
        ...

    def node(self, operator_ids: torch.Tensor, segments: Segments, left: State, right: State,
             has_right: torch.Tensor) -> State:
        """The states of n internal nodes of one level, sorted by operator (``segments``), from their children's."""
        ...

    def empty_state(self, n: int, like: torch.Tensor) -> State:
        """Zeros shaped as n states: the missing right child of a unary node."""
        ...


class NumberEncoder(nn.Module):
    """A number's vector from its value: a two-layer network (Arabshahi et al. 2018 encode numbers with a small
    feed-forward network) over fixed features of the value v, so that near values get near vectors and far ones
    can be told apart at every scale: v / (1 + |v|), sign(v) log(1 + |v|), and sin / cos of v * 2^k for
    k = -1 .. 3 (2-periodic features resolve the digits a plain scalar input would blur). Rows whose value is NaN
    (leaves that are not numbers) are zero."""

    frequencies = tuple(2.0 ** k for k in range(-1, 4))

    def __init__(self, hidden_size: int):
        super().__init__()
        n_features = 2 + 2 * len(self.frequencies)
        self.net = nn.Sequential(nn.Linear(n_features, hidden_size), nn.Tanh(), nn.Linear(hidden_size, hidden_size))

    def features(self, values: torch.Tensor) -> torch.Tensor:
        """(n,) values -> (n, features); NaN values give zero rows."""
        known = torch.isfinite(values)
        v = torch.where(known, values, torch.zeros_like(values)).clamp(-1e6, 1e6).unsqueeze(1)  # (n, 1)
        scaled = v * v.new_tensor(self.frequencies)  # (n, K)
        parts = [v / (1 + v.abs()), torch.sign(v) * torch.log1p(v.abs()), torch.sin(scaled), torch.cos(scaled)]
        return torch.cat(parts, dim=1) * known.unsqueeze(1).to(v.dtype)

    def forward(self, values: torch.Tensor) -> torch.Tensor:
        known = torch.isfinite(values).unsqueeze(1)
        return self.net(self.features(values)) * known.to(values.dtype)


class _StateStore:
    """The state buffers of one forward of ``TreeEncoder`` (one per state part, N + 1 rows, outside autograd) and, in
    its backward, one gradient buffer per part that every level adds its children's gradients into.

    Through autograd, writing a level's rows into a buffer and reading children from it cost, per level and part, a
    copy of the whole buffer's gradient (the in-place write's backward) and a whole zero buffer (the gather's
    backward): O(N) per level, a sixth of a Tree-LSTM training step. Here three autograd nodes share the buffers:

    - ``_WriteRows`` writes a level's states; its backward returns their rows of the gradient buffer;
    - ``_GatherRows`` reads children rows; its backward adds their gradients into the gradient buffer in place;
    - ``_ReadRows`` returns every node's state; its backward starts the gradient buffer from the caller's gradient.

    Each write and gather also takes the previous write's output (an empty *token* tensor whose gradient is None), so
    autograd runs a level's write backward only after every later level's gathers and writes: all the gradient its
    rows will receive is in the buffer by then."""

    def __init__(self, buffers: tuple[torch.Tensor, ...]):
        self.buffers = buffers
        self.grads: tuple[torch.Tensor, ...] | None = None

    def token(self) -> torch.Tensor:
        return self.buffers[0].new_empty(0)

    def gradients(self) -> tuple[torch.Tensor, ...]:
        """The gradient buffers of this backward, zero until a read or a gather adds to them."""
        if self.grads is None:
            self.grads = tuple(torch.zeros_like(buffer) for buffer in self.buffers)
        return self.grads


class _WriteRows(torch.autograd.Function):
    @staticmethod
    def forward(ctx, store, start, previous, *parts):
        ctx.set_materialize_grads(False)
        ctx.store, ctx.start, ctx.n = store, start, parts[0].size(0)
        for buffer, part in zip(store.buffers, parts):
            buffer[start:start + part.size(0)] = part
        return store.token()

    @staticmethod
    def backward(ctx, _token_grad):
        start, end = ctx.start, ctx.start + ctx.n
        return (None, None, None, *(grad[start:end] for grad in ctx.store.gradients()))


class _GatherRows(torch.autograd.Function):
    @staticmethod
    def forward(ctx, store, index, _written):
        ctx.set_materialize_grads(False)
        ctx.store = store
        ctx.save_for_backward(index)
        return tuple(buffer.index_select(0, index) for buffer in store.buffers)

    @staticmethod
    def backward(ctx, *grads):
        (index,) = ctx.saved_tensors
        for buffer_grad, grad in zip(ctx.store.gradients(), grads):
            if grad is not None:
                buffer_grad.index_add_(0, index, grad)
        return None, None, None


class _ReadRows(torch.autograd.Function):
    @staticmethod
    def forward(ctx, store, total, _written):
        ctx.set_materialize_grads(False)
        ctx.store, ctx.total = store, total
        return tuple(buffer[:total].clone() for buffer in store.buffers)

    @staticmethod
    def backward(ctx, *grads):
        ctx.store.grads = None  # the first node of each backward: its gradients start from zero
        for buffer_grad, grad in zip(ctx.store.gradients(), grads):
            if grad is not None:
                buffer_grad[: ctx.total] += grad
        return None, None, None


class TreeEncoder(nn.Module):
    """Leaf embedding plus a registered tree cell, run level by level over a whole ``TreeBatch``. With
    ``number_encoder`` a leaf that carries a value (``TreeBatch.leaf_values``) is embedded as its token's embedding
    plus ``NumberEncoder(value)``."""

    def __init__(
        self, cell: str, n_leaf_tokens: int, n_operators: int, hidden_size: int, dropout: float = 0.0,
        number_encoder: bool = False, **cell_options
    ):
        super().__init__()
        self.hidden_size = hidden_size
        self.leaf_embedding = nn.Embedding(n_leaf_tokens, hidden_size)
        self.number_encoder = NumberEncoder(hidden_size) if number_encoder else None
        self.cell: Cell = TREE_CELLS.get(cell)(hidden_size, n_operators, **cell_options)
        self.dropout = dropout  # on every node's output h, where its parent (or the classifier) reads it

    def _drop(self, state: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        if not self.training or self.dropout == 0:
            return state
        return (apply_dropout(state[0], self.dropout),) + tuple(state[1:])

    def embed_leaves(self, leaf_ids: torch.Tensor, values: torch.Tensor | None) -> torch.Tensor:
        """(n, hidden) embeddings of leaves with token ids ``leaf_ids`` and ``values`` (n,) (NaN: none) or None."""
        embedded = self.leaf_embedding(leaf_ids)
        if self.number_encoder is not None and values is not None:
            embedded = embedded + self.number_encoder(values.to(embedded.dtype))
        return embedded

    def forward(self, batch: TreeBatch) -> tuple[torch.Tensor, ...]:
        """The state of every node in node order (``state[0]`` is h, (N, hidden)); one ``cell.node`` call per level."""
        with operator_slices_per_batch():  # each stacked weight cut into its operators once per batch, not per level
            return self._levels(batch)

    def _levels(self, batch: TreeBatch) -> tuple[torch.Tensor, ...]:
        """Every node's state in one buffer per state part (N + 1 rows: the last is the empty state a missing right
        child reads), written level by level (``_StateStore``): each level gathers its children's rows, the cell
        computes its nodes, and their rows are written in place."""
        level_starts = batch.level_starts
        total = level_starts[batch.n_levels]
        embedded = self.embed_leaves(batch.node_ids[: level_starts[1]], batch.leaf_values)
        leaves = self._drop(self.cell.leaf(embedded))
        if batch.n_levels == 1:
            return leaves
        empty_row = self.cell.empty_state(1, like=embedded)
        store = _StateStore(tuple(torch.cat([part.new_zeros(total, *part.shape[1:]), empty.detach()])
                                  for part, empty in zip(leaves, empty_row)))  # (N + 1, ...) each
        written = _WriteRows.apply(store, 0, None, *leaves)  # the leaves' rows
        for level in range(1, batch.n_levels):
            start, end = level_starts[level], level_starts[level + 1]
            left_index = batch.left[start:end]
            right_index = batch.right[start:end]
            has_right = right_index >= 0
            right_index = torch.where(has_right, right_index, torch.full_like(right_index, total))
            # both children in one gather per part
            children = _GatherRows.apply(store, torch.cat([left_index, right_index]), written)
            n = end - start
            left_state = tuple(part[:n] for part in children)
            right_state = tuple(part[n:] for part in children)
            state = self.cell.node(
                batch.node_ids[start:end], batch.segments[level], left_state, right_state,
                has_right.unsqueeze(1).to(embedded.dtype),  # (n, 1)
            )
            written = _WriteRows.apply(store, start, written, *self._drop(state))
        return _ReadRows.apply(store, total, written)

    def recursive_forward(self, tree: Tree) -> list[torch.Tensor]:
        """Reference: the same parameters applied node at a time by plain recursion on one nested-tuple tree.

        Returns h (hidden,) of every node in the order ``make_tree_batch([tree])`` puts them.
        """
        device = self.leaf_embedding.weight.device
        dtype = self.leaf_embedding.weight.dtype
        preorder_counter = itertools.count()
        visited: list[tuple[tuple[int, int, int], torch.Tensor]] = []  # (sort key, h)

        def visit(node) -> tuple[tuple[torch.Tensor, ...], int]:
            node_id, children, *value = node
            preorder = next(preorder_counter)
            if len(children) == 0:
                values = torch.tensor(value[:1] or [math.nan], device=device)
                state = self.cell.leaf(self.embed_leaves(torch.tensor([node_id], device=device), values))
                height = 0
            else:
                left_state, height = visit(children[0])
                if len(children) == 2:
                    right_state, right_height = visit(children[1])
                    height = max(height, right_height)
                    has_right = 1.0
                else:
                    right_state = self.cell.empty_state(1, like=left_state[0])
                    has_right = 0.0
                height += 1
                state = self.cell.node(
                    torch.tensor([node_id], device=device), [(node_id, 0, 1)], left_state, right_state,
                    torch.full((1, 1), has_right, dtype=dtype, device=device),
                )
            visited.append(((height, node_id if height > 0 else 0, preorder), state[0][0]))
            return state, height

        visit(tree)
        visited.sort(key=lambda entry: entry[0])
        return [hidden for _, hidden in visited]

