"""Equation classifiers of the identities task (Arabshahi et al. 2018, Sec. 3; Mali et al. 2021, Sec. 3): each side
of an equation is encoded into a vector h, and the equation is an identity with probability
sigmoid(h_left . h_right + b).

Built by the builders ``neuromath.config.models`` registers for each ``model.name``:
- ``tree_classifier``: a tree cell of ``TREE_CELLS`` by the model's name (``tree_lstm``, ``mtree_lstm``,
  ``stack_mi_tree_lstm``, ...); the sides are encoded bottom-up by the level-batched tree engine, one
  operator-specific cell per internal node;
- ``sequence_classifier``: an encoder of ``SEQUENCE_ENCODERS`` (``rnn``, ``lstm``, ``stack_rnn``); the sides are read
  as pre-order token sequences;
- ``majority_classifier``: the training set's most frequent label, no parameters.
``model.d_model`` is the hidden size; ``model.stack_depth`` the depth of the stack cells' memory;
``model.number_encoder`` makes a tree classifier read every number leaf's value (numbers as evidence, Arabshahi et al.
2018): the leaf is embedded as its token plus ``NumberEncoder(value)``, and every ``Float`` leaf shares the one token
``FLOAT_TOKEN``, so a decimal never seen in training (a function evaluation's ``0.4794``) is read by its value alone.

Below the models: how equations become their inputs (a node vocabulary, the tree engine's nested tuples or
pre-order id sequences, collated batches) and ``predict_logits``, shared by training and ``neuromath.api``.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from neuromath.config import ModelConfig
from neuromath.config.models import StackRNNConfig, TreeCellConfig
from neuromath.config.rules import CLASSIFIER_KINDS, MAJORITY
from neuromath.errors import ConfigError
from neuromath.models.batching import EpochShuffleSampler, ShardSampler, move_batch, pad
from neuromath.models.contracts import EquationClassifier
from neuromath.nn import sequence_encoders  # noqa: F401  (registers the sequence encoders)
from neuromath.nn.dropout import Dropout
from neuromath.nn.precision import autocast
from neuromath.nn.tree_engine import TreeEncoder, flatten_tree, make_tree_batch  # (registers every tree cell)
from neuromath.registry import SEQUENCE_ENCODERS, TREE_CELLS
from neuromath.tasks.identities import (
    BINARY_FUNCTIONS,
    NUMBER_KINDS,
    SYMBOLS,
    UNARY_FUNCTIONS,
    EquationExample,
    EquationNode,
    blank_ancestors,
    leaf_float,
    postorder,
    preorder,
    replace_path,
)
from neuromath.text import Vocabulary

CLASSIFIER_BUILT_KINDS = (*CLASSIFIER_KINDS, MAJORITY)
OPERATORS = BINARY_FUNCTIONS + UNARY_FUNCTIONS  # operator ids of the tree cells, in this order
OPERATOR_IDS = {name: index for index, name in enumerate(OPERATORS)}
FLOAT_TOKEN = "<float>"  # with model.number_encoder: the token of every Float leaf (its value tells them apart)


class DotProductOutput(nn.Module):
    """sigmoid(h_left . h_right + b): returns the logit h_left . h_right + b, one per equation."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(()))

    def forward(self, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        return (left * right).sum(-1) + self.bias


class LearnedClassifier(nn.Module):
    """Base of the classifiers that learn by gradient (``EquationClassifier`` with ``trainable``)."""

    trainable = True

    def fit(self, labels: list[bool]) -> None:
        """Nothing is counted from the labels: the weights are learned."""


class TreeClassifier(LearnedClassifier):
    """A recursive tree network over both sides; ``batch["trees"]`` holds the sides as trees 2i (left) and 2i+1."""

    input_kind = "trees"

    def __init__(self, cell: str, vocab_size: int, hidden_size: int, dropout: float = 0.0,
                 number_encoder: bool = False, **cell_options):
        super().__init__()
        self.encoder = TreeEncoder(cell, vocab_size, len(OPERATORS), hidden_size, dropout=dropout,
                                   number_encoder=number_encoder, **cell_options)
        self.output = DotProductOutput()
        self.reads_numbers = number_encoder  # its inputs carry number leaves' values (side_tree(numbers=True))

    def forward(self, batch: dict) -> torch.Tensor:
        trees = batch["trees"]
        hidden = self.encoder(trees)[0]  # (N, hidden) every node
        sides = hidden[trees.roots].view(-1, 2, hidden.shape[-1])  # (B, 2, hidden)
        return self.output(sides[:, 0], sides[:, 1])


class SequenceClassifier(LearnedClassifier):
    """A recurrent baseline over the pre-order tokens of each side; ``batch["tokens"]`` rows 2i and 2i+1."""

    input_kind = "tokens"
    reads_numbers = False

    def __init__(
        self, encoder: str, vocab_size: int, hidden_size: int, pad_id: int = 0, dropout: float = 0.0, **options
    ):
        super().__init__()
        self.encoder = SEQUENCE_ENCODERS.get(encoder)(vocab_size, hidden_size, pad_id=pad_id, **options)
        self.dropout = Dropout(dropout)  # on each side's encoding (the encoders have no dropout inside)
        self.output = DotProductOutput()

    def forward(self, batch: dict) -> torch.Tensor:
        encoded = self.dropout(self.encoder(batch["tokens"], batch["lengths"]))  # (2B, hidden)
        sides = encoded.view(-1, 2, encoded.shape[-1])  # (B, 2, hidden)
        return self.output(sides[:, 0], sides[:, 1])


class MajorityClassifier(nn.Module):
    """Always the training set's most frequent label (ties: true)."""

    input_kind = "none"
    reads_numbers = False
    trainable = False

    def __init__(self, majority_true: bool = True):
        super().__init__()
        self.register_buffer("logit", torch.tensor(10.0 if majority_true else -10.0))

    def fit(self, labels: list[bool]) -> None:
        self.logit.fill_(10.0 if 2 * sum(labels) >= len(labels) else -10.0)

    def forward(self, batch: dict) -> torch.Tensor:
        return self.logit.expand(batch["labels"].shape[0])


def _cell_options(cell: str, config: TreeCellConfig) -> dict:
    """The options a tree cell takes beyond its sizes, from the keys of its config class (``TreeRNNConfig`` has the
    activation, ``TreeLSTMConfig`` the dropout site and the leaf, the stack cells' classes the stack depth)."""
    cell_class, options = TREE_CELLS.get(cell), {}
    if cell_class.uses_stack:
        options["stack_depth"] = config.stack_depth
    if cell_class.takes_activation:
        options["activation"] = config.tree_activation
    if cell_class.takes_candidate_dropout and config.dropout_site == "candidate":
        options["candidate_dropout"] = config.dropout
    if cell_class.takes_leaf:
        options["leaf"] = config.tree_leaf
    return options


def _node_dropout(cell: str, config: TreeCellConfig) -> float:
    """The dropout on every node's output h: model.dropout unless the cell drops its candidate instead."""
    candidate = TREE_CELLS.get(cell).takes_candidate_dropout and config.dropout_site == "candidate"
    return 0.0 if candidate else config.dropout


def tree_classifier(config: TreeCellConfig, vocab) -> TreeClassifier:
    """The tree classifier of the cell ``config.name`` over the node vocabulary ``vocab``."""
    cell = config.name
    return TreeClassifier(cell, len(vocab), config.d_model, dropout=_node_dropout(cell, config),
                          number_encoder=config.number_encoder, **_cell_options(cell, config))


def sequence_classifier(config: ModelConfig, vocab) -> SequenceClassifier:
    """The classifier over pre-order tokens read by the encoder ``config.name``."""
    stack = {"stack_depth": config.stack_depth} if isinstance(config, StackRNNConfig) else {}
    return SequenceClassifier(config.name, len(vocab), config.d_model, pad_id=vocab.pad_id, dropout=config.dropout,
                              **stack)


def majority_classifier(config: ModelConfig, vocab) -> MajorityClassifier:
    return MajorityClassifier()


def build_classifier(config: ModelConfig, vocab) -> EquationClassifier:
    """The classifier ``config.name`` for a node vocabulary ``vocab`` (a ``neuromath.text.Vocabulary``)."""
    if config.kind not in CLASSIFIER_BUILT_KINDS:
        raise ConfigError(f"model {config.name!r} is not an equation classifier")
    return config.builder()(config, vocab)


# ------------------------------------------------------------------------------- encoding equations for the classifiers


def model_token(node: EquationNode, numbers: bool = False) -> str:
    """The token a classifier reads for a node: ``node.token``, or ``FLOAT_TOKEN`` for a Float leaf when the model
    reads numbers by value."""
    return FLOAT_TOKEN if numbers and node.func == "Float" and node.is_leaf else node.token


def reads_numbers(model: EquationClassifier) -> bool:
    return model.reads_numbers


def config_reads_numbers(config: ModelConfig) -> bool:
    """Whether the classifier ``config`` builds reads number leaves by value (a tree cell with number_encoder):
    its node vocabulary must then be built with ``numbers=True``."""
    return isinstance(config, TreeCellConfig) and config.number_encoder


def node_vocabulary(examples: Sequence[EquationExample], numbers: bool = False) -> Vocabulary:
    """Every node symbol of the training equations (operators and leaves) plus the four symbols (and
    ``FLOAT_TOKEN`` when the model reads numbers by value: then Floats have no token of their own)."""
    return Vocabulary.build(
        [[model_token(n, numbers) for n in preorder(e.tree) if n.func != "Equality"] for e in examples]
        + [list(SYMBOLS) + ([FLOAT_TOKEN] if numbers else [])]
    )


def side_tree(side: EquationNode, vocab: Vocabulary, numbers: bool = False) -> tuple:
    """A side as the tree engine's nested tuples: leaves carry vocabulary ids, internal nodes operator ids. With
    ``numbers`` a number leaf is ``(id, (), value)``: its token (``FLOAT_TOKEN`` for a Float) and its value."""
    built: list[tuple] = []  # a stack: post-order visits children before parents
    for node in postorder(side):
        if node.is_leaf:
            leaf_id = vocab.index.get(model_token(node, numbers), vocab.unk_id)
            if numbers and node.func in NUMBER_KINDS:
                built.append((leaf_id, (), leaf_float(node.func, node.value)))
            else:
                built.append((leaf_id, ()))
        else:
            children = tuple(built[-len(node.children):])
            del built[-len(node.children):]
            built.append((OPERATOR_IDS[node.func], children))
    return built[0]


class EncodedEquations(Dataset):
    """Each equation's two sides encoded once for a classifier reading ``input_kind``: ``trees`` (the tree engine's
    ``FlatTree``s; with ``numbers`` number leaves carry their values), ``tokens`` (pre-order id sequences) or
    ``none`` (the majority class reads only the labels)."""

    def __init__(self, examples: Sequence[EquationExample], vocab: Vocabulary, input_kind: str,
                 numbers: bool = False):
        if input_kind not in ("trees", "tokens", "none"):
            raise ValueError(f"input_kind must be trees, tokens or none, not {input_kind!r}")
        self.examples = list(examples)
        self.input_kind = input_kind
        encoded: dict[int, object] = {}  # side object -> its encoding: equations that share a side encode it once

        def encode(side: EquationNode):
            if id(side) not in encoded:
                if input_kind == "trees":
                    encoded[id(side)] = flatten_tree(side_tree(side, vocab, numbers))  # flat once, not per batch
                else:
                    encoded[id(side)] = (
                        vocab.encode([n.token for n in preorder(side)]) if input_kind == "tokens" else None
                    )
            return encoded[id(side)]

        self.items = [
            (encode(example.tree.children[0]), encode(example.tree.children[1]), float(bool(example.label)))
            for example in self.examples
        ]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int):
        return self.items[index]


def make_collate(input_kind: str):
    """The collate function for a classifier reading ``trees``, ``tokens`` or nothing (``none``)."""
    def collate(items) -> dict:
        lefts, rights, labels = zip(*items)
        batch = {"labels": torch.tensor(labels, dtype=torch.float)}  # (B,)
        sides = [side for pair in zip(lefts, rights) for side in pair]  # sides 2i (left) and 2i+1 (right)
        if input_kind == "trees":
            batch["trees"] = make_tree_batch(sides)
        elif input_kind == "tokens":
            batch["tokens"] = pad(sides)  # (2B, T)
            batch["lengths"] = torch.tensor([len(s) for s in sides], dtype=torch.long)  # (2B,)
        return batch

    return collate


def make_loader(dataset: EncodedEquations, batch_size: int, seed: int | None = None, shard: bool = False) -> DataLoader:
    """Batches of equations: shuffled each epoch with ``seed`` (training), in order otherwise; ``shard`` (validation
    during training) splits the in-order reading among the training processes (``models.batching.ShardSampler``)."""
    sampler = (EpochShuffleSampler(len(dataset), seed) if seed is not None
               else ShardSampler(len(dataset)) if shard else None)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, collate_fn=make_collate(dataset.input_kind))


@torch.no_grad()
def predict_logits(model: torch.nn.Module, examples: Sequence[EquationExample], vocab: Vocabulary,
                   batch_size: int = 512, precision: str = "32-true") -> torch.Tensor:
    """The verification logit of every equation, in order (labels are not needed), as float32; the forward passes
    run in ``precision`` (``neuromath.nn.precision``)."""
    was_training = model.training
    model.eval()
    loader = make_loader(EncodedEquations(examples, vocab, model.input_kind, reads_numbers(model)), batch_size)
    device = next(iter(model.buffers()), next(iter(model.parameters()), torch.empty(0))).device
    with autocast(precision, device):
        logits = (
            torch.cat([model(move_batch(batch, device)).float().cpu() for batch in loader]) if examples
            else torch.empty(0)
        )
    model.train(was_training)
    return logits


# ----------------------------------------------------------------------------------------------------- completion


def _root_states(encoder: TreeEncoder, trees: list[tuple], device) -> tuple[torch.Tensor, ...]:
    """The full state (h and, per cell, memory or stack) of each tree's root, one row per tree."""
    batch = make_tree_batch(trees).to(device)
    return tuple(part.index_select(0, batch.roots) for part in encoder(batch))


class CompletionScorer:
    """Scores every candidate filler of a blank: ``scorer(equation, path)`` is the verification logit of the
    equation with the subtree at ``path`` (child indices from the Equality root) replaced by each candidate, in the
    order of ``candidates``.

    For a tree classifier nothing is encoded twice: the candidates are encoded once for all blanks; for a blank,
    the other side and every subtree hanging off the blank's path are encoded once, and only the nodes on the path
    are computed for all candidates at once (one cell call per path node, the off-path child broadcast). That is the
    same arithmetic as encoding each filled equation whole (the tests hold them equal) at a fraction of the cost.
    Other classifiers (sequence baselines, majority) score the filled equations whole, ``batch_size`` at a time.
    """

    def __init__(self, model: torch.nn.Module, vocab: Vocabulary, candidates: Sequence[EquationNode],
                 batch_size: int = 512, precision: str = "32-true"):
        self.model, self.vocab, self.batch_size, self.precision = model, vocab, batch_size, precision
        self.candidates = list(candidates)
        if not self.candidates:
            raise ValueError("completion needs at least one candidate")
        self.device = next(iter(model.parameters()), torch.empty(0)).device
        self.path_wise = isinstance(model, TreeClassifier)
        if self.path_wise:  # candidates with the same encoding (the same tokens, or unknown ones) are computed once
            self.numbers = reads_numbers(model)
            encoded = [side_tree(c, vocab, self.numbers) for c in self.candidates]
            unique = {tree: row for row, tree in enumerate(dict.fromkeys(encoded))}
            self.candidate_rows = torch.tensor([unique[tree] for tree in encoded], device=self.device)
            with torch.no_grad(), autocast(precision, self.device):
                was_training = model.training
                model.eval()
                self.candidate_states = _root_states(model.encoder, list(unique), self.device)
                model.train(was_training)

    @torch.no_grad()
    def __call__(self, equation: EquationNode, path: tuple[int, ...]) -> torch.Tensor:
        ancestors = blank_ancestors(equation, path)  # (node, slot of the child on the path), top down; checks path
        if not self.path_wise:
            filled = [EquationExample(replace_path(equation, path, c), True) for c in self.candidates]
            return predict_logits(self.model, filled, self.vocab, self.batch_size, self.precision)
        with autocast(self.precision, self.device):
            return self.path_logits(equation, path, ancestors)

    def path_logits(self, equation: EquationNode, path: tuple[int, ...], ancestors: list) -> torch.Tensor:
        """The logits of a tree classifier: only the nodes on the blank's path are computed per candidate."""
        was_training = self.model.training
        self.model.eval()
        encoder = self.model.encoder
        siblings = [child for parent, slot in ancestors for i, child in enumerate(parent.children) if i != slot]
        other_side = equation.children[1 - path[0]]
        fixed = _root_states(
            encoder, [side_tree(t, self.vocab, self.numbers) for t in [other_side] + siblings], self.device
        )
        state = self.candidate_states
        n = state[0].shape[0]
        sibling_row = len(siblings)  # siblings are consumed from the deepest up: rows len(siblings) .. 1
        for parent, slot in reversed(ancestors):
            operator_id = OPERATOR_IDS[parent.func]
            if len(parent.children) == 1:
                left, right = state, encoder.cell.empty_state(n, like=state[0])
                has_right = state[0].new_zeros(n, 1)
            else:
                sibling = tuple(part[sibling_row: sibling_row + 1].expand(n, *part.shape[1:]) for part in fixed)
                sibling_row -= 1
                left, right = (state, sibling) if slot == 0 else (sibling, state)
                has_right = state[0].new_ones(n, 1)
            state = encoder.cell.node(
                torch.full((n,), operator_id, dtype=torch.long, device=self.device), [(operator_id, 0, n)],
                left, right, has_right,
            )
        filled_side, fixed_side = state[0], fixed[0][0:1].expand(n, -1)
        sides = (filled_side, fixed_side) if path[0] == 0 else (fixed_side, filled_side)
        self.model.train(was_training)
        return self.model.output(*sides).float().index_select(0, self.candidate_rows).cpu()
