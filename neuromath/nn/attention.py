"""Multi-head attention kernels: standard (Vaswani et al. 2017, eq. 1), TP-Attention (Schlag et al.
2019, eqs. 3-6), relative positions (Shaw et al. 2018, eqs. 3-7), tree relative attention (Kim et al. 2021).

A kernel is registered in ``neuromath.registry.ATTENTION`` under a name; the Transformer builds
every attention layer from that name, so a variant (TP-Attention, relative positions, ...) is a
new registered class with the same ``forward`` signature, not a change to the model.

The kernel contract:
  ``Kernel.build(config: TransformerConfig, place)`` makes one layer; ``place`` is "encoder", "decoder"
  (self-attention) or "cross" (encoder-decoder attention).
  ``Kernel.default_places``: where ``attention_in: auto`` puts the kernel.
  ``Kernel.needs_tree``: the kernel reads ``structure["relations"]`` and so needs a side whose
  tokens form prefix trees (the model computes the relations; see ``neuromath.nn.tree_structure``).
  ``Kernel.reads_query_positions``: the weights depend on where a query sits; a kernel without it
  gives each query the same result wherever it stands, so beam search may fold a source's beams
  into one row of queries over that source's memory (see ``Transformer.shares_memory_across_beams``).
  ``forward(query, key_value, mask, cache, cache_prefix, static_kv, structure)`` projects and caches
  keys and values and calls ``attend(queries, keys, values, mask, query, structure)``, the one step a
  variant overrides; ``structure``
  is a dict the model fills: ``query_start`` (int, or a 0-d tensor in fixed-shape decoding: the absolute position
  of the first query; keys
  sit at positions 0 .. Tk-1 of their own sequence) and, for tree kernels, ``relations``
  (B, Tq, Tk) relation ids of every query token to every key token, the cached ones included.
  With a cache in decoder self-attention the Tq new queries are the last Tq of the Tk keys.
  ``init_parameters()`` (where a kernel has it) gives its special parameters their starting values;
  the model calls it again after its generic initialisation.
  ``attention_weights(queries, keys, mask, query, structure)`` gives the (B, H, Tq, Tk) softmax ``attend`` uses;
  inside ``neuromath.nn.recording.recording(model)`` every layer records it (and TP-Attention its roles) under the
  ``place`` its model gave it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from neuromath.errors import ConfigError
from neuromath.nn.dropout import apply_dropout
from neuromath.nn.recording import Recorded
from neuromath.registry import ATTENTION


@ATTENTION.register("standard")
class StandardAttention(Recorded, nn.Module):
    """Scaled dot-product multi-head attention through ``F.scaled_dot_product_attention``.

    ``forward(query, key_value, mask, cache, cache_prefix)``:
      query:     (B, Tq, D)
      key_value: (B, Tk, D) - the states the queries attend to
      mask:      bool, broadcastable to (B, H, Tq, Tk); True where attention is allowed; or None
      cache:     dict for incremental decoding, or None. With ``static_kv`` the projected keys and
                 values of ``key_value`` are computed once and kept; otherwise the new keys and
                 values are appended to those already cached (decoder self-attention).
    """

    default_places = ("encoder", "decoder", "cross")
    needs_tree = False
    reads_query_positions = False
    place = "encoder"  # where the model uses this layer (encoder, decoder or cross); names its recorded attention

    @classmethod
    def build(cls, config, place: str = "encoder") -> "StandardAttention":
        return cls(config.d_model, config.n_heads, config.dropout)

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
        if cache is None:
            return keys, values
        if static_kv:
            # Read at every decoding step: laid out (B, H, Tk, Dh) in memory once, so that no step copies them.
            keys, values = keys.contiguous(), values.contiguous()
            cache[k_name], cache[v_name] = keys, values
            return keys, values
        if FIXED_STEP in cache:
            return write_at_step(cache, cache_prefix, keys, values)
        return append_to_cache(cache, cache_prefix, keys, values)

    def forward(
        self,
        query: torch.Tensor,
        key_value: torch.Tensor,
        mask: torch.Tensor | None = None,
        cache: dict | None = None,
        cache_prefix: str = "attention",
        static_kv: bool = False,
        structure: dict | None = None,
    ) -> torch.Tensor:
        queries = self.split_heads(self.query(query))  # (B, H, Tq, Dh)
        keys, values = self.project_keys_values(key_value, cache, cache_prefix, static_kv)
        attended = self.attend(queries, keys, values, mask, query, structure)  # (B, H, Tq, Dh)
        if self.recorder is not None:
            self.record(self.place, self.attention_weights(queries, keys, mask, query, structure),
                        roles=self.roles(query))
        return self.output(self.merge_heads(attended))

    def attention_weights(self, queries, keys, mask, query, structure) -> torch.Tensor:
        """The weights (B, H, Tq, Tk) of ``attend``: softmax(q k^T / sqrt(d_head)) over the allowed keys."""
        return masked_softmax(queries @ keys.transpose(-2, -1) / self.head_dim**0.5, mask)

    def roles(self, query: torch.Tensor) -> torch.Tensor | None:
        """The role vector of each query per head (B, H, Tq, Dh), for kernels that bind one (TP-Attention)."""
        return None

    def attend(
        self,
        queries: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        mask: torch.Tensor | None,
        query: torch.Tensor,
        structure: dict | None,
    ) -> torch.Tensor:
        """The heads' outputs (B, H, Tq, Dh) from projected queries (B, H, Tq, Dh) and keys and values
        (B, H, Tk, Dh); ``query`` is the unprojected query input. Variants override this step only."""
        if (queries.size(2) <= FEW_QUERIES and queries.dtype in REDUCED_PRECISION and queries.device.type == "cpu"
                and not self.training):
            return few_query_attention(queries, keys, values, mask)
        return F.scaled_dot_product_attention(
            queries, keys, values, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0
        )


# Query positions up to which ``StandardAttention.attend`` uses ``few_query_attention`` instead of PyTorch's fused
# kernel, in bf16 or fp16 on the CPU: a decoding step's one new query, or a source's beams folded into one row of
# cross-attention queries (beam widths up to this). In float32 the fused CPU kernel is as fast; accelerators keep it
# too (one launch, not four).
FEW_QUERIES = 16
REDUCED_PRECISION = (torch.bfloat16, torch.float16)


def few_query_attention(
    queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None
) -> torch.Tensor:
    """softmax(q k^T / sqrt(d_head)) v for few queries (B, H, Tq, Dh) by two batched matrix products, the softmax in
    float32 at least; ``mask`` as in ``attend`` (True where allowed), or None. It equals
    ``F.scaled_dot_product_attention`` up to rounding. In bf16 on the CPU the fused kernel splits its work into
    blocks of query positions for every (row, head) pair; with one query per pair that is thousands of one-row blocks
    per decoding step, and beam search at width 10 runs 1.21-1.30x faster without it (``benchmarks/decoding.py``)."""
    # k q^T, then transposed: the keys are read as they lie (q k^T copies k^T in a bf16 product; 8% slower beams)
    scores = (keys @ (queries * queries.size(-1) ** -0.5).transpose(-2, -1)).transpose(-2, -1)  # (B, H, Tq, Tk)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores.to(torch.promote_types(scores.dtype, torch.float32)), dim=-1)
    return weights.to(values.dtype) @ values  # (B, H, Tq, Dh)


CACHE_START_CAPACITY = 32  # key positions of a new self-attention cache buffer; it doubles when full


def append_to_cache(
    cache: dict, cache_prefix: str, keys: torch.Tensor, values: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Write the new keys and values (B, H, Tk, Dh) after those already in ``cache`` and return all of them.

    They live in buffers (B, H, capacity, Dh) that grow by doubling, with ``cache[prefix + ".filled"]`` positions
    in use, so a decoding step writes its one new position in place instead of concatenating (and allocating) the
    whole history again; the views returned cover the filled positions. ``reorder_cache`` reorders the buffers
    in place across beam-search steps."""
    k_name, v_name, filled_name = f"{cache_prefix}.k", f"{cache_prefix}.v", f"{cache_prefix}.filled"
    filled = cache.get(filled_name, 0)
    needed = filled + keys.size(2)
    for name, new in ((k_name, keys), (v_name, values)):
        buffer = cache.get(name)
        if buffer is None or buffer.size(2) < needed or buffer.dtype != new.dtype:
            capacity = max(needed, CACHE_START_CAPACITY, 2 * buffer.size(2) if buffer is not None else 0)
            grown = new.new_empty(new.size(0), new.size(1), capacity, new.size(3))  # (B, H, capacity, Dh)
            if filled:
                grown[:, :, :filled] = buffer[:, :, :filled]
            cache[name] = buffer = grown
        buffer[:, :, filled:needed] = new
    cache[filled_name] = needed
    return cache[k_name][:, :, :needed], cache[v_name][:, :, :needed]  # (B, H, filled + Tk, Dh)


FIXED_STEP = "fixed.step"  # a cache key: the cache holds fixed-size buffers, written at this position (a 0-d tensor)


def write_at_step(
    cache: dict, cache_prefix: str, keys: torch.Tensor, values: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Write the new keys and values (B, H, Tk, Dh) in place into the fixed-size buffers (B, H, capacity, Dh) of
    ``cache`` at positions ``cache[FIXED_STEP]`` .. + Tk - 1 and return the whole buffers: every step has the same
    shapes (the caller masks the positions not written yet), which is what lets fixed-shape decoding compile one
    graph, and capture it as a CUDA graph, for all steps (``neuromath.decoding.fixed_shapes``)."""
    positions = cache[FIXED_STEP] + torch.arange(keys.size(2), device=keys.device)  # (Tk,)
    key_buffer, value_buffer = cache[f"{cache_prefix}.k"], cache[f"{cache_prefix}.v"]
    key_buffer.index_copy_(2, positions, keys.to(key_buffer.dtype))
    value_buffer.index_copy_(2, positions, values.to(value_buffer.dtype))
    return key_buffer, value_buffer  # (B, H, capacity, Dh)


def moved_rows(index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows a reorder by ``index`` (row i takes row ``index[i]``) changes, and the rows they take."""
    moved = index.ne(torch.arange(index.numel(), device=index.device)).nonzero().squeeze(1)  # (M,)
    return moved, index.index_select(0, moved)


def copy_rows_in_place(tensor: torch.Tensor, moved: torch.Tensor, sources: torch.Tensor) -> None:
    """``tensor[moved] = tensor[sources]`` (``moved_rows``), reading every source before writing any row."""
    if moved.numel():
        tensor.index_copy_(0, moved, tensor.index_select(0, sources))


def reorder_cache(cache: dict, index: torch.Tensor) -> dict:
    """``cache`` with every tensor's rows taken in the order ``index`` (beam search's parents).

    While the row count stays, the self-attention buffers of ``append_to_cache`` are reordered in place, and only the
    rows whose parent is another row are copied, only over their filled positions: beam search keeps each beam's
    first child in its parent's row (``beam.keep_children_in_place``), so most rows stay, and the buffers' spare
    capacity is never copied. A copy of whole buffers per step took a sixth of a beam search's time on the CPU
    (``benchmarks/decode_compile.py``). Fewer rows (finished sources left the search) take new buffers."""
    rows = index.numel()
    in_place = all(
        value.size(0) == rows and not value.requires_grad
        for name, value in cache.items()
        if isinstance(value, torch.Tensor) and is_cache_buffer(cache, name)
    )
    moved, sources = moved_rows(index) if in_place else (None, None)
    reordered = {}
    for name, value in cache.items():
        if not isinstance(value, torch.Tensor):
            reordered[name] = value
        elif in_place and is_cache_buffer(cache, name):
            copy_rows_in_place(value[:, :, : cache[f"{name[:-2]}.filled"]], moved, sources)
            reordered[name] = value
        else:
            reordered[name] = value.index_select(0, index)
    return reordered


def is_cache_buffer(cache: dict, name: str) -> bool:
    """Whether ``cache[name]`` is a growing self-attention buffer of ``append_to_cache``."""
    return name.endswith((".k", ".v")) and f"{name[:-2]}.filled" in cache


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Softmax over the last dimension of ``scores`` (B, H, Tq, Tk) with entries where ``mask`` is
    False excluded (set to -inf first); ``mask`` is bool, broadcastable to ``scores``, or None."""
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


@ATTENTION.register("tp")
class TPAttention(StandardAttention):
    """TP-Attention (Schlag et al. 2019, "Enhancing the Transformer with Explicit Relational Encoding
    for Math Problem Solving", eqs. 3-6).

    Each head computes, besides its query, key and value, a relation vector ``r = W_r z + b_r`` from
    the query-side input z (eq. 3; in encoder-decoder attention z is the decoder state). The head's
    filler ``v_bar = softmax(q k^T / sqrt(d_k)) v`` (eqs. 4-5) is bound to the relation by the
    elementwise product ``v_bar * r``, and the heads' bindings are projected by W_o and summed (eq. 6).
    The relation comes from the new queries only, so it needs no cache.
    """

    default_places = ("encoder", "decoder", "cross")
    needs_tree = False

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0):
        super().__init__(d_model, n_heads, dropout)
        self.relation = nn.Linear(d_model, d_model)

    def attend(self, queries, keys, values, mask, query, structure):
        fillers = super().attend(queries, keys, values, mask, query, structure)  # v_bar, (B, H, Tq, Dh)
        return fillers * self.roles(query)

    def roles(self, query: torch.Tensor) -> torch.Tensor:
        return self.split_heads(self.relation(query))  # r, (B, H, Tq, Dh)


@ATTENTION.register("relative")
class RelativeAttention(StandardAttention):
    """Relative position representations (Shaw, Uszkoreit & Vaswani 2018, "Self-Attention with
    Relative Position Representations", eqs. 3-7).

    ``e_ij = q_i . (k_j + a^K_ij) / sqrt(d_head)`` (eq. 5), ``z_i = sum_j alpha_ij (v_j + a^V_ij)``
    (eq. 3), where ``a^K_ij = w^K[clip(j - i, -k, k)]`` and likewise ``a^V`` (eqs. 6-7): 2k+1 learned
    vectors of size ``head_dim`` each for keys and values, shared by all heads as in the paper.

    Query i sits at absolute position ``structure["query_start"] + i`` (0 when not given) and key j
    at position j, which serves self-attention with a cache (the new queries are the last ones) and
    encoder-decoder attention (decoder position against source position) alike.

    Neither (Tq, Tk, head_dim) tensor of gathered vectors is built: the scores ``q . w^K`` are
    computed for the 2k+1 distances and gathered by the (Tq, Tk) distance index, and the attention
    weights are summed into 2k+1 distance buckets before they multiply ``w^V``.
    """

    default_places = ("encoder", "decoder")
    reads_query_positions = True
    needs_tree = False

    @classmethod
    def build(cls, config, place: str = "encoder") -> "RelativeAttention":
        return cls(config.d_model, config.n_heads, config.dropout, config.relative_k)

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, max_distance: int = 16):
        super().__init__(d_model, n_heads, dropout)
        if max_distance < 0:
            raise ConfigError(f"relative_k must be >= 0, got {max_distance}")
        self.max_distance = max_distance
        self.relative_keys = nn.Parameter(torch.empty(2 * max_distance + 1, self.head_dim))  # w^K, (2k+1, Dh)
        self.relative_values = nn.Parameter(torch.empty(2 * max_distance + 1, self.head_dim))  # w^V, (2k+1, Dh)
        self.init_parameters()

    def init_parameters(self) -> None:
        nn.init.xavier_uniform_(self.relative_keys)
        nn.init.xavier_uniform_(self.relative_values)

    def distance_index(self, query_length: int, key_length: int, query_start: int, device) -> torch.Tensor:
        """(Tq, Tk) index ``clip(j - i, -k, k) + k`` in [0, 2k] of query i (at ``query_start + i``) and key j."""
        query_positions = torch.arange(query_length, device=device) + query_start  # query_start: int or 0-d tensor
        key_positions = torch.arange(key_length, device=device)
        distance = key_positions[None, :] - query_positions[:, None]  # (Tq, Tk)
        return distance.clamp(-self.max_distance, self.max_distance) + self.max_distance

    def distances(self, queries: torch.Tensor, keys: torch.Tensor, structure: dict | None) -> torch.Tensor:
        """The distance index of every query and key, (B, H, Tq, Tk)."""
        batch, heads, query_length, _ = queries.shape
        key_length = keys.size(2)
        query_start = structure.get("query_start", 0) if structure else 0
        distance = self.distance_index(query_length, key_length, query_start, queries.device)
        return distance.expand(batch, heads, query_length, key_length)  # (B, H, Tq, Tk)

    def attention_weights(self, queries, keys, mask, query, structure, distance=None):
        """Eq. 5 and the softmax: e_ij = q_i . (k_j + a^K_ij) / sqrt(d_head) over the allowed keys."""
        distance = self.distances(queries, keys, structure) if distance is None else distance
        content_scores = queries @ keys.transpose(-2, -1)  # (B, H, Tq, Tk)
        scores_by_distance = queries @ self.relative_keys.t()  # (B, H, Tq, 2k+1)
        position_scores = scores_by_distance.gather(-1, distance)  # (B, H, Tq, Tk)
        return masked_softmax((content_scores + position_scores) / self.head_dim**0.5, mask)

    def attend(self, queries, keys, values, mask, query, structure):
        batch, heads, query_length, _ = queries.shape
        distance = self.distances(queries, keys, structure)  # (B, H, Tq, Tk)
        weights = self.attention_weights(queries, keys, mask, query, structure, distance)
        weights = apply_dropout(weights, self.dropout, self.training)  # (B, H, Tq, Tk)

        weights_by_distance = weights.new_zeros(batch, heads, query_length, 2 * self.max_distance + 1)
        weights_by_distance.scatter_add_(-1, distance, weights)  # (B, H, Tq, 2k+1)
        return weights @ values + weights_by_distance @ self.relative_values  # (B, H, Tq, Dh)


TREE_RELATIVE_FORMS = ("multiplicative", "additive")


@ATTENTION.register("tree_relative")
class TreeRelativeAttention(StandardAttention):
    """Tree relative attention (after Kim et al. 2021, "Code Prediction by Feeding Trees to
    Transformers", TravTrans+): one learned scalar per head and tree relation scales or shifts the
    attention scores ``a_ij = q_i . k_j / sqrt(d_head)``.

      multiplicative: ``softmax_j(a_ij * r[rel(i, j), h])``, r starts at 1 (standard attention);
      additive:       ``softmax_j(a_ij + r[rel(i, j), h])``, r starts at 0 (through SDPA as a bias).

    ``structure["relations"]`` (B, Tq, Tk) holds the relation ids in [0, n_relations) of every query
    token to every key token; the model computes them from the prefix trees of the tokens. Used in
    self-attention only (encoder or decoder), where queries and keys are tokens of the same tree.
    """

    default_places = ("encoder", "decoder")
    reads_query_positions = True
    needs_tree = True

    @classmethod
    def build(cls, config, place: str = "encoder") -> "TreeRelativeAttention":
        if place == "cross":
            raise ConfigError(
                "tree_relative attention relates tokens of one tree and so works only in self-attention "
                "(encoder, decoder); remove 'cross' from attention_in"
            )
        return cls(config.d_model, config.n_heads, config.dropout, config.tree_relations, config.tree_relative_form)

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        dropout: float = 0.0,
        n_relations: int = 64,
        form: str = "multiplicative",
    ):
        super().__init__(d_model, n_heads, dropout)
        if form not in TREE_RELATIVE_FORMS:
            raise ConfigError(f"tree_relative_form must be one of {', '.join(TREE_RELATIVE_FORMS)}; got {form!r}")
        if n_relations < 1:
            raise ConfigError(f"tree_relations must be >= 1, got {n_relations}")
        self.form = form
        self.relation_weights = nn.Parameter(torch.empty(n_relations, n_heads))  # r, (R, H)
        self.init_parameters()

    def init_parameters(self) -> None:
        nn.init.constant_(self.relation_weights, 1.0 if self.form == "multiplicative" else 0.0)

    def relation_scales(self, queries: torch.Tensor, keys: torch.Tensor, structure: dict | None) -> torch.Tensor:
        """The learned scalar of every query-key relation and head, (B, H, Tq, Tk)."""
        if not structure or structure.get("relations") is None:
            raise ValueError(
                'tree_relative attention needs structure["relations"] (B, Tq, Tk); the model must supply relations'
            )
        relations = structure["relations"]
        expected = (queries.size(0), queries.size(2), keys.size(2))
        if tuple(relations.shape) != expected:
            raise ValueError(f"relations have shape {tuple(relations.shape)}, expected (B, Tq, Tk) = {expected}")
        return self.relation_weights[relations].permute(0, 3, 1, 2)  # (B, H, Tq, Tk)

    def attention_weights(self, queries, keys, mask, query, structure):
        relation_weights = self.relation_scales(queries, keys, structure)
        scores = queries @ keys.transpose(-2, -1) / self.head_dim**0.5  # (B, H, Tq, Tk)
        if self.form == "additive":
            return masked_softmax(scores + relation_weights.to(scores.dtype), mask)
        return masked_softmax(scores * relation_weights, mask)

    def attend(self, queries, keys, values, mask, query, structure):
        dropout = self.dropout if self.training else 0.0
        if self.form == "additive":
            bias = self.relation_scales(queries, keys, structure).to(queries.dtype)
            if mask is not None:
                bias = bias.masked_fill(~mask, float("-inf"))
            return F.scaled_dot_product_attention(queries, keys, values, attn_mask=bias, dropout_p=dropout)
        weights = self.attention_weights(queries, keys, mask, query, structure)
        weights = apply_dropout(weights, dropout, self.training)
        return weights @ values  # (B, H, Tq, Dh)
