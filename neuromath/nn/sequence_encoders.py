"""Sequence baselines for equation verification: Elman RNN, LSTM, and the stack RNN of Joulin & Mikolov
2015 (section 3.1).

Each encoder reads the pre-order token sequence of one side of an equation and returns one vector,
the state after the last real token. They are registered in ``neuromath.registry.SEQUENCE_ENCODERS``:

* ``rnn``: an Elman network, h_t = tanh(W x_t + U h_{t-1} + b) (``torch.nn.RNN``);
* ``lstm``: an LSTM (``torch.nn.LSTM``); the vector returned is its h;
* ``stack_rnn``: an Elman network with a soft stack (``neuromath.nn.stack``): the top of the stack
  is read into the recurrence, h_t = tanh(W x_t + U h_{t-1} + P top(s_{t-1}) + b), then h_t chooses
  soft push / pop / no-op and the pushed vector sigmoid(D h_t + d), giving s_t. The stack holds
  vectors of the hidden size.

The API is shared: ``Encoder(vocab_size, hidden_size, pad_id=0, stack_depth=8)`` and
``forward(token_ids (B, T) long, lengths (B,) long) -> (B, hidden)``. Tokens after ``lengths[b]`` are
padding and never change the result (RNN and LSTM run on packed sequences; the stack RNN freezes a
row's state once its sequence has ended).
"""

from __future__ import annotations

import warnings

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from neuromath.errors import ConfigError
from neuromath.nn import stepped_rnn
from neuromath.nn.stack import StackController, empty_stack, stack_top
from neuromath.registry import SEQUENCE_ENCODERS

# On the CPU a GRU or LSTM runs step by step in Python (neuromath.nn.stepped_rnn: the same states, without the
# quadratic backward of PyTorch's packed CPU kernel); elsewhere, under torch.compile (whose graphs would unroll the
# steps of every batch's lengths anew) and when this is False, the module runs itself.
STEPPED_ON_CPU = True
# On a CUDA device a bidirectional GRU runs over its batch in two alignments instead of packed (``run_realigned``).
REALIGNED_ON_CUDA = True
# cuDNN copies one layer's weights into its own buffer there, and says so once; only for that call of this module
warnings.filterwarnings("ignore", message="RNN module weights are not part of single contiguous chunk",
                        category=UserWarning, module=__name__)


def run_packed(rnn: nn.RNNBase, embedded: torch.Tensor, valid: torch.Tensor):
    """A batch-first ``rnn`` over ``embedded`` (B, S, E) whose real tokens are ``valid`` (B, S), packed so that padding
    never reaches a backward direction: the states (B, S, M), zero at padding, and the rnn's final state(s)."""
    if (STEPPED_ON_CPU and embedded.device.type == "cpu" and stepped_rnn.supports(rnn)
            and not torch.compiler.is_compiling()):
        return stepped_rnn.stepped(rnn, embedded, valid)
    if (REALIGNED_ON_CUDA and embedded.device.type == "cuda" and realigned_supports(rnn)
            and not torch.compiler.is_compiling()):
        return run_realigned(rnn, embedded, valid)
    lengths = valid.sum(dim=1).clamp(min=1)
    packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
    outputs, final = rnn(packed)
    states, _ = pad_packed_sequence(outputs, batch_first=True, total_length=embedded.size(1))
    return states, final


def realigned_supports(rnn: nn.RNNBase) -> bool:
    """Whether ``run_realigned`` computes ``rnn``: a batch-first bidirectional GRU without projections."""
    return type(rnn) is nn.GRU and rnn.bidirectional and rnn.batch_first and rnn.input_size > 0


def run_realigned(rnn: nn.GRU, embedded: torch.Tensor, valid: torch.Tensor):
    """``run_packed`` for a batch-first bidirectional GRU without packing: the states (B, S, 2H), zero at padding,
    and the final states (2 * layers, B, H), as packing gives them (up to float rounding; dropout between layers draws
    its own masks).

    Padding after a row's tokens never reaches the forward direction's states at those tokens, but the backward
    direction of a padded batch reads it first. Here each layer runs once over 2B rows: the rows as they are, whose
    forward direction is kept, and the rows with their padding moved in front, whose backward direction starts at
    the last token and is kept, moved back into place. The half of the work no one reads costs less on a GPU than
    packing's per-step kernels and copies: on an H200, batch 64, graph2tree's GRU alone took 7.2 against 10.1 ms
    forward and backward (``results/gpu-check/h200-2026-12-04-syncs-5dc633f.log``), and a whole goal-tree step
    1.02-1.11x less (``benchmarks/tree_step_ab.py``). cuDNN copies each layer's weights into a buffer of its own."""
    rows, length, _ = embedded.shape
    hidden = rnn.hidden_size
    lengths = valid.sum(dim=1).clamp(min=1)  # (B,): as packing counts them
    steps = torch.arange(length, device=embedded.device)
    shift = (length - lengths)[:, None]  # (B, 1): how far the tokens move right when the padding moves in front
    to_front = ((steps - shift) % length)[:, :, None]  # (B, S, 1): left-aligned position p holds token p - shift
    back = ((steps + shift) % length)[:, :, None]  # and token t sits at left-aligned position t + shift
    real = (steps < lengths[:, None])[:, :, None]  # (B, S, 1)
    last = (lengths - 1)[None, :, None].expand(1, -1, hidden)  # (1, B, H)
    x, finals = embedded, []
    for layer in range(rnn.num_layers):
        names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh") if rnn.bias else ("weight_ih", "weight_hh")
        weights = [getattr(rnn, f"{name}_l{layer}{suffix}") for suffix in ("", "_reverse") for name in names]
        both = torch.cat([x, x.gather(1, to_front.expand(-1, -1, x.size(-1)))])  # (2B, S, E)
        start = both.new_zeros(2, 2 * rows, hidden)
        out, _ = torch._VF.gru(both, start, weights, rnn.bias, 1, 0.0, rnn.training, True, True)  # nn.GRU's kernel
        forward = out[:rows, :, :hidden]
        backward = out[rows:, :, hidden:].gather(1, back.expand(-1, -1, hidden))
        x = torch.cat([forward, backward], dim=-1) * real  # (B, S, 2H), zero at padding
        finals += [forward.transpose(0, 1).gather(0, last), backward[:, :1].transpose(0, 1)]
        if layer + 1 < rnn.num_layers and rnn.dropout and rnn.training:
            x = nn.functional.dropout(x, rnn.dropout, training=True)
    return x, torch.cat(finals)


class SequenceEncoder(nn.Module):
    """Base class: token embedding and input checks shared by every sequence encoder."""

    def __init__(self, vocab_size: int, hidden_size: int, pad_id: int = 0, stack_depth: int = 8):
        super().__init__()
        if vocab_size < 1 or hidden_size < 1:
            raise ConfigError(f"vocab_size and hidden_size must be positive, got {vocab_size}, {hidden_size}")
        if not 0 <= pad_id < vocab_size:
            raise ConfigError(f"pad_id {pad_id} is outside the vocabulary of size {vocab_size}")
        if stack_depth < 1:
            raise ConfigError(f"stack_depth must be at least 1, got {stack_depth}")
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.pad_id = pad_id
        self.stack_depth = stack_depth
        self.embedding = nn.Embedding(vocab_size, hidden_size, padding_idx=pad_id)

    def check_inputs(self, token_ids: torch.Tensor, lengths: torch.Tensor) -> None:
        if token_ids.dim() != 2 or lengths.shape != (token_ids.shape[0],):
            raise ValueError(
                f"expected token_ids (B, T) and lengths (B,), got {tuple(token_ids.shape)} and {tuple(lengths.shape)}"
            )
        if token_ids.shape[0] > 0 and (int(lengths.min()) < 1 or int(lengths.max()) > token_ids.shape[1]):
            raise ValueError(f"every length must lie in 1..{token_ids.shape[1]}, got {lengths.tolist()}")

    def forward(self, token_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class PackedRecurrentEncoder(SequenceEncoder):
    """A ``torch.nn`` recurrent layer run on packed sequences; subclasses set ``self.recurrent``."""

    recurrent: nn.RNNBase

    def forward(self, token_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        self.check_inputs(token_ids, lengths)
        embedded = self.embedding(token_ids)  # (B, T, hidden)
        packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, final = self.recurrent(packed)
        final_hidden = final[0] if isinstance(final, tuple) else final  # (layers, B, hidden)
        return final_hidden[-1]  # (B, hidden), in the original batch order


@SEQUENCE_ENCODERS.register("rnn")
class ElmanEncoder(PackedRecurrentEncoder):
    """Elman RNN: h_t = tanh(W x_t + U h_{t-1} + b); returns h after the last real token."""

    def __init__(self, vocab_size: int, hidden_size: int, pad_id: int = 0, stack_depth: int = 8):
        super().__init__(vocab_size, hidden_size, pad_id, stack_depth)
        self.recurrent = nn.RNN(hidden_size, hidden_size, nonlinearity="tanh", batch_first=True)


@SEQUENCE_ENCODERS.register("lstm")
class LSTMEncoder(PackedRecurrentEncoder):
    """LSTM; returns h after the last real token."""

    def __init__(self, vocab_size: int, hidden_size: int, pad_id: int = 0, stack_depth: int = 8):
        super().__init__(vocab_size, hidden_size, pad_id, stack_depth)
        self.recurrent = nn.LSTM(hidden_size, hidden_size, batch_first=True)


@SEQUENCE_ENCODERS.register("stack_rnn")
class StackRNNEncoder(SequenceEncoder):
    """Elman RNN with a soft stack (Joulin & Mikolov 2015), stepped over time and batched over B."""

    def __init__(self, vocab_size: int, hidden_size: int, pad_id: int = 0, stack_depth: int = 8):
        super().__init__(vocab_size, hidden_size, pad_id, stack_depth)
        self.input_to_hidden = nn.Linear(hidden_size, hidden_size)
        self.hidden_to_hidden = nn.Linear(hidden_size, hidden_size, bias=False)
        self.stack_to_hidden = nn.Linear(hidden_size, hidden_size, bias=False)
        self.controller = StackController(hidden_size, hidden_size)

    def step(
        self, embedded: torch.Tensor, hidden: torch.Tensor, stack: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One time step for a batch: embedded (B, hidden), hidden (B, hidden), stack (B, depth, hidden)."""
        new_hidden = torch.tanh(
            self.input_to_hidden(embedded) + self.hidden_to_hidden(hidden) + self.stack_to_hidden(stack_top(stack))
        )
        new_stack = self.controller.step(stack, new_hidden)
        return new_hidden, new_stack

    def forward(self, token_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        self.check_inputs(token_ids, lengths)
        batch_size = token_ids.shape[0]
        embedded = self.embedding(token_ids)  # (B, T, hidden)
        hidden = embedded.new_zeros(batch_size, self.hidden_size)
        stack = empty_stack(batch_size, self.stack_depth, self.hidden_size, like=embedded)
        lengths = lengths.to(token_ids.device)
        steps = int(lengths.max()) if batch_size > 0 else 0
        for t in range(steps):
            new_hidden, new_stack = self.step(embedded[:, t], hidden, stack)
            running = (t < lengths).unsqueeze(-1)  # (B, 1): rows whose sequence has not ended
            hidden = torch.where(running, new_hidden, hidden)
            stack = torch.where(running.unsqueeze(-1), new_stack, stack)
        return hidden
