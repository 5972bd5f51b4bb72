"""Dropout (Srivastava et al. 2014, "Dropout: A Simple Way to Prevent Neural Networks from Overfitting") with its
masks drawn by ``torch.rand`` on the CPU.

Inverted dropout: in training each element is kept with probability 1 - p and scaled by 1 / (1 - p), so that the
expected output is the input; in evaluation the input passes unchanged. That is ``F.dropout``'s distribution. On the
CPU ``F.dropout`` draws its mask with ``bernoulli_``, which took about three times as long, forward and backward, as
drawing uniform numbers and comparing them with p; the goal-tree decoders draw a mask for every node of every
training tree, so it was a tenth of a GTS training step (``benchmarks/word_problems.py --dropout`` times whole steps
with either mask). Elsewhere (CUDA) ``F.dropout`` runs, one fused kernel.

The masks come from PyTorch's default generator, as ``F.dropout``'s do: a seeded run draws the same masks again,
but not the masks ``F.dropout`` would have drawn. The stepped recurrent encoders (``stepped_rnn``) keep
``F.dropout`` between their layers, so that they draw what PyTorch's own GRU and LSTM modules draw.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

TORCH_MASKS = False  # True: F.dropout on the CPU too (what benchmarks/word_problems.py --dropout compares with)


def apply_dropout(x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """``x`` with each element zeroed with probability ``p`` and the others scaled by 1 / (1 - p) when ``training``;
    ``x`` itself otherwise."""
    if not training or p == 0.0:
        return x
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if x.device.type != "cpu" or TORCH_MASKS:
        return F.dropout(x, p, training=True)
    if p == 1.0:
        return x * 0.0
    keep = torch.rand(x.shape, device=x.device) >= p  # float32 draws whatever x's dtype, so p keeps its resolution
    return x * keep.to(x.dtype).mul_(1.0 / (1.0 - p))


class Dropout(nn.Dropout):
    """``nn.Dropout`` through ``apply_dropout``: the same module, state and ``p``, a faster mask on the CPU."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return apply_dropout(x, self.p, self.training)
