"""train.compile (neuromath/nn/compiling.py): a compiled training step is the eager step to float tolerance, at every
length without recompiling, and a run trained compiled is an ordinary run folder."""

import copy
import csv
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import neuromath
from neuromath.config import ModelConfig, load_config
from neuromath.errors import ConfigError
from neuromath.models import ModelInputs, build_model
from neuromath.models.batching import collate
from neuromath.nn import compiling

pytestmark = pytest.mark.skipif(not compiling.has_cpu_compiler(), reason="inductor needs a C++ compiler")

TINY = ["data.generate_train=200", "data.generate_valid=20", "data.generate_test=20", "model.d_model=16",
        "model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1", "model.n_decoder_layers=1",
        "train.max_epochs=2", "train.progress=false", "train.num_threads=1", "optim.schedule=constant",
        "optim.lr=0.003", "model.dropout=0"]  # dropout 0: a compiled graph draws its masks from its own generator


def batch_of(length: int, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed)
    items = []
    for index in range(3):
        source = torch.randint(4, 20, (length,), generator=generator).tolist()
        target = [1, *torch.randint(4, 20, (length - 2,), generator=generator).tolist(), 2]
        items.append((source, target, index))
    return collate(items)


def test_a_compiled_step_is_the_eager_step_at_every_length():
    torch.manual_seed(0)
    config = ModelConfig(name="transformer", attention="tp", d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1,
                         n_decoder_layers=1, dropout=0.0)
    eager = build_model(config, ModelInputs(20, 20, 0))
    compiled = compiling.compile_in_place(copy.deepcopy(eager))
    assert list(compiled.state_dict()) == list(eager.state_dict())  # checkpoints are the eager model's
    for length in (7, 11, 5):  # one graph for all: dynamic shapes
        results = []
        for model in (eager, compiled):
            model.zero_grad()
            batch = batch_of(length, length)
            loss = F.cross_entropy(model(batch).flatten(0, 1), batch["target_out"].flatten(), ignore_index=0)
            loss.backward()
            results.append((loss.detach(), [parameter.grad.clone() for parameter in model.parameters()]))
        (eager_loss, eager_grads), (compiled_loss, compiled_grads) = results
        torch.testing.assert_close(compiled_loss, eager_loss, rtol=1e-5, atol=1e-6)
        for eager_grad, compiled_grad in zip(eager_grads, compiled_grads):
            torch.testing.assert_close(compiled_grad, eager_grad, rtol=1e-4, atol=1e-6)


def test_a_run_trained_compiled_is_an_ordinary_run_that_learns_as_the_eager_one(tmp_path):
    runs = {}
    for flag in ("false", "true"):
        runs[flag] = tmp_path / flag
        done = subprocess.run([sys.executable, "-m", "neuromath", "train", "--config", "word_problems/transformer",
                               "--out", str(runs[flag]), *(f"--set={item}" for item in TINY),
                               f"--set=train.compile={flag}",
                               # the compiled run also pads its batches' lengths to multiples of 8, which must not
                               # change a loss, and asks for CUDA graphs (a GPU's; nothing more on the CPU)
                               *(["--set=train.length_multiple=8", "--set=train.compile_mode=reduce-overhead"]
                                 if flag == "true" else [])],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    weights = {flag: torch.load(run / "model.pt", map_location="cpu") for flag, run in runs.items()}
    assert list(weights["true"]) == list(weights["false"])
    losses = {}
    for flag, run in runs.items():  # the training and validation losses of every logged step and epoch
        rows = list(csv.DictReader((run / "metrics.csv").open()))
        losses[flag] = [float(row[key]) for row in rows for key in ("train_loss_step", "val_loss") if row[key]]
    assert len(losses["true"]) == len(losses["false"]) >= 4
    # the same training up to the rounding of fused kernels (Adam's steps amplify it in the weights, not the loss)
    assert losses["true"] == pytest.approx(losses["false"], rel=1e-3)
    assert losses["true"][-1] < losses["true"][0]  # and it learns
    solver = neuromath.load(runs["true"])  # loads and solves without compiling
    assert solver.solve_many(["Tom has 3 apples and buys 4 more. How many apples does he have?"])


def test_compile_applies_to_sequence_models_and_needs_a_cpu_compiler(monkeypatch):
    with pytest.raises(ConfigError, match="train.compile does not apply to the tree_lstm model"):
        load_config("identities/tree_lstm", overrides=["train.compile=true"], strict=True)
    monkeypatch.setattr(compiling.shutil, "which", lambda name: None)
    with pytest.raises(ConfigError, match="C\\+\\+ compiler"):
        compiling.compile_in_place(torch.nn.Linear(2, 2), "cpu")
