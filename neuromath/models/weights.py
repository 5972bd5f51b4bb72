"""Reading saved weights and checkpoints as plain data: ``torch.load(weights_only=True)`` only, so a file can hold
tensors, numbers, strings and containers of them but never code, and a file that is not such data is a
DataFormatError naming it and the reason instead of one of the many exceptions torch raises."""

from __future__ import annotations

import errno
from pathlib import Path

import torch

from neuromath.errors import DataFormatError


def read_plain(path: str | Path, map_location: str | torch.device = "cpu") -> object:
    """What ``path`` holds, loaded with ``torch.load(weights_only=True)``."""
    path = Path(path)
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except Exception as error:  # torch raises zip, pickle, runtime and index errors for truncated or foreign files
        if isinstance(error, OSError) and error.errno in (errno.ENOENT, errno.EACCES, errno.EPERM, errno.EISDIR):
            raise DataFormatError(path, None, f"cannot read: {error.strerror}") from None
        first = str(error).strip().split(". ")[0].splitlines()[0] if str(error).strip() else ""
        reason = first or ("an empty file" if path.stat().st_size == 0 else type(error).__name__)
        raise DataFormatError(path, None, f"not a file of plain saved data: truncated, corrupt or code ({reason})") \
            from None
