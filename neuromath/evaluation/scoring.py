"""Evaluate a trained run on examples: value and equation accuracy, corpus BLEU of predicted equations (tasks whose
records have equations), and one prediction record each."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Sequence

from neuromath.errors import DataFormatError
from neuromath.evaluation.bleu import bleu_scores
from neuromath.fileio import write_text_atomic
from neuromath.safe_read import load_json, open_data, read_data_text

PREDICTIONS_FILE = "predictions.jsonl"  # the test records train writes in a run or cv fold, one JSON object a line
REFIT_DIR = "refit"  # a cv fold's run trained on the whole training fold (cv --refit): OUT/fold<k>/refit


def scored_fold(cv_folder: Path, fold: str, report: dict) -> Path:
    """The run that scored ``fold`` of the cross-validation in ``cv_folder`` whose report.json is ``report``: the
    fold's refit after ``cv --refit`` (its selection run only chose the refit's epochs), else the fold itself."""
    return Path(cv_folder) / fold / REFIT_DIR if report.get("refit") is True else Path(cv_folder) / fold


def evaluate_examples(solver, examples: Sequence) -> tuple[dict, list[dict]]:
    """Decode every example and score it with the task's own measures.

    The answer of each example is the solver's choice from its n-best list (the first verified
    hypothesis when verification is on). With ``nbest > 1`` the records carry the whole list and
    the metrics add ``nbest_value_accuracy``: solved when any of the n hypotheses is right.
    """
    nbest_lists = solver.predict_nbest(examples)
    records, any_correct = [], 0
    for candidates, example in zip(nbest_lists, examples):
        chosen = solver.choose(candidates)
        record = solver.task.describe(list(chosen.tokens), example)
        if solver.decode.nbest > 1:
            record["nbest"] = [
                {"tokens": list(c.tokens), "score": c.score, "verified": c.verified,
                 "correct": bool(solver.task.is_correct(list(c.tokens), example))}
                for c in candidates
            ]
            any_correct += any(entry["correct"] for entry in record["nbest"])
        records.append(record)
    counts = unknown_counts(solver.source_vocab, solver.task, examples)
    for record, (unknown, _) in zip(records, counts):
        record["unknown_tokens"] = unknown  # input tokens the run's vocabulary lacks, to slice the records by
    n = len(records)
    value_correct = sum(bool(r["correct"]) for r in records)
    equation_correct = sum(bool(r["equation_correct"]) for r in records)
    decode = solver.decode
    metrics = {
        "value_accuracy": value_correct / n if n else 0.0,
        "equation_accuracy": equation_correct / n if n else 0.0,
        "n": n,
        "value_correct": value_correct,
        "equation_correct": equation_correct,
        # input tokens (characters for char-level tasks) the run's source vocabulary lacks, and their rates
        **unknown_input(solver.source_vocab, solver.task, examples, counts),
        **accuracy_by_unknown(records),
        "decode": {"beam": decode.beam, "nbest": decode.nbest, "length_penalty": decode.length_penalty,
                   "constrained": decode.constrained, "verify": decode.verify},
    }
    if decode.nbest > 1:
        metrics["nbest_value_accuracy"] = any_correct / n if n else 0.0
    metrics.update(bleu_scores(records))  # bleu and its bleu_definition
    return metrics, records


def unknown_counts(source_vocab, task, examples: Sequence) -> list[tuple[int, int]]:
    """(input tokens the run's source vocabulary lacks, input tokens) of each example, read the way the run reads
    it (``task`` configured with the run's data settings, e.g. ``data.lowercase``)."""
    return [(source_vocab.count_unknown(tokens), len(tokens)) for tokens in map(task.source_tokens, examples)]


def unknown_input(source_vocab, task, examples: Sequence, counts: list[tuple[int, int]] | None = None) -> dict:
    """How much of the examples' input a run's source vocabulary does not know (``unknown_counts``, or ``counts``
    when already made): ``unknown_tokens`` of ``source_tokens`` tokens (``unknown_token_rate``, their fraction) in
    ``examples_with_unknown`` examples (``unknown_example_rate``, a fraction of the examples); rates are 0 without
    examples or tokens."""
    counts = unknown_counts(source_vocab, task, examples) if counts is None else counts
    unknown = sum(count for count, _ in counts)
    tokens = sum(length for _, length in counts)
    with_unknown = sum(count > 0 for count, _ in counts)
    return {
        "unknown_tokens": unknown,
        "source_tokens": tokens,
        "unknown_token_rate": unknown / tokens if tokens else 0.0,
        "examples_with_unknown": with_unknown,
        "unknown_example_rate": with_unknown / len(counts) if counts else 0.0,
    }


def accuracy_by_unknown(records: Sequence[dict]) -> dict:
    """The accuracy of the records whose input holds a token the run's vocabulary lacks (``unknown_tokens`` > 0)
    and of the others: ``value_accuracy_with_unknown`` and ``value_accuracy_without_unknown``, None for a side
    without records. What the unknown-word techniques (``model.char_ngrams``, ``model.subwords``) are meant to move."""
    sides = {}
    for name, has_unknown in (("with", True), ("without", False)):
        side = [bool(record["correct"]) for record in records if (record["unknown_tokens"] > 0) == has_unknown]
        sides[f"value_accuracy_{name}_unknown"] = sum(side) / len(side) if side else None
    return sides


def unknown_split_summary(metrics: dict) -> str:
    """The accuracies of ``accuracy_by_unknown`` in words: ``54.3% with unknown input (716 examples), 64.8% without
    (287)``."""
    with_unknown = metrics["examples_with_unknown"]
    return (f"{percent(metrics['value_accuracy_with_unknown'])} with unknown input ({with_unknown} examples), "
            f"{percent(metrics['value_accuracy_without_unknown'])} without ({metrics['n'] - with_unknown})")


def unknown_summary(metrics: dict) -> str:
    """The unknown input of ``unknown_input`` in words: ``3 of 250 tokens (1.2%) in 2 of 40 examples (5.0%)``."""
    examples = f" of {metrics['n']}" if "n" in metrics else ""
    token_rate, example_rate = percent(metrics["unknown_token_rate"]), percent(metrics["unknown_example_rate"])
    return (f"{metrics['unknown_tokens']} of {metrics['source_tokens']} tokens ({token_rate}) in "
            f"{metrics['examples_with_unknown']}{examples} examples ({example_rate})")


def counted(count: int, noun: str) -> str:
    """``1 epoch``, ``3 epochs``: a count with its noun in the right number (nouns that take an s)."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def percent(value: float | None) -> str:
    """``0.9512`` -> ``"95.1%"``; a missing value -> ``"n/a"``."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def run_names(run_dirs: Sequence[str | Path]) -> list[str]:
    """Short names for report columns: the folder names, or the paths when those repeat."""
    names = [Path(run_dir).name or str(run_dir) for run_dir in run_dirs]
    return names if len(set(names)) == len(names) else [str(run_dir) for run_dir in run_dirs]


def write_predictions(records: list[dict], path: str | Path) -> None:
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def read_predictions(path: str | Path, needs: Sequence[str] = ("id", "correct")) -> list[dict]:
    """The prediction records of a ``predictions.jsonl`` (what ``write_predictions`` wrote), or of the gzip copy that
    ``results/`` keeps (``predictions.jsonl.gz``), each checked to be a JSON object with the keys ``needs``; a bad
    line is a DataFormatError naming the file and line."""
    path = Path(path)
    records = []
    if path.suffix == ".gz":
        try:
            with gzip.open(open_data(path), "rt", encoding="utf-8") as stream:  # a FIFO: refused
                text = stream.read()
        except (OSError, EOFError, UnicodeDecodeError) as error:
            raise DataFormatError(path, None, f"not a readable gzip file of JSON lines ({error})") from None
    else:
        text = read_data_text(path)  # a FIFO or a device: refused before it is read
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            record = load_json(line, path, number)  # nested too deep: a DataFormatError naming the line
        except ValueError:
            raise DataFormatError(path, number, "not valid JSON") from None
        if not isinstance(record, dict) or any(key not in record for key in needs):
            raise DataFormatError(path, number, f"a prediction record needs {', '.join(map(repr, needs))}")
        records.append(record)
    return records
