"""Positional encodings, registered by name: sinusoidal (Vaswani et al. 2017, section 3.5), learned
absolute positions (Gehring et al. 2017, section 3.1).

The contract: ``Encoding.build(config: TransformerConfig)`` makes one; ``forward(embeddings, start, tree)``
returns the embeddings (B, T, D) with positions added, where ``start`` is the absolute position of
the first of the T tokens (an int, or a 0-d tensor in fixed-shape decoding, ``neuromath.decoding.fixed_shapes``,
where the caller has checked the length) and ``tree`` (only for encodings with ``needs_tree``) is the dict of
``neuromath.nn.tree_structure.TreeParser`` for those tokens (``paths``: (B, T, L) child indices from the root).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from neuromath.registry import POSITIONS


@POSITIONS.register("sinusoidal")
class SinusoidalPositions(nn.Module):
    """Adds ``PE(pos, 2i) = sin(pos / 10000^(2i/d))``, ``PE(pos, 2i+1) = cos(...)`` to embeddings."""

    needs_tree = False

    @classmethod
    def build(cls, config) -> "SinusoidalPositions":
        return cls(config.d_model, config.max_len)

    def __init__(self, d_model: int, max_len: int = 512):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)  # (L, 1)
        frequency = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))  # (D/2,)
        table = torch.zeros(max_len, d_model)
        table[:, 0::2] = torch.sin(position * frequency)
        table[:, 1::2] = torch.cos(position * frequency[: d_model // 2])
        self.register_buffer("table", table, persistent=False)

    def forward(self, embeddings: torch.Tensor, start: int = 0, tree: dict | None = None) -> torch.Tensor:
        """embeddings: (B, T, D); ``start`` is the position of the first of the T tokens."""
        length = embeddings.size(1)
        if isinstance(start, torch.Tensor):
            return embeddings + self.table[start + torch.arange(length, device=start.device)]
        if start + length > self.table.size(0):
            raise ValueError(f"sequence of {start + length} tokens is longer than max_len {self.table.size(0)}")
        return embeddings + self.table[start : start + length]


@POSITIONS.register("learned")
class LearnedPositions(nn.Module):
    """Adds a learned vector per absolute position (Gehring et al. 2017, "Convolutional Sequence to
    Sequence Learning", section 3.1): row ``start + t`` of a (max_len, d_model) table to token t."""

    needs_tree = False

    @classmethod
    def build(cls, config) -> "LearnedPositions":
        return cls(config.d_model, config.max_len)

    def __init__(self, d_model: int, max_len: int = 512):
        super().__init__()
        self.position_embedding = nn.Embedding(max_len, d_model)
        self.init_parameters()

    def init_parameters(self) -> None:
        # N(0, 1): the scale of the token embeddings after their sqrt(d_model) factor, so positions
        # are not drowned out at the start of training (with N(0, d^-1/2) a tiny model barely
        # learned to copy, 0.52 exact match against 0.89 for sinusoidal positions).
        nn.init.normal_(self.position_embedding.weight, std=1.0)

    def forward(self, embeddings: torch.Tensor, start: int = 0, tree: dict | None = None) -> torch.Tensor:
        """embeddings: (B, T, D); ``start`` is the position of the first of the T tokens."""
        length = embeddings.size(1)
        max_len = self.position_embedding.num_embeddings
        if isinstance(start, torch.Tensor):
            return embeddings + self.position_embedding.weight[start + torch.arange(length, device=start.device)]
        if start + length > max_len:
            raise ValueError(f"sequence of {start + length} tokens is longer than max_len {max_len}")
        return embeddings + self.position_embedding.weight[start : start + length]
