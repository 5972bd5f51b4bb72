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
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence


def supports(rnn: nn.RNNBase) -> bool:
    """Whether ``stepped`` runs ``rnn`` (a GRU or LSTM with biases, batch-first, without projections)."""
    return (rnn.mode in ("GRU", "LSTM") and rnn.bias and rnn.batch_first
            and getattr(rnn, "proj_size", 0) == 0)


def _direction(rnn: nn.RNNBase, data: torch.Tensor, batch_sizes: list[int], layer: int, reverse: bool):
    """One layer's one direction over packed ``data`` (tokens, in): its outputs (tokens, H) in packed order and its
    final h (B, H) and c (B, H, LSTM only; else None), rows in packed (sorted) order."""
    suffix = f"_l{layer}" + ("_reverse" if reverse else "")
    weight_hh, bias_hh = getattr(rnn, f"weight_hh{suffix}"), getattr(rnn, f"bias_hh{suffix}")
    steps = F.linear(data, getattr(rnn, f"weight_ih{suffix}"), getattr(rnn, f"bias_ih{suffix}")).split(batch_sizes)
    lstm = rnn.mode == "LSTM"
    first = batch_sizes[-1] if reverse else batch_sizes[0]
    h = data.new_zeros(first, rnn.hidden_size)
    c = data.new_zeros(first, rnn.hidden_size) if lstm else None
    outputs: list[torch.Tensor] = [h] * len(batch_sizes)
    left_h, left_c = [], []  # forward: the final states of the rows that ended, latest rows first
    for t in (reversed(range(len(batch_sizes))) if reverse else range(len(batch_sizes))):
        rows = batch_sizes[t]
        if rows < h.size(0):  # forward: the longest rows go on, the others have ended
            left_h.append(h[rows:])
            h = h[:rows]
            if lstm:
                left_c.append(c[rows:])
                c = c[:rows]
        elif rows > h.size(0):  # reverse: rows whose last token is at t start here
            h = torch.cat([h, h.new_zeros(rows - h.size(0), h.size(1))])
            if lstm:
                c = torch.cat([c, c.new_zeros(rows - c.size(0), c.size(1))])
        hidden = F.linear(h, weight_hh, bias_hh)
        if lstm:
            gate_i, gate_f, gate_g, gate_o = (steps[t] + hidden).chunk(4, dim=1)
            c = torch.sigmoid(gate_f) * c + torch.sigmoid(gate_i) * torch.tanh(gate_g)
            h = torch.sigmoid(gate_o) * torch.tanh(c)
        else:
            input_r, input_z, input_n = steps[t].chunk(3, dim=1)
            hidden_r, hidden_z, hidden_n = hidden.chunk(3, dim=1)
            reset = torch.sigmoid(input_r + hidden_r)
            update = torch.sigmoid(input_z + hidden_z)
            candidate = torch.tanh(input_n + reset * hidden_n)
            h = candidate + update * (h - candidate)
        outputs[t] = h
    if not reverse and left_h:
        h = torch.cat([h, *reversed(left_h)])
        if lstm:
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
