"""The graph module of Graph2Tree (Zhang et al. 2020, "Graph-to-Tree Learning for Solving Math Word Problems",
Sec. 3.3, eq. 3-5): one two-layer graph convolution per graph (Kipf & Welling 2017, here with the row-normalised
adjacency D^-1 (A + I)), each head H / K wide, the K heads concatenated, then a residual connection with layer
normalisation and a feed-forward block, as in a Transformer layer:

  GCN_k(X) = Â_k ReLU(Â_k X W_k1) W_k2                  (eq. 3, one head per graph k, W_k1: H x H/K, W_k2: H/K x H/K)
  G = [GCN_1(X); ...; GCN_K(X)]                          (eq. 4)
  Z = LayerNorm(X + G);  out = LayerNorm(Z + FFN(Z))     (eq. 5)

Dropout is applied to G and to FFN(Z) only: on the CPU drawing dropout masks costs as much as a matrix product.
"""

from __future__ import annotations

import torch
from torch import nn

from neuromath.nn.dropout import Dropout


def normalized_adjacency(adjacency: torch.Tensor) -> torch.Tensor:
    """D^-1 (A + I) for a batch of adjacency matrices (B, K, T, T), A[i, j] = 1 when node i reads node j."""
    eye = torch.eye(adjacency.size(-1), dtype=adjacency.dtype, device=adjacency.device)
    with_self = (adjacency + eye).clamp(max=1)  # (B, K, T, T)
    return with_self / with_self.sum(dim=-1, keepdim=True)


class GraphConvolutionModule(nn.Module):
    """Graph2Tree's graph module over ``n_graphs`` graphs of the same nodes; node states are ``hidden`` wide."""

    def __init__(self, hidden: int, d_ff: int, n_graphs: int, dropout: float):
        super().__init__()
        if hidden % n_graphs:
            raise ValueError(f"the width {hidden} must be a multiple of the {n_graphs} graphs (one head each)")
        head = hidden // n_graphs
        self.first = nn.ModuleList(nn.Linear(hidden, head) for _ in range(n_graphs))
        self.second = nn.ModuleList(nn.Linear(head, head) for _ in range(n_graphs))
        self.norm_graph = nn.LayerNorm(hidden)
        self.feed_forward = nn.Sequential(
            nn.Linear(hidden, d_ff), nn.ReLU(), nn.Linear(d_ff, hidden)
        )
        self.norm_out = nn.LayerNorm(hidden)
        self.dropout = Dropout(dropout)

    def forward(self, states: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
        """``states`` (B, T, H), ``adjacency`` (B, K, T, T) of 0/1 -> new states (B, T, H)."""
        normalized = normalized_adjacency(adjacency.to(states.dtype))  # (B, K, T, T)
        heads = []
        for k, (first, second) in enumerate(zip(self.first, self.second)):
            hidden = torch.relu(normalized[:, k] @ first(states))  # (B, T, H)
            heads.append(normalized[:, k] @ second(hidden))
        graph = torch.cat(heads, dim=-1)  # (B, T, H)
        states = self.norm_graph(states + self.dropout(graph))
        return self.norm_out(states + self.dropout(self.feed_forward(states)))
