"""Encoder-decoder Transformer (Vaswani et al. 2017, "Attention Is All You Need", sections 3.1-3.5).

Pre- or post-LayerNorm, optional tying of the target embedding and the output projection,
dropout. Attention layers and positional encodings are built by name from
``neuromath.registry`` so variants slot in through the config:

* ``attention`` picks the kernel (standard, tp, relative, tree_relative) and ``attention_in`` the
  places it is used in (encoder self-attention, decoder self-attention, cross attention); the
  other places use standard attention.
* ``positions`` picks the encoding (sinusoidal, learned, tree) and ``positions_in`` the sides;
  the other side gets sinusoidal positions.
* ``embedding: role`` is the TP-Transformer's role-weighted input embedding (Schlag et al. 2019,
  eq. 2), the default with ``attention: tp``.
* Structure-aware choices (tree positions, tree relative attention) need the task to declare a
  prefix grammar for that side; the model then parses the tokens with ``nn.tree.TreeStructure``
  (incrementally during decoding, its state kept in the cache).

Model contract (see docs/design.md), shared by every sequence model:
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

import neuromath.nn.attention  # noqa: F401  (registers the attention kernels)
import neuromath.nn.positions  # noqa: F401  (registers the sequence positional encodings)
import neuromath.nn.tree_structure  # noqa: F401  (registers the tree positional encoding)
from neuromath.config.models import TransformerConfig
from neuromath.config.rules import ATTENTION_PLACES, POSITION_SIDES
from neuromath.errors import ConfigError
from neuromath.models.inputs import ModelInputs
from neuromath.nn.attention import FIXED_STEP, reorder_cache
from neuromath.nn.char_ngrams import build_char_ngrams
from neuromath.nn.dropout import Dropout
from neuromath.nn.pretrained import PretrainedWords, pretrained_words
from neuromath.nn.subwords import build_subwords
from neuromath.nn.tree_structure import TreeStructure
from neuromath.nn.word_bags import with_word_parts
from neuromath.registry import ATTENTION, POSITIONS
from neuromath.tasks.word_problems import MASK_REGEX


def parse_places(text: str) -> tuple[str, ...]:
    """The places of a comma list the config checked (``model.attention_in``, ``positions_in``)."""
    return tuple(part.strip() for part in text.split(","))


def choose_places(
    component, setting: str, name: str, key: str, allowed: tuple[str, ...], has_tree: dict
) -> tuple[str, ...]:
    """Where a registered component (kernel or encoding) applies: ``setting`` is ``auto`` (the
    component's defaults, minus tree-less sides for a component that needs trees) or a comma list."""
    if setting == "auto":
        defaults = getattr(component, "default_places", allowed)
        places = tuple(p for p in defaults if has_tree[p] or not component.needs_tree)
    else:
        places = parse_places(setting)
    if component.needs_tree:
        missing = [p for p in places if not has_tree[p]]
        if missing or not places:
            raise ConfigError(
                f"model.{name} needs prefix trees, and the task declares none for "
                f"{', '.join(missing) or 'any side'} (model.{key}={setting})"
            )
    return places


def resolve_structure(config: TransformerConfig, has_source_tree: bool, has_target_tree: bool) -> dict:
    """Where the configured kernel, encoding and embedding apply, checked against the task's trees."""
    has_tree = {"encoder": has_source_tree, "decoder": has_target_tree, "cross": False}
    kernel = ATTENTION.get(config.attention)
    places = choose_places(
        kernel, config.attention_in, f"attention={config.attention}", "attention_in", ATTENTION_PLACES, has_tree
    )
    encoding = POSITIONS.get(config.positions)
    sides = choose_places(
        encoding, config.positions_in, f"positions={config.positions}", "positions_in", POSITION_SIDES, has_tree
    )
    embedding = config.embedding
    if embedding == "auto":
        embedding = "role" if config.attention == "tp" else "plain"
    return {"kernel": kernel, "places": places, "encoding": encoding, "sides": sides, "embedding": embedding}


class FeedForward(nn.Sequential):
    def __init__(self, d_model: int, d_ff: int, dropout: float):
        super().__init__(nn.Linear(d_model, d_ff), nn.ReLU(), Dropout(dropout), nn.Linear(d_ff, d_model))


class Sublayer(nn.Module):
    """Residual connection around ``inner`` with LayerNorm before (pre-LN) or after (post-LN)."""

    def __init__(self, d_model: int, dropout: float, norm_first: bool):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, inner) -> torch.Tensor:
        if self.norm_first:
            return x + self.dropout(inner(self.norm(x)))
        return self.norm(x + self.dropout(inner(x)))


class RoleEmbedding(nn.Module):
    """The TP-Transformer's input embedding (Schlag et al. 2019, eq. 2): given e = E x sqrt(d) + p,
    a role r = W_p e + b_p and the input z = e * r (elementwise).

    Appendix B asks for a role that starts out as N(1, 1). With e of unit scale (E from
    N(0, d^-1/2), so E x sqrt(d) is N(0, 1)) that is W_p from N(0, d^-1/2) and b_p = 1, which is what
    this does. Drawing the matrix W_p itself from N(1, 1) and E from N(0, 1) would make z of order
    d^2 and, measured on a tiny copy task, stops the model from learning (see tests/models).
    """

    def __init__(self, d_model: int):
        super().__init__()
        self.d_model = d_model
        self.role = nn.Linear(d_model, d_model)
        self.init_parameters()

    def init_parameters(self) -> None:
        nn.init.normal_(self.role.weight, mean=0.0, std=self.d_model**-0.5)
        nn.init.ones_(self.role.bias)

    def forward(self, embedded: torch.Tensor) -> torch.Tensor:
        return embedded * self.role(embedded)


class EncoderLayer(nn.Module):
    def __init__(self, config: TransformerConfig, kernel):
        super().__init__()
        self.self_attention = kernel.build(config, "encoder")
        self.self_attention.place = "encoder"
        self.feed_forward = FeedForward(config.d_model, config.d_ff, config.dropout)
        self.attention_block = Sublayer(config.d_model, config.dropout, config.norm_first)
        self.feed_forward_block = Sublayer(config.d_model, config.dropout, config.norm_first)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, structure: dict) -> torch.Tensor:
        x = self.attention_block(x, lambda h: self.self_attention(h, h, mask, structure=structure))
        return self.feed_forward_block(x, self.feed_forward)


class DecoderLayer(nn.Module):
    def __init__(self, config: TransformerConfig, index: int, self_kernel, cross_kernel):
        super().__init__()
        self.self_attention = self_kernel.build(config, "decoder")
        self.cross_attention = cross_kernel.build(config, "cross")
        self.self_attention.place, self.cross_attention.place = "decoder", "cross"
        self.feed_forward = FeedForward(config.d_model, config.d_ff, config.dropout)
        self.self_block = Sublayer(config.d_model, config.dropout, config.norm_first)
        self.cross_block = Sublayer(config.d_model, config.dropout, config.norm_first)
        self.feed_forward_block = Sublayer(config.d_model, config.dropout, config.norm_first)
        self.name = f"decoder{index}"

    def forward(
        self, x, memory_states, self_mask, memory_mask, cache=None, self_structure=None, cross_structure=None,
        memory_cache=None, beam_group=1,
    ):
        """``cache`` holds the self-attention keys and values of the tokens already decoded; ``memory_cache`` (the
        memory dict itself while decoding step by step) holds the cross-attention keys and values, which depend on
        the source alone and so are computed once and reordered only when the memory is. With ``beam_group`` G > 1
        the memory holds one row per source for G consecutive rows of ``x`` (a source's beams), which are folded
        into one row of queries for cross-attention: (A * G, T, D) -> (A, G * T, D)."""
        x = self.self_block(
            x,
            lambda h: self.self_attention(
                h, h, self_mask, cache, f"{self.name}.self", static_kv=False, structure=self_structure
            ),
        )
        def cross(h):
            folded = h.reshape(h.size(0) // beam_group, beam_group * h.size(1), h.size(2))  # (A, G * T, D)
            attended = self.cross_attention(
                folded, memory_states, memory_mask, memory_cache, f"{self.name}.cross", static_kv=True,
                structure=cross_structure,
            )
            return attended.reshape(h.shape)  # (A * G, T, D)

        x = self.cross_block(x, cross)
        return self.feed_forward_block(x, self.feed_forward)


class Transformer(PretrainedWords, nn.Module):
    def __init__(self, config: TransformerConfig, inputs: ModelInputs):
        super().__init__()
        self.config = config
        pad_id = self.pad_id = inputs.pad_id
        source_classes, target_classes = inputs.source_classes, inputs.target_classes
        d_model = config.d_model
        plan = resolve_structure(
            config,
            source_classes is not None and source_classes.notation == "prefix",
            target_classes is not None and target_classes.notation == "prefix",
        )
        self.plan = {key: plan[key] for key in ("places", "sides", "embedding")}
        kernel, standard = plan["kernel"], ATTENTION.get("standard")
        encoding, sinusoidal = plan["encoding"], POSITIONS.get("sinusoidal")

        def kernel_in(place):
            return kernel if place in plan["places"] else standard

        def encoding_in(side):
            return encoding if side in plan["sides"] else sinusoidal

        # Beam search may keep one memory row per source (not per beam) when cross-attention ignores query positions.
        self.shares_memory_across_beams = not kernel_in("cross").reads_query_positions
        # word vectors from a pretrained Transformer (model.encoder pretrained; word problems) instead of the embeddings
        self.pretrained = pretrained_words(config, inputs, MASK_REGEX)
        if self.pretrained is None:
            self.source_embedding = nn.Embedding(inputs.source_vocab_size, d_model, padding_idx=pad_id)
            self.char_ngrams = build_char_ngrams(config.char_ngrams, d_model, inputs.source_words)
            self.subwords = build_subwords(config.subwords, d_model, inputs)
        self.target_embedding = nn.Embedding(inputs.target_vocab_size, d_model, padding_idx=pad_id)
        self.source_positions = encoding_in("encoder").build(config)
        self.target_positions = encoding_in("decoder").build(config)
        role = plan["embedding"] == "role"
        self.source_role = RoleEmbedding(d_model) if role else None
        self.target_role = RoleEmbedding(d_model) if role else None
        # Tree parsers for the sides whose encoding or attention reads the tree.
        self.source_relations = kernel_in("encoder").needs_tree
        self.target_relations = kernel_in("decoder").needs_tree
        needs_source_tree = self.source_relations or encoding_in("encoder").needs_tree
        needs_target_tree = self.target_relations or encoding_in("decoder").needs_tree
        self.source_tree = (
            TreeStructure(source_classes, False, config.tree_depth, config.tree_relations)
            if needs_source_tree
            else None
        )
        self.target_tree = (
            TreeStructure(target_classes, True, config.tree_depth, config.tree_relations)
            if needs_target_tree
            else None
        )
        self.embedding_dropout = Dropout(config.dropout)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(config, kernel_in("encoder")) for _ in range(config.n_encoder_layers)
        )
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(config, i, kernel_in("decoder"), kernel_in("cross")) for i in range(config.n_decoder_layers)
        )
        # Pre-LN stacks end with a LayerNorm; post-LN layers already normalise their output.
        self.encoder_norm = nn.LayerNorm(d_model) if config.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(d_model) if config.norm_first else nn.Identity()
        self.output_bias = nn.Parameter(torch.zeros(inputs.target_vocab_size))
        self.output = None if config.share_embeddings else nn.Linear(d_model, inputs.target_vocab_size, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform matrices, N(0, d^-1/2) embeddings (so E x sqrt(d) is N(0, 1), as in the
        TP-Transformer's appendix B), then each layer's own special initialisation."""
        for name, parameter in self.named_parameters():
            if name.startswith("pretrained.encoder."):  # a pretrained encoder keeps its weights
                continue
            if "embedding" in name:
                nn.init.normal_(parameter, std=self.config.d_model**-0.5)
            elif parameter.dim() > 1:
                nn.init.xavier_uniform_(parameter)
        for module in self.modules():
            if module is not self and hasattr(module, "init_parameters"):
                module.init_parameters()
        for embedding in (getattr(self, "source_embedding", None), self.target_embedding):
            if embedding is None:  # the pretrained encoder's words
                continue
            with torch.no_grad():
                embedding.weight[self.pad_id].zero_()

    def embed(self, side: str, ids: torch.Tensor, start: int = 0, tree: dict | None = None,
              batch: dict | None = None) -> torch.Tensor:
        positions = self.source_positions if side == "encoder" else self.target_positions
        role = self.source_role if side == "encoder" else self.target_role
        if side == "encoder" and self.pretrained is not None:  # (B, S, D) the pretrained encoder's word vectors
            embedded = self.pretrained(batch["source_words"].rows, ids.size(1), ids.device)
        elif side == "encoder":  # (B, S, D) with the words' n-grams and pieces where configured
            embedded = with_word_parts(self.source_embedding(ids), (self.char_ngrams, self.subwords), batch)
        else:
            embedded = self.target_embedding(ids)
        x = positions(embedded * math.sqrt(self.config.d_model), start, tree)  # (B, T, D)
        if role is not None:
            x = role(x)
        return self.embedding_dropout(x)

    def encode(self, batch: dict) -> dict:
        source = batch["source"]  # (B, S)
        padding = source.eq(self.pad_id)  # (B, S) True at padding
        mask = ~padding[:, None, None, :]  # (B, 1, 1, S) True where a key may be attended to
        structure, tree = {"query_start": 0}, None
        if self.source_tree is not None:
            tree, _ = self.source_tree(source, None, relations=self.source_relations)
            if self.source_relations:
                structure["relations"] = tree["relations"]  # (B, S, S)
        x = self.embed("encoder", source, 0, tree, batch)
        for layer in self.encoder_layers:
            x = layer(x, mask, structure)
        return {"states": self.encoder_norm(x), "mask": mask}

    def project(self, states: torch.Tensor) -> torch.Tensor:
        """Output distribution through the shared target embedding, softmax(E^T z) (TP-Transformer eq. 8)."""
        if self.output is None:
            return states @ self.target_embedding.weight.t() + self.output_bias  # (B, T, V)
        return self.output(states) + self.output_bias

    def decode(self, memory: dict, target_in: torch.Tensor, cache: dict | None = None, start: int = 0) -> torch.Tensor:
        length = target_in.size(1)
        # Token t may attend to tokens up to t; with a cache the earlier tokens are already stored.
        # One new token (a decoding step) may attend to all of them: no mask.
        self_mask = (
            None if length == 1 else
            torch.ones(length, start + length, dtype=torch.bool, device=target_in.device).tril(start)
        )
        self_structure, tree = {"query_start": start}, None
        if self.target_tree is not None:
            state = None
            if cache is not None and "tree.depth" in cache:
                state = {key[len("tree.") :]: value for key, value in cache.items() if key.startswith("tree.")}
            tree, state = self.target_tree(target_in, state, relations=self.target_relations)
            if cache is not None:
                cache.update({f"tree.{key}": value for key, value in state.items()})
            if self.target_relations:
                self_structure["relations"] = tree["relations"]  # (B, T, start + T)
        x = self.embed("decoder", target_in, start, tree)
        cross_structure = {"query_start": start}
        # With a cache, each layer's cross keys and values are kept in the memory dict: beam search reorders the
        # memory only when finished rows leave, while the cache is reordered at every step.
        memory_cache = memory if cache is not None else None
        beam_group = memory.get("beam_group", 1)  # decoder rows per memory row (set by beam search)
        for layer in self.decoder_layers:
            x = layer(
                x, memory["states"], self_mask, memory["mask"], cache, self_structure, cross_structure, memory_cache,
                beam_group,
            )
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

    def reorder_cache(self, cache: dict, index: torch.Tensor) -> dict:
        """The cache of the rows ``index`` (beam search's parents), reusing the self-attention buffers."""
        return reorder_cache(cache, index)

    # Fixed-shape decoding (neuromath.decoding.fixed_shapes): one token per step into self-attention buffers of a
    # fixed capacity, its position a 0-d tensor, so that every step has the same shapes and a compiled step serves
    # them all. The results equal decode_step's up to float rounding (masked keys add exact zeros).

    def fixed_memory(self, memory: dict) -> dict:
        """``memory`` with each layer's cross-attention keys and values computed once (as ``decode_step`` keeps them),
        so that a fixed-shape step only reads them."""
        memory = dict(memory)
        for layer in self.decoder_layers:
            layer.cross_attention.project_keys_values(memory["states"], memory, f"{layer.name}.cross", True)
        return memory

    def fixed_cache(self, rows: int, capacity: int, dtype: torch.dtype, device) -> dict:
        """Zeroed self-attention buffers (rows, H, capacity, Dh) of every decoder layer, and the empty parse of the
        target (``tree.*``, ``TreeStructure.fixed_state``) when the decoder reads its tree."""
        cache = {}
        if self.target_tree is not None:
            state = self.target_tree.fixed_state(rows, capacity, device)
            cache.update({f"tree.{key}": value for key, value in state.items()})
        for layer in self.decoder_layers:
            attention = layer.self_attention
            shape = (rows, attention.n_heads, capacity, attention.head_dim)
            for part in ("k", "v"):
                cache[f"{layer.name}.self.{part}"] = torch.zeros(shape, dtype=dtype, device=device)
        return cache

    def fixed_step(self, memory: dict, tokens: torch.Tensor, cache: dict, step: torch.Tensor) -> torch.Tensor:
        """Log-probabilities (B, V) of the token after ``tokens`` (B, 1), which sit at position ``step`` (a 0-d
        tensor); writes their keys and values into ``cache`` (``fixed_cache``) in place."""
        capacity = cache[f"{self.decoder_layers[0].name}.self.k"].size(2)
        allowed = torch.arange(capacity, device=tokens.device) <= step  # (capacity,) keys written so far
        self_mask = allowed[None, None, None, :]  # (1, 1, 1, capacity)
        structure, tree = {"query_start": step}, None
        if self.target_tree is not None:
            state = {key[len("tree."):]: value for key, value in cache.items() if key.startswith("tree.")}
            tree = self.target_tree.fixed_step(tokens, state, step, relations=self.target_relations)
            if self.target_relations:
                structure = {**structure, "relations": tree["relations"]}  # (B, 1, capacity)
        cross_structure = {"query_start": step}
        x = self.embed("decoder", tokens, step, tree)
        cache = {**cache, FIXED_STEP: step}
        beam_group = memory.get("beam_group", 1)
        for layer in self.decoder_layers:
            x = layer(
                x, memory["states"], self_mask, memory["mask"], cache, structure, cross_structure, memory, beam_group
            )
        logits = self.project(self.decoder_norm(x))  # (B, 1, V)
        return torch.log_softmax(logits[:, -1].float(), dim=-1)

    @torch.no_grad()
    def fit_structure(self, sources, targets) -> dict:
        """Give the tree-relation ids to the most frequent relations of the training sequences
        (id lists: sources without bos, targets with bos). Returns the ranking per side."""
        ranking = {}
        if self.source_tree is not None and self.source_relations:
            ranking["encoder"] = self.source_tree.fit_relations(sources, causal=False)
        if self.target_tree is not None and self.target_relations:
            ranking["decoder"] = self.target_tree.fit_relations(targets, causal=True)
        return ranking

    @property
    def learns_structure(self) -> bool:
        """Whether ``fit_structure`` has relation ids to give (tree relative attention on a side)."""
        return bool(self.source_relations or self.target_relations)
