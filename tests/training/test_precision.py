"""train.precision: what auto resolves to, the errors, autocast at inference in the run's own precision, and a
tiny Transformer and a tiny Graph2Tree that learn as well in bf16-mixed as in float32 (the same thresholds)."""

import csv

import pytest
import torch
from torch.nn.attention import SDPBackend

import neuromath
from neuromath.config import load_config
from neuromath.errors import ConfigError
from neuromath.experiments.fit_then_test import train
from neuromath.nn import precision
from neuromath.nn.precision import autocast, resolve_precision, training_attention
from neuromath.tasks import get_task


def test_auto_follows_what_the_cpu_can_do(monkeypatch):
    monkeypatch.setattr(precision, "cpu_supports_bf16", lambda: True)
    assert resolve_precision("auto", "cpu") == "bf16-mixed"
    monkeypatch.setattr(precision, "cpu_supports_bf16", lambda: False)
    assert resolve_precision("auto", "cpu") == "32-true"
    assert resolve_precision("bf16-mixed", "cpu") == "bf16-mixed"  # asked for, it is used even where it is slow
    assert resolve_precision("32-true", "cpu") == "32-true"


def test_unknown_precisions_and_fp16_on_the_cpu_are_refused_with_the_key():
    with pytest.raises(ConfigError, match="train.precision must be one of"):
        load_config(None, ["train.precision=fp8"])
    with pytest.raises(ConfigError, match="16-mixed needs a GPU"):
        resolve_precision("16-mixed", "cpu")
    with pytest.raises(ConfigError, match="train.precision"):
        resolve_precision("half", "cpu")


def test_autocast_runs_matrix_products_in_bf16_only_when_asked():
    layer = torch.nn.Linear(4, 3)
    inputs = torch.randn(2, 4)
    with autocast("bf16-mixed", "cpu"):
        assert layer(inputs).dtype == torch.bfloat16
    with autocast("32-true", "cpu"):
        assert layer(inputs).dtype == torch.float32


@pytest.mark.skipif(not hasattr(torch, "_fused_sdp_choice"), reason="torch does not expose its attention choice")
def test_training_attention_takes_the_math_kernel_under_bf16_on_the_cpu_only():
    queries = torch.randn(2, 2, 5, 8)
    half = queries.bfloat16()
    with training_attention("cpu"):  # float32: nothing changes
        assert torch._fused_sdp_choice(queries, queries, queries) != SDPBackend.MATH.value
    with autocast("bf16-mixed", "cpu"):
        fused = torch._fused_sdp_choice(half, half, half)
        with training_attention("cpu"):
            assert torch._fused_sdp_choice(half, half, half) == SDPBackend.MATH.value
        with training_attention("cuda"):  # another device's autocast is not on: nothing changes
            assert torch._fused_sdp_choice(half, half, half) == fused != SDPBackend.MATH.value
    # the two kernels agree to bf16's precision, forward and backward
    results = []
    for kernel in (None, training_attention):
        leaf = queries.clone().requires_grad_()
        with autocast("bf16-mixed", "cpu"), (kernel("cpu") if kernel else torch.enable_grad()):
            out = torch.nn.functional.scaled_dot_product_attention(leaf, leaf, leaf, is_causal=True)
        out.float().square().sum().backward()
        results.append((out.float(), leaf.grad))
    torch.testing.assert_close(results[0][0], results[1][0], rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(results[0][1], results[1][1], rtol=5e-2, atol=5e-2)


TINY = [
    "model.d_model=64", "model.n_heads=4", "model.d_ff=128", "model.dropout=0.1",
    "train.progress=false", "train.num_threads=1", "train.batch_size=32",
    "optim.warmup_steps=200", "optim.lr_scale=0.5",
    "data.generate_train=1200", "data.generate_valid=100", "data.generate_test=300",
    "train.max_epochs=10", "train.patience=0",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["32-true", "bf16-mixed"])
def test_a_tiny_transformer_learns_as_well_in_bf16_as_in_float32(tmp_path, name):
    config = load_config(None, TINY + [f"train.precision={name}"])
    result = train(config, tmp_path / "run")
    assert result.summary["precision"] == name
    solver = neuromath.load(tmp_path / "run")
    assert solver.precision == name  # inference runs in the run's own precision

    seen = []  # the dtype of the model's first projection in every forward pass of decoding
    first_linear = next(module for module in solver.model.modules() if isinstance(module, torch.nn.Linear))
    handle = first_linear.register_forward_hook(lambda module, inputs, output: seen.append(output.dtype))
    test = result.data.test
    task = get_task("word_problems")
    hypotheses = solver.predict(test)
    handle.remove()
    assert set(seen) == {torch.bfloat16 if name == "bf16-mixed" else torch.float32}
    accuracy = sum(task.is_correct(h, e) for h, e in zip(hypotheses, test)) / len(test)
    assert result.summary["test"]["value_accuracy"] == accuracy
    # One threshold for both precisions: in one run on the 2-core machine 10 epochs reached 99.7% in float32 and
    # 96.3% in bf16; a bf16 path that lost the gradients or the beam scores would not pass it.
    assert accuracy >= 0.8, (name, accuracy)


GOAL_TREE_TINY = [
    "data.train=null", "data.valid=null", "data.test=null", "data.generate_train=600", "data.generate_valid=60",
    "data.generate_test=150", "model.d_model=48", "model.encoder_hidden=48", "model.dropout=0.1",
    "train.progress=false", "train.num_threads=1", "train.batch_size=32", "train.max_epochs=12", "train.min_epochs=1",
    "train.patience=0", "decode.beam=1",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["32-true", "bf16-mixed"])
def test_graph2tree_learns_in_bf16_as_in_float32(tmp_path, name):
    """The graph2tree preset trains in bf16 where the CPU has it (train.precision auto): its recurrent
    encoder, graph module, goal-tree decoder and number pointer must learn there as in float32."""
    config = load_config("word_problems/graph2tree", GOAL_TREE_TINY + [f"train.precision={name}"])
    result = train(config, tmp_path / "run")
    assert result.summary["precision"] == name
    with (tmp_path / "run" / "metrics.csv").open(newline="", encoding="utf-8") as stream:
        losses = [row["train_loss_epoch"] for row in csv.DictReader(stream) if row.get("train_loss_epoch")]
    assert float(losses[-1]) < 0.5 * float(losses[0]), losses
    # One threshold for both: in one run on the 2-core AVX512-BF16 machine 12 epochs at the preset's step schedule
    # reached 96.0% in float32 and 96.7% in bf16 (loss 1.25 -> 0.02 in both); a bf16 path that lost the pointer scores
    # or the gradients would not reach it.
    assert result.summary["test"]["value_accuracy"] >= 0.85, (name, result.summary["test"])
