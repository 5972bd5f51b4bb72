"""A multi-layer, one- or two-directional ``torch.nn.GRU`` or ``torch.nn.LSTM`` run one time step at a time over a
packed batch, with the module's own weights: the same states as the module, computed in the order PyTorch's CPU
kernel computes them, without the cost of that kernel's backward.

Why: on the CPU, PyTorch runs a packed recurrent layer by slicing each time step's rows out of the input gates
of all tokens (``narrow``), and the backward of each slice writes its gradient into a zero tensor as large as all
of them (tokens x 3H for a GRU), once per time step: a cost that grows with tokens x steps. Profiling a Graph2Tree
training step on ASDiv-A (64 problems, up to 85 tokens) put about a third of the step in those fills and
additions. Here the input projection of every token is one matrix product whose result is *split* into the time
steps (one backward for all of them), the recurrence runs on the rows still active at each step (the batch sorted
by length, as packing does), and the outputs are concatenated back in packed order: no padding is computed and no
backward is quadratic. ``benchmarks/word_problems.py --stepped-rnn`` measures both in one run.

The recurrences are PyTorch's (gate order r, z, n for the GRU and i, f, g, o for the LSTM):

  GRU:  r = sigma(W_ir x + b_ir + W_hr h + b_hr), z = sigma(W_iz x + b_iz + W_hz h + b_hz),
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = n + z * (h - n)   (= (1 - z) n + z h)
  LSTM: [i, f, g, o] = W_i x + b_i + W_h h + b_h, c' = sigma(f) c + sigma(i) tanh(g), h' = sigma(o) tanh(c')

with the module's dropout on every layer's output but the last, in training mode. Modules with projections
(``proj_size``), without biases or not batch-first are run by the module itself (``supports``).

A GRU direction is one autograd function (``GRUDirection``) with its backward written out: the recurrent weight's
gradient of every time step is one matrix product over all of them (sum over t of dG_t^T h_(t-1)) instead of a
product and an addition per step, and a step's backward is a few element-wise operations and one product for the
previous state's gradient. Under bf16 autocast its forward computes what autocast computes (products in bf16, the
state in float32) and casts the recurrent weight once per direction, not once per step; its backward keeps the
gates' gradients and the products in the forward's dtype, as autograd would, and the state's gradient in float32.
"""

from __future__ import annotations

import itertools

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence


def supports(rnn: nn.RNNBase) -> bool:
    """Whether ``stepped`` runs ``rnn`` (a GRU or LSTM with biases, batch-first, without projections)."""
    return (rnn.mode in ("GRU", "LSTM") and rnn.bias and rnn.batch_first
            and getattr(rnn, "proj_size", 0) == 0)


class GRUDirection(torch.autograd.Function):
    """One GRU direction over packed input gates ``gates`` (tokens, 3H; W_ih x + b_ih in packed order, rows sorted
    by length as packing sorts them): its outputs (tokens, H) in packed order and its final h (B, H) in sorted
    order. ``state_dtype`` is the state's (the layer input's) dtype. See the module docstring for why.

    Backward, with g the gradient of a step's new state h' = n + z (h - n), n = tanh(x_n + r m), m = W_hn h + b_hn:
    dm_n = g (1 - z)(1 - n^2) r, dm_r = g (1 - z)(1 - n^2) m r (1 - r), dm_z = g (h - n) z (1 - z); the input gates'
    gradient is (dm_r, dm_z, g (1 - z)(1 - n^2)), and the state read gets g z + dm W_hh. The factors of g are
    computed for every token at once before the steps, so that a step is a product by them and one matrix product.
    """

    @staticmethod
    def forward(ctx, gates, weight_hh, bias_hh, batch_sizes: list[int], reverse: bool, state_dtype: torch.dtype):
        size = weight_hh.size(1)
        compute = gates.dtype  # bf16 under autocast (the input product's), else the gates' own
        weight, bias = weight_hh.to(compute), bias_hh.to(compute)
        tokens = gates.size(0)
        starts = [0, *itertools.accumulate(batch_sizes[:-1])]  # each step's first packed row
        outputs = gates.new_empty(tokens, size, dtype=state_dtype)
        previous = gates.new_empty(tokens, size, dtype=state_dtype)  # each step's h before it
        hidden_n = gates.new_empty(tokens, size)  # W_hn h + b_hn
        reset_update = gates.new_empty(tokens, 2 * size)
        candidate_all = gates.new_empty(tokens, size)
        h = gates.new_zeros(batch_sizes[-1] if reverse else batch_sizes[0], size, dtype=state_dtype)
        left = []  # forward: the final states of the rows that ended, latest rows first
        for t in (reversed(range(len(batch_sizes))) if reverse else range(len(batch_sizes))):
            rows, start = batch_sizes[t], starts[t]
            if rows < h.size(0):
                left.append(h[rows:])
                h = h[:rows]
            elif rows > h.size(0):
                h = torch.cat([h, h.new_zeros(rows - h.size(0), size)])
            span = slice(start, start + rows)
            previous[span] = h
            hidden = torch.addmm(bias, h.to(compute), weight.t())
            gate = torch.sigmoid(gates[span, : 2 * size] + hidden[:, : 2 * size], out=reset_update[span])
            hidden_n[span] = hidden[:, 2 * size:]
            candidate = torch.tanh(gates[span, 2 * size:] + gate[:, :size] * hidden_n[span], out=candidate_all[span])
            h = torch.add(candidate, gate[:, size:] * (h - candidate), out=outputs[span])
        final = torch.cat([h, *reversed(left)]) if left else h.clone()
        ctx.save_for_backward(weight, previous, hidden_n, reset_update, candidate_all)
        ctx.layout = (batch_sizes, starts, reverse, gates.dtype, weight_hh.dtype)
        return outputs, final

    @staticmethod
    def backward(ctx, grad_outputs, grad_final):
        weight, previous, hidden_n, reset_update, candidate = ctx.saved_tensors
        batch_sizes, starts, reverse, gates_dtype, weight_dtype = ctx.layout
        size, steps, tokens = weight.size(1), len(batch_sizes), previous.size(0)
        compute = weight.dtype  # the forward's products' dtype: the gates' gradients are kept in it, as autograd would
        work = torch.promote_types(torch.float32, previous.dtype)  # the states' gradients: float32 (or float64)
        reset, update = reset_update.chunk(2, dim=1)
        through_candidate = (1 - update) * (1 - candidate * candidate)  # d x_n / d h'
        factors = torch.stack([through_candidate * hidden_n * reset * (1 - reset),
                               ((previous - candidate) * update * (1 - update)).to(compute),
                               through_candidate * reset], dim=1)  # (tokens, 3, H): d(r, z, n parts of m) / d h'
        grad_state = grad_outputs.to(work, copy=True)  # (tokens, H): the gradient of each step's new state
        if reverse:  # every row's final state is step 0's
            grad_state[: batch_sizes[0]] += grad_final
        else:  # row i (sorted) has a token at every step with more than i rows; its last is its final state
            last = [starts[sum(rows > row for rows in batch_sizes) - 1] + row for row in range(batch_sizes[0])]
            grad_state.index_add_(0, torch.tensor(last, device=grad_state.device), grad_final.to(work))
        grad_hidden = factors.new_empty(tokens, 3, size)  # d(W_hh h + b_hh), (r, z, n) parts
        carried = None  # the gradient of the state a step read, for the step that wrote it
        for t in (range(steps) if reverse else reversed(range(steps))):
            rows, start = batch_sizes[t], starts[t]
            span = slice(start, start + rows)
            grad = grad_state[span]
            if carried is not None:
                if reverse:  # the state read at step t came from step t + 1
                    grad += carried[:rows]
                else:
                    grad[: carried.size(0)] += carried
            step = torch.mul(grad.to(compute)[:, None], factors[span], out=grad_hidden[span])
            carried = torch.addcmul(step.view(rows, 3 * size) @ weight, grad, update[span])
        flat = grad_hidden.view(tokens, 3 * size)
        grad_weight = (flat.t() @ previous.to(compute)).to(weight_dtype)  # every step's in one product
        grad_bias = flat.sum(dim=0, dtype=work).to(weight_dtype)
        grad_hidden[:, 2] = grad_state * through_candidate  # the input gates' gradient: m's for r and z, x_n's for n
        return flat.to(gates_dtype), grad_weight, grad_bias, None, None, None


def _direction(rnn: nn.RNNBase, data: torch.Tensor, batch_sizes: list[int], layer: int, reverse: bool):
    """One layer's one direction over packed ``data`` (tokens, in): its outputs (tokens, H) in packed order and its
    final h (B, H) and c (B, H, LSTM only; else None), rows in packed (sorted) order."""
    suffix = f"_l{layer}" + ("_reverse" if reverse else "")
    weight_hh, bias_hh = getattr(rnn, f"weight_hh{suffix}"), getattr(rnn, f"bias_hh{suffix}")
    gates = F.linear(data, getattr(rnn, f"weight_ih{suffix}"), getattr(rnn, f"bias_ih{suffix}"))
    if rnn.mode == "GRU":
        outputs, final = GRUDirection.apply(gates, weight_hh, bias_hh, batch_sizes, reverse, data.dtype)
        return outputs, final, None
    steps = gates.split(batch_sizes)  # an LSTM: autograd through each step
    first = batch_sizes[-1] if reverse else batch_sizes[0]
    h = data.new_zeros(first, rnn.hidden_size)
    c = data.new_zeros(first, rnn.hidden_size)
    outputs: list[torch.Tensor] = [h] * len(batch_sizes)
    left_h, left_c = [], []  # forward: the final states of the rows that ended, latest rows first
    for t in (reversed(range(len(batch_sizes))) if reverse else range(len(batch_sizes))):
        rows = batch_sizes[t]
        if rows < h.size(0):  # forward: the longest rows go on, the others have ended
            left_h.append(h[rows:])
            left_c.append(c[rows:])
            h, c = h[:rows], c[:rows]
        elif rows > h.size(0):  # reverse: rows whose last token is at t start here
            h = torch.cat([h, h.new_zeros(rows - h.size(0), h.size(1))])
            c = torch.cat([c, c.new_zeros(rows - c.size(0), c.size(1))])
        gate_i, gate_f, gate_g, gate_o = (steps[t] + F.linear(h, weight_hh, bias_hh)).chunk(4, dim=1)
        c = torch.sigmoid(gate_f) * c + torch.sigmoid(gate_i) * torch.tanh(gate_g)
        h = torch.sigmoid(gate_o) * torch.tanh(c)
        outputs[t] = h
    if not reverse and left_h:
        h = torch.cat([h, *reversed(left_h)])
        c = torch.cat([c, *reversed(left_c)])
    return torch.cat(outputs), h, c


def unpacked(data: torch.Tensor, packed: PackedSequence, size: int, length: int) -> torch.Tensor:
    """Packed rows ``data`` (tokens, M) of ``packed``'s layout as a batch-first (size, length, M), zero at padding:
    one ``index_copy`` whose backward is one gather. (``pad_packed_sequence`` copies one time step at a time, and
    its backward copies the whole padded tensor once per time step; ``benchmarks/word_problems.py --unpack``
    measured this 1.04x (gts) and 1.07x (graph2tree) faster per batch-64 step on ASDiv-A.)"""
    batch_sizes = packed.batch_sizes.to(data.device)
    steps = torch.arange(batch_sizes.numel(), device=data.device)
    time = steps.repeat_interleave(batch_sizes)  # (tokens,): each packed row's time step
    starts = torch.cumsum(batch_sizes, 0) - batch_sizes  # first packed row of each step
    rank = torch.arange(data.size(0), device=data.device) - starts[time]  # the row's place in the sorted batch
    row = packed.sorted_indices.to(data.device)[rank] if packed.sorted_indices is not None else rank
    flat = data.new_zeros(size * length, data.size(1))
    return flat.index_copy(0, row * length + time, data).view(size, length, data.size(1))


def stepped(rnn: nn.RNNBase, embedded: torch.Tensor, valid: torch.Tensor):
    """``rnn`` (``supports``) over ``embedded`` (B, S, E) whose real tokens are ``valid`` (B, S), as ``run_packed``
    runs it: the states (B, S, D * H), zero at padding, and the final state (h_n, or (h_n, c_n) for an LSTM), each
    (layers * D, B, H) in the module's layout."""
    lengths = valid.sum(dim=1).clamp(min=1)
    packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
    data, batch_sizes = packed.data, packed.batch_sizes.tolist()
    finals_h, finals_c = [], []
    for layer in range(rnn.num_layers):
        outputs = []
        for reverse in (False, True) if rnn.bidirectional else (False,):
            output, h, c = _direction(rnn, data, batch_sizes, layer, reverse)
            outputs.append(output)
            finals_h.append(h)
            finals_c.append(c)
        data = torch.cat(outputs, dim=1) if len(outputs) > 1 else outputs[0]
        if layer < rnn.num_layers - 1 and rnn.dropout and rnn.training:
            data = F.dropout(data, rnn.dropout, training=True)
    states = unpacked(data, packed, embedded.size(0), embedded.size(1))
    h_n = torch.stack(finals_h).index_select(1, packed.unsorted_indices)
    if rnn.mode == "LSTM":
        return states, (h_n, torch.stack(finals_c).index_select(1, packed.unsorted_indices))
    return states, h_n
