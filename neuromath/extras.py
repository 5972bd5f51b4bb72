"""Optional dependencies: the extra of the package that brings each one, and a clear error when it is missing.

The package installs as ``neuromath-toolkit`` (the name ``neuromath`` on the package index belongs to another
project); it imports as ``neuromath`` and its command is ``neuromath``. The core (``pip install neuromath-toolkit``)
trains, evaluates and solves; ``serve`` adds the HTTP service, ``plots`` the figures of runs and reports, ``hub``
models by hub id (``neuromath push``, ``load("org/name")``), ``analysis`` the k-means of ``neuromath analyze roles``
and ``mathematics`` DeepMind's generator of the Mathematics Dataset.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from neuromath.errors import MissingExtraError

DISTRIBUTION = "neuromath-toolkit"  # the name on the package index; `pip index versions neuromath-toolkit` finds none

# importable module -> the extra that installs it
EXTRAS = {"fastapi": "serve", "uvicorn": "serve", "sklearn": "analysis", "mathematics_dataset": "mathematics",
          "matplotlib": "plots", "huggingface_hub": "hub"}


def install_line(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'neuromath-toolkit[serve]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module``, or stop with a MissingExtraError saying that ``purpose`` needs the extra that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS[module]
        raise MissingExtraError(f"{purpose} needs the '{extra}' extra ({module} is not installed): "
                                f"{install_line(extra)}") from None
