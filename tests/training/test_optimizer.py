"""The optimiser the training modules build: PyTorch's fused Adam wherever no fp16 gradient scaler must unscale
gradients before they are clipped, the same update; and bf16 training clips its gradients with it."""

import dataclasses
from types import SimpleNamespace

import lightning.pytorch as pl
import pytest
import torch

from neuromath.config import Config
from neuromath.training.module import FusedAdamClipping, adam


def model_and_grads(seed: int):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    return model, [torch.randn_like(p) for p in model.parameters()]


@pytest.mark.parametrize(("precision", "grad_clip", "fused"), [
    ("32-true", 1.0, True), ("bf16-mixed", 0.0, True), ("bf16-mixed", 1.0, True), ("16-mixed", 0.0, True),
    ("16-mixed", 1.0, False), (None, 1.0, True),
])
def test_adam_is_fused_unless_a_gradient_scaler_must_unscale_before_clipping(precision, grad_clip, fused):
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
        trainer = SimpleNamespace(precision="32-true" if fused_allowed else "16-mixed")
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


class Regression(FusedAdamClipping, pl.LightningModule):
    """A linear regression with gradients far larger than the clip, optimised by ``adam``."""

    def __init__(self, grad_clip: float):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        self.optim = dataclasses.replace(Config().optim, grad_clip=grad_clip)
        self.norms = []  # the gradient norm each optimiser step used (its closure runs backward and clipping)

    def training_step(self, batch, index):
        inputs, target = batch
        return ((self.layer(inputs).float() - target) ** 2).mean()

    def configure_optimizers(self):
        optimizer = adam([{"params": list(self.parameters()), "lr": 0.01}], self.optim, self.trainer)
        optimizer.register_step_post_hook(lambda *_: self.norms.append(
            float(torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in self.parameters()])))))
        return optimizer


@pytest.mark.parametrize("grad_clip", [0.5, 0.0])
def test_bf16_training_clips_gradients_with_the_fused_optimiser(tmp_path, grad_clip):
    # Lightning alone refuses to clip for a fused optimiser under bf16-mixed; the mixin clips by norm
    torch.manual_seed(0)
    inputs = torch.randn(32, 4) * 10
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(inputs, inputs.sum(1, keepdim=True) + 100),
                                       batch_size=8)
    module = Regression(grad_clip)
    trainer = pl.Trainer(precision="bf16-mixed", accelerator="cpu", max_steps=4, gradient_clip_val=grad_clip or None,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, default_root_dir=tmp_path)
    trainer.fit(module, data)
    assert module.trainer.optimizers[0].defaults["fused"] and len(module.norms) == 4
    if grad_clip:
        assert max(module.norms) <= grad_clip * (1 + 1e-4), module.norms
    else:  # unclipped, the gradients are far larger: the bound above is the clipping's
        assert min(module.norms) > 10, module.norms
