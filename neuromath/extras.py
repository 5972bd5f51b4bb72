"""Optional dependencies: the extra of the package that brings each one, and a clear error when it is missing.

The core (``pip install neuromath``) trains, evaluates and solves; ``serve`` adds the HTTP service, ``analysis`` the
k-means of ``neuromath analyze roles`` and ``mathematics`` DeepMind's generator of the Mathematics Dataset.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from neuromath.errors import MissingExtraError

# importable module -> the extra that installs it
EXTRAS = {"fastapi": "serve", "uvicorn": "serve", "sklearn": "analysis", "mathematics_dataset": "mathematics"}


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module``, or stop with a MissingExtraError saying that ``purpose`` needs the extra that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = EXTRAS[module]
        raise MissingExtraError(f"{purpose} needs the '{extra}' extra ({module} is not installed): "
                                f"pip install 'neuromath[{extra}]'") from None
