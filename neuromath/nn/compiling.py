"""``train.compile``: a sequence model's training forward through ``torch.compile`` (inductor).

Compiled in place (``nn.Module.compile``): parameters, state dict and checkpoints are the eager model's, so a run
trained compiled loads, evaluates and serves without compiling. PyTorch's automatic dynamic shapes compile one graph
for the first lengths, then one with symbolic lengths that every later batch reuses. Only the training and
validation loss forward is compiled; greedy and beam decoding run eagerly.

``train.compile_mode: reduce-overhead`` adds CUDA graphs on a GPU (replayed kernels, for the presets' small steps).
A graph is recorded per batch shape, so ``train.length_multiple`` rounds the lengths up.

Measurements: ``benchmarks/compile.py``, ``benchmarks/training_step.py --compile``, ``results/gpu-check/``. The
goal-tree decoders (GTS, Graph2Tree) break their graph at every tree step and gain nothing, but stay exact. Under
compile, dropout masks come from inductor's generator: reproducible, but not the eager run's twin unless dropout is 0.
"""

from __future__ import annotations

import shutil

import torch
from torch import nn

from neuromath.errors import ConfigError
from neuromath.nn.precision import device_kind


def has_cpu_compiler() -> bool:
    """Whether inductor can build CPU kernels here (it needs a C++ compiler)."""
    return any(shutil.which(name) for name in ("g++", "c++", "clang++"))


def compile_in_place(model: nn.Module, accelerator: str | torch.device = "cpu", mode: str = "default") -> nn.Module:
    """``model`` with its forward compiled in place (the same object is returned). ``accelerator``:
    ``train.accelerator`` or a device (the CPU needs a C++ compiler). ``mode``: ``train.compile_mode``; under
    ``reduce-overhead`` (CUDA graphs) each training or validation step begins with ``begin_graph_step``."""
    if device_kind(accelerator) == "cpu" and not has_cpu_compiler():
        raise ConfigError("train.compile: torch.compile builds CPU kernels with a C++ compiler, and none (g++, c++ "
                          "or clang++) is on the PATH; install one or leave train.compile false")
    model.compile(dynamic=None, mode=None if mode == "default" else mode)
    model.compile_mode = mode
    return model


def begin_graph_step(model: nn.Module, device: torch.device) -> None:
    """Tell CUDA graphs a new step begins, so the last replay's outputs (already read into the loss) may be
    overwritten. No-op for an eager model or off CUDA."""
    if getattr(model, "compile_mode", None) == "reduce-overhead" and torch.device(device).type == "cuda":
        torch.compiler.cudagraph_mark_step_begin()
