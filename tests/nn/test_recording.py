"""Recorded attention is the attention the layers used: rows sum to 1, masked cells are 0, and every layer's output
is recomputed from the recorded weights (and TP-Attention's recorded roles) and the layer's own inputs, captured by
a forward hook; recording changes nothing and leaves nothing set."""

import pytest
import torch
import torch.nn.functional as F

from neuromath.config import ModelConfig
from neuromath.expr.grammar import TreeGrammar
from neuromath.models import ModelInputs, build_model
from neuromath.nn.attention import RelativeAttention, StandardAttention, TPAttention
from neuromath.nn.group_attention import GroupAttention, group_masks
from neuromath.nn.recording import Recorded, join_rows, recording
from neuromath.registry import ATTENTION

SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]
GRAMMAR = TreeGrammar({"+": 2, "*": 2, "neg": 1})
SOURCE_TOKENS = SPECIALS + ["+", "*", "neg", "a", "b", "c", "d"]
TARGET_TOKENS = SPECIALS + ["+", "*", "neg", "a", "b"]
KERNELS = [(name, "multiplicative") for name in ATTENTION.names()] + [("tree_relative", "additive")]


def tiny_transformer(attention: str, form: str = "multiplicative"):
    config = ModelConfig(d_model=16, n_heads=2, n_encoder_layers=2, n_decoder_layers=2, d_ff=32, dropout=0.0,
                         tree_depth=4, attention=attention, tree_relative_form=form)
    inputs = ModelInputs(source_vocab_size=11, target_vocab_size=9,
                         source_classes=GRAMMAR.token_classes(SOURCE_TOKENS),
                         target_classes=GRAMMAR.token_classes(TARGET_TOKENS))
    torch.manual_seed(0)
    model = build_model(config, inputs).eval()
    with torch.no_grad():  # kernels start as standard attention (relation weights 1 or 0): make them matter
        for module in model.modules():
            if hasattr(module, "relation_weights"):
                module.relation_weights.uniform_(-1.0, 2.0)
    return model


def batch():
    generator = torch.Generator().manual_seed(1)
    source = torch.randint(4, 11, (3, 6), generator=generator)
    source[0, 4:] = 0  # padding
    target = torch.randint(4, 9, (3, 5), generator=generator)
    target[:, 0] = 1
    return {"source": source, "target_in": target}


def hook_calls(model, kind):
    """Every call of a ``kind`` layer: (layer, positional args, keyword args, output)."""
    calls = []
    handles = [
        module.register_forward_hook(
            lambda layer, args, kwargs, output: calls.append((layer, args, kwargs, output)), with_kwargs=True)
        for module in model.modules() if isinstance(module, kind)
    ]
    return calls, handles


def output_from_weights(layer, args, weights, roles):
    """A kernel's output computed from recorded weights and its own inputs, by the kernel's equations."""
    query, key_value = args[0], args[1]
    values = layer.split_heads(layer.value(key_value))  # (B, H, Tk, Dh)
    heads = weights @ values
    if isinstance(layer, RelativeAttention):  # eq. 3: + sum_j alpha_ij a^V_ij
        distance = layer.distance_index(weights.size(2), weights.size(3), 0, weights.device)  # (Tq, Tk)
        buckets = F.one_hot(distance, 2 * layer.max_distance + 1).to(weights.dtype)  # (Tq, Tk, 2k+1)
        heads = heads + torch.einsum("bhqk,qkd,de->bhqe", weights, buckets, layer.relative_values)
    if isinstance(layer, TPAttention):
        torch.testing.assert_close(roles, layer.split_heads(layer.relation(query)))  # eq. 3, from the query side
        heads = heads * roles
    return layer.output(layer.merge_heads(heads))


@pytest.mark.parametrize("attention,form", KERNELS)
def test_recorded_weights_are_those_each_transformer_layer_used(attention, form):
    model, data = tiny_transformer(attention, form), batch()
    calls, handles = hook_calls(model, StandardAttention)
    with torch.no_grad(), recording(model) as recorder:
        logits = model(data)
    for handle in handles:
        handle.remove()
    names = {module: name for name, module in model.named_modules()}
    assert [names[layer] for layer, *_ in calls] == list(recorder.records)  # one record per layer, in order
    assert len(calls) == 2 + 2 * 2  # 2 encoder layers; self- and cross-attention in 2 decoder layers
    for layer, args, kwargs, output in calls:
        record = recorder.records[names[layer]]
        weights = record.weights
        assert weights.shape == (3, 2, args[0].size(1), args[1].size(1))
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))
        if record.place in ("encoder", "cross"):  # no query looks at the padding of the first source
            assert record.key_side == "source" and torch.all(weights[0, :, :, 4:] == 0)
        else:  # a decoder token never looks ahead
            assert record.query_side == record.key_side == "target_in"
            seen = torch.ones(weights.size(2), weights.size(3), dtype=torch.bool).tril()
            assert torch.all(weights[..., ~seen] == 0) and torch.all(weights[..., seen] > 0)
        assert (record.roles is not None) == isinstance(layer, TPAttention)
        torch.testing.assert_close(output_from_weights(layer, args, weights, record.roles), output,
                                   atol=1e-5, rtol=1e-5)
    places = [record.place for record in recorder.records.values()]
    assert places == ["encoder", "encoder", "decoder", "cross", "decoder", "cross"]
    assert list(recorder.records.values())[3].title == "cross-attention, layer 1"
    # recording changed nothing and is gone afterwards
    with torch.no_grad():
        torch.testing.assert_close(model(data), logits)
    assert all(module.recorder is None for module in model.modules() if isinstance(module, Recorded))


def test_standard_weights_equal_an_independent_softmax_of_the_hooked_queries_and_keys():
    model, data = tiny_transformer("standard"), batch()
    calls, handles = hook_calls(model, StandardAttention)
    with torch.no_grad(), recording(model) as recorder:
        model(data)
    names = {module: name for name, module in model.named_modules()}
    for layer, args, kwargs, _ in calls:
        queries = layer.split_heads(layer.query(args[0]))
        keys = layer.split_heads(layer.key(args[1]))
        mask = args[2] if len(args) > 2 else kwargs.get("mask")
        scores = (queries @ keys.transpose(-2, -1)) / (16 // 2) ** 0.5
        expected = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        torch.testing.assert_close(recorder.records[names[layer]].weights, expected)


@pytest.mark.parametrize("attention", ["standard", "tp", "relative"])
def test_step_by_step_decoding_records_the_rows_of_teacher_forcing(attention):
    model, data = tiny_transformer(attention), batch()
    with torch.no_grad(), recording(model) as forced:
        model(data)
    with torch.no_grad(), recording(model) as stepped:
        memory, cache = model.encode(data), None
        for t in range(1, 6):
            _, cache = model.decode_step(memory, data["target_in"][:, :t], cache)
    assert list(stepped.records) == list(forced.records)
    for name, record in forced.records.items():
        torch.testing.assert_close(stepped.records[name].weights, record.weights, atol=1e-5, rtol=1e-5)
        if record.roles is not None:
            torch.testing.assert_close(stepped.records[name].roles, record.roles, atol=1e-5, rtol=1e-5)


def test_join_rows_pads_the_keys_a_row_could_not_see():
    first, second = torch.full((1, 1, 1, 2), 0.5), torch.full((1, 1, 1, 3), 1 / 3)
    joined = join_rows(first, second)
    assert joined.shape == (1, 1, 2, 3)
    assert joined[0, 0, 0].tolist() == [0.5, 0.5, 0.0]


def test_group_attention_records_each_group_under_its_name_with_its_mask():
    torch.manual_seed(0)
    layer = GroupAttention(16, heads_per_group=2).eval()
    spans = torch.tensor([[0, 0, 0, 1, 1, 2, 2, 2]])
    quantity = torch.tensor([[True, True, True, True, True, False, False, False]])
    question = torch.tensor([[False] * 5 + [True] * 3])
    valid = torch.tensor([[True] * 7 + [False]])
    masks = group_masks(spans, quantity, question, valid)
    x = torch.randn(1, 8, 16)
    with torch.no_grad(), recording(layer) as recorder:
        output = layer(x, masks)
    (record,) = recorder.records.values()
    assert record.title == "group attention" and record.head_labels == (
        "global 1", "global 2", "quantity 1", "quantity 2", "quantity_pair 1", "quantity_pair 2", "question 1",
        "question 2")
    for head, group in enumerate(["global"] * 2 + ["quantity"] * 2 + ["quantity_pair"] * 2 + ["question"] * 2):
        weights = record.weights[0, head]
        assert torch.all(weights[~masks[group][0]] == 0), group  # nothing outside the group's mask
        torch.testing.assert_close(weights.sum(-1), torch.ones(8))
    values = layer.qkv(x).chunk(3, dim=-1)[2].view(1, 8, 8, 2).transpose(1, 2)  # (B, H, T, Dh)
    recomputed = layer.out((record.weights @ values).transpose(1, 2).reshape(1, 8, 16))
    torch.testing.assert_close(recomputed, output, atol=1e-5, rtol=1e-5)


def test_recording_is_removed_when_the_block_raises():
    model = tiny_transformer("standard")
    with pytest.raises(RuntimeError), recording(model):
        raise RuntimeError("stop")
    assert all(module.recorder is None for module in model.modules() if isinstance(module, Recorded))
