"""Stack-augmented tree cells: stack MTree-LSTM and MI-Tree-LSTM (Mali et al. 2021, eqs. 16-19) and the
Tree Stack Memory Unit (Arabshahi, Lu, Singh, Anandkumar 2019, "Memory augmented recursive neural networks"), as
published and in an LSTM variant.

The Mali et al. cells follow the abstract and the soft stack of Joulin & Mikolov 2015, written here in full. A
state is the base cell's state plus the stack: ``(h, c, stack)`` with stack (n, stack_depth, hidden); ``stack[:, 0]``
is the top. Leaves start with an empty (zero) stack. The stack update is ``neuromath.nn.stack.soft_stack_update``:
``new[0] = push*pushed + pop*s[1] + noop*s[0]``, ``new[i] = push*s[i-1] + pop*s[i+1] + noop*s[i]``.

``stack_mtree_lstm`` / ``stack_mi_tree_lstm`` (Mali et al. 2021, eqs. 16-19, on the cells of
``neuromath.nn.tree_cells``), at a node with operator op and children l, r:

* the children's stacks are mixed by a learned gate, g = sigmoid(G_op [h_l; h_r] + g_op) (n, hidden), applied to
  every stack element: ``s~ = g * s_l + (1 - g) * s_r``; a unary node keeps its child's stack (g = 1);
* the top of the mixed stack, ``r = s~[0]``, is read into the base cell: its five gate pre-activations
  [i, f_l, f_r, o, u] get the extra term ``R_op r`` (R_op: hidden -> 5 hidden); c and h follow as in the base cell;
* the new h chooses the soft actions and the pushed vector (Joulin & Mikolov): ``(push, pop, noop) =
  softmax(A h + a)``, ``pushed = sigmoid(D h + d)``, and the node's stack is the soft update of s~.

``tree_smu``, the Tree Stack Memory Unit of Arabshahi et al. 2019's public code (ForoughA/recursiveMemNet,
``StackNNTreesMem2out`` with ``--stack-type stack --top-k 1 --gate-push-pop --normalize-action --no-op``, tanh node
and stack activations): a tree-RNN whose memory is the stack, not an LSTM. A state is ``(h, stack)``; a leaf's h is
its embedding, its stack empty. At a node with operator op and children l, r, x = [h_l; h_r] (a unary node's missing
right child is zeros); every map has per-operator parameters and every gate is per coordinate:

* the children's stacks are gated into one: ``s~ = g_l * s_l + g_r * s_r``, ``[g_l, g_r] = sigmoid(G_op x + g_op)``
  (not normalised: g_l + g_r may exceed 1);
* the actions: ``a = sigmoid(A_op x + a_op)`` gives three (n, H) vectors for push, pop and no-op, then a softmax
  over the three actions per coordinate (their ``normalize_action``: a softmax of sigmoid *outputs*, so an action
  weighs between 1/(1+2e) ~ 0.16 and e/(e+2) ~ 0.58, never one-hot);
* the pushed vector ``p = tanh(P_op x + p_op)``, and the node's stack is the soft update of s~ with these actions;
* the output reads the top of the node's *own* new stack: ``h = sigmoid(O_op x + o_op) * tanh(s[0])``.

The children reach h only through the gates and the pushed vector; a node remembers what its stack holds. The
published model also drops out p (``--dropout``); these cells take no dropout.

``tree_smu_lstm``, an SMU variant kept for comparison: a binary per-operator Tree-LSTM (``tree_cells``) whose nodes
also carry a stack:

* each child's stack is gated into the parent's: ``[g_l, g_r] = sigmoid(G_op [h_l; h_r] + g_op)`` (two (n, hidden)
  gates), ``s~ = g_l * s_l + g_r * s_r`` (s_r is zero for a unary node);
* the gates and candidate read the children's states and the top of s~: ``[i, f_l, f_r, o, u] =
  W_op [h_l; h_r; s~[0]] + b_op``, ``c = i*u + f_l*c_l + f_r*c_r``, ``h = o*tanh(c)``;
* the push and pop probabilities are decided from the children's states, ``(push, pop) = softmax(P_op [h_l; h_r] +
  p_op)`` (two actions, no no-op), and a push writes the node's new h: ``s = soft_stack_update(s~, push, pop, 0,
  h)``. A node can so read states of descendants below its children.

Per-operator parameters are stacked (n_operators, in, out) and applied with ``operator_linear``: one matrix product
per operator present in a level.
"""

from __future__ import annotations

import torch
from torch import nn

from neuromath.errors import ConfigError
from neuromath.nn.operator_products import Segments, gather_per_operator, operator_linear
from neuromath.nn.stack import StackController, empty_stack, soft_stack_update, stack_top
from neuromath.nn.tree_cells import MITreeLSTMCell, MTreeLSTMCell, TreeCell, TreeLSTMBase, init_stacked_linear
from neuromath.registry import TREE_CELLS


def check_stack_depth(stack_depth: int) -> None:
    if stack_depth < 1:
        raise ConfigError(f"stack_depth must be at least 1, got {stack_depth}")


class StackMixingTreeLSTM(TreeLSTMBase):
    """Shared by Mali et al.'s stack cells: gated mix of the children's stacks, its top read into the five gate
    pre-activations, push/pop/no-op controller driven by the new h. Subclasses give ``base_preactivations`` (the
    base cell's [i, f_l, f_r, o, u], (n, 5H))."""

    uses_stack = True

    def __init__(self, hidden_size: int, n_operators: int, stack_depth: int = 8, **options):
        super().__init__(hidden_size, n_operators, **options)
        check_stack_depth(stack_depth)
        self.stack_depth = stack_depth
        self.mix_weight = nn.Parameter(torch.empty(n_operators, 2 * hidden_size, hidden_size))
        self.mix_bias = nn.Parameter(torch.empty(n_operators, hidden_size))
        self.read_weight = nn.Parameter(torch.empty(n_operators, hidden_size, 5 * hidden_size))
        init_stacked_linear(self.mix_weight, self.mix_bias)
        init_stacked_linear(self.read_weight)
        self.controller = StackController(hidden_size, hidden_size)

    def base_preactivations(self, operator_ids: torch.Tensor, segments: Segments, left_hidden: torch.Tensor,
                            right_hidden: torch.Tensor, has_right: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def leaf(self, embedded):
        hidden, memory = super().leaf(embedded)
        return (hidden, memory, empty_stack(embedded.shape[0], self.stack_depth, self.hidden_size, like=embedded))

    def empty_state(self, n, like):
        return (*super().empty_state(n, like), empty_stack(n, self.stack_depth, self.hidden_size, like=like))

    def mixed_stack(self, segments: Segments, left: tuple[torch.Tensor, ...], right: tuple[torch.Tensor, ...],
                    has_right: torch.Tensor) -> torch.Tensor:
        """s~ = g * s_l + (1 - g) * s_r with g = sigmoid(G_op [h_l; h_r] + g_op), g = 1 for a unary node."""
        children = torch.cat([left[0], right[0]], dim=1)  # (n, 2H)
        gate = torch.sigmoid(operator_linear(children, self.mix_weight, self.mix_bias, segments))  # (n, H)
        gate = has_right * gate + (1.0 - has_right)
        gate = gate.unsqueeze(1)  # (n, 1, H): the same gate for every stack element
        return gate * left[2] + (1.0 - gate) * right[2]

    def node(self, operator_ids, segments, left, right, has_right):
        stack = self.mixed_stack(segments, left, right, has_right)  # (n, depth, H)
        read = operator_linear(stack_top(stack), self.read_weight, None, segments)  # (n, 5H)
        preactivations = self.base_preactivations(operator_ids, segments, left[0], right[0], has_right) + read
        hidden, memory = self.lstm_update(preactivations, left[1], right[1])
        return (hidden, memory, self.controller.step(stack, hidden))


@TREE_CELLS.register("stack_mtree_lstm")
class StackMTreeLSTMCell(StackMixingTreeLSTM, MTreeLSTMCell):
    """MTree-LSTM with a stack (Mali et al. 2021, eqs. 2-9 and 16-19):
    pre = W_op m + V_op [h_l; h_r] + b_op + R_op top(s~)."""

    def base_preactivations(self, operator_ids, segments, left_hidden, right_hidden, has_right):
        return self.multiplicative_preactivations(segments, left_hidden, right_hidden, has_right)  # (n, 5H)


@TREE_CELLS.register("stack_mi_tree_lstm")
class StackMITreeLSTMCell(StackMixingTreeLSTM, MITreeLSTMCell):
    """MI-Tree-LSTM with a stack (Mali et al. 2021, eqs. 10-15 and 16-19): the MI pre-activation plus R_op top(s~)."""

    def base_preactivations(self, operator_ids, segments, left_hidden, right_hidden, has_right):
        left_projected = operator_linear(left_hidden, self.left_weight, None, segments)  # (n, 5H)
        right_projected = operator_linear(right_hidden, self.right_weight, None, segments)  # (n, 5H)
        right_factor = has_right * right_projected + (1.0 - has_right)
        alpha = gather_per_operator(self.alpha, operator_ids)
        beta_left = gather_per_operator(self.beta_left, operator_ids)
        beta_right = gather_per_operator(self.beta_right, operator_ids)
        bias = gather_per_operator(self.bias, operator_ids)
        return alpha * left_projected * right_factor + beta_left * left_projected + beta_right * right_projected + bias


@TREE_CELLS.register("tree_smu")
class TreeSMUCell(TreeCell):
    """Tree Stack Memory Unit as published (Arabshahi et al. 2019, see the module docstring): per-operator gated
    merge of the children's stacks, per-coordinate push / pop / no-op, h = o * tanh(top of the node's new stack).

    Every per-operator map of x = [h_l; h_r] is a block of one stacked weight (n_operators, 2H, 7H), columns ordered
    [push, pop, no-op, g_l, g_r, pushed, output]: one matrix product per operator present in a level."""

    uses_stack = True

    def __init__(self, hidden_size: int, n_operators: int, stack_depth: int = 5, **options):
        super().__init__(hidden_size, n_operators, **options)
        check_stack_depth(stack_depth)
        self.stack_depth = stack_depth
        self.weight = nn.Parameter(torch.empty(n_operators, 2 * hidden_size, 7 * hidden_size))
        self.bias = nn.Parameter(torch.empty(n_operators, 7 * hidden_size))
        init_stacked_linear(self.weight, self.bias)

    def leaf(self, embedded):
        return (embedded, empty_stack(embedded.shape[0], self.stack_depth, self.hidden_size, like=embedded))

    def empty_state(self, n, like):
        return (like.new_zeros(n, self.hidden_size), empty_stack(n, self.stack_depth, self.hidden_size, like=like))

    def node(self, operator_ids, segments, left, right, has_right):
        children = torch.cat([left[0], right[0]], dim=1)  # (n, 2H); a missing right child is zeros
        pre = operator_linear(children, self.weight, self.bias, segments)  # (n, 7H)
        actions, gates, pushed, output = pre.split([3 * self.hidden_size, 2 * self.hidden_size,
                                                    self.hidden_size, self.hidden_size], dim=1)
        push, pop, noop = torch.softmax(torch.sigmoid(actions).unflatten(1, (3, self.hidden_size)), dim=1).unbind(1)
        left_gate, right_gate = torch.sigmoid(gates).unsqueeze(1).chunk(2, dim=2)  # (n, 1, H) each
        stack = left_gate * left[1] + right_gate * right[1]  # (n, depth, H); the empty right stack adds nothing
        stack = soft_stack_update(stack, push, pop, noop, torch.tanh(pushed))
        return (torch.sigmoid(output) * torch.tanh(stack_top(stack)), stack)


@TREE_CELLS.register("tree_smu_lstm")
class TreeSMULSTMCell(TreeLSTMBase):
    """SMU variant (see the module docstring): a per-operator Tree-LSTM whose children's stacks are gated into the
    parent's, read at the top, and pushed (the new h) or popped as the children's states decide."""

    uses_stack = True

    def __init__(self, hidden_size: int, n_operators: int, stack_depth: int = 8, **options):
        super().__init__(hidden_size, n_operators, **options)
        check_stack_depth(stack_depth)
        self.stack_depth = stack_depth
        self.weight = nn.Parameter(torch.empty(n_operators, 3 * hidden_size, 5 * hidden_size))
        self.bias = nn.Parameter(torch.empty(n_operators, 5 * hidden_size))
        self.stack_gate_weight = nn.Parameter(torch.empty(n_operators, 2 * hidden_size, 2 * hidden_size))
        self.stack_gate_bias = nn.Parameter(torch.empty(n_operators, 2 * hidden_size))
        self.action_weight = nn.Parameter(torch.empty(n_operators, 2 * hidden_size, 2))
        self.action_bias = nn.Parameter(torch.empty(n_operators, 2))
        init_stacked_linear(self.weight, self.bias)
        init_stacked_linear(self.stack_gate_weight, self.stack_gate_bias)
        init_stacked_linear(self.action_weight, self.action_bias)
        self.set_forget_bias(self.bias)

    def leaf(self, embedded):
        hidden, memory = super().leaf(embedded)
        return (hidden, memory, empty_stack(embedded.shape[0], self.stack_depth, self.hidden_size, like=embedded))

    def empty_state(self, n, like):
        return (*super().empty_state(n, like), empty_stack(n, self.stack_depth, self.hidden_size, like=like))

    def node(self, operator_ids, segments, left, right, has_right):
        children = torch.cat([left[0], right[0]], dim=1)  # (n, 2H)
        stack_gates = torch.sigmoid(operator_linear(children, self.stack_gate_weight, self.stack_gate_bias, segments))
        left_gate, right_gate = stack_gates.unsqueeze(1).chunk(2, dim=2)  # (n, 1, H) each
        stack = left_gate * left[2] + (has_right.unsqueeze(-1) * right_gate) * right[2]  # (n, depth, H)
        inputs = torch.cat([children, stack_top(stack)], dim=1)  # (n, 3H)
        preactivations = operator_linear(inputs, self.weight, self.bias, segments)
        hidden, memory = self.lstm_update(preactivations, left[1], right[1])
        actions = torch.softmax(operator_linear(children, self.action_weight, self.action_bias, segments), dim=1)
        push, pop = actions.split(1, dim=1)  # (n, 1) each
        return (hidden, memory, soft_stack_update(stack, push, pop, torch.zeros_like(push), hidden))
