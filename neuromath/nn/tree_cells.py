"""Recursive tree cells: Tree-RNN, N-ary Tree-LSTM (Tai et al. 2015, eqs. 9-14; one parameter set per operator as in
Arabshahi et al. 2018), second-order Tree-RNN (Mali, Ororbia, Kifer, Giles 2021, eq. 1), multiplicative Tree-LSTM
(their eqs. 2-9) and Tree-LSTM with multiplicative integration (their eqs. 10-15, after Wu et al. 2016).

Cells are registered in ``neuromath.registry.TREE_CELLS`` and run by ``neuromath.nn.tree_engine``, which calls
``leaf`` once on all leaves and ``node`` once per height level on that level's internal nodes across the batch. A
state is a tuple of tensors: ``state[0]`` is h ``(n, hidden)``; LSTM cells add the memory c as ``state[1]``.

Mali et al.'s three cells follow the forms below, built from the works it extends (second-order recurrent
networks, Krause et al.'s mLSTM, Wu et al.'s multiplicative integration); the equation numbers are unchecked
against the full paper (only its abstract was read):

* ``second_order_tree_rnn`` (eq. 1): ``h = tanh(h_l^T T_op h_r + W_op [h_l; h_r] + b_op)`` with a third-order
  tensor ``T_op`` of shape (hidden, hidden, hidden) per operator: ``(h_l^T T h_r)_k = sum_ij h_l[i] T[i, j, k] h_r[j]``.
* ``mtree_lstm`` (eqs. 2-9), after Krause et al.'s multiplicative LSTM: ``m = (M^l_op h_l) * (M^r_op h_r)`` feeds
  every gate beside a first-order term (as the mLSTM's gates read input and m):
  ``[i, f_l, f_r, o, u] = W_op m + V_op [h_l; h_r] + b_op`` (sigmoid gates, tanh u),
  ``c = i*u + f_l*c_l + f_r*c_r``, ``h = o*tanh(c)``. Without ``V_op [h_l; h_r]`` (gates from m alone) the cell
  underfits its training data; with it, it trains like the Tree-LSTM.
* ``mi_tree_lstm`` (eqs. 10-15), multiplicative integration (Wu et al. 2016): every gate's pre-activation is
  ``alpha_op * (W_op h_l) * (U_op h_r) + beta1_op * (W_op h_l) + beta2_op * (U_op h_r) + b_op``; the same
  gates and memory update as the Tree-LSTM follow.

Unary nodes (``has_right`` = 0) get the empty (zero) state as right child. Additive cells just see a zero input;
in a product that zero would erase the child, so the multiplicative cells use 1 for the missing factor:
``m = M^l h_l`` in ``mtree_lstm``, ``alpha * (W h_l) + beta1 * (W h_l) + b`` in ``mi_tree_lstm``. In the
second-order Tree-RNN ``h_l^T T h_r`` vanishes and ``W [h_l; 0]`` carries the child: a first-order Tree-RNN node.

The Tree-RNN cells take ``activation`` (``model.tree_activation``): ``tanh`` (default) or ``sigmoid``, the default
``--tree-node-activation`` of Arabshahi et al.'s public code, kept by its plain tree-RNN runs (``NNTrees``).

Leaves: Tree-RNN cells use the embedding as h. LSTM cells treat a leaf as a childless Tree-LSTM node with input x
(Tai et al. 2015): ``[i, o, u]`` from ``W_leaf x + b_leaf``, ``c = i*u``, ``h = o*tanh(c)``; with
``leaf="embedding"`` (``model.tree_leaf``) h is the embedding and c is zero, as Arabshahi et al.'s released
Tree-LSTM needs.

Per-operator parameters are stacked ``(n_operators, in, out)``; ``operator_linear`` applies operator k's slice to
its run of rows (a level's rows are sorted by operator): one matrix product per operator present in the level.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from neuromath.errors import ConfigError
from neuromath.nn.dropout import apply_dropout
from neuromath.nn.operator_products import Segments, gather_per_operator, operator_bilinear, operator_linear
from neuromath.registry import TREE_CELLS


def init_stacked_linear(weight: torch.Tensor, bias: torch.Tensor | None = None) -> None:
    """nn.Linear's default initialisation for every operator's slice of a stacked weight (n_operators, in, out)."""
    bound = 1.0 / math.sqrt(weight.shape[1])
    with torch.no_grad():
        weight.uniform_(-bound, bound)
        if bias is not None:
            bias.uniform_(-bound, bound)


class TreeCell(nn.Module):
    """Base class of the cells run by the level-batched tree engine (see the module docstring for the API)."""

    uses_stack: bool = False  # takes stack_depth (model.stack_depth)
    takes_candidate_dropout: bool = False  # takes candidate_dropout (model.dropout_site candidate)
    takes_activation: bool = False  # takes activation (model.tree_activation)
    takes_leaf: bool = False  # takes leaf (model.tree_leaf): gated or embedding

    def __init__(self, hidden_size: int, n_operators: int, **options):
        super().__init__()
        if options:
            raise ConfigError(f"tree cell {type(self).__name__} got unknown options: {', '.join(sorted(options))}")
        if hidden_size < 1 or n_operators < 1:
            raise ConfigError(
                f"tree cell needs hidden_size >= 1 and n_operators >= 1, got {hidden_size}, {n_operators}"
            )
        self.hidden_size = hidden_size
        self.n_operators = n_operators

    def leaf(self, embedded: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """State of the leaves from their embeddings (n, hidden)."""
        raise NotImplementedError

    def node(self, operator_ids: torch.Tensor, segments: Segments, left: tuple[torch.Tensor, ...],
             right: tuple[torch.Tensor, ...], has_right: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """State of n internal nodes sorted by operator (runs in ``segments``) from their children's states.

        A missing right child is given as ``empty_state`` rows, and ``has_right`` (n, 1) float is 0 there.
        """
        raise NotImplementedError

    def empty_state(self, n: int, like: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Zeros with the structure of a state: (h,)."""
        return (like.new_zeros(n, self.hidden_size),)


TREE_ACTIVATIONS = {"tanh": torch.tanh, "sigmoid": torch.sigmoid}  # of the Tree-RNN cells (model.tree_activation)


def tree_activation(name: str):
    if name not in TREE_ACTIVATIONS:
        raise ConfigError(f"tree_activation must be one of {', '.join(TREE_ACTIVATIONS)}; got {name!r}")
    return TREE_ACTIVATIONS[name]


@TREE_CELLS.register("tree_rnn")
class TreeRNNCell(TreeCell):
    """h = tanh(W_op [h_l; h_r] + b_op) (or sigmoid: ``activation``); a leaf's h is its embedding."""

    takes_activation = True

    def __init__(self, hidden_size: int, n_operators: int, activation: str = "tanh", **options):
        super().__init__(hidden_size, n_operators, **options)
        self.activation = tree_activation(activation)
        self.weight = nn.Parameter(torch.empty(n_operators, 2 * hidden_size, hidden_size))
        self.bias = nn.Parameter(torch.empty(n_operators, hidden_size))
        init_stacked_linear(self.weight, self.bias)

    def leaf(self, embedded):
        return (embedded,)

    def node(self, operator_ids, segments, left, right, has_right):
        children = torch.cat([left[0], right[0]], dim=1)  # (n, 2H)
        return (self.activation(operator_linear(children, self.weight, self.bias, segments)),)


LEAF_FORMS = ("gated", "embedding")  # how the Tree-LSTM cells make a leaf's state (model.tree_leaf)


class TreeLSTMBase(TreeCell):
    """What the Tree-LSTM cells share: the leaf transform, the (h, c) state and the memory update.

    ``candidate_dropout`` p drops the internal nodes' candidate u in training, c = i*drop(u) + f_l*c_l + f_r*c_r
    (recurrent dropout, Semeniuta et al. 2016; where Arabshahi et al.'s code drops): the children's memories
    pass unperturbed.
    """

    takes_candidate_dropout = True
    takes_leaf = True  # takes leaf (model.tree_leaf)

    def __init__(self, hidden_size: int, n_operators: int, candidate_dropout: float = 0.0, leaf: str = "gated",
                 **options):
        super().__init__(hidden_size, n_operators, **options)
        if not 0.0 <= candidate_dropout < 1.0:
            raise ConfigError(f"candidate_dropout must be in [0, 1), got {candidate_dropout}")
        if leaf not in LEAF_FORMS:
            raise ConfigError(f"tree_leaf must be one of {', '.join(LEAF_FORMS)}; got {leaf!r}")
        self.candidate_dropout = candidate_dropout
        self.leaf_form = leaf
        if leaf == "gated":
            self.leaf_gates = nn.Linear(hidden_size, 3 * hidden_size)  # input gate, output gate, candidate

    def leaf(self, embedded):
        if self.leaf_form == "embedding":  # Arabshahi et al.'s code: h = x, an empty memory
            return (embedded, torch.zeros_like(embedded))
        input_gate, output_gate, candidate = self.leaf_gates(embedded).chunk(3, dim=1)
        memory = torch.sigmoid(input_gate) * torch.tanh(candidate)
        return (torch.sigmoid(output_gate) * torch.tanh(memory), memory)

    def empty_state(self, n, like):
        return (like.new_zeros(n, self.hidden_size), like.new_zeros(n, self.hidden_size))

    def lstm_update(self, preactivations: torch.Tensor, left_memory: torch.Tensor,
                    right_memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """From the pre-activations (n, 5H) ordered [i, f_l, f_r, o, u]: c = i*u + f_l*c_l + f_r*c_r, h = o*tanh(c)."""
        gates = torch.sigmoid(preactivations[:, : 4 * self.hidden_size])
        input_gate, forget_left, forget_right, output_gate = gates.chunk(4, dim=1)
        candidate = torch.tanh(preactivations[:, 4 * self.hidden_size:])
        if self.training and self.candidate_dropout > 0:
            candidate = apply_dropout(candidate, self.candidate_dropout)
        memory = input_gate * candidate + forget_left * left_memory + forget_right * right_memory
        return (output_gate * torch.tanh(memory), memory)

    def set_forget_bias(self, bias: torch.Tensor, value: float = 1.0) -> None:
        """Start both forget gates open (bias (n_operators, 5H), gates ordered [i, f_l, f_r, o, u])."""
        with torch.no_grad():
            bias[:, self.hidden_size: 3 * self.hidden_size] = value


@TREE_CELLS.register("tree_lstm")
class TreeLSTMCell(TreeLSTMBase):
    """Binary Tree-LSTM (Tai et al. 2015, eqs. 9-14) with its own parameters per operator (Arabshahi et al. 2018).

    [i, f_l, f_r, o, u] = W_op [h_l; h_r] + b_op; c = i*u + f_l*c_l + f_r*c_r; h = o*tanh(c).
    """

    def __init__(self, hidden_size: int, n_operators: int, **options):
        super().__init__(hidden_size, n_operators, **options)
        self.weight = nn.Parameter(torch.empty(n_operators, 2 * hidden_size, 5 * hidden_size))
        self.bias = nn.Parameter(torch.empty(n_operators, 5 * hidden_size))
        init_stacked_linear(self.weight, self.bias)
        self.set_forget_bias(self.bias)

    def node(self, operator_ids, segments, left, right, has_right):
        children = torch.cat([left[0], right[0]], dim=1)  # (n, 2H)
        preactivations = operator_linear(children, self.weight, self.bias, segments)
        return self.lstm_update(preactivations, left[1], right[1])


@TREE_CELLS.register("second_order_tree_rnn")
class SecondOrderTreeRNNCell(TreeCell):
    """Second-order Tree-RNN (Mali et al. 2021, eq. 1): h = tanh(h_l^T T_op h_r + W_op [h_l; h_r] + b_op) (or
    sigmoid: ``activation``)."""

    takes_activation = True

    def __init__(self, hidden_size: int, n_operators: int, activation: str = "tanh", **options):
        super().__init__(hidden_size, n_operators, **options)
        self.activation = tree_activation(activation)
        self.tensor_weight = nn.Parameter(torch.empty(n_operators, hidden_size, hidden_size, hidden_size))
        self.weight = nn.Parameter(torch.empty(n_operators, 2 * hidden_size, hidden_size))
        self.bias = nn.Parameter(torch.empty(n_operators, hidden_size))
        init_stacked_linear(self.weight, self.bias)
        with torch.no_grad():  # the product term sums hidden^2 terms: scale 1/hidden keeps it of order one
            self.tensor_weight.uniform_(-1.0 / hidden_size, 1.0 / hidden_size)

    def leaf(self, embedded):
        return (embedded,)

    def node(self, operator_ids, segments, left, right, has_right):
        children = torch.cat([left[0], right[0]], dim=1)  # (n, 2H)
        first_order = operator_linear(children, self.weight, self.bias, segments)
        second_order = operator_bilinear(left[0], right[0], self.tensor_weight, segments)
        return (self.activation(second_order + first_order),)


@TREE_CELLS.register("mtree_lstm")
class MTreeLSTMCell(TreeLSTMBase):
    """Multiplicative Tree-LSTM (Mali et al. 2021, eqs. 2-9; mLSTM of Krause et al. 2016).

    m = (M^l_op h_l) * (M^r_op h_r) (the right factor is 1 for a unary node);
    [i, f_l, f_r, o, u] = W_op m + V_op [h_l; h_r] + b_op.
    """

    def __init__(self, hidden_size: int, n_operators: int, **options):
        super().__init__(hidden_size, n_operators, **options)
        self.left_weight = nn.Parameter(torch.empty(n_operators, hidden_size, hidden_size))
        self.right_weight = nn.Parameter(torch.empty(n_operators, hidden_size, hidden_size))
        self.weight = nn.Parameter(torch.empty(n_operators, hidden_size, 5 * hidden_size))
        self.child_weight = nn.Parameter(torch.empty(n_operators, 2 * hidden_size, 5 * hidden_size))
        self.bias = nn.Parameter(torch.empty(n_operators, 5 * hidden_size))
        init_stacked_linear(self.left_weight)
        init_stacked_linear(self.right_weight)
        init_stacked_linear(self.weight, self.bias)
        init_stacked_linear(self.child_weight)
        self.set_forget_bias(self.bias)

    def intermediate(self, segments: Segments, left_hidden: torch.Tensor, right_hidden: torch.Tensor,
                     has_right: torch.Tensor) -> torch.Tensor:
        """m = (M^l h_l) * (M^r h_r), with 1 in place of the right factor where has_right is 0. (n, H)."""
        left_factor = operator_linear(left_hidden, self.left_weight, None, segments)
        right_factor = operator_linear(right_hidden, self.right_weight, None, segments)
        right_factor = has_right * right_factor + (1.0 - has_right)
        return left_factor * right_factor

    def multiplicative_preactivations(self, segments: Segments, left_hidden: torch.Tensor,
                                      right_hidden: torch.Tensor, has_right: torch.Tensor) -> torch.Tensor:
        """W_op m + V_op [h_l; h_r] + b_op, the five gate pre-activations [i, f_l, f_r, o, u]. (n, 5H)."""
        intermediate = self.intermediate(segments, left_hidden, right_hidden, has_right)
        children = torch.cat([left_hidden, right_hidden], dim=1)  # (n, 2H); a missing right child is zeros
        return (operator_linear(intermediate, self.weight, self.bias, segments)
                + operator_linear(children, self.child_weight, None, segments))

    def node(self, operator_ids, segments, left, right, has_right):
        preactivations = self.multiplicative_preactivations(segments, left[0], right[0], has_right)
        return self.lstm_update(preactivations, left[1], right[1])


@TREE_CELLS.register("mi_tree_lstm")
class MITreeLSTMCell(TreeLSTMBase):
    """Tree-LSTM with multiplicative integration (Mali et al. 2021, eqs. 10-15; Wu et al. 2016).

    pre = alpha_op * (W_op h_l) * (U_op h_r) + beta1_op * (W_op h_l) + beta2_op * (U_op h_r) + b_op for all five
    gates [i, f_l, f_r, o, u] at once; the factor (U_op h_r) of the product is 1 for a unary node.
    """

    def __init__(self, hidden_size: int, n_operators: int, **options):
        super().__init__(hidden_size, n_operators, **options)
        self.left_weight = nn.Parameter(torch.empty(n_operators, hidden_size, 5 * hidden_size))
        self.right_weight = nn.Parameter(torch.empty(n_operators, hidden_size, 5 * hidden_size))
        self.alpha = nn.Parameter(torch.ones(n_operators, 5 * hidden_size))
        self.beta_left = nn.Parameter(torch.full((n_operators, 5 * hidden_size), 0.5))
        self.beta_right = nn.Parameter(torch.full((n_operators, 5 * hidden_size), 0.5))
        self.bias = nn.Parameter(torch.zeros(n_operators, 5 * hidden_size))
        init_stacked_linear(self.left_weight)
        init_stacked_linear(self.right_weight)
        self.set_forget_bias(self.bias)

    def node(self, operator_ids, segments, left, right, has_right):
        left_projected = operator_linear(left[0], self.left_weight, None, segments)  # (n, 5H)
        right_projected = operator_linear(right[0], self.right_weight, None, segments)  # (n, 5H), 0 if no right
        right_factor = has_right * right_projected + (1.0 - has_right)
        alpha = gather_per_operator(self.alpha, operator_ids)
        beta_left = gather_per_operator(self.beta_left, operator_ids)
        beta_right = gather_per_operator(self.beta_right, operator_ids)
        bias = gather_per_operator(self.bias, operator_ids)
        preactivations = (alpha * left_projected * right_factor + beta_left * left_projected
                          + beta_right * right_projected + bias)
        return self.lstm_update(preactivations, left[1], right[1])
