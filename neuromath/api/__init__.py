"""Using a trained run from Python: ``neuromath.load(run_dir)`` (a run folder, a folder written by ``neuromath
export``, or a model on the Hugging Face Hub by id, ``org/name[@revision]``: ``neuromath.models.hub``) gives a
``Solver`` for a sequence task (``.solve(text)``, ``.solve_many(texts)``, ``.predict_nbest(examples)``,
``.with_decode(beam=...)``) or a ``LoadedClassifier`` for an equation task (``.solve(text)``, ``.logits(examples)``).
``Solution.to_json()`` and ``Verdict.to_json()`` are the objects ``neuromath solve --json`` prints and ``neuromath
serve`` answers.

The sequence side lives in ``neuromath.api.sequence_solver``, the equation-classifier side in
``neuromath.api.equation_classifier``, what both share in ``neuromath.api.answers``; this module re-exports their
public names, so that ``from neuromath.api import ...`` reads them from here."""

from __future__ import annotations

from pathlib import Path

from neuromath.api.answers import answer_or_raise, attention_flags, finite_or_none, json_safe
from neuromath.api.equation_classifier import LoadedClassifier, Verdict, load_classifier
from neuromath.api.sequence_solver import (
    DECODE_OPTIONS,
    AttentionMap,
    Candidate,
    Solution,
    Solver,
    check_decode,
    decode_options,
)
from neuromath.api.voting import VotingSolver, is_seed_vote, seed_runs
from neuromath.config import load_config
from neuromath.errors import ConfigError, NeuromathError
from neuromath.models import ModelInputs
from neuromath.models.cost import (
    ResourceLimitError,
    check_classifier_cost,
    check_sequence_cost,
    cost_limits,
    resolve_limits,
)
from neuromath.models.hub import model_folder
from neuromath.models.weights import load_run_weights, weights_file
from neuromath.tasks import EquationTask, SequenceTask, get_task
from neuromath.text import Vocabulary

__all__ = [
    "DECODE_OPTIONS", "AttentionMap", "Candidate", "LoadedClassifier", "ResourceLimitError", "Solution", "Solver",
    "Verdict", "VotingSolver", "answer_or_raise", "attention_flags", "check_decode", "check_run", "cost_limits",
    "decode_options", "finite_or_none", "json_safe", "load", "load_classifier", "load_run_weights", "run_task",
]


def run_task(run_dir: str | Path) -> SequenceTask | EquationTask:
    """The task a run folder's ``config.yaml`` names (a folder of ``train --seeds``: its first seed's): the one thing
    read to tell what a run is. A hub id is downloaded first (``neuromath.models.hub.model_folder``)."""
    run_dir = model_folder(run_dir)
    if is_seed_vote(run_dir):
        run_dir = seed_runs(run_dir)[0]
    if not (run_dir / "config.yaml").exists():
        raise NeuromathError(f"{run_dir} is not a run directory (no config.yaml)")
    return get_task(load_config(run_dir / "config.yaml").data.task)


def check_run(run_dir: str | Path, device: str = "cpu", *, max_memory: float | None = None,
              max_decode_len: int | None = None) -> None:
    """The checks ``load`` makes before it builds a model, without building one: the run's config against its weights
    file, its decoding steps and the memory of its weights and one batch of decoding against the limits (each seed of
    a vote against the whole limit). A ResourceLimitError names the numbers."""
    run_dir = model_folder(run_dir)
    limits = resolve_limits(max_memory, max_decode_len, device)
    for run in seed_runs(run_dir) if is_seed_vote(run_dir) else [run_dir]:
        config = load_config(run / "config.yaml")
        task = get_task(config.data.task)
        if isinstance(task, EquationTask):
            vocab = Vocabulary.load(run / "node_vocab.json")
            check_classifier_cost(config, vocab, run / "config.yaml", weights_file(run), limits)
        else:
            inputs = ModelInputs.for_task(task.configured(config.data), Vocabulary.load(run / "source_vocab.json"),
                                          Vocabulary.load(run / "target_vocab.json"), run)
            check_sequence_cost(config, inputs, run / "config.yaml", weights_file(run), limits)


def load(run_dir: str | Path, device: str = "cpu", precision: str | None = None, *,
         max_memory: float | None = None, max_decode_len: int | None = None, **decode) -> Solver | LoadedClassifier:
    """Load a trained run directory, a folder written by ``neuromath export``, or a model on the Hugging Face Hub by
    id (``org/name`` or ``org/name@revision``, when no folder of that name exists here; downloaded into the Hugging
    Face cache once, and loaded from its safetensors only: ``neuromath.models.hub``): a ``Solver`` for prediction and
    solving (``decode`` overrides decoding settings, e.g. ``load(run, beam=10, nbest=5)``), or a ``LoadedClassifier``
    for an equation-classifier run. ``precision`` (``32-true``, ``bf16-mixed``, ``auto``, ...) overrides the run's own
    ``train.precision``. A folder of ``train --seeds N`` (seed<S>/ runs, none at its top) is one ``VotingSolver``: the
    majority vote of its seeds' answers (``neuromath.api.voting``).

    Before a model is built, its cost is estimated from the config and a ``ResourceLimitError`` names the numbers
    when it passes a limit (``neuromath.models.cost``): its weights and one batch of decoding must fit in
    ``max_memory`` GB (default: half of this machine's memory, of the GPU's on a GPU), ``decode.max_len`` must be at
    most ``max_decode_len`` tokens (default 4096), and the config must describe a model its weights file can hold."""
    run_dir = model_folder(run_dir)  # the folder itself, or the hub model's in the cache
    if isinstance(run_task(run_dir), EquationTask):
        if decode:
            raise ConfigError(f"decoding options ({', '.join(sorted(decode))}) do not apply to an equation classifier")
        return load_classifier(run_dir, precision, max_memory=max_memory)
    if is_seed_vote(run_dir):
        return VotingSolver(run_dir, device, precision, max_memory=max_memory, max_decode_len=max_decode_len,
                            **decode)
    return Solver(run_dir, device, precision, max_memory=max_memory, max_decode_len=max_decode_len, **decode)
