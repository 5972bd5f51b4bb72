import math

import pytest
import torch

from neuromath.config import ModelConfig
from neuromath.errors import ConfigError
from neuromath.nn.attention import (
    RelativeAttention,
    StandardAttention,
    TPAttention,
    TreeRelativeAttention,
    few_query_attention,
    reorder_cache,
)
from neuromath.registry import ATTENTION

D_MODEL, N_HEADS, HEAD_DIM = 8, 2, 4
N_RELATIONS = 5
MAX_DISTANCE = 2  # small, so the examples below reach clipped distances

# name -> constructor of a tiny layer; the tree kernel appears once per form
KERNELS = {
    "tp": lambda dropout=0.0: TPAttention(D_MODEL, N_HEADS, dropout),
    "relative": lambda dropout=0.0: RelativeAttention(D_MODEL, N_HEADS, dropout, MAX_DISTANCE),
    "tree_multiplicative": lambda dropout=0.0: TreeRelativeAttention(
        D_MODEL, N_HEADS, dropout, N_RELATIONS, "multiplicative"
    ),
    "tree_additive": lambda dropout=0.0: TreeRelativeAttention(D_MODEL, N_HEADS, dropout, N_RELATIONS, "additive"),
}


def randomised(layer, seed=0):
    """The layer in float64, eval mode, with every parameter drawn at random (relation scalars included)."""
    generator = torch.Generator().manual_seed(seed)
    layer = layer.double().eval()
    with torch.no_grad():
        for parameter in layer.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator, dtype=torch.float64) * 0.7)
    return layer


def random_states(*shape, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator, dtype=torch.float64)


def random_relations(batch, query_length, key_length, seed=2):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, N_RELATIONS, (batch, query_length, key_length), generator=generator)


def padding_mask(batch, key_length, padded):
    """(B, 1, 1, Tk) True where a key may be attended to; the last ``padded[b]`` keys of row b are padding."""
    mask = torch.ones(batch, 1, 1, key_length, dtype=torch.bool)
    for b, count in enumerate(padded):
        if count:
            mask[b, ..., key_length - count :] = False
    return mask


def causal_mask(length, start=0):
    """(T, start + T): the new token t (at position start + t) may attend to positions up to start + t."""
    return torch.ones(length, start + length, dtype=torch.bool).tril(start)


# ---- direct, unbatched loop implementations of the papers' equations -------------------------


def head_projection(linear, states, head):
    """Rows ``head`` of a projection: states (T, D) -> (T, Dh), i.e. ``x W^h + b^h`` per token."""
    rows = slice(head * HEAD_DIM, (head + 1) * HEAD_DIM)
    return states @ linear.weight[rows].t() + linear.bias[rows]


def combine_heads(layer, per_head):
    """Multi-head output of one token: ``b_o + sum_h W_o^h o_h`` (per_head: list of (Dh,))."""
    total = layer.output.bias.clone()
    for head, vector in enumerate(per_head):
        total = total + layer.output.weight[:, head * HEAD_DIM : (head + 1) * HEAD_DIM] @ vector
    return total


def softmax_over_allowed(scores, allowed):
    """alpha_j = exp(s_j) / sum_{allowed j'} exp(s_j'), 0 where not allowed."""
    exps = [math.exp(s) if ok else 0.0 for s, ok in zip(scores, allowed)]
    total = sum(exps)
    return [e / total for e in exps]


def allowed_keys(mask, shape, b, h, i):
    if mask is None:
        return [True] * shape[-1]
    return [bool(x) for x in mask.expand(shape)[b, h, i]]


@torch.no_grad()
def loop_tp_attention(layer, query, key_value, mask):
    """Schlag et al. 2019, eqs. 3-6, one batch element, head and query at a time."""
    batch, query_length, _ = query.shape
    key_length = key_value.size(1)
    out = torch.zeros(batch, query_length, D_MODEL, dtype=torch.float64)
    for b in range(batch):
        bindings = []  # per head: (Tq, Dh)
        for h in range(N_HEADS):
            q = head_projection(layer.query, query[b], h)
            k = head_projection(layer.key, key_value[b], h)
            v = head_projection(layer.value, key_value[b], h)
            r = head_projection(layer.relation, query[b], h)  # eq. 3: from the query side
            rows = []
            for i in range(query_length):
                scores = [float(q[i] @ k[j]) / math.sqrt(HEAD_DIM) for j in range(key_length)]
                alpha = softmax_over_allowed(
                    scores, allowed_keys(mask, (batch, N_HEADS, query_length, key_length), b, h, i)
                )
                filler = sum(alpha[j] * v[j] for j in range(key_length))  # eqs. 4-5
                rows.append(filler * r[i])  # binding by elementwise product
            bindings.append(rows)
        for i in range(query_length):
            out[b, i] = combine_heads(layer, [bindings[h][i] for h in range(N_HEADS)])  # eq. 6
    return out


@torch.no_grad()
def loop_relative_attention(layer, query, key_value, mask, query_start):
    """Shaw et al. 2018, eqs. 3-7, with query i at position query_start + i and key j at position j."""
    batch, query_length, _ = query.shape
    key_length = key_value.size(1)
    k_max = layer.max_distance
    out = torch.zeros(batch, query_length, D_MODEL, dtype=torch.float64)
    for b in range(batch):
        per_head = []
        for h in range(N_HEADS):
            q = head_projection(layer.query, query[b], h)
            k = head_projection(layer.key, key_value[b], h)
            v = head_projection(layer.value, key_value[b], h)
            rows = []
            for i in range(query_length):
                clipped = [max(-k_max, min(k_max, j - (query_start + i))) for j in range(key_length)]  # eq. 7
                a_key = [layer.relative_keys[d + k_max] for d in clipped]  # eq. 6
                a_value = [layer.relative_values[d + k_max] for d in clipped]
                scores = [float(q[i] @ (k[j] + a_key[j])) / math.sqrt(HEAD_DIM) for j in range(key_length)]  # eq. 5
                alpha = softmax_over_allowed(
                    scores, allowed_keys(mask, (batch, N_HEADS, query_length, key_length), b, h, i)
                )
                rows.append(sum(alpha[j] * (v[j] + a_value[j]) for j in range(key_length)))  # eq. 3
            per_head.append(rows)
        for i in range(query_length):
            out[b, i] = combine_heads(layer, [per_head[h][i] for h in range(N_HEADS)])
    return out


@torch.no_grad()
def loop_tree_relative_attention(layer, query, key_value, mask, relations):
    """softmax_j(a_ij * r[rel_ij, h]) or softmax_j(a_ij + r[rel_ij, h]) with a_ij = q_i . k_j / sqrt(d)."""
    batch, query_length, _ = query.shape
    key_length = key_value.size(1)
    out = torch.zeros(batch, query_length, D_MODEL, dtype=torch.float64)
    for b in range(batch):
        per_head = []
        for h in range(N_HEADS):
            q = head_projection(layer.query, query[b], h)
            k = head_projection(layer.key, key_value[b], h)
            v = head_projection(layer.value, key_value[b], h)
            rows = []
            for i in range(query_length):
                scores = []
                for j in range(key_length):
                    a = float(q[i] @ k[j]) / math.sqrt(HEAD_DIM)
                    r = float(layer.relation_weights[relations[b, i, j], h])
                    scores.append(a * r if layer.form == "multiplicative" else a + r)
                alpha = softmax_over_allowed(
                    scores, allowed_keys(mask, (batch, N_HEADS, query_length, key_length), b, h, i)
                )
                rows.append(sum(alpha[j] * v[j] for j in range(key_length)))
            per_head.append(rows)
        for i in range(query_length):
            out[b, i] = combine_heads(layer, [per_head[h][i] for h in range(N_HEADS)])
    return out


def structure_for(name, query_start, relations):
    structure = {"query_start": query_start}
    if name.startswith("tree"):
        structure["relations"] = relations
    return structure


# ---- registry and config -------------------------------------------------------------------


def test_kernels_are_registered_with_their_places_and_build_from_the_config():
    config = ModelConfig(d_model=D_MODEL, n_heads=N_HEADS, dropout=0.25, relative_k=3, tree_relations=7,
                         tree_relative_form="additive")
    tp = ATTENTION.get("tp").build(config, "cross")
    assert isinstance(tp, TPAttention) and tp.dropout == 0.25
    assert TPAttention.default_places == ("encoder", "decoder", "cross") and not TPAttention.needs_tree

    relative = ATTENTION.get("relative").build(config, "decoder")
    assert isinstance(relative, RelativeAttention)
    assert relative.relative_keys.shape == relative.relative_values.shape == (7, D_MODEL // N_HEADS)
    assert RelativeAttention.default_places == ("encoder", "decoder") and not RelativeAttention.needs_tree
    assert isinstance(ATTENTION.get("relative").build(config, "cross"), RelativeAttention)

    tree = ATTENTION.get("tree_relative").build(config, "encoder")
    assert isinstance(tree, TreeRelativeAttention) and tree.form == "additive"
    assert tree.relation_weights.shape == (7, N_HEADS)
    assert TreeRelativeAttention.default_places == ("encoder", "decoder") and TreeRelativeAttention.needs_tree


def test_tree_relative_in_cross_attention_is_a_config_error():
    with pytest.raises(ConfigError, match="only in self-attention"):
        TreeRelativeAttention.build(ModelConfig(d_model=D_MODEL, n_heads=N_HEADS), "cross")


def test_unknown_tree_relative_form_is_a_config_error_naming_the_allowed_values():
    with pytest.raises(ConfigError, match="tree_relative_form must be one of multiplicative, additive, got"):
        ModelConfig(d_model=D_MODEL, n_heads=N_HEADS, tree_relative_form="exponential")  # refused by the config
    with pytest.raises(ConfigError, match="multiplicative, additive.*'exponential'"):  # and by the layer itself
        TreeRelativeAttention(D_MODEL, N_HEADS, form="exponential")


@pytest.mark.parametrize("structure", [None, {}, {"query_start": 0}])
def test_tree_relative_without_relations_says_the_model_must_supply_them(structure):
    layer = KERNELS["tree_multiplicative"]()
    x = torch.randn(1, 3, D_MODEL)
    with pytest.raises(ValueError, match="model must supply relations"):
        layer(x, x, structure=structure)


def test_tree_relative_rejects_relations_of_the_wrong_shape():
    layer = KERNELS["tree_additive"]()
    x = torch.randn(1, 3, D_MODEL)
    with pytest.raises(ValueError, match="expected"):
        layer(x, x, structure={"relations": torch.zeros(1, 3, 2, dtype=torch.long)})


@pytest.mark.parametrize("form, start_value", [("multiplicative", 1.0), ("additive", 0.0)])
def test_init_parameters_restores_the_relation_scalars_after_a_generic_initialisation(form, start_value):
    layer = TreeRelativeAttention(D_MODEL, N_HEADS, 0.0, N_RELATIONS, form)
    # the model's generic pass: Xavier on every parameter of dim > 1 without "embedding" in its name
    for name, parameter in layer.named_parameters():
        assert "embedding" not in name
        if parameter.dim() > 1:
            torch.nn.init.xavier_uniform_(parameter)
    assert not torch.all(layer.relation_weights == start_value)
    layer.init_parameters()
    assert torch.all(layer.relation_weights == start_value)


# ---- against the loop implementations ------------------------------------------------------


def test_tp_attention_matches_the_loop_implementation():
    layer = randomised(KERNELS["tp"]())
    x = random_states(2, 5, D_MODEL)
    mask = padding_mask(2, 5, padded=[0, 2])
    torch.testing.assert_close(layer(x, x, mask), loop_tp_attention(layer, x, x, mask), atol=1e-10, rtol=1e-8)
    # encoder-decoder: the relation vector comes from the query (decoder) side
    decoder = random_states(2, 3, D_MODEL, seed=5)
    torch.testing.assert_close(
        layer(decoder, x, mask, static_kv=True), loop_tp_attention(layer, decoder, x, mask), atol=1e-10, rtol=1e-8
    )


@pytest.mark.parametrize(
    "query_length, key_length, query_start, cross",
    [
        (5, 5, 0, False),  # encoder self-attention
        (2, 5, 3, False),  # decoder self-attention, the last 2 of 5 positions
        (4, 6, 0, True),  # encoder-decoder: decoder positions 0..3 against source positions 0..5
        (1, 6, 4, True),  # one decoder step at position 4 against the whole source
    ],
)
def test_relative_attention_matches_the_loop_implementation(query_length, key_length, query_start, cross):
    layer = randomised(KERNELS["relative"]())
    key_value = random_states(2, key_length, D_MODEL)
    query = random_states(2, query_length, D_MODEL, seed=5) if cross else key_value[:, key_length - query_length :]
    mask = padding_mask(2, key_length, padded=[0, 2])
    expected = loop_relative_attention(layer, query, key_value, mask, query_start)
    actual = layer(query, key_value, mask, structure={"query_start": query_start})
    torch.testing.assert_close(actual, expected, atol=1e-10, rtol=1e-8)


def test_relative_attention_without_structure_puts_the_first_query_at_position_zero():
    layer = randomised(KERNELS["relative"]())
    x = random_states(2, 4, D_MODEL)
    torch.testing.assert_close(layer(x, x), loop_relative_attention(layer, x, x, None, 0), atol=1e-10, rtol=1e-8)
    torch.testing.assert_close(layer(x, x, structure={}), layer(x, x, structure={"query_start": 0}))


@pytest.mark.parametrize("name", ["tree_multiplicative", "tree_additive"])
def test_tree_relative_attention_matches_the_loop_implementation(name):
    layer = randomised(KERNELS[name]())
    x = random_states(2, 5, D_MODEL)
    relations = random_relations(2, 5, 5)
    mask = padding_mask(2, 5, padded=[1, 3])
    expected = loop_tree_relative_attention(layer, x, x, mask, relations)
    actual = layer(x, x, mask, structure={"relations": relations})
    torch.testing.assert_close(actual, expected, atol=1e-10, rtol=1e-8)


@pytest.mark.parametrize("form", ["multiplicative", "additive"])
def test_tree_relative_at_initialisation_equals_standard_attention_with_the_same_weights(form):
    standard = randomised(StandardAttention(D_MODEL, N_HEADS))
    tree = TreeRelativeAttention(D_MODEL, N_HEADS, 0.0, N_RELATIONS, form).double().eval()
    missing, unexpected = tree.load_state_dict(standard.state_dict(), strict=False)
    assert missing == ["relation_weights"] and not unexpected
    x = random_states(2, 5, D_MODEL)
    mask = padding_mask(2, 5, padded=[0, 2])
    relations = random_relations(2, 5, 5)
    torch.testing.assert_close(tree(x, x, mask, structure={"relations": relations}), standard(x, x, mask))
    with torch.no_grad():
        tree.relation_weights.uniform_(0.5, 1.5)  # relation-dependent values make the relations matter
    assert not torch.allclose(tree(x, x, mask, structure={"relations": relations}), standard(x, x, mask))


# ---- masks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(KERNELS))
def test_a_masked_key_input_changes_nothing(name):
    layer = randomised(KERNELS[name]())
    query = random_states(2, 3, D_MODEL, seed=5)
    memory = random_states(2, 5, D_MODEL)
    mask = padding_mask(2, 5, padded=[0, 2])
    relations = random_relations(2, 3, 5)
    before = layer(query, memory, mask, structure=structure_for(name, 0, relations))

    changed_memory, changed_relations = memory.clone(), relations.clone()
    changed_memory[1, 3:] = random_states(2, D_MODEL, seed=9) * 10
    changed_relations[1, :, 3:] = (relations[1, :, 3:] + 1) % N_RELATIONS
    after = layer(query, changed_memory, mask, structure=structure_for(name, 0, changed_relations))
    torch.testing.assert_close(after, before)

    changed_memory[1, 0] += 1.0  # an unmasked key does matter
    after = layer(query, changed_memory, mask, structure=structure_for(name, 0, changed_relations))
    assert not torch.allclose(after[1], before[1])
    torch.testing.assert_close(after[0], before[0])


@pytest.mark.parametrize("name", list(KERNELS))
def test_a_future_token_changes_nothing_for_earlier_queries(name):
    layer = randomised(KERNELS[name]())
    x = random_states(2, 5, D_MODEL)
    relations = random_relations(2, 5, 5)
    mask = causal_mask(5)
    before = layer(x, x, mask, structure=structure_for(name, 0, relations))
    changed = x.clone()
    changed[:, 3] += 1.0
    after = layer(changed, changed, mask, structure=structure_for(name, 0, relations))
    torch.testing.assert_close(after[:, :3], before[:, :3])
    assert not torch.allclose(after[:, 3:], before[:, 3:])


# ---- incremental decoding with a cache -----------------------------------------------------


@pytest.mark.parametrize("chunks", [[1, 1, 1, 1, 1], [2, 3]])
@pytest.mark.parametrize("name", list(KERNELS))
def test_decoder_self_attention_with_a_cache_matches_the_full_causal_pass(name, chunks):
    layer = randomised(KERNELS[name]())
    x = random_states(2, 5, D_MODEL)
    relations = random_relations(2, 5, 5)
    full = layer(x, x, causal_mask(5), structure=structure_for(name, 0, relations))

    cache, start, pieces = {}, 0, []
    for length in chunks:
        new = x[:, start : start + length]
        structure = structure_for(name, start, relations[:, start : start + length, : start + length])
        pieces.append(layer(new, new, causal_mask(length, start), cache, "decoder0.self", False, structure))
        start += length
    torch.testing.assert_close(torch.cat(pieces, dim=1), full)
    # The keys and values sit in buffers of spare capacity with the first 5 positions filled.
    assert cache["decoder0.self.filled"] == 5
    assert cache["decoder0.self.k"].shape == cache["decoder0.self.v"].shape == (2, N_HEADS, 32, HEAD_DIM)


@torch.no_grad()  # as in decoding: an in-place reorder is not differentiable
def test_cache_buffers_grow_past_their_first_capacity_and_reorder_in_place():
    layer = randomised(StandardAttention(D_MODEL, N_HEADS))
    x = random_states(3, 40, D_MODEL)
    full = layer(x, x, causal_mask(40))
    cache, pieces = {}, []
    for start in range(40):  # one token at a time, past the first capacity of 32 positions
        new = x[:, start : start + 1]
        pieces.append(layer(new, new, causal_mask(1, start), cache, "decoder0.self", False))
    torch.testing.assert_close(torch.cat(pieces, dim=1), full)
    assert cache["decoder0.self.filled"] == 40 and cache["decoder0.self.k"].size(2) == 64

    before = {name: cache[name].clone() for name in ("decoder0.self.k", "decoder0.self.v")}
    address = cache["decoder0.self.k"].data_ptr()
    index = torch.tensor([2, 0, 0])  # row 0 takes row 2 while row 2 takes row 0: reads come before writes
    first = reorder_cache(cache, index)
    for name in ("decoder0.self.k", "decoder0.self.v"):  # the filled positions (the rest is uninitialised memory)
        torch.testing.assert_close(first[name][:, :, :40], before[name].index_select(0, index)[:, :, :40])
    assert first["decoder0.self.filled"] == 40
    assert first["decoder0.self.k"].data_ptr() == address  # the same buffer: no new allocation per step
    second = reorder_cache(first, torch.tensor([1, 2, 0]))
    torch.testing.assert_close(second["decoder0.self.v"][:, :, :40],
                               before["decoder0.self.v"][[0, 0, 2]][:, :, :40])
    # Fewer rows (a finished source left the search): a fresh buffer of the right size.
    third = reorder_cache(second, torch.tensor([0]))
    assert third["decoder0.self.k"].shape == (1, N_HEADS, 64, HEAD_DIM)
    torch.testing.assert_close(third["decoder0.self.k"][:, :, :40], before["decoder0.self.k"][[0]][:, :, :40])


def test_an_in_place_reorder_copies_only_the_rows_that_move_and_only_their_filled_positions():
    buffer = torch.arange(4 * 1 * 6 * 1, dtype=torch.float).view(4, 1, 6, 1)
    cache = {"d.self.k": buffer, "d.self.v": buffer.clone(), "d.self.filled": 2, "length": torch.arange(4)}
    expected = buffer.clone()
    expected[1, :, :2], expected[3, :, :2] = buffer[0, :, :2], buffer[1, :, :2]  # rows 0 and 2 stay
    reordered = reorder_cache(cache, torch.tensor([0, 0, 2, 1]))
    assert torch.equal(reordered["d.self.k"], expected)  # positions 2.. keep their old values: never copied
    assert torch.equal(reordered["length"], torch.tensor([0, 0, 2, 1]))


@pytest.mark.parametrize("name", ["tp", "relative"])
def test_cross_attention_with_static_kv_projects_the_memory_once(name):
    layer = randomised(KERNELS[name]())
    decoder = random_states(2, 4, D_MODEL, seed=5)
    memory = random_states(2, 6, D_MODEL)
    mask = padding_mask(2, 6, padded=[0, 2])
    full = layer(decoder, memory, mask, structure={"query_start": 0})

    key_calls = []
    layer.key.register_forward_hook(lambda module, inputs, output: key_calls.append(1))
    cache, steps = {}, []
    for t in range(4):
        # after the first step the memory is never read again: pass garbage to prove it
        states = memory if t == 0 else torch.full_like(memory, 1e3)
        steps.append(layer(decoder[:, t : t + 1], states, mask, cache, "decoder0.cross", True, {"query_start": t}))
    assert len(key_calls) == 1
    assert cache["decoder0.cross.k"].shape == (2, N_HEADS, 6, HEAD_DIM)
    torch.testing.assert_close(torch.cat(steps, dim=1), full)


# ---- decoding's few queries ------------------------------------------------------------------


@pytest.mark.parametrize("dtype, tolerance", [(torch.float64, 1e-12), (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding"])
@pytest.mark.parametrize("query_length", [1, 3])
def test_few_query_attention_equals_the_fused_kernel(query_length, mask_kind, dtype, tolerance):
    generator = torch.Generator().manual_seed(3)
    queries, keys, values = (torch.randn(4, N_HEADS, length, HEAD_DIM, generator=generator).to(dtype)
                             for length in (query_length, 7, 7))
    mask = {"none": None, "causal": causal_mask(query_length, 7 - query_length),
            "padding": padding_mask(4, 7, padded=[0, 3, 6, 1])}[mask_kind]
    fused = torch.nn.functional.scaled_dot_product_attention(queries, keys, values, attn_mask=mask)
    ours = few_query_attention(queries, keys, values, mask)
    assert ours.dtype == dtype
    torch.testing.assert_close(ours, fused, atol=tolerance, rtol=tolerance)
    if mask_kind == "padding":  # the padded keys of a row take no weight: changing them changes nothing
        changed = keys.clone()
        changed[1, :, 4:] = 100.0
        torch.testing.assert_close(few_query_attention(queries, changed, values, mask), ours)


@pytest.mark.parametrize("name", ["standard", "tp"])
def test_bf16_decoding_steps_with_a_cache_match_the_full_pass(name):
    """In bf16 on the CPU a step's one query takes ``few_query_attention``, the full pass the fused kernel: the two
    agree to bf16 rounding, with the keys read from the cache's buffers and a padded memory in cross-attention."""
    layer = randomised(StandardAttention(D_MODEL, N_HEADS) if name == "standard" else KERNELS[name]()).float()
    x = random_states(3, 6, D_MODEL).float()
    memory = random_states(3, 5, D_MODEL, seed=4).float()
    padding = padding_mask(3, 5, padded=[0, 2, 4])
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        full_self = layer(x, x, causal_mask(6), structure={"query_start": 0})
        full_cross = layer(x, memory, padding, structure={"query_start": 0})
        self_cache, cross_cache, self_steps, cross_steps = {}, {}, [], []
        for t in range(6):
            new = x[:, t : t + 1]
            self_steps.append(layer(new, new, None, self_cache, "decoder0.self", False, {"query_start": t}))
            cross_steps.append(layer(new, memory, padding, cross_cache, "decoder0.cross", True, {"query_start": t}))
    for steps, full in ((self_steps, full_self), (cross_steps, full_cross)):
        assert torch.cat(steps, dim=1).dtype == full.dtype == torch.bfloat16
        torch.testing.assert_close(torch.cat(steps, dim=1).float(), full.float(), atol=3e-2, rtol=3e-2)


# ---- dropout -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["relative", "tree_multiplicative"])
def test_dropout_acts_on_the_attention_weights_in_training_only(name):
    layer = randomised(KERNELS[name](dropout=1.0))
    x = random_states(2, 4, D_MODEL)
    structure = structure_for(name, 0, random_relations(2, 4, 4))
    # every weight dropped: neither the values nor the relative value vectors reach the output
    layer.train()
    torch.testing.assert_close(layer(x, x, structure=structure), layer.output.bias.expand(2, 4, D_MODEL))
    layer.eval()
    assert not torch.allclose(layer(x, x, structure=structure), layer.output.bias.expand(2, 4, D_MODEL))
