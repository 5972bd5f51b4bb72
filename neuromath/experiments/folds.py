"""Folders of cross-validation folds: ``fold0/``, ``fold1/``, ... each with a training and a test file. Kept apart from
``cross_validation`` (which trains) so that commands that only read or write folds (``neuromath data vary``) load no
torch or Lightning."""

from __future__ import annotations

import re
from pathlib import Path

from neuromath.errors import DataFormatError, NeuromathError

CSV_FOLD_FILES = ("train.csv", "dev.csv")  # the SVAMP repository's fold layout (MAWPS, ASDiv-A)
RANDOM_FOLD_FILES = ("train.jsonl", "test.jsonl")  # what write_random_folds writes
FOLD_NAME_REGEX = re.compile(r"fold(\d+)")

Fold = tuple[str, Path, Path]  # (name, training file, test file)


def find_folds(
    folds_dir: str | Path, train_name: str | None = None, test_name: str | None = None
) -> list[Fold]:
    """The folders ``fold<k>`` of ``folds_dir`` in order of k, each with its training and test file: ``train.csv``
    and ``dev.csv`` (the SVAMP layout), or ``train.jsonl`` and ``test.jsonl`` in a folder that has those and no
    ``train.csv`` (what ``write_random_folds`` and ``neuromath data vary --folds`` write); ``train_name`` and
    ``test_name`` name other files."""
    folds = []
    for name, folder in _numbered_folders(Path(folds_dir)):
        names = (train_name or CSV_FOLD_FILES[0], test_name or CSV_FOLD_FILES[1])
        if (train_name is None and test_name is None and not (folder / CSV_FOLD_FILES[0]).exists()
                and (folder / RANDOM_FOLD_FILES[0]).exists()):
            names = RANDOM_FOLD_FILES
        folds.append(_fold_files(name, folder, *names))
    return folds


def _numbered_folders(folds_dir: Path) -> list[tuple[str, Path]]:
    """(name, folder) of every ``fold<k>`` folder of ``folds_dir``, in order of k."""
    if not folds_dir.is_dir():
        raise NeuromathError(f"{folds_dir}: no such folder of folds")
    numbered = []
    for child in folds_dir.iterdir():
        match = FOLD_NAME_REGEX.fullmatch(child.name)
        if match and child.is_dir():
            numbered.append((int(match[1]), child.name, child))
    if not numbered:
        raise NeuromathError(f"{folds_dir}: no fold folders (fold0, fold1, ...) with train.csv and dev.csv "
                             "(or train.jsonl and test.jsonl)")
    return [(name, folder) for _, name, folder in sorted(numbered)]


def _fold_files(name: str, folder: Path, train_name: str, test_name: str) -> Fold:
    paths = folder / train_name, folder / test_name
    for path in paths:
        if not path.is_file():
            raise DataFormatError(path, None, f"missing: every fold folder needs {train_name} and {test_name}")
    return (name, *paths)
