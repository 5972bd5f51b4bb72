"""Multi-head attention with pluggable kernels (Vaswani et al. 2017, eq. 1 and "Multi-Head Attention").

A kernel is registered in ``neuromath.registry.ATTENTION`` under a name; the Transformer builds
every attention layer from that name, so a variant (TP-Attention, relative positions, ...) is a
new registered class with the same ``forward`` signature, not a change to the model.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from neuromath.registry import ATTENTION


@ATTENTION.register("standard")
class StandardAttention(nn.Module):
    """Scaled dot-product multi-head attention through ``F.scaled_dot_product_attention``.

    ``forward(query, key_value, mask, cache, cache_prefix)``:
      query:     (B, Tq, D)
      key_value: (B, Tk, D) - the states the queries attend to
      mask:      bool, broadcastable to (B, H, Tq, Tk); True where attention is allowed; or None
      cache:     dict for incremental decoding, or None. With ``static_kv`` the projected keys and
                 values of ``key_value`` are computed once and kept; otherwise the new keys and
                 values are appended to those already cached (decoder self-attention).
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, d_model // n_heads
        self.dropout = dropout
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.output = nn.Linear(d_model, d_model)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.head_dim).transpose(1, 2)  # (B, H, T, Dh)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, _, length, _ = x.shape
        return x.transpose(1, 2).reshape(batch, length, self.d_model)  # (B, T, D)

    def project_keys_values(
        self, key_value: torch.Tensor, cache: dict | None, cache_prefix: str, static_kv: bool
    ) -> tuple[torch.Tensor, torch.Tensor]:
        k_name, v_name = f"{cache_prefix}.k", f"{cache_prefix}.v"
        if cache is not None and static_kv and k_name in cache:
            return cache[k_name], cache[v_name]
        keys = self.split_heads(self.key(key_value))  # (B, H, Tk, Dh)
        values = self.split_heads(self.value(key_value))  # (B, H, Tk, Dh)
        if cache is not None:
            if not static_kv and k_name in cache:
                keys = torch.cat([cache[k_name], keys], dim=2)  # (B, H, t + Tk, Dh)
                values = torch.cat([cache[v_name], values], dim=2)
            cache[k_name], cache[v_name] = keys, values
        return keys, values

    def forward(
        self,
        query: torch.Tensor,
        key_value: torch.Tensor,
        mask: torch.Tensor | None = None,
        cache: dict | None = None,
        cache_prefix: str = "attention",
        static_kv: bool = False,
    ) -> torch.Tensor:
        queries = self.split_heads(self.query(query))  # (B, H, Tq, Dh)
        keys, values = self.project_keys_values(key_value, cache, cache_prefix, static_kv)
        attended = F.scaled_dot_product_attention(
            queries, keys, values, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0
        )  # (B, H, Tq, Dh)
        return self.output(self.merge_heads(attended))
