"""The data root: where the benchmark corpora live, and how a relative data path is found.

Presets name benchmark files relative to the data root (``mawps-cv/fold0/train.csv``), so that they work on any
machine that holds the corpora. The root is ``data.root`` when a config sets it, else the environment variable
``NEUROMATH_DATA``, else ``./data``. A relative path is read from the working directory when it exists there (the
files a user names on the command line), otherwise from the data root. A path found in neither place is a
``DataNotFoundError`` that names the corpus it belongs to and where to get it: for a corpus of the catalogue
(``neuromath.corpora.catalogue``) the one command that fetches it, ``neuromath data get NAME``, and the docs' Data
page. A path that is found but is neither a file nor a folder (a FIFO, a device, a socket, or a link to one) is
refused (``neuromath.safe_read.check_data_path``), so that no command waits on a pipe or reads a device.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from pathlib import Path
from typing import Any

from neuromath.corpora.catalogue import corpus_names
from neuromath.errors import DataNotFoundError
from neuromath.safe_read import check_data_path

ENVIRONMENT_VARIABLE = "NEUROMATH_DATA"
DEFAULT_ROOT = "data"
DATA_PAGE = "docs/data.md (the documentation's Data page)"

# The first folder of a path under the data root -> the corpus that the docs' Data page tells how to get
CORPORA: dict[str, str] = {
    "mawps-cv": "MAWPS, the 5-fold split of the SVAMP repository (github.com/arkilpatel/SVAMP, data/cv_mawps)",
    "asdiv-a-cv": "ASDiv-A, the 5-fold split of the SVAMP repository (github.com/arkilpatel/SVAMP, data/cv_asdiv-a)",
    "svamp": "SVAMP (github.com/arkilpatel/SVAMP)",
    "mawps-json": "MAWPS in MWPToolkit's JSON (github.com/LYH-YF/MWPToolkit)",
    "math23k": "Math23K in MWPToolkit's JSON (github.com/LYH-YF/MWPToolkit)",
    "identities": "the equation verification and completion files of Arabshahi et al. "
                  "(github.com/ForoughA/recursiveMemNet)",
    "symbolic": "Lample & Charton's integration and ODE pairs (github.com/facebookresearch/SymbolicMathematics)",
    "mathematics_dataset-v1.0": "DeepMind's Mathematics Dataset release v1.0 "
                                "(github.com/google-deepmind/mathematics_dataset)",
    "md4": "four modules of the Mathematics Dataset, written by `neuromath generate mathematics_dataset` (the "
           "mathematics_dataset/tp_transformer preset's comment gives the command)",
    "md4-test": "the test splits of those four modules, written by `neuromath generate mathematics_dataset` (the "
                "mathematics_dataset/tp_transformer preset's comment gives the command)",
}

# The data keys that name files or folders (train_extra: a comma list)
PATH_KEYS = ("train", "valid", "test", "candidates")
LIST_KEYS = ("train_extra",)


def data_root(configured: str | None = None) -> Path:
    """The data root: ``configured`` (a config's ``data.root``), else ``$NEUROMATH_DATA``, else ``./data``."""
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get(ENVIRONMENT_VARIABLE) or DEFAULT_ROOT).expanduser()


def corpus_of(path: str | Path) -> str | None:
    """The corpus a path under the data root belongs to (by its first folder), or None."""
    parts = Path(path).parts
    return CORPORA.get(parts[0]) if parts else None


def find_data(path: str | Path, root: str | Path | None = None) -> Path:
    """The file or folder that the data path ``path`` names: itself when absolute or present in the working
    directory, else the same relative path under the data root (``root``, or ``data_root()``). A path in neither
    place is a DataNotFoundError naming both places and, for a known corpus, what it is and where to get it. One
    found that is neither a file nor a folder (a FIFO, a device, a link to one) is a DataFormatError naming it."""
    path = Path(path).expanduser()
    if path.exists() or path.is_symlink():  # a link to nothing: refused below as a missing file
        return present(path)
    if path.is_absolute():
        raise DataNotFoundError(f"{path}: no such file or folder")
    root = Path(root) if root is not None else data_root()
    under_root = root / path
    if under_root.exists():
        return present(under_root)
    corpus = corpus_of(path)
    shown = root if root.is_absolute() or root.parts[:1] in (("..",), (".",)) else f"./{root}"
    where = (f"{path}: not in the working directory nor under the data root {shown} (data.root, else "
             f"${ENVIRONMENT_VARIABLE}, else ./data)")
    if corpus is None:
        raise DataNotFoundError(where)
    name = Path(path).parts[0]
    command = f"neuromath data get {name}" + ("" if root == data_root() else f" --root {shlex.quote(str(root))}")
    fetch = f"`{command}` fetches it into the data root; " if name in corpus_names() else ""
    raise DataNotFoundError(f"{where}. It is {corpus}: {fetch}{DATA_PAGE} says how to get it and where to put it")


def present(path: Path) -> Path:
    """``path``, found, once it is known to be a file or a folder (``check_data_path``); a dangling link is missing."""
    if not path.exists():
        raise DataNotFoundError(f"{path}: a link to a file or folder that does not exist")
    return check_data_path(path)


def resolve_data_paths(config: Any) -> Any:
    """``config`` (a Config) with every data path it names (``data.train``, ``valid``, ``test``, ``candidates`` and
    each file of ``train_extra``) replaced by the file ``find_data`` finds for it under the config's data root; a
    path found nowhere is a DataNotFoundError before anything is read or trained."""
    data = config.data
    root = data_root(data.root)
    changes: dict[str, str] = {}
    for key in PATH_KEYS:
        value = data.option(key)
        if value:
            changes[key] = str(find_data(value, root))
    for key in LIST_KEYS:
        value = data.option(key)
        if value:
            names = [name.strip() for name in value.split(",") if name.strip()]
            changes[key] = ",".join(str(find_data(name, root)) for name in names)
    if not changes:
        return config
    return dataclasses.replace(config, data=dataclasses.replace(data, **changes))
