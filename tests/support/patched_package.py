"""A copy of today's ``neuromath`` package with one line added after a marker: the baseline code base of the
benchmark tests that compare two code bases (tests/test_tree_step_ops.py, tests/test_row_cost.py)."""

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def patched_package(folder: Path, module: str, marker: str, addition: str) -> Path:
    """``folder/neuromath``, a copy of the package in which ``addition`` follows ``marker`` in ``module`` (a path
    under the package, e.g. ``nn/graph.py``); the marker must be there. Returns ``folder``."""
    shutil.copytree(ROOT / "neuromath", folder / "neuromath", ignore=shutil.ignore_patterns("__pycache__"))
    path = folder / "neuromath" / module
    text = path.read_text(encoding="utf-8")
    assert marker in text, f"{module} no longer holds the line the test patches: {marker!r}"
    path.write_text(text.replace(marker, marker + addition), encoding="utf-8")
    return folder
