"""Reading saved weights and checkpoints as plain data: ``torch.load(weights_only=True)`` or safetensors only, so a
file can hold tensors, numbers, strings and containers of them but never code, and a file that is not such data is a
DataFormatError naming it and the reason instead of one of the many exceptions torch or safetensors raise. Only a
regular file is read (``neuromath.safe_read``): a FIFO or a device is refused before it is opened for reading, so
that it cannot hang or flood the reader.

Which file holds a folder's weights is decided here only (``weights_file``): a run folder's ``model.pt``, else the
``model.safetensors`` of a folder written by ``neuromath export``."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import safetensors.torch
import torch

from neuromath.errors import DataFormatError, NeuromathError
from neuromath.fileio import write_atomic
from neuromath.safe_read import open_regular

RUN_WEIGHTS = "model.pt"  # a run folder's best weights: torch.save of a state dict
EXPORTED_WEIGHTS = "model.safetensors"  # an exported folder's (neuromath export): a state dict, safetensors format


def weights_file(folder: str | Path) -> Path:
    """The weights file of a run folder (``model.pt``) or of an exported folder (``model.safetensors``, read when
    there is no ``model.pt``); a folder with neither is a NeuromathError naming it. Whatever is at the name (a link,
    a FIFO) is returned as it is, for the reader to refuse."""
    folder = Path(folder)
    for name in (RUN_WEIGHTS, EXPORTED_WEIGHTS):
        if os.path.lexists(folder / name):
            return folder / name
    raise NeuromathError(f"{folder} has no trained weights ({RUN_WEIGHTS} of a run folder, or {EXPORTED_WEIGHTS} of "
                         "an exported one); did training finish?")


def has_weights(folder: str | Path) -> bool:
    """Whether ``folder`` holds a weights file that ``weights_file`` would name."""
    return any(os.path.lexists(Path(folder) / name) for name in (RUN_WEIGHTS, EXPORTED_WEIGHTS))


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


def read_safetensors(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """The tensors of the safetensors file ``path`` (a regular file), by name. Its bytes are read through the checked
    descriptor and parsed by safetensors, which reads tensors and a JSON header only: nothing in it can run."""
    path = Path(path)
    with open_regular(path) as stream:  # a DataFormatError for a FIFO, device or folder
        data = stream.read()
    try:
        state = safetensors.torch.load(data)
    except Exception as error:  # safetensors raises its own SafetensorError for a truncated or foreign file
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        reason = "an empty file" if not data else reason
        raise DataFormatError(path, None, f"not a safetensors weights file: truncated, corrupt or another format "
                                          f"({reason})") from None
    return {name: tensor.to(map_location) for name, tensor in state.items()}


def read_weights(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """The state dict in a weights file: safetensors for a ``.safetensors`` file, else ``torch.load(weights_only=
    True)``; a file that holds anything but tensors by name is a DataFormatError naming it."""
    path = Path(path)
    state = read_safetensors(path, map_location) if path.suffix == ".safetensors" else read_plain(path, map_location)
    if not isinstance(state, dict) or not all(isinstance(value, torch.Tensor) for value in state.values()):
        raise DataFormatError(path, None, f"not a weights file (a state dict of tensors), but a {type(state).__name__}")
    return state


def save_safetensors(state: dict[str, torch.Tensor], path: str | Path) -> None:
    """Write a state dict as a safetensors file, atomically (``neuromath.fileio.write_atomic``). Each tensor is
    copied to contiguous memory of its own first: safetensors refuses tensors that share storage (tied weights, a
    view of another tensor) and tensors with gaps, and a copy loads back as the same values under the same names."""
    tensors = {name: tensor.detach().to("cpu").contiguous().clone() for name, tensor in state.items()}
    data = safetensors.torch.save(tensors, metadata={"format": "pt"})  # "pt": what loaders of the Hub expect
    write_atomic(path, lambda stream: stream.write(data))


def load_run_weights(model: torch.nn.Module, path: Path, device: str | torch.device = "cpu") -> None:
    """Load a weights file (a run's ``model.pt`` or an exported ``model.safetensors``, a state dict; see
    ``weights_file``) into ``model``, built from the same run's config and vocabularies, with
    ``torch.load(weights_only=True)`` or safetensors. A file that is unreadable, truncated, not a state dict, or the
    weights of another model (other keys or shapes, e.g. copied from another run) is a DataFormatError naming the
    file and the reason, never a traceback."""
    state = read_weights(path, device)
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
