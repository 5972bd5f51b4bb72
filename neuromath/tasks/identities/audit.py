"""An audit of an identities data set: how its false equations relate to its true ones, which symbols
occur at which depth for each label, and how far classifiers that never see the tree's structure get (a difficulty
floor). ``generate identities`` writes it into ``FILE.stats.md`` (``audit_report`` takes any train / valid /
test lists of examples).

What is measured
    - **Edits**: the kind of each false equation's edit when the file records it (key ``edit`` of generated
      records), and, for every false equation, whether a true equation of the same file is exactly one local edit
      away: both trees are equal except for the subtree at one position (the edits of both generator styles replace
      one subtree). Found by hashing each tree's pre-order tokens with one subtree cut out, per position.
    - **Symbols by depth**: the share of nodes in each token class (operators, functions, symbols, numbers) among
      true and among false equations of each depth: a class whose share differs between the labels is a cue.
    - **Baselines** that read no structure, fitted on the training split, selected on the validation split (best
      of a fixed number of full-batch Adam steps), scored on the test split:
      ``depth only`` (the training majority label of each depth), ``bag of symbols`` (how often each token occurs
      in the equation), ``side difference`` (for each token, how many more times it occurs on one side than the
      other), each as a logistic regression and as a one-hidden-layer network of 64 units.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass

import numpy as np

from neuromath.expr.tree import preorder
from neuromath.tasks.identities.equations import EquationExample

TOKEN_CLASSES = {
    "Add": "Add", "Mul": "Mul", "Pow": "Pow",
    **{name: "trig" for name in ("sin", "cos", "tan", "cot", "sec", "csc")},
    **{name: "inverse trig" for name in ("asin", "acos", "atan", "acot", "asec", "acsc")},
    "exp": "exp/log", "log": "exp/log",
}
CLASS_ORDER = ("Add", "Mul", "Pow", "trig", "inverse trig", "exp/log", "symbol", "number")


def token_class(func: str) -> str:
    if func in TOKEN_CLASSES:
        return TOKEN_CLASSES[func]
    return "symbol" if func == "Symbol" else "number"


# ---------------------------------------------------------------------------------------------- edits


def _tokens(example: EquationExample) -> tuple[list[str], list[int]]:
    """Pre-order tokens of the tree (function name and leaf value) and the size of each node's subtree."""
    nodes = list(preorder(example.tree))
    tokens = [f"{node.func}:{node.value}" if node.is_leaf else node.func for node in nodes]
    sizes = [0] * len(nodes)
    index_of = {id(node): index for index, node in enumerate(nodes)}
    for index in range(len(nodes) - 1, -1, -1):
        sizes[index] = 1 + sum(sizes[index_of[id(child)]] for child in nodes[index].children)
    return tokens, sizes


def _contexts(example: EquationExample) -> set[tuple[int, int]]:
    """For each non-root position: (pre-order index, hash of the tokens with that subtree cut out). Two trees with
    a common context are equal except for the subtree at that position (up to hash collisions)."""
    tokens, sizes = _tokens(example)
    found = set()
    for index in range(1, len(tokens)):
        found.add((index, hash((tuple(tokens[:index]), tuple(tokens[index + sizes[index]:])))))
    return found


def _levels(example: EquationExample) -> list[int]:
    """How far below the root each pre-order node lies (the Equality root 0, the two sides' roots 1)."""
    levels, stack = [], [(example.tree, 0)]
    while stack:  # the order of preorder(), without recursion
        node, level = stack.pop()
        levels.append(level)
        stack.extend((child, level + 1) for child in reversed(node.children))
    return levels


def edit_levels(examples: list[EquationExample]) -> list[int | None]:
    """For each false equation, how far below the root its edit lies: the deepest position at which a true equation
    of ``examples`` equals it but for the subtree there (a context shared at position p is shared at each of p's
    ancestors too, so the deepest one is where the edit is); None for true and unlabelled equations and for a false
    one that no true equation is one edit away from. Level 1 is a whole side, so a larger level is an edit that
    must travel through more nodes to reach the comparison of the two sides."""
    known = set()
    for example in examples:
        if example.label is True:
            known.update(_contexts(example))
    found: list[int | None] = []
    for example in examples:
        if example.label is not False:
            found.append(None)
            continue
        shared = [index for index, _ in _contexts(example) & known]
        if shared:
            levels = _levels(example)  # once per equation, not once per shared position
            found.append(max(levels[index] for index in shared))
        else:
            found.append(None)
    return found


EDIT_LEVEL_BUCKETS = ("1", "2", "3", "4", "5", "6+")  # the rows of ``accuracy_by_edit_level`` (6 and deeper share one)


def edit_bucket(level: int) -> str:
    return EDIT_LEVEL_BUCKETS[min(level, len(EDIT_LEVEL_BUCKETS)) - 1]


def accuracy_by_edit_level(examples: list[EquationExample], levels: list[int | None],
                           predicted_true: list[bool]) -> dict:
    """How often a classifier calls the false equations false, by how deep their edit lies (``edit_levels``), beside
    how often it calls the true ones true (a classifier that calls everything false would otherwise look perfect):
    ``{"true": (right, n), "false": {bucket: (right, n)}, "false_without_edit": n}``; buckets with no equation are
    left out."""
    if not len(examples) == len(levels) == len(predicted_true):
        raise ValueError(f"{len(examples)} examples, {len(levels)} levels, {len(predicted_true)} predictions")
    true_right = sum(said for example, said in zip(examples, predicted_true) if example.label is True)
    true_n = sum(example.label is True for example in examples)
    false: dict[str, list[int]] = {}
    without = 0
    for example, level, said in zip(examples, levels, predicted_true):
        if example.label is not False:
            continue
        if level is None:
            without += 1
            continue
        cell = false.setdefault(edit_bucket(level), [0, 0])
        cell[0] += not said
        cell[1] += 1
    ordered = {bucket: tuple(false[bucket]) for bucket in EDIT_LEVEL_BUCKETS if bucket in false}
    return {"true": (true_right, true_n), "false": ordered, "false_without_edit": without}


def one_edit_share(false: list[EquationExample], true: list[EquationExample]) -> float:
    """The share of ``false`` equations that some equation of ``true`` turns into by replacing one subtree."""
    if not false:
        return float("nan")
    known = set()
    for example in true:
        known.update(_contexts(example))
    return sum(bool(_contexts(example) & known) for example in false) / len(false)


# ---------------------------------------------------------------------------------------------- baselines


def bag(example: EquationExample, mode: str) -> collections.Counter:
    """Token counts of the whole equation (``bag``) or, per token, |count on the left - count on the right|
    (``difference``)."""
    counts: collections.Counter = collections.Counter()
    left, right = example.tree.children
    for sign, side in ((1, left), (-1, right)):
        for node in preorder(side):
            counts[node.token] += 1 if mode == "bag" else sign
    if mode == "difference":
        counts = collections.Counter({token: abs(value) for token, value in counts.items() if value})
    return counts


@dataclass
class BaselineScore:
    name: str
    valid: float
    test: float
    test_by_depth: dict[int, float]


def _accuracy_by_depth(correct: list[bool], examples: list[EquationExample]) -> dict[int, float]:
    by_depth: dict[int, list[bool]] = {}
    for hit, example in zip(correct, examples):
        by_depth.setdefault(example.depth, []).append(hit)
    return {depth: sum(hits) / len(hits) for depth, hits in sorted(by_depth.items())}


def depth_only(train, valid, test) -> BaselineScore:
    votes: dict[int, list[int]] = {}
    for example in train:
        votes.setdefault(example.depth, [0, 0])[bool(example.label)] += 1
    overall = sum(bool(example.label) for example in train) * 2 >= len(train)

    def predict(example):
        counts = votes.get(example.depth)
        return overall if counts is None or counts[0] == counts[1] else counts[1] > counts[0]

    def hits(examples):
        return [predict(example) == example.label for example in examples]

    test_hits = hits(test)
    return BaselineScore("depth only", _mean(hits(valid)), _mean(test_hits), _accuracy_by_depth(test_hits, test))


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else float("nan")


def bag_baseline(train, valid, test, mode: str, hidden: int, steps: int = 400, seed: int = 0) -> BaselineScore:
    """A logistic regression (``hidden`` 0) or a one-hidden-layer ReLU network on log(1 + count) features of
    ``bag``, trained by full-batch Adam (learning rate 0.01, weight decay 1e-4) in numpy (tasks hold no torch); the
    step with the best validation accuracy (checked every 20 steps) is scored on test."""
    vocabulary: dict[str, int] = {}
    for example in train:
        for token in bag(example, mode):
            vocabulary.setdefault(token, len(vocabulary))

    def features(examples) -> tuple[np.ndarray, np.ndarray]:
        matrix = np.zeros((len(examples), len(vocabulary)))
        for row, example in enumerate(examples):
            for token, count in bag(example, mode).items():
                if token in vocabulary:
                    matrix[row, vocabulary[token]] = math.log1p(count)
        return matrix, np.array([float(bool(example.label)) for example in examples])

    rng = np.random.default_rng(seed)
    sizes = [len(vocabulary), hidden, 1] if hidden else [len(vocabulary), 1]
    params = []  # weight, bias per layer, initialised as torch.nn.Linear does: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        bound = 1 / math.sqrt(max(fan_in, 1))
        params += [rng.uniform(-bound, bound, (fan_in, fan_out)), rng.uniform(-bound, bound, fan_out)]

    def logits(x: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        if not hidden:
            return x @ params[0] + params[1], None
        inner = np.maximum(x @ params[0] + params[1], 0)
        return inner @ params[2] + params[3], inner

    (x_train, y_train), (x_valid, y_valid), (x_test, y_test) = (features(part) for part in (train, valid, test))
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    best = (-1.0, [])
    for step in range(1, steps + 1):
        out, inner = logits(x_train)
        error = (1 / (1 + np.exp(-out)) - y_train[:, None]) / len(y_train)  # d(mean BCE with logits) / d logit
        if hidden:
            back = (error @ params[2].T) * (inner > 0)
            grads = [x_train.T @ back, back.sum(0), inner.T @ error, error.sum(0)]
        else:
            grads = [x_train.T @ error, error.sum(0)]
        for index, (param, grad) in enumerate(zip(params, grads)):
            grad = grad + 1e-4 * param
            first, second = moments[index]
            first = 0.9 * first + 0.1 * grad
            second = 0.999 * second + 0.001 * grad**2
            moments[index] = (first, second)
            param -= 0.01 * (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
        if step % 20 == 0:
            valid_accuracy = float(((logits(x_valid)[0][:, 0] > 0) == (y_valid > 0.5)).mean())
            if valid_accuracy > best[0]:
                best = (valid_accuracy, list((logits(x_test)[0][:, 0] > 0) == (y_test > 0.5)))
    test_hits = [bool(hit) for hit in best[1]]
    name = f"{'bag of symbols' if mode == 'bag' else 'side difference'}, {'network' if hidden else 'linear'}"
    return BaselineScore(name, best[0], _mean(test_hits), _accuracy_by_depth(test_hits, test))


# ---------------------------------------------------------------------------------------------- report


def _percent(value: float) -> str:
    return "-" if value != value else f"{100 * value:.1f}"


def audit_report(
    train: list[EquationExample], valid: list[EquationExample], test: list[EquationExample], *, baselines: bool = True
) -> str:
    """The audit (module docstring) as Markdown."""
    everything = train + valid + test
    false = [example for example in everything if example.label is False]
    true = [example for example in everything if example.label is True]
    lines = ["## Audit", "", "### How the false equations were made", ""]
    kinds = collections.Counter(str(example.extra.get("edit", "not recorded")) for example in false)
    lines += ["| edit | false equations | share |", "| --- | ---: | ---: |"]
    for kind, count in kinds.most_common():
        lines.append(f"| {kind} | {count} | {_percent(count / len(false))} |")
    share = one_edit_share(false, true)
    lines += [
        "",
        f"False equations with a true equation of this data set exactly one local edit away (equal but for the "
        f"subtree at one position): {_percent(share)}% of {len(false)}.",
        "",
        "### Token classes by depth (share of nodes, % true / % false)",
        "",
        "| depth | " + " | ".join(CLASS_ORDER) + " | nodes per equation (true / false) |",
        "| ---: | " + " | ".join("---:" for _ in CLASS_ORDER) + " | ---: |",
    ]
    by_depth: dict[int, dict[bool, collections.Counter]] = {}
    equations: dict[int, dict[bool, int]] = {}
    for example in everything:
        counter = by_depth.setdefault(example.depth, {True: collections.Counter(), False: collections.Counter()})
        label = bool(example.label)
        equations.setdefault(example.depth, {True: 0, False: 0})[label] += 1
        for node in preorder(example.tree):
            if node.func != "Equality":
                counter[label][token_class(node.func)] += 1
    for depth in sorted(by_depth):
        cells = []
        for name in CLASS_ORDER:
            shares = []
            for label in (True, False):
                total = sum(by_depth[depth][label].values())
                shares.append(_percent(by_depth[depth][label][name] / total) if total else "-")
            cells.append(" / ".join(shares))
        sizes = [
            f"{sum(by_depth[depth][label].values()) / equations[depth][label]:.1f}" if equations[depth][label] else "-"
            for label in (True, False)
        ]
        lines.append(f"| {depth} | " + " | ".join(cells) + f" | {' / '.join(sizes)} |")
    if baselines and not (train and valid and test):
        empty = ", ".join(name for name, part in (("train", train), ("valid", valid), ("test", test)) if not part)
        lines += ["", f"No baselines: the {empty} split is empty."]
    elif baselines:
        scores = [depth_only(train, valid, test)]
        for mode in ("bag", "difference"):
            for hidden in (0, 64):
                scores.append(bag_baseline(train, valid, test, mode, hidden))
        depths = sorted({example.depth for example in test})
        lines += [
            "",
            "### Baselines that read no structure (accuracy %; fitted on train, selected on valid)",
            "",
            "| baseline | valid | test | " + " | ".join(f"depth {depth}" for depth in depths) + " |",
            "| --- | ---: | ---: | " + " | ".join("---:" for _ in depths) + " |",
        ]
        for score in scores:
            lines.append(
                f"| {score.name} | {_percent(score.valid)} | {_percent(score.test)} | "
                + " | ".join(_percent(score.test_by_depth.get(depth, float("nan"))) for depth in depths)
                + " |"
            )
        best = max(scores, key=lambda score: score.valid)
        lines += [
            "",
            f"Best of them on validation: {best.name}, {_percent(best.valid)}% valid, {_percent(best.test)}% test. "
            "A classifier that reads the tree must beat this floor to show that it uses the structure.",
        ]
    return "\n".join(lines) + "\n"
