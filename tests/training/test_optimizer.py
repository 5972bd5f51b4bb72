"""The optimiser the training modules build: PyTorch's fused Adam where Lightning lets it run, the same update."""

import dataclasses
from types import SimpleNamespace

import pytest
import torch

from neuromath.config import Config
from neuromath.training.module import adam


def model_and_grads(seed: int):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    return model, [torch.randn_like(p) for p in model.parameters()]


@pytest.mark.parametrize(("precision", "grad_clip", "fused"), [
    ("32-true", 1.0, True), ("bf16-mixed", 0.0, True), ("bf16-mixed", 1.0, False), (None, 1.0, True),
])
def test_adam_is_fused_unless_lightning_would_refuse_clipping_it(precision, grad_clip, fused):
    optim = dataclasses.replace(Config().optim, grad_clip=grad_clip)
    trainer = None if precision is None else SimpleNamespace(precision=precision)
    model, _ = model_and_grads(0)
    optimizer = adam([{"params": list(model.parameters()), "lr": 0.01}], optim, trainer)
    assert bool(optimizer.defaults["fused"]) is fused


def test_fused_adam_takes_the_steps_of_the_default_loop():
    optim = dataclasses.replace(Config().optim, weight_decay=0.01, grad_clip=1.0)
    runs = []
    for fused_allowed in (True, False):
        model, grads = model_and_grads(1)
        trainer = SimpleNamespace(precision="32-true" if fused_allowed else "bf16-mixed")
        optimizer = adam([{"params": list(model.parameters()), "lr": 0.05}], optim, trainer)
        assert bool(optimizer.defaults["fused"]) is fused_allowed
        for step in range(5):
            for p, g in zip(model.parameters(), grads, strict=True):
                p.grad = g * (step + 1)
            optimizer.step()
        runs.append([p.detach().clone() for p in model.parameters()])
    start, _ = model_and_grads(1)
    assert any(not torch.equal(a, b) for a, b in zip(runs[0], start.parameters(), strict=True))  # it moved
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(*runs, strict=True))
