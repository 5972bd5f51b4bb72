"""Recursive tree cells: Tree-RNN, N-ary Tree-LSTM (Tai et al. 2015, eqs. 9-14; one parameter set per operator as in
Arabshahi et al. 2018), second-order Tree-RNN (Mali, Ororbia, Kifer, Giles 2021, eq. 1), multiplicative Tree-LSTM
(their eqs. 2-9) and Tree-LSTM with multiplicative integration (their eqs. 10-15, after Wu et al. 2016).

Every cell is registered in ``neuromath.registry.TREE_CELLS`` and run by the level-batched engine of
``neuromath.nn.tree_engine``, which calls ``leaf`` once on all leaves and ``node`` once per height level on all
internal nodes of that level in the whole batch. A state is a tuple of tensors: ``state[0]`` is h ``(n, hidden)``,
the LSTM cells add the memory c as ``state[1]``.

The Mali et al. paper's text could not be retrieved while this module was written (only its abstract), so its
three cells follow the forms below, built from the works it extends (second-order recurrent networks, Krause et
al.'s mLSTM, Wu et al.'s multiplicative integration); the equation numbers are the ones these cells are said to
follow there and were not checked against the paper:

* ``second_order_tree_rnn`` (eq. 1): ``h = tanh(h_l^T T_op h_r + W_op [h_l; h_r] + b_op)`` with a third-order
  tensor ``T_op`` of shape (hidden, hidden, hidden) per operator: ``(h_l^T T h_r)_k = sum_ij h_l[i] T[i, j, k] h_r[j]``.
* ``mtree_lstm`` (eqs. 2-9), a Tree-LSTM in the spirit of Krause et al.'s multiplicative LSTM: an intermediate
  ``m = (M^l_op h_l) * (M^r_op h_r)`` joins the children's hidden states as an input of every gate, the way the
  mLSTM's gates read both its input and m and the second-order Tree-RNN keeps its first-order term:
  ``[i, f_l, f_r, o, u] = W_op m + V_op [h_l; h_r] + b_op`` (sigmoid for the gates, tanh for u),
  ``c = i*u + f_l*c_l + f_r*c_r``, ``h = o*tanh(c)``. The first-order term ``V_op [h_l; h_r]`` was added after the
  purely multiplicative form (gates from m alone) was measured: it could not fit its training data (paper-style
  160k equations, hidden 50, dropout 0.2: training loss 0.44 after 139 epochs against 0.14 for the Tree-LSTM,
  validation 77.9 against 92.6); with the term it trains like the Tree-LSTM (40k equations: validation 83.4
  against 81.2 for the pure form and 83.8 for the Tree-LSTM).
* ``mi_tree_lstm`` (eqs. 10-15), multiplicative integration (Wu et al. 2016): every gate's pre-activation is
  ``alpha_op * (W_op h_l) * (U_op h_r) + beta1_op * (W_op h_l) + beta2_op * (U_op h_r) + b_op``; the same
  gates and memory update as the Tree-LSTM follow.

Unary nodes (an operator with one child, ``has_right`` = 0): the engine gives the missing right child as the empty
state (zeros). An additive cell then simply sees a zero right input. In a product with the right child's projection
that zero would wipe out the single child's information, so the multiplicative cells use 1 instead of the missing
factor: ``m = M^l h_l`` in ``mtree_lstm`` and ``alpha * (W h_l) + beta1 * (W h_l) + b`` in ``mi_tree_lstm``. In the
second-order Tree-RNN the product term ``h_l^T T h_r`` vanishes for a unary node and the first-order term
``W [h_l; 0]`` carries the child, so a unary node there is exactly a first-order Tree-RNN node.

The two Tree-RNN cells take ``activation`` (``model.tree_activation``): ``tanh`` (the default, as written above) or
``sigmoid``, the default node activation of Arabshahi et al.'s public code (its ``--tree-node-activation``), whose
plain tree-RNN runs (``NNTrees``) keep it.

Leaves: the Tree-RNN cells use the leaf embedding itself as h. The LSTM cells treat a leaf as a Tree-LSTM node
without children whose input is the embedding x (Tai et al. 2015 with no child terms): ``[i, o, u]`` from
``W_leaf x + b_leaf``, ``c = i*u``, ``h = o*tanh(c)``; with ``leaf="embedding"`` (``model.tree_leaf``) a leaf's h is
its embedding and its memory c is zero, as in Arabshahi et al.'s code (their released Tree-LSTM needs it).

Per-operator parameters are stacked tensors ``(n_operators, in, out)``; ``operator_linear`` applies operator k's
slice to its run of rows (the rows of a level are sorted by operator), one matrix product per operator present in
the level, so no per-node Python work happens.
"""

from __future__ import annotations

import contextlib
import contextvars
import math

import torch
from torch import nn

from neuromath.errors import ConfigError
from neuromath.registry import TREE_CELLS

Segments = list[tuple[int, int, int]]  # (operator_id, start, end) runs over the rows of one level


_BATCH_SLICES: contextvars.ContextVar[dict | None] = contextvars.ContextVar("operator_slices", default=None)


@contextlib.contextmanager
def operator_slices_per_batch():
    """Within it (one forward of the tree engine over a batch), ``operator_linear`` cuts each stacked weight into its
    operators once instead of once per level. The backward of that cut stacks the operators' gradients into one
    tensor of the weight's full size, so cutting per level made, per level, a full-size stack mostly of zeros: a
    third of a Tree-LSTM training step went to those concatenations (``benchmarks/trees.py``'s workload)."""
    token = _BATCH_SLICES.set({})
    try:
        yield
    finally:
        _BATCH_SLICES.reset(token)


def per_operator(weight: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``weight.unbind(0)``, made once per batch inside ``operator_slices_per_batch`` (a view of the same memory,
    shape and strides is the same weight: ``operator_bilinear`` reshapes its tensor at every call)."""
    cache = _BATCH_SLICES.get()
    if cache is None:
        return weight.unbind(0)
    key = (weight.data_ptr(), tuple(weight.shape), weight.stride(), weight.dtype, weight.requires_grad)
    if key not in cache:
        cache[key] = (weight, weight.unbind(0))  # the tensor is kept so that its memory cannot be reused meanwhile
    return cache[key][1]


def operator_linear(inputs: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                    segments: Segments) -> torch.Tensor:
    """Apply operator k's slice ``weight[k]`` (in, out) and ``bias[k]`` (out,) to the rows of its run.

    inputs (n, in); weight (n_operators, in, out); bias (n_operators, out) or None; segments: (operator_id, start,
    end) runs that cover the n rows in order. Returns (n, out); one matrix product per run.

    The rows are cut into runs with one ``split`` and the stacked weight into operators with one ``unbind``: their
    backward passes join the gradients with one concatenation each, where slicing or indexing per run would build
    a full-size zero gradient for every run. In training inside ``operator_slices_per_batch`` (float32, no
    autocast), ``_deferred_operator_linear`` instead computes the weight's gradient once per batch.
    """
    if _defers_weight_gradient(inputs, weight):
        return _deferred_operator_linear(inputs, weight, bias, segments)
    if len(segments) == 1:
        operator_id = segments[0][0]
        if bias is None:
            return inputs @ weight[operator_id]
        return torch.addmm(bias[operator_id], inputs, weight[operator_id])
    runs = inputs.split([end - start for _, start, end in segments])
    weight_per_operator = per_operator(weight)
    outputs = []
    if bias is None:
        for (operator_id, _, _), rows in zip(segments, runs):
            outputs.append(rows @ weight_per_operator[operator_id])
    else:
        bias_per_operator = per_operator(bias)
        for (operator_id, _, _), rows in zip(segments, runs):
            outputs.append(torch.addmm(bias_per_operator[operator_id], rows, weight_per_operator[operator_id]))
    return torch.cat(outputs, dim=0)


# The weight gradient of a batch in one matrix product per operator.
#
# Through autograd, every run of every level adds its own (in, out) product X_run^T G_run to its operator's gradient:
# a Tree-LSTM batch of ``benchmarks/trees.py`` has about 130 runs, so 130 small products, sums and accumulations in
# the backward pass, for 14 operators. Here each level's product is one autograd node whose backward only computes the
# gradient of its inputs (what the levels below need) and leaves (X, G) of its runs in a list; the weight passes
# through an identity node (``_DeferredWeightGradient``) that every level reads, so autograd runs its backward after
# all the levels' and it computes each operator's gradient from all its rows at once: X_op^T G_op. The gradient
# still reaches the parameter through autograd (optimisers, DDP's hooks and ``torch.autograd.grad`` see it as usual).


# Wider inputs are not deferred: gathering every level's rows per operator copies them all, which costs more than the
# per-run products save (the second-order Tree-RNN's outer products, 2,500 wide at hidden 50, ran at 0.95x deferred;
# the Tree-LSTM's 100-wide inputs at 1.07x, the MTree-LSTM's at 1.03x).
DEFERRED_MAX_INPUTS = 512


def _defers_weight_gradient(inputs: torch.Tensor, weight: torch.Tensor) -> bool:
    return (_BATCH_SLICES.get() is not None and torch.is_grad_enabled() and weight.requires_grad
            and inputs.size(1) <= DEFERRED_MAX_INPUTS and not torch.is_autocast_enabled(inputs.device.type)
            and inputs.dtype == weight.dtype)


def _deferred_operator_linear(inputs, weight, bias, segments):
    weight_tap, weight_parts, weight_rows = _tapped(weight, True)
    if bias is None:
        bias_tap = bias_parts = bias_rows = None
    else:
        bias_tap, bias_parts, bias_rows = _tapped(bias, False)
    return _OperatorProduct.apply(inputs, weight_tap, bias_tap, segments, weight_parts, bias_parts,
                                  weight_rows, bias_rows)


def _tapped(weight: torch.Tensor, keeps_inputs: bool):
    """The batch's identity node over ``weight``, its per-operator slices (detached) and the list the levels fill."""
    cache = _BATCH_SLICES.get()
    key = ("tap", weight.data_ptr(), tuple(weight.shape), weight.stride(), weight.dtype)
    if key not in cache:
        rows: list = []
        tap = _DeferredWeightGradient.apply(weight, rows, keeps_inputs)
        cache[key] = (weight, tap, weight.detach().unbind(0), rows)
    return cache[key][1:]


class _DeferredWeightGradient(torch.autograd.Function):
    """Identity on a stacked weight (n_operators, ...); its backward sums the gradient of every operator's rows that
    the levels left in ``rows``: (inputs, output gradient, segments) for a weight, (output gradient, segments) for a
    bias."""

    @staticmethod
    def forward(ctx, weight, rows, keeps_inputs):
        ctx.set_materialize_grads(False)
        ctx.rows, ctx.keeps_inputs = rows, keeps_inputs
        ctx.shape, ctx.dtype, ctx.device = weight.shape, weight.dtype, weight.device
        return weight.view_as(weight)

    @staticmethod
    def backward(ctx, grad):
        entries = list(ctx.rows)
        ctx.rows.clear()  # a second backward (retain_graph) collects its own
        total = torch.zeros(ctx.shape, dtype=ctx.dtype, device=ctx.device) if grad is None else grad.clone()
        if not entries:
            return total, None, None
        segments = [segment for entry in entries for segment in entry[-1]]
        row_operators = torch.repeat_interleave(  # (rows of every level,) the operator of each row
            torch.tensor([operator_id for operator_id, _, _ in segments], device=ctx.device),
            torch.tensor([end - start for _, start, end in segments], device=ctx.device))
        output_grads = torch.cat([entry[-2] for entry in entries])  # (rows of every level, out)
        if not ctx.keeps_inputs:  # a bias: each row's gradient added to its operator's
            return total.index_add_(0, row_operators, output_grads), None, None
        inputs = torch.cat([entry[0] for entry in entries])  # (rows of every level, in)
        # The rows of each operator gathered into one run: X_op^T G_op, one product per operator.
        order = torch.argsort(row_operators, stable=True)
        inputs, output_grads = inputs.index_select(0, order), output_grads.index_select(0, order)
        start = 0
        for operator_id, count in enumerate(torch.bincount(row_operators, minlength=ctx.shape[0]).tolist()):
            if count:
                total[operator_id].addmm_(inputs[start:start + count].t(), output_grads[start:start + count])
                start += count
        return total, None, None


class _OperatorProduct(torch.autograd.Function):
    """``operator_linear`` of one level with the weight (and bias) read through ``_DeferredWeightGradient``: the
    backward computes the inputs' gradient and leaves the runs' rows for the weight's."""

    @staticmethod
    def forward(ctx, inputs, weight_tap, bias_tap, segments, weight_parts, bias_parts, weight_rows, bias_rows):
        output = inputs.new_empty(inputs.size(0), weight_parts[0].size(1))
        for operator_id, start, end in segments:  # each run's product written into its rows of the output
            if bias_parts is None:
                torch.mm(inputs[start:end], weight_parts[operator_id], out=output[start:end])
            else:
                torch.addmm(bias_parts[operator_id], inputs[start:end], weight_parts[operator_id],
                            out=output[start:end])
        ctx.save_for_backward(inputs)
        ctx.segments, ctx.weight_parts, ctx.weight_rows, ctx.bias_rows = segments, weight_parts, weight_rows, bias_rows
        return output

    @staticmethod
    def backward(ctx, output_grad):
        (inputs,) = ctx.saved_tensors
        segments = ctx.segments
        ctx.weight_rows.append((inputs, output_grad, segments))
        if ctx.bias_rows is not None:
            ctx.bias_rows.append((output_grad, segments))
        inputs_grad = None
        if ctx.needs_input_grad[0]:
            inputs_grad = output_grad.new_empty(inputs.shape)
            for operator_id, start, end in segments:
                torch.mm(output_grad[start:end], ctx.weight_parts[operator_id].t(), out=inputs_grad[start:end])
        return inputs_grad, None, None, None, None, None, None, None


def operator_bilinear(left: torch.Tensor, right: torch.Tensor, weight: torch.Tensor,
                      segments: Segments) -> torch.Tensor:
    """Third-order product per operator: ``out[n, k] = sum_ij left[n, i] * weight[op(n), i, j, k] * right[n, j]``.

    left (n, I), right (n, J), weight (n_operators, I, J, K) -> (n, K). The outer products of all rows are formed
    at once and each operator's tensor, seen as an (I*J, K) matrix, is applied to its run by ``operator_linear``:
    one matrix product per run, none per node.
    """
    n_operators, in_left, in_right, out = weight.shape
    outer = (left.unsqueeze(2) * right.unsqueeze(1)).reshape(left.shape[0], in_left * in_right)  # (n, I*J)
    weight_as_matrices = weight.reshape(n_operators, in_left * in_right, out)  # (ops, I*J, K)
    return operator_linear(outer, weight_as_matrices, None, segments)  # (n, K)


def gather_per_operator(table: torch.Tensor, operator_ids: torch.Tensor) -> torch.Tensor:
    """Rows of a per-operator table (n_operators, d) for each node: (n, d)."""
    return table.index_select(0, operator_ids)


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

    ``candidate_dropout`` p drops the candidate u of every internal node's update during training, c = i*drop(u) +
    f_l*c_l + f_r*c_r (recurrent dropout, Semeniuta et al. 2016; where Arabshahi et al.'s code drops in its
    Tree-LSTM): what a node adds to its memory is perturbed, the memories carried up from its children are not.
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
            candidate = nn.functional.dropout(candidate, self.candidate_dropout, training=True)
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
