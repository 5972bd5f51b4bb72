"""Optional dependencies: the extra that brings each one, and a clear error when it is missing.

Installs as ``neuromath-toolkit`` (``neuromath`` on the index is another project), imports and runs as
``neuromath``. The core trains, evaluates and solves; extras: ``serve`` (HTTP service), ``plots`` (figures), ``hub``
(``neuromath push``, ``load("org/name")``), ``analysis`` (k-means of ``neuromath analyze roles``), ``mathematics``
(DeepMind's Mathematics Dataset generator).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from neuromath.errors import MissingExtraError

DISTRIBUTION = "neuromath-toolkit"  # the name on the package index

# importable module -> the extra that installs it
EXTRAS = {"fastapi": "serve", "uvicorn": "serve", "sklearn": "analysis", "mathematics_dataset": "mathematics",
          "matplotlib": "plots", "huggingface_hub": "hub"}


def install_line(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'neuromath-toolkit[serve]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module``, or raise a MissingExtraError: ``purpose`` needs the extra that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS[module]
        raise MissingExtraError(f"{purpose} needs the '{extra}' extra ({module} is not installed): "
                                f"{install_line(extra)}") from None
