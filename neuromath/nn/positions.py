"""Positional encodings, registered by name: sinusoidal (Vaswani et al. 2017, section 3.5)."""

from __future__ import annotations

import math

import torch
from torch import nn

from neuromath.registry import POSITIONS


@POSITIONS.register("sinusoidal")
class SinusoidalPositions(nn.Module):
    """Adds ``PE(pos, 2i) = sin(pos / 10000^(2i/d))``, ``PE(pos, 2i+1) = cos(...)`` to embeddings."""

    def __init__(self, d_model: int, max_len: int = 512):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)  # (L, 1)
        frequency = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))  # (D/2,)
        table = torch.zeros(max_len, d_model)
        table[:, 0::2] = torch.sin(position * frequency)
        table[:, 1::2] = torch.cos(position * frequency[: d_model // 2])
        self.register_buffer("table", table, persistent=False)

    def forward(self, embeddings: torch.Tensor, start: int = 0) -> torch.Tensor:
        """embeddings: (B, T, D); ``start`` is the position of the first of the T tokens."""
        length = embeddings.size(1)
        if start + length > self.table.size(0):
            raise ValueError(f"sequence of {start + length} tokens is longer than max_len {self.table.size(0)}")
        return embeddings + self.table[start : start + length]
