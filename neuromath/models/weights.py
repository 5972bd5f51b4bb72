"""Reading saved weights and checkpoints as plain data: ``torch.load(weights_only=True)`` only, so a file can hold
tensors, numbers, strings and containers of them but never code, and a file that is not such data is a
DataFormatError naming it and the reason instead of one of the many exceptions torch raises. Only a regular file is
read (``neuromath.safe_read``): a FIFO or a device is refused before torch opens it, so that it cannot hang or flood
the reader."""

from __future__ import annotations

import errno
from pathlib import Path

import torch

from neuromath.errors import DataFormatError
from neuromath.safe_read import open_regular


def read_plain(path: str | Path, map_location: str | torch.device = "cpu") -> object:
    """What ``path`` holds, loaded with ``torch.load(weights_only=True)``; ``path`` must be a regular file (of any
    size)."""
    path = Path(path)
    stream = open_regular(path)  # a DataFormatError for a FIFO, device or folder, or a file that cannot be opened
    try:
        with stream:
            return torch.load(stream, map_location=map_location, weights_only=True)
    except Exception as error:  # torch raises zip, pickle, runtime and index errors for truncated or foreign files
        if isinstance(error, OSError) and error.errno in (errno.ENOENT, errno.EACCES, errno.EPERM, errno.EISDIR):
            raise DataFormatError(path, None, f"cannot read: {error.strerror}") from None
        first = str(error).strip().split(". ")[0].splitlines()[0] if str(error).strip() else ""
        reason = first or ("an empty file" if path.stat().st_size == 0 else type(error).__name__)
        raise DataFormatError(path, None, f"not a file of plain saved data: truncated, corrupt or code ({reason})") \
            from None


def load_run_weights(model: torch.nn.Module, path: Path, device: str | torch.device = "cpu") -> None:
    """Load a run's weights file (``model.pt``, a state dict) into ``model``, built from the same run's config and
    vocabularies, with ``torch.load(weights_only=True)``. A file that is unreadable, truncated, not a state dict, or
    the weights of another model (other keys or shapes, e.g. copied from another run) is a DataFormatError naming
    the file and the reason, never a traceback."""
    state = read_plain(path, device)
    if not isinstance(state, dict) or not all(isinstance(value, torch.Tensor) for value in state.values()):
        raise DataFormatError(path, None, f"not a weights file (a state dict of tensors), but a {type(state).__name__}")
    expected = model.state_dict()
    problems = [
        f"size mismatch for {key}: checkpoint {tuple(state[key].shape)} vs model {tuple(value.shape)}"
        for key, value in expected.items()
        if key in state and state[key].shape != value.shape
    ]
    missing = [key for key in expected if key not in state]
    unexpected = [key for key in state if key not in expected]
    for keys, what in ((missing, "missing"), (unexpected, "unexpected")):
        if keys:
            more = f" and {len(keys) - 1} more" if len(keys) > 1 else ""
            problems.append(f"{what} {keys[0]}{more}")
    if problems:
        raise DataFormatError(path, None, f"not a weights file of this run's model ({'; '.join(problems[:2])})")
    model.load_state_dict(state)
