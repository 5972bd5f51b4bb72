"""DeepMind's Mathematics Dataset (Saxton et al. 2019): the question record, the release reader and writer, the scorer.

The released v1.0 tree is ``<root>/<split>/<module>.txt`` with splits ``train-easy``,
``train-medium``, ``train-hard``, ``interpolate`` and ``extrapolate``; each module file holds a
question line followed by its answer line, over and over. Models read and write characters; an
answer is right when the whole string matches (the TP-Transformer paper's measure).

As in the TP-Transformer paper (Schlag et al. 2019), the three training difficulties are merged
into one training set, and interpolate and extrapolate are the test sets. No torch here.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from neuromath.errors import DataFormatError, NeuromathError
from neuromath.fileio import write_text_atomic
from neuromath.safe_read import open_data
from neuromath.tasks.mathematics_dataset.mathematics_generator import (
    SPLITS,
    TRAIN_SPLITS,
    select_modules,
    unfinished_generation,
)
from neuromath.tasks.streams import RecordFiles


@dataclass(frozen=True)
class MathQuestion:
    id: str  # "<split>/<module>:<line of the question>" for read questions, "<split>/<module>#<k>" for generated ones
    question: str
    answer: str
    module: str
    split: str

    @property
    def text(self) -> str:  # what held-out generated splits are deduplicated on
        return self.question


def split_list(value: str | Sequence[str] | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return list(value)


# --- reading ---------------------------------------------------------------------------------------


def read_module_file(
    path: str | Path,
    split: str | None = None,
    *,
    lenient: bool = False,
    skipped: list | None = None,
    limit: int = 0,
) -> list[MathQuestion]:
    """The (question, answer) pairs of one module file; ``limit`` > 0 keeps the first ``limit``.

    An odd number of lines, an empty question or answer, or an unreadable file is a
    ``DataFormatError`` naming the file and line; with ``lenient`` a bad pair is skipped and its
    error appended to ``skipped`` instead (a file that cannot be read at all is always an error).
    """
    path = Path(path)
    split = split or path.parent.name
    module = path.stem
    try:
        with open_data(path, encoding="utf-8", newline="") as stream:  # a FIFO or a device: refused
            lines = stream.read().split("\n")
    except UnicodeDecodeError as error:
        raise DataFormatError(path, None, f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise DataFormatError(path, None, f"cannot read the file ({error.strerror or error})") from None
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    examples: list[MathQuestion] = []

    def problem(line_number: int, reason: str) -> None:
        error = DataFormatError(path, line_number, reason)
        if not lenient:
            raise error
        if skipped is not None:
            skipped.append(error)

    if len(lines) % 2:
        problem(len(lines), f"odd number of lines ({len(lines)}): the question on the last line has no answer")
        lines = lines[:-1]
    for index in range(0, len(lines), 2):
        if limit and len(examples) >= limit:
            break
        question, answer = lines[index], lines[index + 1]
        if not question.strip():
            problem(index + 1, "empty question line")
        elif not answer.strip():
            problem(index + 2, f"empty answer to the question on line {index + 1}")
        else:
            examples.append(MathQuestion(f"{split}/{module}:{index + 1}", question, answer, module, split))
    return examples


def read_examples(
    path: str | Path,
    format: str | None = None,
    *,
    lenient: bool = False,
    skipped: list | None = None,
    splits: str | Sequence[str] | None = None,
    modules: str | Sequence[str] | None = None,
    per_module: int = 0,
) -> list[MathQuestion]:
    """Read questions from a module file, a split folder, or the root of the release tree.

    - a ``.txt`` file: that module (its split is the folder's name);
    - a folder of ``.txt`` files: those modules, one split;
    - a root holding split folders: the ``splits`` named (default: the training splits present),
      merged in split order.
    ``modules`` (globs, e.g. ``'arithmetic__*'``) picks modules; ``per_module`` > 0 keeps only the
    first that many questions of each module file.
    """
    if format not in (None, "mathematics_dataset"):
        raise NeuromathError(f"the mathematics_dataset task reads only its release layout, not format {format!r}")
    chosen = module_files(path, splits, modules)
    examples: list[MathQuestion] = []
    for file in chosen:
        examples.extend(read_module_file(file, lenient=lenient, skipped=skipped, limit=per_module))
    return examples


def module_files(path: str | Path, splits: str | Sequence[str] | None = None,
                 modules: str | Sequence[str] | None = None) -> list[Path]:
    """The module files ``read_examples`` reads at ``path`` (a module file, a split folder, or the release root with
    the ``splits`` named), those whose module matches a glob of ``modules``."""
    path = Path(path)
    module_globs = split_list(modules) or ["*"]
    for folder in (path, path.parent, path.parent.parent):  # the generated root of a root, split or module file
        if unfinished_generation(folder):
            raise DataFormatError(folder, None, "its generation was interrupted before every module was written; "
                                                "run the same neuromath generate command again to finish it")
    if path.is_file():
        files = [path]
    elif not path.is_dir():
        raise DataFormatError(path, None, "no such file or folder")
    elif any(path.glob("*.txt")):
        files = sorted(path.glob("*.txt"))
    else:
        present = [split for split in SPLITS if (path / split).is_dir()]
        others = sorted(p.name for p in path.iterdir() if p.is_dir() and p.name not in SPLITS)
        wanted = split_list(splits) or [split for split in TRAIN_SPLITS if split in present]
        if not wanted:
            raise DataFormatError(
                path, None,
                f"no module files and no split folders ({', '.join(SPLITS)}) here"
                + (f"; found folders {', '.join(others)}" if others else ""),
            )
        missing = [split for split in wanted if not (path / split).is_dir()]
        if len(missing) == len(wanted):
            raise DataFormatError(path, None, f"missing split folder(s): {', '.join(missing)}")
        if missing:  # e.g. a generated tree without extrapolate: read what is there, and say so
            logging.getLogger("neuromath").warning("%s: no split folder %s; reading %s", path, ", ".join(missing),
                                                   ", ".join(s for s in wanted if s not in missing))
            wanted = [split for split in wanted if split not in missing]
        files = [file for split in wanted for file in sorted((path / split).glob("*.txt"))]
    chosen = [file for file in files if select_modules([file.stem], module_globs, file.parent.name)]
    if not chosen:
        raise DataFormatError(path, None, f"no module file matches {','.join(module_globs)}")
    return chosen


def parse_record(path: Path, line: int, lines: Sequence[str]) -> MathQuestion:
    """One (question, answer) record of a module file, its question on ``line``: what ``read_module_file`` makes of
    it, for readers that stream (``neuromath.tasks.streams``). ``ValueError`` with the reason for an empty line."""
    question, answer = lines
    if not question.strip():
        raise ValueError("empty question line")
    if not answer.strip():
        raise ValueError(f"empty answer to the question on line {line}")
    split, module = split_and_module(path)
    return MathQuestion(f"{split}/{module}:{line}", question, answer, module, split)


@lru_cache(maxsize=1024)
def split_and_module(path: Path) -> tuple[str, str]:
    """A module file's split (its folder's name) and module (its stem)."""
    return path.parent.name, path.stem


def record_files(path: str | Path, data, lenient: bool = False) -> RecordFiles:
    """The training corpus at ``path`` as files to stream (``data.streaming``): the splits and modules the config's
    data section names, two lines per question."""
    return RecordFiles(tuple(module_files(path, data.train_splits, data.modules)), 2, parse_record, lenient)


def write_release(examples: Sequence[MathQuestion], root: str | Path) -> None:
    """Write questions in the release layout, ``root/<split>/<module>.txt`` (each file atomically)."""
    grouped: dict[tuple[str, str], list[MathQuestion]] = defaultdict(list)
    for example in examples:
        grouped[example.split, example.module].append(example)
    for (split, module), group in grouped.items():
        write_text_atomic(Path(root) / split / f"{module}.txt", "".join(f"{e.question}\n{e.answer}\n" for e in group))


# --- scoring -------------------------------------------------------------------------------------


def is_correct(hypothesis_tokens: Sequence[str], example: MathQuestion) -> bool:
    """Exact match of the whole answer string."""
    return "".join(hypothesis_tokens) == example.answer


def describe_prediction(hypothesis_tokens: Sequence[str], example: MathQuestion) -> dict:
    prediction = "".join(hypothesis_tokens)
    correct = prediction == example.answer
    return {
        "id": example.id,
        "split": example.split,
        "module": example.module,
        "question": example.question,
        "answer": example.answer,
        "prediction": prediction,
        "correct": correct,
        "equation_correct": correct,
    }
