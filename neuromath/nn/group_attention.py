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

from neuromath.config.rules import ATTENTION_GROUPS
from neuromath.errors import ConfigError
from neuromath.nn.attention import masked_softmax
from neuromath.nn.dropout import Dropout
from neuromath.nn.recording import Recorded

GROUPS = ATTENTION_GROUPS  # model.groups takes these


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


def span_roles_from_ids(source: torch.Tensor, is_break: torch.Tensor, is_number: torch.Tensor,
                        is_text: torch.Tensor, pad_id: int = 0) -> tuple[torch.Tensor, ...]:
    """The span roles of ``neuromath.tasks.word_problems.span_roles``, computed on token ids for a whole batch.

    source (B, T) ids; is_break / is_number / is_text (V,) bool tables over the vocabulary: the token ends a span
    (``, . ， 。``), is a masked number (``n0``, ``n1``, ...), is a token of the problem's text (not padding, not
    end-of-sequence), ``pad_id`` the padding id. Returns ``(spans, quantity, question, valid)``, each (B, T): span
    ids, in a quantity span, in the question span, not padding. Tokens after the text (eos) belong to the last span,
    as a final break opens no new span.
    """
    text = is_text[source]  # (B, T)
    following_text = torch.zeros_like(text)
    following_text[:, :-1] = text[:, 1:]
    breaks = is_break[source] & following_text  # (B, T) a break that another text token follows
    spans = torch.cumsum(breaks.long(), dim=1) - breaks.long()  # (B, T) the break belongs to the span it ends
    valid = source.ne(pad_id)  # (B, T)
    last_text_span = torch.where(text, spans, torch.zeros_like(spans)).amax(dim=1, keepdim=True)  # (B, 1)
    question = spans.eq(last_text_span) & valid
    same_span = spans.unsqueeze(2) == spans.unsqueeze(1)  # (B, T, T)
    span_has_number = (same_span & is_number[source].unsqueeze(1)).any(dim=2)  # (B, T)
    quantity = span_has_number & ~question & valid
    return spans, quantity, question, valid


class GroupAttention(Recorded, nn.Module):
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
        if self.recorder is not None:
            weights = masked_softmax(queries @ keys.transpose(-2, -1) / self.head_dim**0.5, head_masks)
            labels = [f"{group} {k + 1}" for group in self.groups for k in range(self.heads_per_group)]
            self.record("encoder", weights, head_labels=labels, title="group attention")
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
        self.dropout = Dropout(dropout)

    def forward(self, x: torch.Tensor, masks: dict) -> torch.Tensor:
        x = self.norm_attention(x + self.dropout(self.attention(x, masks)))
        return self.norm_feed_forward(x + self.dropout(self.feed_forward(x)))
