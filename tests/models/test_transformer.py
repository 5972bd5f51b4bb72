import pytest
import torch

from neuromath.config import ModelConfig
from neuromath.errors import ConfigError
from neuromath.expr.grammar import TreeGrammar
from neuromath.models import (
    ModelInputs,
    build_model,
    transformer,  # noqa: F401  (its building blocks register the kernels and positions)
)
from neuromath.nn.attention import StandardAttention
from neuromath.registry import ATTENTION, POSITIONS

SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]
GRAMMAR = TreeGrammar({"+": 2, "*": 2, "neg": 1})
SOURCE_TOKENS = SPECIALS + ["+", "*", "neg", "a", "b", "c", "d"]  # 11 ids
TARGET_TOKENS = SPECIALS + ["+", "*", "neg", "a", "b"]  # 9 ids


def tiny(trees=True, **changes):
    values = dict(d_model=16, n_heads=2, n_encoder_layers=2, n_decoder_layers=2, d_ff=32, dropout=0.0, tree_depth=4)
    values.update(changes)
    classes = {}
    if trees:  # both sides are prefix expressions, so every variant applies everywhere it can
        classes = dict(
            source_classes=GRAMMAR.token_classes(SOURCE_TOKENS), target_classes=GRAMMAR.token_classes(TARGET_TOKENS)
        )
    return build_model(ModelConfig(**values), ModelInputs(source_vocab_size=11, target_vocab_size=9, **classes)).eval()


def batch(seed=0):
    generator = torch.Generator().manual_seed(seed)
    source = torch.randint(4, 11, (3, 6), generator=generator)
    source[0, 4:] = 0  # padding
    target = torch.randint(4, 9, (3, 5), generator=generator)
    target[:, 0] = 1
    return {"source": source, "target_in": target}


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("share_embeddings", [True, False])
@pytest.mark.parametrize("attention", ATTENTION.names())
@pytest.mark.parametrize("positions", POSITIONS.names())
def test_forward_backward_and_incremental_decoding_agree(norm_first, share_embeddings, attention, positions):
    model = tiny(norm_first=norm_first, share_embeddings=share_embeddings, attention=attention, positions=positions)
    data = batch()
    logits = model(data)
    assert logits.shape == (3, 5, 9)
    logits.sum().backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)
    # Decoding one token at a time with the cache gives the same distributions as teacher forcing.
    full = torch.log_softmax(logits.detach(), dim=-1)
    memory, cache = model.encode(data), None
    for t in range(1, 6):
        step, cache = model.decode_step(memory, data["target_in"][:, :t], cache)
        torch.testing.assert_close(step, full[:, t - 1], atol=1e-5, rtol=1e-5)


VARIANTS = [(attention, positions) for attention in ATTENTION.names() for positions in POSITIONS.names()]


@pytest.mark.parametrize("attention,positions", VARIANTS)
def test_padding_does_not_change_the_output(attention, positions):
    model = tiny(attention=attention, positions=positions)
    data = batch()
    short = {"source": data["source"][:1, :4], "target_in": data["target_in"][:1]}
    torch.testing.assert_close(model(data)[:1], model(short), atol=1e-5, rtol=1e-5)
    # Whatever token sits in a padded source position, the output is the same.
    changed = {"source": data["source"].clone(), "target_in": data["target_in"]}
    changed["source"][0, 4:] = 0
    torch.testing.assert_close(model(data), model(changed))


@pytest.mark.parametrize("attention,positions", VARIANTS)
def test_decoder_is_causal(attention, positions):
    model = tiny(attention=attention, positions=positions)
    data = batch()
    changed = {**data, "target_in": data["target_in"].clone()}
    changed["target_in"][:, 3] = 4 if int(data["target_in"][0, 3]) != 4 else 5
    a, b = model(data), model(changed)
    torch.testing.assert_close(a[:, :3], b[:, :3])
    assert not torch.allclose(a[:, 3:], b[:, 3:])


def test_variants_are_placed_where_the_config_says():
    model = tiny(attention="tp")
    kinds = {type(layer.self_attention).__name__ for layer in model.encoder_layers}
    assert kinds != {"StandardAttention"} and model.plan["embedding"] == "role" and model.source_role is not None
    assert type(model.decoder_layers[0].cross_attention) is type(model.encoder_layers[0].self_attention)
    model = tiny(attention="tp", attention_in="cross", embedding="plain")
    assert type(model.encoder_layers[0].self_attention) is StandardAttention
    assert type(model.decoder_layers[0].self_attention) is StandardAttention
    assert type(model.decoder_layers[0].cross_attention) is not StandardAttention
    assert model.source_role is None
    # Tree variants only go where the task declares prefix trees.
    with pytest.raises(ConfigError, match="needs prefix trees"):
        tiny(trees=False, attention="tree_relative")
    with pytest.raises(ConfigError, match="needs prefix trees"):
        tiny(trees=False, positions="tree")
    with pytest.raises(ConfigError, match="attention_in"):
        tiny(attention="tp", attention_in="encoder,somewhere")
    with pytest.raises(ConfigError, match="embedding"):
        tiny(embedding="fancy")
    source_only = build_model(
        ModelConfig(d_model=16, n_heads=2, d_ff=32, tree_depth=4, positions="tree", attention="tree_relative"),
        ModelInputs(11, 9, source_classes=GRAMMAR.token_classes(SOURCE_TOKENS)),
    )
    assert source_only.plan["sides"] == ("encoder",) and source_only.plan["places"] == ("encoder",)
    assert source_only.target_tree is None and type(source_only.decoder_layers[0].self_attention) is StandardAttention


def test_role_embedding_starts_as_n_1_1_on_unit_inputs():
    model = build_model(ModelConfig(d_model=64, n_heads=2, d_ff=32, attention="tp"), ModelInputs(300, 300))
    token = model.source_embedding.weight[1:] * 8.0  # E x sqrt(d)
    assert abs(token.std().item() - 1.0) < 0.05  # unit-scale embedded tokens
    role = model.source_role.role(token)  # r = W_p e + b_p
    assert abs(role.mean().item() - 1.0) < 0.05 and abs(role.std().item() - 1.0) < 0.1  # N(1, 1), appendix B
    torch.testing.assert_close(model.source_role(token), token * role)  # z = e * r
