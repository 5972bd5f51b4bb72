"""Model contracts as ``typing.Protocol``: what generic code (training, decoding, ``neuromath.load``, completion)
relies on. Every registered model satisfies one (``tests/models/test_contracts.py``).

- ``SequenceModel``: encoder-decoder of a sequence task (word problems, Mathematics Dataset, symbolic integration).
  Training calls it for teacher-forced logits; decoding calls ``encode`` once and ``decode_step`` per token; beam
  search reorders the cache with ``reorder_cache`` and keeps one memory row per source (not per beam) when
  ``shares_memory_across_beams``; ``fit_structure`` runs once on the training sequences before the first step when
  ``learns_structure``. An optional ``fixed_shapes`` (decode.compile's ``FixedShapeDecoder``) gets every
  beam-search step at B x K rows; others run the first step once per source.
- ``EquationClassifier``: identities-task model, one logit per equation. ``input_kind``: ``trees``, ``tokens`` or
  ``none``; ``reads_numbers``: number leaves carry values; ``trainable`` False: ``fit`` on the labels (majority
  class) instead of gradients.

The tree cell contract is ``neuromath.nn.tree_engine.Cell``. ``SequenceModelParts``: the plain optional parts
(cache via ``select_rows``, memory repeated per beam, nothing to learn).
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
        """Learn from the training sequences' structure before training (id lists: sources without bos, targets
        with bos); returns what it learned, per side."""
        ...


class SequenceModelParts:
    """Plain optional parts of ``SequenceModel`` to inherit: cache rows index-selected, one memory row per beam,
    nothing learned from the data."""

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
