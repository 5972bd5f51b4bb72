"""Group attention of Li et al. 2019, "Modeling Intra-Relation in Math Word Problems with Different Functional
Multi-Head Attentions" (Sec. 3.2): multi-head self-attention whose heads come in groups, each group with its own
mask over the problem's spans (clauses split at commas and periods; the last span is the question):

- ``global``: every token attends to every token;
- ``quantity`` (quantity-related): a token attends to the tokens of its own span;
- ``quantity_pair``: a token of a quantity span attends to the tokens of the other quantity spans, and the question
  span attends to all quantity spans;
- ``question`` (question-related): quantity spans attend to the question span and the question span to the
  quantity spans.

A query whose group mask allows no key (a token of a span without numbers in the quantity-pair group, say) attends
to itself alone, on purpose: a softmax over nothing would otherwise spread uniformly over padding or give NaN.
Padding keys are never attended to. The span roles of each token come from
``neuromath.tasks.word_problems.span_roles``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from neuromath.errors import ConfigError

GROUPS = ("global", "quantity", "quantity_pair", "question")


def group_masks(spans: torch.Tensor, quantity: torch.Tensor, question: torch.Tensor, valid: torch.Tensor) -> dict:
    """Boolean masks (B, T, T), True where query i may attend to key j, one per group.

    spans (B, T) long span ids; quantity / question (B, T) bool: the token is in a quantity span / the question
    span; valid (B, T) bool: not padding. Rows that would allow nothing allow the query itself.
    """
    same_span = spans.unsqueeze(2) == spans.unsqueeze(1)  # (B, T, T)
    quantity_i, quantity_j = quantity.unsqueeze(2), quantity.unsqueeze(1)  # (B, T, 1), (B, 1, T)
    question_i, question_j = question.unsqueeze(2), question.unsqueeze(1)
    keys = valid.unsqueeze(1)  # (B, 1, T)
    masks = {
        "global": keys.expand_as(same_span),
        "quantity": same_span & keys,
        "quantity_pair": ((quantity_i & quantity_j & ~same_span) | (question_i & quantity_j)) & keys,
        "question": ((quantity_i & question_j) | (question_i & quantity_j)) & keys,
    }
    itself = torch.eye(spans.shape[1], dtype=torch.bool, device=spans.device).unsqueeze(0)  # (1, T, T)
    return {name: mask | (itself & ~mask.any(-1, keepdim=True)) for name, mask in masks.items()}


class GroupAttention(nn.Module):
    """Multi-head self-attention with ``heads_per_group`` heads for each group in ``groups`` (the paper: the four
    groups with two heads each; the Table 3 ablation keeps one group with eight heads)."""

    def __init__(self, d_model: int, groups: tuple[str, ...] = GROUPS, heads_per_group: int = 2, dropout: float = 0.0):
        super().__init__()
        unknown = [g for g in groups if g not in GROUPS]
        if unknown or not groups:
            raise ConfigError(f"group attention groups must be among {', '.join(GROUPS)}, got {groups}")
        self.groups = tuple(groups)
        self.n_heads = len(groups) * heads_per_group
        if d_model % self.n_heads:
            raise ConfigError(f"d_model {d_model} is not divisible by {self.n_heads} heads")
        self.heads_per_group = heads_per_group
        self.head_dim = d_model // self.n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, masks: dict) -> torch.Tensor:
        batch, length, d_model = x.shape
        queries, keys, values = (
            part.view(batch, length, self.n_heads, self.head_dim).transpose(1, 2)  # (B, H, T, Dh)
            for part in self.qkv(x).chunk(3, dim=-1)
        )
        head_masks = torch.stack(
            [masks[group] for group in self.groups for _ in range(self.heads_per_group)], dim=1
        )  # (B, H, T, T)
        attended = F.scaled_dot_product_attention(
            queries, keys, values, attn_mask=head_masks, dropout_p=self.dropout if self.training else 0.0
        )  # (B, H, T, Dh)
        return self.out(attended.transpose(1, 2).reshape(batch, length, d_model))  # (B, T, D)


class GroupAttentionBlock(nn.Module):
    """Group attention, then a position-wise feed-forward layer, each with a residual connection and layer
    normalisation (post-norm, as in the paper's encoder block)."""

    def __init__(self, d_model: int, d_ff: int, groups: tuple[str, ...] = GROUPS, heads_per_group: int = 2,
                 dropout: float = 0.0):
        super().__init__()
        self.attention = GroupAttention(d_model, groups, heads_per_group, dropout)
        self.feed_forward = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))
        self.norm_attention = nn.LayerNorm(d_model)
        self.norm_feed_forward = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, masks: dict) -> torch.Tensor:
        x = self.norm_attention(x + self.dropout(self.attention(x, masks)))
        return self.norm_feed_forward(x + self.dropout(self.feed_forward(x)))
