"""Equation classifiers of the identities task (Arabshahi et al. 2018, Sec. 3; Mali et al. 2021, Sec. 3): each side
of an equation is encoded into a vector h, and the equation is an identity with probability
sigmoid(h_left . h_right + b).

Registered in ``neuromath.registry.CLASSIFIERS`` under the name a config's ``model.name`` gives:
- every tree cell of ``TREE_CELLS`` (``tree_lstm``, ``mtree_lstm``, ``stack_mi_tree_lstm``, ...): the sides are
  encoded bottom-up by the level-batched tree engine, one operator-specific cell per internal node;
- every encoder of ``SEQUENCE_ENCODERS`` (``rnn``, ``lstm``, ``stack_rnn``): the sides are read as pre-order token
  sequences;
- ``majority``: the training set's most frequent label, no parameters.
``model.d_model`` is the hidden size; ``model.stack_depth`` the depth of the stack cells' memory.
"""

from __future__ import annotations

import torch
from torch import nn

from neuromath.config import ModelConfig
from neuromath.nn import sequence_encoders  # noqa: F401  (registers the sequence encoders)
from neuromath.nn.tree_engine import TreeEncoder  # importing the engine registers every tree cell
from neuromath.registry import CLASSIFIERS, SEQUENCE_ENCODERS, TREE_CELLS
from neuromath.tasks.identities import BINARY_FUNCTIONS, UNARY_FUNCTIONS

OPERATORS = BINARY_FUNCTIONS + UNARY_FUNCTIONS  # operator ids of the tree cells, in this order
OPERATOR_IDS = {name: index for index, name in enumerate(OPERATORS)}


class DotProductOutput(nn.Module):
    """sigmoid(h_left . h_right + b): returns the logit h_left . h_right + b, one per equation."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(()))

    def forward(self, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        return (left * right).sum(-1) + self.bias


class TreeClassifier(nn.Module):
    """A recursive tree network over both sides; ``batch["trees"]`` holds the sides as trees 2i (left) and 2i+1."""

    input_kind = "trees"

    def __init__(self, cell: str, vocab_size: int, hidden_size: int, **cell_options):
        super().__init__()
        self.encoder = TreeEncoder(cell, vocab_size, len(OPERATORS), hidden_size, **cell_options)
        self.output = DotProductOutput()

    def forward(self, batch: dict) -> torch.Tensor:
        trees = batch["trees"]
        hidden = self.encoder(trees)[0]  # (N, hidden) every node
        sides = hidden[trees.roots].view(-1, 2, hidden.shape[-1])  # (B, 2, hidden)
        return self.output(sides[:, 0], sides[:, 1])


class SequenceClassifier(nn.Module):
    """A recurrent baseline over the pre-order tokens of each side; ``batch["tokens"]`` rows 2i and 2i+1."""

    input_kind = "tokens"

    def __init__(self, encoder: str, vocab_size: int, hidden_size: int, pad_id: int = 0, **options):
        super().__init__()
        self.encoder = SEQUENCE_ENCODERS.get(encoder)(vocab_size, hidden_size, pad_id=pad_id, **options)
        self.output = DotProductOutput()

    def forward(self, batch: dict) -> torch.Tensor:
        encoded = self.encoder(batch["tokens"], batch["lengths"])  # (2B, hidden)
        sides = encoded.view(-1, 2, encoded.shape[-1])  # (B, 2, hidden)
        return self.output(sides[:, 0], sides[:, 1])


class MajorityClassifier(nn.Module):
    """Always the training set's most frequent label (ties: true)."""

    input_kind = "none"

    def __init__(self, majority_true: bool = True):
        super().__init__()
        self.register_buffer("logit", torch.tensor(10.0 if majority_true else -10.0))

    def fit(self, labels: list[bool]) -> None:
        self.logit.fill_(10.0 if 2 * sum(labels) >= len(labels) else -10.0)

    def forward(self, batch: dict) -> torch.Tensor:
        return self.logit.expand(batch["labels"].shape[0])


def _cell_options(cell: str, config: ModelConfig) -> dict:
    return {"stack_depth": config.stack_depth} if getattr(TREE_CELLS.get(cell), "uses_stack", False) else {}


def _register() -> None:
    for cell in TREE_CELLS.names():
        CLASSIFIERS.add(
            cell,
            lambda config, vocab, cell=cell: TreeClassifier(cell, len(vocab), config.d_model, **_cell_options(cell, config)),
        )
    for encoder in SEQUENCE_ENCODERS.names():
        if encoder in CLASSIFIERS:
            raise ValueError(f"sequence encoder {encoder!r} has the name of a tree cell")
        CLASSIFIERS.add(
            encoder,
            lambda config, vocab, encoder=encoder: SequenceClassifier(
                encoder, len(vocab), config.d_model, pad_id=vocab.pad_id, stack_depth=config.stack_depth
            ),
        )
    CLASSIFIERS.add("majority", lambda config, vocab: MajorityClassifier())


_register()


def build_classifier(config: ModelConfig, vocab) -> nn.Module:
    """The classifier ``config.name`` for a node vocabulary ``vocab`` (a ``neuromath.text.Vocabulary``)."""
    return CLASSIFIERS.get(config.name)(config, vocab)
