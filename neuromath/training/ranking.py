"""Completion as a training signal for tree classifiers (``train.rank_weight``).

Verification training labels each equation alone: a false equation is one wrong filler in one context. Completion
asks more: among all candidates for one blank, the right filler must score highest. A classifier trained on
verification alone gives probability above 0.99 to absurd fillers in many contexts
(docs/results/identities.md), since nothing in its loss compares two fillers of the same blank.

``CompletionRanking`` adds that comparison. Each training step draws ``rank_groups`` true training equations, blanks
one node written as a candidate in each (as ``neuromath generate blanks`` does) and builds a group: the true
equation first, then ``rank_negatives`` equations with a candidate of another value class in the blank. Of those,
``rank_hard`` are the fillers the model itself ranks highest right now (scored path-wise by ``CompletionScorer``,
without gradient), the rest are drawn uniformly. The loss is the cross-entropy of the group's logits with the true
equation as the target (a softmax over the group), weighted by ``rank_weight`` and added to the verification loss.

Such a run is selected on completion, not verification: each validation scores ``VALID_BLANKS`` blanks made from the
validation file's true equations (seeded, fixed for the run) against every candidate, logs ``val_completion`` (top-1)
and ``val_completion_mrr``, and the mean reciprocal rank picks the best epoch and drives the plateau schedule.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any, Sequence

import torch
import torch.nn.functional as F

from neuromath.errors import ConfigError
from neuromath.expr.equation_tree import path_to, replace_path, subtree_at
from neuromath.expr.tree import preorder
from neuromath.models.batching import move_batch
from neuromath.models.classifiers import CompletionScorer, make_collate, side_tree
from neuromath.tasks import Completion
from neuromath.text import Vocabulary

VALID_BLANKS = 500  # validation blanks scored per validation (`complete` ranks 500 generated ones in 3-6 s, one thread)


class CompletionRanking:
    """Draws completion groups from the true training equations and scores them (see the module docstring)."""

    def __init__(self, completion: Completion, examples: Sequence[Any], candidates: Sequence[Any],
                 vocab: Vocabulary, groups: int, negatives: int, hard: int, seed: int = 0, numbers: bool = False,
                 valid: Sequence[Any] = ()):
        """``completion``: the task's (``EquationTask.completion``); ``examples`` and ``valid``: its equations,
        ``candidates``: its fillers (``completion.read_candidates``)."""
        self.completion = completion
        self.candidates = list(candidates)
        self.classes = completion.candidate_classes(self.candidates)
        if len(set(self.classes.values())) < 2:
            raise ConfigError("completion ranking needs candidates of at least two value classes")
        self.vocab, self.numbers = vocab, numbers
        self.groups, self.negatives, self.hard = groups, negatives, hard
        self.rng = random.Random(seed)
        self.eligible = []  # (example, pre-order numbers of the nodes below the root written as a candidate)
        for example in examples:
            if example.label is True:
                nodes = [n for n, node in enumerate(preorder(example.tree))
                         if n and completion.token_key(node) in self.classes]
                if nodes:
                    self.eligible.append((example, nodes))
        if not self.eligible:
            raise ConfigError("completion ranking: no true training equation has a node written as a candidate")
        self.collate = make_collate("trees")
        self.valid_blanks: list = []
        if valid:
            try:
                self.valid_blanks, _ = completion.make_blanks(valid, self.candidates, VALID_BLANKS, random.Random(seed))
            except ValueError:
                raise ConfigError("completion ranking: no true validation equation has a node written as a "
                                  "candidate, so completion cannot select the run") from None

    def validate(self, model: torch.nn.Module) -> dict:
        """Completion of ``model`` on the validation blanks: n, top1, top5 and mrr, each blank ranked as
        ``neuromath.evaluation.verification.completion_metrics`` ranks it (``right_rank``)."""
        scorer, completion = CompletionScorer(model, self.vocab, [c.tree for c in self.candidates]), self.completion
        return completion.summarise_ranks([
            completion.right_rank(scorer(e.tree, path_to(e.tree, e.blank)).float(), self.candidates,
                                  self.classes[completion.token_key(subtree_at(e.tree, e.blank))])
            for e in self.valid_blanks
        ])

    def draw(self, model: torch.nn.Module) -> list[tuple[Any, tuple[int, ...], list[int]]]:
        """``groups`` draws of (true equation, path of its blank, indices of the wrong candidates to put there): the
        ``hard`` wrong candidates ``model`` scores highest, best first, then uniformly drawn ones."""
        scorer = CompletionScorer(model, self.vocab, [c.tree for c in self.candidates]) if self.hard else None
        drawn = []
        for example, nodes in self.rng.sample(self.eligible, min(self.groups, len(self.eligible))):
            blank = self.rng.choice(nodes)
            path = path_to(example.tree, blank)
            wanted = self.classes[self.completion.token_key(subtree_at(example.tree, blank))]
            wrong = [i for i, c in enumerate(self.candidates) if c.value_class != wanted]
            chosen: list[int] = []
            if scorer is not None:
                scores = scorer(example.tree, path)
                chosen = sorted(wrong, key=lambda i: -float(scores[i]))[: self.hard]
            taken = set(chosen)
            rest = [i for i in wrong if i not in taken]
            chosen += self.rng.sample(rest, min(self.negatives - len(chosen), len(rest)))
            drawn.append((example, path, chosen))
        return drawn

    def group(self, example: Any, path: tuple[int, ...], chosen: list[int]) -> list[Any]:
        """The true equation, then one equation per chosen wrong candidate put in the blank at ``path``, labelled
        false."""
        return [example] + [
            dataclasses.replace(example, tree=replace_path(example.tree, path, self.candidates[i].tree), label=False)
            for i in chosen
        ]

    def loss(self, model: torch.nn.Module, device) -> torch.Tensor:
        """The mean over this step's groups of the softmax cross-entropy with the true equation as target."""
        groups = [self.group(*drawn) for drawn in self.draw(model)]
        size = min(len(group) for group in groups)
        groups = [group[:size] for group in groups]  # equal sizes (a small candidate file may have few wrong ones)
        items = [
            (side_tree(e.tree.children[0], self.vocab, self.numbers),
             side_tree(e.tree.children[1], self.vocab, self.numbers), float(bool(e.label)))
            for group in groups for e in group
        ]
        logits = model(move_batch(self.collate(items), device)).view(len(groups), size)
        return F.cross_entropy(logits.float(), torch.zeros(len(groups), dtype=torch.long, device=logits.device))
