"""Completion problems made from a verification file: each chosen true equation gets one blank, a node whose
subtree is written exactly as one of the candidates (so the blank has a value class to find), as the released
blank files have them. With blanks from a generated file's own test depths, completion can be measured on held-out
equations of the training distribution, beside the released blank file. No torch here."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from neuromath.expr.equation_tree import EquationNode, subtree_at
from neuromath.expr.tree import preorder
from neuromath.tasks.identities.equations import Candidate, EquationExample


def token_key(tree: EquationNode) -> tuple:
    """A tree as its pre-order tokens: two subtrees with the same key are written the same."""
    return tuple(node.token for node in preorder(tree))


def candidate_classes(candidates: Sequence[Candidate]) -> dict[tuple, str]:
    """The value class of each way a candidate is written (``token_key``); the first candidate wins a repeat."""
    classes: dict[tuple, str] = {}
    for candidate in candidates:
        classes.setdefault(token_key(candidate.tree), candidate.value_class)
    return classes


def right_rank(scores: Sequence[float], candidates: Sequence[Candidate], wanted: str) -> int:
    """The place (1 = first) of the first candidate of value class ``wanted`` when the candidates are ordered by
    ``scores``, highest first; ties keep the candidates' order."""
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    return next(place for place, i in enumerate(order.tolist(), 1) if candidates[i].value_class == wanted)


def summarise_ranks(ranks: Sequence[int], ks: tuple[int, ...] = (1, 5)) -> dict:
    """``n``, the share of ranks within each k (``top1``, ``top5``) and the mean reciprocal rank (``mrr``); None
    for no rank."""
    result: dict = {"n": len(ranks)}
    for k in ks:
        result[f"top{k}"] = sum(r <= k for r in ranks) / len(ranks) if ranks else None
    result["mrr"] = sum(1 / r for r in ranks) / len(ranks) if ranks else None
    return result


BLANK_KINDS = ("symbol", "number", "expression")  # what a blank hides, in the order reports list them


def blank_kind(subtree: EquationNode) -> str:
    """What a blank hides: a ``symbol`` (var_K), a ``number`` (any other leaf: integers, fractions, pi) or an
    ``expression`` (an operator with its operands). Completion is reported per kind, since a blank that hides a
    variable has few right values among the candidates and one that hides an expression many."""
    if not subtree.is_leaf:
        return "expression"
    return "symbol" if subtree.func == "Symbol" else "number"


@dataclass
class BlankReport:
    """What ``make_blanks`` read and wrote: equations by reason left out, blanks by what they hide."""

    read: int = 0
    not_true: int = 0
    other_depth: int = 0
    no_candidate_node: int = 0
    eligible: int = 0
    kinds: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        written = sum(self.kinds.values())
        hidden = ", ".join(f"{kind} {self.kinds[kind]}" for kind in BLANK_KINDS)
        return (f"{written} blanks ({hidden}) from {self.eligible} eligible equations; read {self.read}, left out "
                f"{self.not_true} not labelled true, {self.other_depth} of other depths, {self.no_candidate_node} "
                f"with no node written as a candidate")


def make_blanks(
    examples: Sequence[EquationExample],
    candidates: Sequence[Candidate],
    n: int,
    rng: random.Random,
    depths: set[int] | None = None,
) -> tuple[list[EquationExample], BlankReport]:
    """Up to ``n`` completion problems: true equations (of ``depths``, all when None) drawn without replacement,
    each with one blank drawn uniformly among its nodes below the root whose subtree is written as a candidate.
    The blank is a pre-order node number, the equation keeps its source. Raises ValueError when no equation is
    eligible."""
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n}")
    wanted = candidate_classes(candidates)
    report, eligible = BlankReport(read=len(examples)), []
    for example in examples:
        if example.label is not True:
            report.not_true += 1
        elif depths is not None and example.depth not in depths:
            report.other_depth += 1
        else:
            nodes = [number for number, node in enumerate(preorder(example.tree))
                     if number and token_key(node) in wanted]
            if nodes:
                eligible.append((example, nodes))
            else:
                report.no_candidate_node += 1
    report.eligible = len(eligible)
    if not eligible:
        raise ValueError("no true equation has a node written as a candidate" +
                         (f" at depths {sorted(depths)}" if depths is not None else ""))
    chosen = rng.sample(range(len(eligible)), min(n, len(eligible)))
    blanks = []
    for index in sorted(chosen):  # the file's order, so the output reads like its source
        example, nodes = eligible[index]
        blank = rng.choice(nodes)
        blanks.append(EquationExample(example.tree, True, blank, example.source))
        report.kinds[blank_kind(subtree_at(example.tree, blank))] += 1
    return blanks, report
