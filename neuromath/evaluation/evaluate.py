"""Evaluate a trained run on examples: value and equation accuracy, and one prediction record each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from neuromath.fileio import write_text_atomic


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
    unknown = [solver.source_vocab.count_unknown(solver.task.source_tokens(example)) for example in examples]
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
        "unknown_tokens": sum(unknown),  # input tokens (characters for char-level tasks) the vocabulary lacks
        "examples_with_unknown": sum(count > 0 for count in unknown),
        "decode": {"beam": decode.beam, "nbest": decode.nbest, "length_penalty": decode.length_penalty,
                   "constrained": decode.constrained, "verify": decode.verify},
    }
    if decode.nbest > 1:
        metrics["nbest_value_accuracy"] = any_correct / n if n else 0.0
    return metrics, records


def percent(value: float | None) -> str:
    """``0.9512`` -> ``"95.1%"``; a missing value -> ``"n/a"``."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def run_names(run_dirs: Sequence[str | Path]) -> list[str]:
    """Short names for report columns: the folder names, or the paths when those repeat."""
    names = [Path(run_dir).name or str(run_dir) for run_dir in run_dirs]
    return names if len(set(names)) == len(names) else [str(run_dir) for run_dir in run_dirs]


def write_predictions(records: list[dict], path: str | Path) -> None:
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
