"""Evaluate a trained run on examples: value and equation accuracy, and one prediction record each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from neuromath.fileio import write_text_atomic


def evaluate_examples(solver, examples: Sequence) -> tuple[dict, list[dict]]:
    """Decode every example and score it with the task's own measures."""
    hypotheses = solver.predict(examples)
    records = [solver.task.describe(tokens, example) for tokens, example in zip(hypotheses, examples)]
    n = len(records)
    value_correct = sum(bool(r["correct"]) for r in records)
    equation_correct = sum(bool(r["equation_correct"]) for r in records)
    metrics = {
        "value_accuracy": value_correct / n if n else 0.0,
        "equation_accuracy": equation_correct / n if n else 0.0,
        "n": n,
        "value_correct": value_correct,
        "equation_correct": equation_correct,
    }
    return metrics, records


def write_predictions(records: list[dict], path: str | Path) -> None:
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
