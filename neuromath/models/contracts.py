"""The model contracts, written as ``typing.Protocol``: what the generic code (training, decoding, ``neuromath.load``,
completion) relies on a model to have. Every registered model satisfies one of them, which
``tests/models/test_contracts.py`` checks by building each.

- ``SequenceModel``: an encoder-decoder of a sequence task (word problems, the Mathematics Dataset, symbolic
  integration). Training calls it on a batch for the teacher-forced logits; greedy decoding and beam search call
  ``encode`` once and ``decode_step`` per token; beam search reorders the decoder's cache with ``reorder_cache`` and
  gives one memory row per source instead of one per beam when ``shares_memory_across_beams``; training calls
  ``fit_structure`` on the training sequences once, before the first step, when ``learns_structure``. A decoder
  with ``fixed_shapes`` true (decode.compile's ``FixedShapeDecoder``, an optional flag) gets every beam-search step
  at B x K rows; the others run the first step once per source.
- ``EquationClassifier``: a model of the identities task that scores an equation (its two sides) with one logit.
  ``input_kind`` says which inputs it reads (``trees``, ``tokens`` or ``none``), ``reads_numbers`` whether number
  leaves carry their values, ``trainable`` whether it learns by gradient; one that does not is ``fit`` on the
  training labels instead (the majority class).

The tree cell of the level-batched engine has its contract beside the engine, ``neuromath.nn.tree_engine.Cell``.
``SequenceModelParts`` gives a sequence model the plain form of the optional parts: the cache index-selected
(``select_rows``), the memory repeated per beam, no structure to learn.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch


def select_rows(tensors: dict, index: torch.Tensor) -> dict:
    """Every tensor value of ``tensors`` reordered along dimension 0 by ``index``; other values kept."""
    return {
        name: value.index_select(0, index) if isinstance(value, torch.Tensor) else value
        for name, value in tensors.items()
    }


@runtime_checkable
class SequenceModel(Protocol):
    """An encoder-decoder trained by teacher forcing and decoded token by token (see the module docstring)."""

    shares_memory_across_beams: bool
    learns_structure: bool

    def __call__(self, batch: dict) -> torch.Tensor:
        """Teacher-forced logits (B, T, V) of ``batch["target_in"]`` given ``batch["source"]``."""
        ...

    def encode(self, batch: dict) -> dict:
        """The memory the decoder reads: a dict of tensors with the batch in dimension 0."""
        ...

    def decode_step(self, memory: dict, prefix: torch.Tensor, cache: dict | None) -> tuple[torch.Tensor, dict]:
        """Log-probabilities (B, V) of the token after ``prefix`` (B, t, bos first), and the updated cache."""
        ...

    def reorder_cache(self, cache: dict, index: torch.Tensor) -> dict:
        """The cache of the rows ``index`` (beam search's parents), in that order."""
        ...

    def fit_structure(self, sources: list, targets: list) -> dict:
        """Learn what the model reads from the training sequences' structure (id lists: sources without bos,
        targets with bos) before training; returns what it learned, per side."""
        ...


class SequenceModelParts:
    """The plain form of the optional parts of ``SequenceModel``, for a model to inherit: a cache of tensors
    index-selected row by row, one memory row per beam, no structure learned from the training data."""

    shares_memory_across_beams: bool = False
    learns_structure: bool = False

    def reorder_cache(self, cache: dict, index: torch.Tensor) -> dict:
        return select_rows(cache, index)

    def fit_structure(self, sources: list, targets: list) -> dict:
        return {}


@runtime_checkable
class EquationClassifier(Protocol):
    """Scores equations of the identities task: one logit per equation, positive for an identity."""

    input_kind: str  # "trees" (batch["trees"]), "tokens" (batch["tokens"], batch["lengths"]) or "none"
    reads_numbers: bool  # number leaves are read by value (the node vocabulary then has no token per number)
    trainable: bool  # False: counted from the labels by ``fit`` instead of learned by gradient

    def __call__(self, batch: dict) -> torch.Tensor:
        """Logits (B,) of the batch's equations."""
        ...

    def fit(self, labels: list[bool]) -> None:
        """Set what is counted rather than learned from the training labels (a trainable model: nothing)."""
        ...
