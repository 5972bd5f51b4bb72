"""Using a trained run from Python: ``neuromath.load(run_dir).solve(text)``."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Sequence

import torch

from neuromath.config import Config, load_config
from neuromath.errors import NeuromathError
from neuromath.tasks import SequenceTask, get_task
from neuromath.text import Vocabulary


@dataclass(frozen=True)
class Solution:
    """What ``solve`` returns: the equation with the problem's own numbers and its value."""

    text: str
    equation: str  # e.g. "135 - 19"; empty when the model produced no well-formed equation
    answer: float | None  # None when the equation could not be evaluated
    answer_text: str  # exact form: "116", "2.5", "(7/3)"; empty when there is no answer
    masked_equation: tuple[str, ...]  # the model's prefix tokens over n0, n1, ...

    def __str__(self) -> str:
        if not self.equation:
            return f"no well-formed equation (model output: {' '.join(self.masked_equation) or 'empty'})"
        return f"{self.equation} = {self.answer_text}"


class Solver:
    """A trained model with its vocabularies and task; decodes batches of examples."""

    def __init__(self, run_dir: str | Path, device: str = "cpu"):
        from neuromath.models import build_task_model

        run_dir = Path(run_dir)
        if not (run_dir / "config.yaml").exists():
            raise NeuromathError(f"{run_dir} is not a run directory (no config.yaml)")
        weights_path = run_dir / "model.pt"
        if not weights_path.exists():
            raise NeuromathError(f"{run_dir} has no trained weights (model.pt); did training finish?")
        self.run_dir = run_dir
        self.config: Config = load_config(run_dir / "config.yaml")
        self.task: SequenceTask = get_task(self.config.data.task)
        self.source_vocab = Vocabulary.load(run_dir / "source_vocab.json")
        self.target_vocab = Vocabulary.load(run_dir / "target_vocab.json")
        self.device = torch.device(device)
        self.model = build_task_model(self.config.model, self.task, self.source_vocab, self.target_vocab)
        self.model.load_state_dict(torch.load(weights_path, map_location=self.device, weights_only=True))
        self.model.to(self.device).eval()

    def predict(self, examples: Sequence, batch_size: int | None = None) -> list[list[str]]:
        """Greedy hypotheses (target tokens) for each example, decoded in batches."""
        from neuromath.decoding.greedy import greedy_decode
        from neuromath.training.data import EncodedExamples, collate

        batch_size = batch_size or self.config.decode.batch_size
        encoded = EncodedExamples(examples, self.task, self.source_vocab, self.target_vocab)
        for (source, _), example in zip(encoded.items, encoded.examples):
            if len(source) > self.config.model.max_len:
                raise NeuromathError(
                    f"example {example.id!r} has {len(source)} tokens; the model reads at most {self.config.model.max_len}"
                )
        hypotheses: list[list[str]] = []
        for start in range(0, len(encoded), batch_size):
            batch = collate([encoded[i] for i in range(start, min(start + batch_size, len(encoded)))])
            batch = {key: value.to(self.device) for key, value in batch.items()}
            for ids in greedy_decode(self.model, batch, self.config.decode.max_len):
                hypotheses.append(self.target_vocab.decode(ids))
        return hypotheses

    def solve(self, text: str) -> Solution:
        if self.task.name != "word_problems":
            raise NeuromathError(f"solve works on word-problem runs; this run's task is {self.task.name!r}")
        from neuromath.tasks.word_problems import describe_prediction, prepare_problem

        example = prepare_problem(text)
        tokens = self.predict([example])[0]
        record = describe_prediction(tokens, example)
        return Solution(
            text=text,
            equation=record["predicted_equation"] or "",
            answer=record["predicted_value"],
            answer_text=record.get("predicted_answer_text") or "",
            masked_equation=tuple(tokens),
        )


def load(run_dir: str | Path, device: str = "cpu") -> Solver:
    """Load a trained run directory for prediction and solving."""
    return Solver(run_dir, device)
