"""``train.compile``: a sequence model's training forward through ``torch.compile`` (inductor).

The model is compiled in place (``nn.Module.compile``), so its parameters, state dict and checkpoints are those of
the eager model: a run trained compiled loads, evaluates and serves without compiling. Shapes follow PyTorch's
automatic dynamic shapes: the first batch compiles a graph for its lengths, the first batch of other lengths compiles
one graph with symbolic lengths, and every later batch reuses it (no recompiling per length). Only the forward of
the training and validation loss is compiled; greedy and beam decoding call ``encode`` and ``decode_step`` and run
eagerly.

``train.compile_mode: reduce-overhead`` adds CUDA graphs on a GPU: a step replays its recorded kernels without launching
them one by one, which is what the presets' small steps need there (the TP-Transformer's training step, compiled with
CUDA graphs under bf16, took 0.34 of the time of commit 6486a0a's step on an H200: ``benchmarks/training_step.py
--device cuda --compile``). A graph is recorded per batch shape, so ``train.length_multiple`` rounds the lengths up.

Measured (``benchmarks/compile.py`` on the CPU; ``results/gpu-check/`` on an H100): the Transformer family compiles
without graph breaks and gains 1.16-1.54x on the GPU, but nothing on a 2-core CPU at the presets' sizes (0.76-1.03x
the eager speed); the goal-tree decoders of GTS and Graph2Tree break their graph at every tree step and hit
dynamo's recompile limit, so they gain nothing, though their results stay exact. Under compile, dropout draws its
masks from inductor's generator: a compiled run is reproducible, but not the eager run's twin unless dropout is 0.
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
    """``model`` with its forward compiled (in place; the same object is returned). ``accelerator`` is
    ``train.accelerator`` or a device: on the CPU, inductor's C++ compiler must be there. ``mode`` is
    ``train.compile_mode``: ``reduce-overhead`` captures CUDA graphs on a GPU, and each training or validation step then
    begins with ``begin_graph_step``."""
    if device_kind(accelerator) == "cpu" and not has_cpu_compiler():
        raise ConfigError("train.compile: torch.compile builds CPU kernels with a C++ compiler, and none (g++, c++ "
                          "or clang++) is on the PATH; install one or leave train.compile false")
    model.compile(dynamic=None, mode=None if mode == "default" else mode)
    model.compile_mode = mode
    return model


def begin_graph_step(model: nn.Module, device: torch.device) -> None:
    """Tell CUDA graphs that a new training or validation step begins: the outputs of the last replay (already read:
    the loss was computed from them) may be overwritten. Nothing for an eager model or off CUDA."""
    if getattr(model, "compile_mode", None) == "reduce-overhead" and torch.device(device).type == "cuda":
        torch.compiler.cudagraph_mark_step_begin()
