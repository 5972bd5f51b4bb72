"""Keep freed memory in the process during training: ``keep_freed_memory()``.

A training step allocates and frees large tensors every step (the weight gradient of a linear map applied at each
tree node, a batch's encoder states). glibc's malloc serves large blocks with a fresh ``mmap`` and gives the top of
its heap back to the system once more than its trim threshold is free, so such tensors are faulted in again, a page
fault per 4 KiB page, step after step. Measured on a Graph2Tree step at batch 8 (embedding 768, hidden 384): about
14,000 faults per step, and about 50 with the thresholds raised. Numbers are unchanged; the process keeps its peak
heap until it exits. ``benchmarks/time_to_result.py`` reports the faults per training step of a run.

Only glibc has ``mallopt``; elsewhere this does nothing. ``NEUROMATH_MALLOC=system`` leaves malloc as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3  # glibc's mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's largest allowed value on 64-bit machines
TRIM_THRESHOLD = 1024 * 1024 * 1024
TOP_PAD = 64 * 1024 * 1024

_applied: bool | None = None


def keep_freed_memory() -> bool:
    """Set glibc's thresholds once per process (see the module docstring); whether they are set."""
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    if os.environ.get("NEUROMATH_MALLOC", "").lower() == "system":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (macOS, musl without mallopt, Windows)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _applied = all(mallopt(parameter, value) == 1 for parameter, value in (
        (M_MMAP_THRESHOLD, MMAP_THRESHOLD), (M_TRIM_THRESHOLD, TRIM_THRESHOLD), (M_TOP_PAD, TOP_PAD)))
    return _applied
