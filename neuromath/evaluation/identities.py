"""Scores of the identities task: verification accuracy, precision and recall overall and by depth (the layout of
Tables 2 and 3 of Mali et al. 2021), the numeric-evaluation checker as a reference row, equation completion by
candidate ranking (top-k and mean reciprocal rank, Arabshahi et al. 2018 Sec. 5.3), and a plot of accuracy by depth.
"""

from __future__ import annotations

import json
import random
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Callable, Sequence

from neuromath.fileio import write_text_atomic
from neuromath.tasks.identities import (
    Candidate,
    EquationExample,
    numeric_check,
    path_to,
    preorder,
    replace_path,
    subtree_at,
)


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


def numeric_checker(examples: Sequence[EquationExample], seed: int = 0, points: int = 8) -> tuple[list[bool], int]:
    """The non-learned reference: an equation is called an identity when both sides agree at random points
    (identities.numeric_check). Returns the predictions and how many equations stayed undecided (called false)."""
    rng = random.Random(seed)
    predictions, undecided = [], 0
    for example in examples:
        verdict = numeric_check(example.tree, rng, points=points).verdict
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

    def combine(values: list) -> dict:
        values = [v for v in values if v is not None]
        if not values:
            return {"mean": None, "std": None}
        return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0}

    result = {key: combine([run[key] for run in runs]) for key in ("accuracy", "precision", "recall")}
    depths = sorted({d for run in runs for d in by_depth(run)})
    result["by_depth"] = {
        d: {key: combine([by_depth(run).get(d, {}).get(key) for run in runs])
            for key in ("accuracy", "precision", "recall")}
        for d in depths
    }
    result["n"] = runs[0]["n"] if runs else 0
    result["seeds"] = len(runs)
    return result


def mean_std_table(rows: dict[str, dict], measure: str = "accuracy") -> str:
    """Markdown like depth_table for mean_and_std results: cells are ``mean ± std`` in percent."""

    def cell(values: dict | None) -> str:
        if not values or values["mean"] is None:
            return ""
        return f"{100 * values['mean']:.1f} ± {100 * values['std']:.1f}"

    depths = sorted({d for metrics in rows.values() for d in by_depth(metrics)})
    lines = ["| model | seeds | overall | " + " | ".join(f"depth {d}" for d in depths) + " |",
             "|" + "---|" * (len(depths) + 3)]
    for name, metrics in rows.items():
        table = by_depth(metrics)
        cells = [cell(table.get(d, {}).get(measure)) for d in depths]
        lines.append(f"| {name} | {metrics['seeds']} | {cell(metrics[measure])} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_accuracy_by_depth(rows: dict[str, dict], path: str | Path, title: str = "Accuracy by depth") -> None:
    """A PNG line plot, one line per model (matplotlib's object API with the Agg canvas: no display needed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for name, metrics in rows.items():
        points = sorted((d, m["accuracy"]) for d, m in by_depth(metrics).items() if m["accuracy"] is not None)
        axes.plot([d for d, _ in points], [100 * a for _, a in points], marker="o", label=name)
    axes.set_xlabel("equation depth")
    axes.set_ylabel("accuracy (%)")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp")
    figure.savefig(temporary, format="png", dpi=120)
    temporary.replace(path)


# ------------------------------------------------------------------------------------------ completion


def _token_key(tree) -> tuple:
    return tuple(node.token for node in preorder(tree))


def true_class(example: EquationExample, candidates: Sequence[Candidate]) -> str | None:
    """The value class of the blanked subtree: the class of the candidate written as that subtree."""
    wanted = _token_key(subtree_at(example.tree, example.blank))
    for candidate in candidates:
        if _token_key(candidate.tree) == wanted:
            return candidate.value_class
    return None


def completion_metrics(
    examples: Sequence[EquationExample],
    candidates: Sequence[Candidate],
    score: Callable[[list[EquationExample]], Sequence[float]],
    ks: tuple[int, ...] = (1, 5),
) -> dict:
    """Fill each example's blank with every candidate, score the filled equations with ``score`` (higher = more
    likely an identity), and rank. A candidate is right when it is in the blank's true value class. Returns top-k
    accuracy and the mean reciprocal rank of the first right candidate, overall and by depth; blanks whose subtree
    is in no candidate class are counted apart (``no_class``)."""
    per_depth: dict[int, list[tuple[int, ...]]] = defaultdict(list)
    no_class = 0
    for example in examples:
        if example.blank is None:
            raise ValueError(f"{example.source}: the equation has no blank")
        wanted = true_class(example, candidates)
        if wanted is None:
            no_class += 1
            continue
        path = path_to(example.tree, example.blank)  # the filled equations share every subtree off this path
        filled = [EquationExample(replace_path(example.tree, path, c.tree), True) for c in candidates]
        scores = list(score(filled))
        order = sorted(range(len(candidates)), key=lambda i: -scores[i])
        rank = next(position for position, i in enumerate(order, 1) if candidates[i].value_class == wanted)
        per_depth[example.depth].append(rank)

    def summarise(ranks: list[int]) -> dict:
        result = {"n": len(ranks)}
        for k in ks:
            result[f"top{k}"] = sum(r <= k for r in ranks) / len(ranks) if ranks else None
        result["mrr"] = sum(1 / r for r in ranks) / len(ranks) if ranks else None
        return result

    everything = [r for ranks in per_depth.values() for r in ranks]
    metrics = summarise(everything)
    metrics["by_depth"] = {d: summarise(per_depth[d]) for d in sorted(per_depth)}
    metrics["no_class"] = no_class
    metrics["candidates"] = len(candidates)
    return metrics


def numeric_completion_score(seed: int = 0, points: int = 6) -> Callable[[list[EquationExample]], list[float]]:
    """A non-learned completion scorer: the share of random points where both sides agree (ties broken by order)."""

    def score(filled: list[EquationExample]) -> list[float]:
        rng = random.Random(seed)
        result = []
        for example in filled:
            check = numeric_check(example.tree, rng, points=points)
            result.append(check.agreeing / check.points if check.points else 0.0)
        return result

    return score


def completion_table(rows: dict[str, dict]) -> str:
    lines = ["| model | blanks | top-1 (%) | top-5 (%) | MRR |", "|---|---|---|---|---|"]
    for name, m in rows.items():
        mrr = "–" if m["mrr"] is None else f"{m['mrr']:.3f}"
        lines.append(f"| {name} | {m['n']} | {_percent(m.get('top1'))} | {_percent(m.get('top5'))} | {mrr} |")
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

