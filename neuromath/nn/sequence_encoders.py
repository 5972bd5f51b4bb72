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


def run_packed(rnn: nn.RNNBase, embedded: torch.Tensor, valid: torch.Tensor):
    """A batch-first ``rnn`` over ``embedded`` (B, S, E) whose real tokens are ``valid`` (B, S), packed so that padding
    never reaches a backward direction: the states (B, S, M), zero at padding, and the rnn's final state(s)."""
    if (STEPPED_ON_CPU and embedded.device.type == "cpu" and stepped_rnn.supports(rnn)
            and not torch.compiler.is_compiling()):
        return stepped_rnn.stepped(rnn, embedded, valid)
    lengths = valid.sum(dim=1).clamp(min=1)
    packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
    outputs, final = rnn(packed)
    states, _ = pad_packed_sequence(outputs, batch_first=True, total_length=embedded.size(1))
    return states, final


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
