"""Numeric precision of training and inference: ``train.precision``.

- ``32-true``: float32 everywhere (default; every equality test holds in it).
- ``bf16-mixed``: matrix products and convolutions in bfloat16 under ``torch.autocast``; weights, optimiser state,
  softmaxes and losses in float32. Pays on a CPU with AVX512-BF16 or AMX (``benchmarks/precision.py``) when the
  training forward runs in ``training_attention``; elsewhere on a CPU bf16 is emulated and slower.
- ``16-mixed``: float16 autocast with loss scaling; GPUs only.
- ``auto``: ``bf16-mixed`` where the CPU or GPU supports bf16, ``16-mixed`` on a GPU without it, else ``32-true``.

Training hands the resolved name to Lightning's Trainer; inference (``evaluate``, ``solve``, beam search, classifier
``logits``, completion) runs in ``autocast(precision, device)`` with the run's own setting. Decoders take
log-probabilities in float32 (``log_softmax(logits.float())``), so beam scores accumulate in float32.
"""

from __future__ import annotations

import contextlib

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from neuromath.config.rules import PRECISION_NAMES
from neuromath.errors import ConfigError

AUTOCAST_DTYPES = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}


def cpu_supports_bf16() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX512-BF16 or AMX tiles): where bf16 autocast pays."""
    checks = (getattr(torch.cpu, "_is_avx512_bf16_supported", None), getattr(torch.cpu, "_is_amx_tile_supported", None))
    return any(check is not None and check() for check in checks)


def device_kind(accelerator: str | torch.device) -> str:
    """``cpu`` or ``cuda`` for an accelerator name (Lightning's ``cpu``, ``gpu``, ``cuda``, ``auto``) or a device."""
    if isinstance(accelerator, torch.device):
        return accelerator.type
    name = str(accelerator).split(":")[0]
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name in ("gpu", "cuda"):
        return "cuda"
    return "cpu"


def resolve_precision(precision: str, accelerator: str | torch.device = "cpu") -> str:
    """``precision`` resolved on ``accelerator`` (``auto`` as in the module docstring); an unknown name, or
    ``16-mixed`` on the CPU, is a ConfigError naming ``train.precision``."""
    if precision not in PRECISION_NAMES:  # a name given in Python (load(run, precision=...)); config files are checked
        raise ConfigError(f"train.precision must be one of {', '.join(PRECISION_NAMES)}, got {precision!r}")
    kind = device_kind(accelerator)
    if precision == "auto":
        if kind == "cuda":
            return "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"
        return "bf16-mixed" if cpu_supports_bf16() else "32-true"
    if precision == "16-mixed" and kind == "cpu":
        raise ConfigError("train.precision: 16-mixed needs a GPU; on the CPU use bf16-mixed (or auto)")
    return precision


def autocast(precision: str, device: str | torch.device = "cpu"):
    """A context running forward passes in ``precision`` (of ``PRECISION_NAMES``) on ``device``: bf16/fp16 autocast
    for the mixed settings, nothing for ``32-true``."""
    resolved = resolve_precision(precision, device)
    if resolved not in AUTOCAST_DTYPES:
        return contextlib.nullcontext()
    return torch.autocast(device_kind(device), dtype=AUTOCAST_DTYPES[resolved])


def training_attention(device: str | torch.device = "cpu"):
    """The scaled-dot-product-attention kernels for a training forward (and its backward) on ``device``.

    On the CPU under bf16 autocast, PyTorch's math kernel: the fused CPU kernel's bf16 backward is slow enough that
    bf16 gains nothing, while the math kernel's products use the bf16 units (same error against float32; see
    ``benchmarks/precision.py``). Decoding keeps the fused kernel. Elsewhere a no-op."""
    if device_kind(device) == "cpu" and torch.is_autocast_enabled("cpu") and \
            torch.get_autocast_dtype("cpu") == torch.bfloat16:
        return sdpa_kernel([SDPBackend.MATH])
    return contextlib.nullcontext()
