"""Scores of the identities task: verification accuracy, precision and recall overall and by depth (the layout of
Tables 2 and 3 of Mali et al. 2021), the numeric-evaluation checker as a reference row, equation completion by
candidate ranking (top-k and mean reciprocal rank, Arabshahi et al. 2018 Sec. 5.3), and a plot of accuracy by depth.
"""

from __future__ import annotations

import json
import random
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from neuromath.evaluation.spread import mean_std, mean_std_cell
from neuromath.extras import require
from neuromath.fileio import figure_text, save_figure, write_text_atomic
from neuromath.tasks.identities import (
    Candidate,
    EquationExample,
    EquationNode,
    apply_to_arrays,
    blank_ancestors,
    evaluate_arrays,
    numeric_check,
    path_to,
    replace_path,
    subtree_at,
)
from neuromath.tasks.identities.blanks import (
    BLANK_KINDS,
    blank_kind,
    candidate_classes,
    right_rank,
    summarise_ranks,
    token_key,
)
from neuromath.tasks.identities.identity_labels import SympyJudge


def _scores(labels: list[bool], predictions: list[bool]) -> dict:
    true_positive = sum(1 for y, p in zip(labels, predictions) if y and p)
    predicted_positive = sum(predictions)
    positive = sum(labels)
    correct = sum(1 for y, p in zip(labels, predictions) if y == p)
    return {
        "n": len(labels),
        "accuracy": correct / len(labels) if labels else None,
        "precision": true_positive / predicted_positive if predicted_positive else None,
        "recall": true_positive / positive if positive else None,
        "true_share": positive / len(labels) if labels else None,
    }


def verification_metrics(examples: Sequence[EquationExample], predictions: Sequence[bool]) -> dict:
    """Accuracy, precision and recall (positive = identity) overall and for each depth."""
    if len(examples) != len(predictions):
        raise ValueError(f"{len(examples)} examples but {len(predictions)} predictions")
    labels = [bool(e.label) for e in examples]
    predicted = [bool(p) for p in predictions]
    by_depth: dict[int, tuple[list, list]] = defaultdict(lambda: ([], []))
    for example, label, prediction in zip(examples, labels, predicted):
        by_depth[example.depth][0].append(label)
        by_depth[example.depth][1].append(prediction)
    metrics = _scores(labels, predicted)
    metrics["by_depth"] = {depth: _scores(*by_depth[depth]) for depth in sorted(by_depth)}
    return metrics


def numeric_checker(examples: Sequence[EquationExample], seed: int = 0, points: int = 8,
                    time_limit: float = 2.0) -> tuple[list[bool], int]:
    """The non-learned reference: an equation is called an identity only when it is shown (identities.numeric_check
    with SymPy as its prover, at most ``time_limit`` seconds per equation in a worker process: a point may show the
    sides differ, only exact arithmetic or a proof shows them equal). Returns the predictions and how many
    equations stayed undecided (called false)."""
    rng = random.Random(seed)
    predictions, undecided = [], 0
    with SympyJudge(timeout=time_limit) as judge:  # its worker starts at the first equation that needs a proof
        for example in examples:
            verdict = numeric_check(example.tree, rng, points=points, prover=judge).verdict
            undecided += verdict is None
            predictions.append(verdict is True)
    return predictions, undecided


def _percent(value) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def by_depth(metrics: dict) -> dict[int, dict]:
    """``metrics["by_depth"]`` with integer keys (JSON turns them into strings)."""
    return {int(depth): values for depth, values in metrics["by_depth"].items()}


def depth_table(rows: dict[str, dict], measure: str = "accuracy") -> str:
    """Markdown: one row per model, one column per depth plus the overall figure (Tables 2/3 layout); the last
    row gives the number of equations."""
    depths = sorted({d for metrics in rows.values() for d in by_depth(metrics)})
    lines = ["| model | overall | " + " | ".join(f"depth {d}" for d in depths) + " |", "|" + "---|" * (len(depths) + 2)]
    counts: dict[int, int] = {}
    for name, metrics in rows.items():
        table = by_depth(metrics)
        for depth, values in table.items():
            counts.setdefault(depth, values["n"])
        cells = [_percent(table[d][measure]) if d in table else "" for d in depths]
        lines.append(f"| {name} | {_percent(metrics[measure])} | " + " | ".join(cells) + " |")
    total = next(iter(rows.values()))["n"] if rows else 0
    lines.append(f"| equations | {total} | " + " | ".join(str(counts[d]) for d in depths) + " |")
    return "\n".join(lines) + "\n"


def mean_and_std(runs: Sequence[dict]) -> dict:
    """Mean and standard deviation of accuracy / precision / recall, overall and by depth, over seeds."""
    result = {key: mean_std([run[key] for run in runs]) for key in ("accuracy", "precision", "recall")}
    depths = sorted({d for run in runs for d in by_depth(run)})
    result["by_depth"] = {
        d: {key: mean_std([by_depth(run).get(d, {}).get(key) for run in runs])
            for key in ("accuracy", "precision", "recall")}
        for d in depths
    }
    result["n"] = runs[0]["n"] if runs else 0
    result["seeds"] = len(runs)
    return result


def mean_std_table(rows: dict[str, dict], measure: str = "accuracy") -> str:
    """Markdown like depth_table for mean_and_std results: cells are ``mean ± std`` in percent."""
    depths = sorted({d for metrics in rows.values() for d in by_depth(metrics)})
    lines = ["| model | seeds | overall | " + " | ".join(f"depth {d}" for d in depths) + " |",
             "|" + "---|" * (len(depths) + 3)]
    for name, metrics in rows.items():
        table = by_depth(metrics)
        runs = metrics["seeds"]
        cells = [mean_std_cell(table.get(d, {}).get(measure), runs) for d in depths]
        lines.append(f"| {name} | {runs} | {mean_std_cell(metrics[measure], runs)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_accuracy_by_depth(rows: dict[str, dict], path: str | Path, title: str = "Accuracy by depth") -> None:
    """A PNG line plot, one line per model (matplotlib's object API with the Agg canvas: no display needed)."""
    require("matplotlib", "the plot of accuracy by depth")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for name, metrics in rows.items():
        points = sorted((d, m["accuracy"]) for d, m in by_depth(metrics).items() if m["accuracy"] is not None)
        axes.plot([d for d, _ in points], [100 * a for _, a in points], marker="o", label=figure_text(name))
    axes.set_xlabel("equation depth")
    axes.set_ylabel("accuracy (%)")
    axes.set_title(figure_text(title))
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    save_figure(figure, path, dpi=120)


# ------------------------------------------------------------------------------------------ completion


def true_class(example: EquationExample, candidates: Sequence[Candidate]) -> str | None:
    """The value class of the blanked subtree: the class of the candidate written as that subtree."""
    return candidate_classes(candidates).get(token_key(subtree_at(example.tree, example.blank)))


CompletionScore = Callable[[EquationNode, tuple[int, ...]], Sequence[float]]


def completion_metrics(
    examples: Sequence[EquationExample],
    candidates: Sequence[Candidate],
    score: CompletionScore,
    ks: tuple[int, ...] = (1, 5),
) -> dict:
    """Rank every candidate for each example's blank and score the ranking. ``score(equation, path)`` gives one
    score per candidate (higher = more likely an identity) for the equation with the subtree at ``path`` (child
    indices from the root) replaced by that candidate. A candidate is right when it is in the blank's true value
    class. Returns top-k accuracy and the mean reciprocal rank of the first right candidate, overall and by depth;
    blanks whose subtree is in no candidate class are counted apart (``no_class``)."""
    per_depth: dict[int, list[int]] = defaultdict(list)
    per_kind: dict[str, list[int]] = defaultdict(list)
    no_class = 0
    classes = candidate_classes(candidates)  # once, not once per blank (``true_class``)
    for example in examples:
        if example.blank is None:
            raise ValueError(f"{example.source}: the equation has no blank")
        wanted = classes.get(token_key(subtree_at(example.tree, example.blank)))
        if wanted is None:
            no_class += 1
            continue
        scores = np.asarray(score(example.tree, path_to(example.tree, example.blank)), dtype=float)
        if scores.shape != (len(candidates),):
            raise ValueError(f"the scorer gave {scores.size} scores for {len(candidates)} candidates")
        rank = right_rank(scores, candidates, wanted)
        per_depth[example.depth].append(rank)
        per_kind[blank_kind(subtree_at(example.tree, example.blank))].append(rank)

    everything = [r for ranks in per_depth.values() for r in ranks]
    metrics = summarise_ranks(everything, ks)
    metrics["by_depth"] = {d: summarise_ranks(per_depth[d], ks) for d in sorted(per_depth)}
    metrics["by_blank"] = {kind: summarise_ranks(per_kind[kind], ks) for kind in BLANK_KINDS if kind in per_kind}
    metrics["no_class"] = no_class
    metrics["candidates"] = len(candidates)
    return metrics


def blank_positions(examples: Sequence[EquationExample]) -> list[tuple[int, int]]:
    """Where each example sits in a depth-indexed file read whole (``read_equations``): its depth (the list it is in)
    and its index within that list."""
    seen: dict[int, int] = defaultdict(int)
    positions = []
    for example in examples:
        positions.append((example.depth, seen[example.depth]))
        seen[example.depth] += 1
    return positions


def write_completion_scores(
    path: str | Path, examples: Sequence[EquationExample], positions: Sequence[tuple[int, int]],
    score: CompletionScore,
) -> None:
    """Write every blank's scores as JSON lines, one per example with a blank, in order: ``{"depth": D, "index": I,
    "scores": [...]}``, one score per candidate in the candidates' order (the candidate file flattened group by
    group); ``score(equation, path)`` as for ``completion_metrics``. Every blank gets a line, also one whose subtree
    is in no candidate class."""
    lines = []
    for example, (depth, index) in zip(examples, positions):
        if example.blank is None:
            continue
        scores = np.asarray(score(example.tree, path_to(example.tree, example.blank)), dtype=float)
        lines.append(json.dumps({"depth": depth, "index": index, "scores": scores.tolist()}))
    write_text_atomic(path, "".join(line + "\n" for line in lines))


def fill_and_score(
    candidates: Sequence[Candidate], score_filled: Callable[[list[EquationExample]], Sequence[float]]
) -> CompletionScore:
    """A completion scorer from one that reads whole equations: each candidate is put in the blank (the filled
    equations share every subtree off the blank's path) and the filled equations are scored."""

    def score(equation: EquationNode, path: tuple[int, ...]) -> Sequence[float]:
        return score_filled([EquationExample(replace_path(equation, path, c.tree), True) for c in candidates])

    return score


def numeric_completion_score(
    candidates: Sequence[Candidate], seed: int = 0, points: int = 16, low: float = -3.0, high: float = 3.0,
    agree_tolerance: float = 1e-8,
) -> CompletionScore:
    """A non-learned completion scorer: the share of ``points`` random points at which both sides agree (within
    ``agree_tolerance`` relative to their size), among the points where both sides have a value.

    Every symbol takes the same ``points`` values for all blanks and candidates, so each candidate is evaluated
    once for the whole file, and for a blank only the nodes on its path are evaluated per candidate, all candidates
    at once in numpy (NaN marks a point outside an expression's domain, by ``evaluate``'s rules)."""
    symbol_values: dict[str, np.ndarray] = {}

    def values_of(name: str) -> np.ndarray:
        if name not in symbol_values:  # seeded by the name, so a symbol's points do not depend on visiting order
            rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
            symbol_values[name] = rng.uniform(low, high, points)
        return symbol_values[name]

    candidate_values = np.stack(
        [np.broadcast_to(evaluate_arrays(c.tree, values_of), (points,)) for c in candidates]
    )  # (C, points)

    def score(equation: EquationNode, path: tuple[int, ...]) -> list[float]:
        ancestors = blank_ancestors(equation, path)
        known: dict[int, np.ndarray] = {}  # the equation is alive while this runs, so its node ids are stable
        values = candidate_values
        for parent, slot in reversed(ancestors):
            args = [values if i == slot else evaluate_arrays(child, values_of, known)
                    for i, child in enumerate(parent.children)]
            values = apply_to_arrays(parent.func, args)
        other = np.broadcast_to(evaluate_arrays(equation.children[1 - path[0]], values_of, known), (points,))
        with np.errstate(invalid="ignore"):
            gap = np.abs(values - other) / np.maximum(1.0, np.maximum(np.abs(values), np.abs(other)))
        usable = np.isfinite(gap)
        agreeing = (usable & (gap <= agree_tolerance)).sum(axis=1)
        return (agreeing / np.maximum(usable.sum(axis=1), 1)).tolist()

    return score


def completion_table(rows: dict[str, dict]) -> str:
    """Top-1, top-5 and MRR per row; a time column when the rows carry ``seconds`` (scoring time)."""
    timed = any("seconds" in m for m in rows.values())
    lines = ["| model | blanks | top-1 (%) | top-5 (%) | MRR |" + (" time (s) |" if timed else ""),
             "|---|---|---|---|---|" + ("---|" if timed else "")]
    for name, m in rows.items():
        mrr = "–" if m["mrr"] is None else f"{m['mrr']:.3f}"
        line = f"| {name} | {m['n']} | {_percent(m.get('top1'))} | {_percent(m.get('top5'))} | {mrr} |"
        if timed:
            line += f" {m['seconds']:.1f} |" if "seconds" in m else " – |"
        lines.append(line)
    return "\n".join(lines) + "\n"


def completion_kind_table(rows: dict[str, dict]) -> str:
    """Top-1 / top-5 / MRR of every row by what the blank hides (``blank_kind``), one column per kind."""
    kinds = [kind for kind in BLANK_KINDS if any(kind in m.get("by_blank", {}) for m in rows.values())]
    counts = {kind: next(m["by_blank"][kind]["n"] for m in rows.values() if kind in m.get("by_blank", {}))
              for kind in kinds}
    lines = ["| model | " + " | ".join(f"{kind} ({counts[kind]}): top-1 / top-5 / MRR" for kind in kinds) + " |",
             "|---|" + "---|" * len(kinds)]
    for name, m in rows.items():
        cells = []
        for kind in kinds:
            part = m.get("by_blank", {}).get(kind)
            cells.append("–" if part is None else
                         f"{_percent(part['top1'])} / {_percent(part['top5'])} / {part['mrr']:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_verification_report(rows: dict[str, dict], out_dir: str | Path) -> None:
    """report.md (accuracy, precision and recall tables by depth), report.json and accuracy_by_depth.png."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = ["# Equation verification\n"]
    for measure in ("accuracy", "precision", "recall"):
        parts.append(f"\n## {measure.capitalize()} (%) by depth\n\n{depth_table(rows, measure)}")
    write_text_atomic(out_dir / "report.md", "".join(parts))
    write_text_atomic(out_dir / "report.json", json.dumps(rows, indent=2))
    plot_accuracy_by_depth(rows, out_dir / "accuracy_by_depth.png")

