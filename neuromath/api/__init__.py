"""Using a trained run from Python: ``neuromath.load(run_dir)`` (a run folder, or a folder written by ``neuromath
export``) gives a ``Solver`` for a sequence task (``.solve(text)``, ``.solve_many(texts)``,
``.predict_nbest(examples)``, ``.with_decode(beam=...)``) or a ``LoadedClassifier`` for an equation task
(``.solve(text)``, ``.logits(examples)``). ``Solution.to_json()`` and ``Verdict.to_json()`` are the objects
``neuromath solve --json`` prints and ``neuromath serve`` answers.

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
from neuromath.models.weights import load_run_weights
from neuromath.tasks import EquationTask, SequenceTask, get_task

__all__ = [
    "DECODE_OPTIONS", "AttentionMap", "Candidate", "LoadedClassifier", "Solution", "Solver", "Verdict", "VotingSolver",
    "answer_or_raise", "attention_flags", "check_decode", "decode_options", "finite_or_none", "json_safe", "load",
    "load_classifier", "load_run_weights", "run_task",
]


def run_task(run_dir: str | Path) -> SequenceTask | EquationTask:
    """The task a run folder's ``config.yaml`` names (a folder of ``train --seeds``: its first seed's): the one thing
    read to tell what a run is."""
    run_dir = Path(run_dir)
    if is_seed_vote(run_dir):
        run_dir = seed_runs(run_dir)[0]
    if not (run_dir / "config.yaml").exists():
        raise NeuromathError(f"{run_dir} is not a run directory (no config.yaml)")
    return get_task(load_config(run_dir / "config.yaml").data.task)


def load(run_dir: str | Path, device: str = "cpu", precision: str | None = None,
         **decode) -> Solver | LoadedClassifier:
    """Load a trained run directory (or a folder written by ``neuromath export``): a ``Solver`` for prediction and
    solving (``decode`` overrides decoding settings, e.g. ``load(run, beam=10, nbest=5)``), or a ``LoadedClassifier``
    for an equation-classifier run. ``precision`` (``32-true``, ``bf16-mixed``, ``auto``, ...) overrides the run's own
    ``train.precision``. A folder of ``train --seeds N`` (seed<S>/ runs, none at its top) is one ``VotingSolver``: the
    majority vote of its seeds' answers (``neuromath.api.voting``)."""
    if isinstance(run_task(run_dir), EquationTask):
        if decode:
            raise ConfigError(f"decoding options ({', '.join(sorted(decode))}) do not apply to an equation classifier")
        return load_classifier(run_dir, precision)
    if is_seed_vote(run_dir):
        return VotingSolver(run_dir, device, precision, **decode)
    return Solver(run_dir, device, precision, **decode)
