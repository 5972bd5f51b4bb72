"""The equation-classifier side of ``neuromath.api`` (identities): ``load_classifier(run)`` gives a
``LoadedClassifier`` (``.solve(text)``, ``.logits(examples)``, ``.completion_scorer(candidates)`` for equation
completion), whose ``solve`` answers a ``Verdict`` (its ``to_json()`` is what ``neuromath solve --json`` prints and
``neuromath serve`` answers)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import torch

from neuromath.api.answers import answer_or_raise, attention_flags, finite_or_none
from neuromath.config import Config, load_config
from neuromath.errors import NeuromathError
from neuromath.expr.tree import preorder
from neuromath.models.classifiers import (
    CompletionScorer,
    build_classifier,
    model_token,
    predict_logits,
    reads_numbers,
)
from neuromath.models.cost import check_classifier_cost, resolve_limits
from neuromath.models.weights import (
    EXPORTED_WEIGHTS,
    RUN_WEIGHTS,
    has_weights,
    load_run_weights,
    weights_file,
)
from neuromath.nn.precision import resolve_precision
from neuromath.tasks import get_task
from neuromath.tasks.identities import EquationExample, EquationNode
from neuromath.text import Vocabulary


@dataclass(frozen=True)
class Verdict:
    """What ``solve`` of an equation classifier returns: the model's verdict on a typed equation and a check beside
    it."""

    text: str
    equation: str  # the equation as read (x, y, z, w for the symbols)
    probability: float  # the model's probability that the equation is an identity
    reference: bool | None  # the task's own check (identities: numeric evaluation); None when it cannot tell
    unknown_tokens: tuple[str, ...] = ()  # node symbols the run's vocabulary does not hold (read as <unk>)

    @property
    def identity(self) -> bool:
        return self.probability > 0.5

    def to_json(self) -> dict:
        """The object ``neuromath solve --json`` prints and ``POST /api/solve`` of ``neuromath serve`` answers."""
        return {"text": self.text, "equation": self.equation, "identity": self.identity,
                "probability": finite_or_none(self.probability), "numeric_check": self.reference,
                "unknown_tokens": list(self.unknown_tokens)}

    def __str__(self) -> str:
        check = {True: "true", False: "false", None: "cannot tell"}[self.reference]
        return (f"{self.equation}: {'true' if self.identity else 'false'} (probability {self.probability:.3f}); "
                f"numeric check: {check}")


@dataclass
class LoadedClassifier:
    """A trained equation classifier (identities task): ``logits(examples)`` > 0 means "an identity"."""

    model: torch.nn.Module
    vocab: Vocabulary
    config: Config
    run_dir: Path
    precision: str = "32-true"  # resolved (never auto): the forward passes of logits and completion run in it

    def logits(self, examples: Sequence[EquationExample], batch_size: int = 512) -> torch.Tensor:
        return predict_logits(self.model, examples, self.vocab, batch_size, self.precision)

    def solve(self, text: str, attention: bool = False) -> Verdict:
        """Is the typed equation (``sin(x)^2 + cos(x)^2 = 1``) an identity, by the model and by the task's check."""
        return answer_or_raise(self.solve_many([text], attention)[0])

    def solve_many(self, texts: Sequence[str],
                   attention: bool | Sequence[bool] = False) -> list[Verdict | NeuromathError]:
        """``solve`` of many typed equations with one forward pass over all of them: each one's Verdict, or the
        NeuromathError of an equation that cannot be read (or asks for attention, which a tree classifier has not)
        in its place."""
        task = get_task(self.config.data.task)
        if task.prepare is None:
            raise NeuromathError(f"solve does not apply to runs of the {task.name!r} task")
        wants_attention = attention_flags(attention, len(texts))
        results: list[Verdict | NeuromathError | None] = [None] * len(texts)
        trees: list[tuple[int, EquationNode]] = []  # (position in texts, equation tree)
        for position, text in enumerate(texts):
            if wants_attention[position]:
                results[position] = NeuromathError(
                    f"the {self.config.model.name} equation classifier of {self.run_dir} has no attention to show "
                    "(it reads the equation's tree bottom-up)")
                continue
            try:
                trees.append((position, task.prepare(text)))
            except NeuromathError as error:
                results[position] = error
        numbers = reads_numbers(self.model)
        logits = self.logits([EquationExample(tree, None) for _, tree in trees]) if trees else []
        for (position, tree), logit in zip(trees, logits):
            unknown = tuple(dict.fromkeys(token for node in preorder(tree) if node.func != "Equality"
                                          if (token := model_token(node, numbers)) not in self.vocab))
            probability = float(torch.sigmoid(logit))
            reference = task.reference_check(tree) if task.reference_check is not None else None
            results[position] = Verdict(texts[position], str(tree), probability, reference, unknown)
        return results  # type: ignore[return-value]

    def completion_scorer(self, candidates: Sequence[EquationNode]) -> CompletionScorer:
        """``scorer(equation, path)``: the logit of the equation with each candidate at ``path`` (see
        ``neuromath.models.classifiers.CompletionScorer``)."""
        return CompletionScorer(self.model, self.vocab, candidates, precision=self.precision)


def load_classifier(run_dir: str | Path, precision: str | None = None, *,
                    max_memory: float | None = None) -> LoadedClassifier:
    """A trained classifier from a run directory or a folder written by ``neuromath export`` (its config, node
    vocabulary and best weights), run in ``precision`` (None: the run's own ``train.precision``). Before the model is
    built, its size and the memory of a forward pass are estimated from the config and refused past ``max_memory``
    GB (None: the limit of the enclosing ``neuromath.models.cost.cost_limits``, else half the machine's memory)."""
    run_dir = Path(run_dir)
    for needed in ("config.yaml", "node_vocab.json"):
        if not (run_dir / needed).exists():
            raise NeuromathError(f"{run_dir} is not a trained identities run (no {needed})")
    if not has_weights(run_dir):
        raise NeuromathError(f"{run_dir} is not a trained identities run (no {RUN_WEIGHTS} or {EXPORTED_WEIGHTS})")
    config = load_config(run_dir / "config.yaml")
    vocab = Vocabulary.load(run_dir / "node_vocab.json")
    weights = weights_file(run_dir)
    check_classifier_cost(config, vocab, run_dir / "config.yaml", weights, resolve_limits(max_memory))
    model = build_classifier(config.model, vocab)
    load_run_weights(model, weights)
    model.eval()
    return LoadedClassifier(model, vocab, config, run_dir, resolve_precision(precision or config.train.precision))
