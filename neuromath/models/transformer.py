"""Encoder-decoder Transformer (Vaswani et al. 2017, "Attention Is All You Need", sections 3.1-3.5).

Pre- or post-LayerNorm, sinusoidal positions, optional tying of the target embedding and the
output projection, dropout. Attention layers and positional encodings are built by name from
``neuromath.registry`` so variants slot in through the config.

Model contract (see DESIGN.md), shared by every sequence model:
  forward(batch) -> logits (B, T, V)           teacher forcing on batch["target_in"]
  encode(batch) -> memory                      a dict of batch-first tensors
  decode_step(memory, prefix, cache) -> (log_probs (B, V), cache)
Every tensor in ``memory`` and ``cache`` has the batch on dimension 0, so beam search can
reorder both with one ``index_select``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from neuromath.config import ModelConfig
from neuromath.registry import ATTENTION, MODELS, POSITIONS

import neuromath.nn.attention  # noqa: F401  (registers the standard kernel)
import neuromath.nn.positions  # noqa: F401  (registers the sinusoidal encoding)


class FeedForward(nn.Sequential):
    def __init__(self, d_model: int, d_ff: int, dropout: float):
        super().__init__(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model))


class Sublayer(nn.Module):
    """Residual connection around ``inner`` with LayerNorm before (pre-LN) or after (post-LN)."""

    def __init__(self, d_model: int, dropout: float, norm_first: bool):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, inner) -> torch.Tensor:
        if self.norm_first:
            return x + self.dropout(inner(self.norm(x)))
        return self.norm(x + self.dropout(inner(x)))


class EncoderLayer(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        attention = ATTENTION.get(config.attention)
        self.self_attention = attention(config.d_model, config.n_heads, config.dropout)
        self.feed_forward = FeedForward(config.d_model, config.d_ff, config.dropout)
        self.attention_block = Sublayer(config.d_model, config.dropout, config.norm_first)
        self.feed_forward_block = Sublayer(config.d_model, config.dropout, config.norm_first)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.attention_block(x, lambda h: self.self_attention(h, h, mask))
        return self.feed_forward_block(x, self.feed_forward)


class DecoderLayer(nn.Module):
    def __init__(self, config: ModelConfig, index: int):
        super().__init__()
        attention = ATTENTION.get(config.attention)
        self.self_attention = attention(config.d_model, config.n_heads, config.dropout)
        self.cross_attention = attention(config.d_model, config.n_heads, config.dropout)
        self.feed_forward = FeedForward(config.d_model, config.d_ff, config.dropout)
        self.self_block = Sublayer(config.d_model, config.dropout, config.norm_first)
        self.cross_block = Sublayer(config.d_model, config.dropout, config.norm_first)
        self.feed_forward_block = Sublayer(config.d_model, config.dropout, config.norm_first)
        self.name = f"decoder{index}"

    def forward(self, x, memory_states, self_mask, memory_mask, cache=None):
        x = self.self_block(
            x, lambda h: self.self_attention(h, h, self_mask, cache, f"{self.name}.self", static_kv=False)
        )
        x = self.cross_block(
            x,
            lambda h: self.cross_attention(h, memory_states, memory_mask, cache, f"{self.name}.cross", static_kv=True),
        )
        return self.feed_forward_block(x, self.feed_forward)


@MODELS.register("transformer")
class Transformer(nn.Module):
    def __init__(self, config: ModelConfig, source_vocab_size: int, target_vocab_size: int, pad_id: int = 0):
        super().__init__()
        self.config = config
        self.pad_id = pad_id
        d_model = config.d_model
        self.source_embedding = nn.Embedding(source_vocab_size, d_model, padding_idx=pad_id)
        self.target_embedding = nn.Embedding(target_vocab_size, d_model, padding_idx=pad_id)
        positions = POSITIONS.get(config.positions)
        self.source_positions = positions(d_model, config.max_len)
        self.target_positions = positions(d_model, config.max_len)
        self.embedding_dropout = nn.Dropout(config.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.n_encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(config, i) for i in range(config.n_decoder_layers))
        # Pre-LN stacks end with a LayerNorm; post-LN layers already normalise their output.
        self.encoder_norm = nn.LayerNorm(d_model) if config.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(d_model) if config.norm_first else nn.Identity()
        self.output_bias = nn.Parameter(torch.zeros(target_vocab_size))
        self.output = None if config.share_embeddings else nn.Linear(d_model, target_vocab_size, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for name, parameter in self.named_parameters():
            if "embedding" in name:
                nn.init.normal_(parameter, std=self.config.d_model**-0.5)
            elif parameter.dim() > 1:
                nn.init.xavier_uniform_(parameter)
        for embedding in (self.source_embedding, self.target_embedding):
            with torch.no_grad():
                embedding.weight[self.pad_id].zero_()

    def embed(self, embedding: nn.Embedding, positions: nn.Module, ids: torch.Tensor, start: int = 0) -> torch.Tensor:
        x = embedding(ids) * math.sqrt(self.config.d_model)  # (B, T, D)
        return self.embedding_dropout(positions(x, start))

    def encode(self, batch: dict) -> dict:
        source = batch["source"]  # (B, S)
        padding = source.eq(self.pad_id)  # (B, S) True at padding
        mask = ~padding[:, None, None, :]  # (B, 1, 1, S) True where a key may be attended to
        x = self.embed(self.source_embedding, self.source_positions, source)
        for layer in self.encoder_layers:
            x = layer(x, mask)
        return {"states": self.encoder_norm(x), "mask": mask}

    def project(self, states: torch.Tensor) -> torch.Tensor:
        if self.output is None:
            return states @ self.target_embedding.weight.t() + self.output_bias  # (B, T, V)
        return self.output(states) + self.output_bias

    def decode(self, memory: dict, target_in: torch.Tensor, cache: dict | None = None, start: int = 0) -> torch.Tensor:
        length = target_in.size(1)
        # Token t may attend to tokens up to t; with a cache the earlier tokens are already stored.
        self_mask = torch.ones(length, start + length, dtype=torch.bool, device=target_in.device).tril(start)
        x = self.embed(self.target_embedding, self.target_positions, target_in, start)
        for layer in self.decoder_layers:
            x = layer(x, memory["states"], self_mask, memory["mask"], cache)
        return self.project(self.decoder_norm(x))

    def forward(self, batch: dict) -> torch.Tensor:
        return self.decode(self.encode(batch), batch["target_in"])

    def decode_step(self, memory: dict, prefix: torch.Tensor, cache: dict | None) -> tuple[torch.Tensor, dict]:
        """Log-probabilities of the next token after ``prefix`` (B, t); only new tokens are computed."""
        cache = {} if cache is None else cache
        done = int(cache["length"][0]) if "length" in cache else 0
        logits = self.decode(memory, prefix[:, done:], cache, start=done)  # (B, t - done, V)
        cache["length"] = torch.full((prefix.size(0),), prefix.size(1), dtype=torch.long, device=prefix.device)
        return torch.log_softmax(logits[:, -1].float(), dim=-1), cache
