"""Per-module accuracy report for the Mathematics Dataset, in the form of Table 1 of Schlag et al. (2019), "Enhancing
the Transformer with Explicit Relational Reasoning" (TP-Transformer).

Table 1 of that paper gives, for each model, the mean accuracy over the modules of the
``interpolate`` test split, the same for ``extrapolate``, and how many modules are solved with
an accuracy above 95%. This module builds that summary, and the accuracy of every module, for
one or more runs side by side, and writes it as Markdown, CSV, JSON and a PNG bar chart.

No torch here: the input is the list of per-question records that evaluation produces, each a
dict with at least ``"split"``, ``"module"`` and ``"correct"``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from neuromath.extras import require
from neuromath.fileio import figure_text, save_figure, write_text_atomic

SPLIT_ORDER = ("interpolate", "extrapolate")
ABOVE_THRESHOLD = 0.95
MISSING_CELL = "n/a"
REQUIRED_FIELDS = ("split", "module", "correct")


def split_sort_key(split: str) -> tuple[int, str]:
    """Order splits as ``interpolate``, ``extrapolate``, then any other split alphabetically."""
    if split in SPLIT_ORDER:
        return SPLIT_ORDER.index(split), ""
    return len(SPLIT_ORDER), split


def build_report(runs: dict[str, list[dict]], meta: dict[str, dict] | None = None) -> dict:
    """Count the correct answers of every run per (split, module) and summarise each split.

    ``runs`` maps a run name to its records; the order of the dict is the column order of every
    table. ``meta`` optionally maps a run name to extra facts shown in the summary (for example
    ``{"parameters": 1234567, "steps": 5000}``).

    Returns a JSON-ready dict::

        {"runs": [name, ...],
         "modules": [{"split": s, "module": m, "n": {run: count}, "correct": {run: count},
                      "accuracy": {run: float | None}}, ...],
         "summary": {run: {"meta": {...},
                           split: {"mean_accuracy": float | None, "modules": int, "above_95": int,
                                   "correct": int, "n": int, "overall_accuracy": float | None}}}}

    ``modules`` is sorted by split (interpolate, extrapolate, then others alphabetically) and then
    by module name. ``mean_accuracy`` is the unweighted mean of the module accuracies of that
    split; ``overall_accuracy`` pools all questions of the split; ``above_95`` counts modules with
    accuracy strictly above 0.95. A module that one run lacks has ``n`` 0, ``correct`` 0 and
    ``accuracy`` None for that run and does not enter that run's mean; a split a run lacks
    entirely has ``mean_accuracy`` and ``overall_accuracy`` None and zero counts.

    Raises ``ValueError`` naming the run and the record index when a record is not a dict, lacks
    ``split``, ``module`` or ``correct``, has a split or module that is not a non-empty string,
    or a ``correct`` that is not a boolean (or 0/1).
    """
    if not isinstance(runs, dict):
        raise ValueError(f"runs must be a dict of run name -> records, got {type(runs).__name__}")
    meta = dict(meta or {})
    unknown = [name for name in meta if name not in runs]
    if unknown:
        raise ValueError(f"meta names runs that are not in the report: {unknown!r}")
    run_names = list(runs)
    for name in run_names:
        if not isinstance(name, str):
            raise ValueError(f"run names must be strings, got {name!r}")

    # (split, module) -> run -> [questions, correct answers]
    counts: dict[tuple[str, str], dict[str, list[int]]] = {}
    for run_name, records in runs.items():
        for index, record in enumerate(records):
            split, module, correct = _checked_fields(run_name, index, record)
            tally = counts.setdefault((split, module), {}).setdefault(run_name, [0, 0])
            tally[0] += 1
            tally[1] += int(correct)

    module_keys = sorted(counts, key=lambda key: (split_sort_key(key[0]), key[1]))
    modules = []
    for split, module in module_keys:
        per_run = counts[(split, module)]
        n_by_run = {name: per_run.get(name, [0, 0])[0] for name in run_names}
        correct_by_run = {name: per_run.get(name, [0, 0])[1] for name in run_names}
        accuracy_by_run = {
            name: (correct_by_run[name] / n_by_run[name] if n_by_run[name] else None) for name in run_names
        }
        modules.append({"split": split, "module": module, "n": n_by_run,
                        "correct": correct_by_run, "accuracy": accuracy_by_run})

    splits = sorted({split for split, _ in module_keys}, key=split_sort_key)
    summary = {}
    for name in run_names:
        run_summary: dict = {"meta": dict(meta.get(name, {}))}
        for split in splits:
            present = [row for row in modules if row["split"] == split and row["n"][name] > 0]
            accuracies = [row["accuracy"][name] for row in present]
            n_total = sum(row["n"][name] for row in present)
            correct_total = sum(row["correct"][name] for row in present)
            run_summary[split] = {
                "mean_accuracy": sum(accuracies) / len(accuracies) if accuracies else None,
                "modules": len(present),
                "above_95": sum(accuracy > ABOVE_THRESHOLD for accuracy in accuracies),
                "correct": correct_total,
                "n": n_total,
                "overall_accuracy": correct_total / n_total if n_total else None,
            }
        summary[name] = run_summary
    return {"runs": run_names, "modules": modules, "summary": summary}


def _checked_fields(run_name: str, index: int, record) -> tuple[str, str, bool]:
    """Return ``(split, module, correct)`` of one record, or raise ``ValueError`` saying what is wrong."""
    where = f"run {run_name!r}, record {index}"
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a dict, got {type(record).__name__}")
    missing = [field for field in REQUIRED_FIELDS if field not in record]
    if missing:
        raise ValueError(f"{where}: missing field(s) {', '.join(missing)}")
    split, module, correct = record["split"], record["module"], record["correct"]
    for field, value in (("split", split), ("module", module)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{where}: {field} must be a non-empty string, got {value!r}")
    if split == "meta":
        raise ValueError(f"{where}: a split may not be called 'meta' (that key holds the run's facts)")
    if not (isinstance(correct, bool) or (isinstance(correct, int) and correct in (0, 1))):
        raise ValueError(f"{where}: correct must be true or false, got {correct!r}")
    return split, module, bool(correct)


def report_splits(report: dict) -> list[str]:
    """The splits present in a report, in report order (interpolate, extrapolate, others)."""
    return sorted({row["split"] for row in report["modules"]}, key=split_sort_key)


def format_percent(fraction: float | None) -> str:
    """``0.9512`` -> ``"95.1"``; a missing value -> ``"n/a"``."""
    return MISSING_CELL if fraction is None else f"{100 * fraction:.1f}"


def format_difference(first: float | None, second: float | None) -> str:
    """First minus second accuracy in percentage points, signed: ``"+3.2"``, ``"-0.5"``; ``"n/a"`` if either is
    missing."""
    if first is None or second is None:
        return MISSING_CELL
    points = round(100 * (first - second), 1) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{points:+.1f}"


def format_meta_value(value) -> str:
    """Integers with thousands separators (``1,234,567``), floats in short form, anything else as text."""
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def markdown_cell(text) -> str:
    """Text made safe for one GitHub Markdown table cell: pipes escaped, line breaks flattened."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def markdown_table(header: list[str], alignments: list[str], rows: list[list[str]]) -> list[str]:
    """Lines of one GitHub Markdown table; ``alignments`` holds ``"left"`` or ``"right"`` per column."""
    separator = ["---:" if alignment == "right" else "---" for alignment in alignments]
    lines = ["| " + " | ".join(markdown_cell(cell) for cell in header) + " |",
             "| " + " | ".join(separator) + " |"]
    lines += ["| " + " | ".join(markdown_cell(cell) for cell in row) + " |" for row in rows]
    return lines


def common_count(counts: list[int]) -> str:
    """The question count of a module: one number when the runs that have it agree, else each run's count joined by
    ``" / "``."""
    present = [count for count in counts if count > 0]
    if present and all(count == present[0] for count in present):
        return str(present[0])
    return " / ".join(str(count) for count in counts)


def to_markdown(report: dict) -> str:
    """The report as GitHub Markdown: a Table-1 style summary and the accuracy of every module.

    The summary has one row per run: the run, any meta facts given, and for every split present
    the mean accuracy over modules (%) and the number of modules above 95% as ``"k / N"``, where N
    is the number of modules the run was evaluated on in that split. The module table has split,
    module, the question count and one accuracy column (%) per run; with exactly two runs a last
    column gives first minus second in percentage points.
    """
    run_names = report["runs"]
    splits = report_splits(report)
    summary = report["summary"]

    meta_keys: list[str] = []
    for name in run_names:
        for key in summary[name].get("meta", {}):
            if key not in meta_keys:
                meta_keys.append(key)

    header = ["run", *meta_keys]
    for split in splits:
        header += [f"{split} mean accuracy (%)", f"{split} modules > 95%"]
    summary_rows = []
    for name in run_names:
        run_meta = summary[name].get("meta", {})
        row = [name, *(format_meta_value(run_meta.get(key)) for key in meta_keys)]
        for split in splits:
            facts = summary[name][split]
            above = f"{facts['above_95']} / {facts['modules']}" if facts["modules"] else MISSING_CELL
            row += [format_percent(facts["mean_accuracy"]), above]
        summary_rows.append(row)
    summary_alignments = ["left"] + ["right"] * (len(header) - 1)

    module_header = ["split", "module", "n", *run_names]
    with_difference = len(run_names) == 2
    if with_difference:
        module_header.append(f"difference ({run_names[0]} - {run_names[1]}, points)")
    module_rows = []
    for row in report["modules"]:
        cells = [row["split"], row["module"], common_count([row["n"][name] for name in run_names])]
        cells += [format_percent(row["accuracy"][name]) for name in run_names]
        if with_difference:
            cells.append(format_difference(row["accuracy"][run_names[0]], row["accuracy"][run_names[1]]))
        module_rows.append(cells)
    module_alignments = ["left", "left"] + ["right"] * (len(module_header) - 2)

    lines = ["# Accuracy on the Mathematics Dataset", "",
             "## Summary", "",
             "Mean accuracy is the unweighted mean over the modules of a split; "
             "modules > 95% counts modules with accuracy strictly above 95%.", ""]
    lines += markdown_table(header, summary_alignments, summary_rows) if run_names else ["(no runs)"]
    lines += ["", "## Accuracy per module (%)", ""]
    lines += markdown_table(module_header, module_alignments, module_rows) if module_rows else ["(no records)"]
    return "\n".join(lines) + "\n"


def to_csv(report: dict) -> str:
    """One CSV row per (split, module): ``split,module,n,<run>_correct,<run>_accuracy,...``.

    ``n`` is the question count (each run's count joined by ``" / "`` when runs differ);
    accuracy is a fraction between 0 and 1. A run that lacks a module has empty cells there.
    """
    run_names = report["runs"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["split", "module", "n"]
    for name in run_names:
        header += [f"{name}_correct", f"{name}_accuracy"]
    writer.writerow(header)
    for row in report["modules"]:
        cells = [row["split"], row["module"], common_count([row["n"][name] for name in run_names])]
        for name in run_names:
            accuracy = row["accuracy"][name]
            cells += ["", ""] if accuracy is None else [row["correct"][name], repr(accuracy)]
        writer.writerow(cells)
    return buffer.getvalue()


def plot(report: dict, path) -> None:
    """Write a PNG bar chart of the accuracy of every module to ``path``.

    One panel per split, modules down the vertical axis (horizontal bars leave room for long
    module names), one bar per run side by side, accuracy 0-100% along the horizontal axis, the
    mean accuracy of each run in the panel title, a dashed line at 95% and one legend for the figure. The figure grows
    with the number of modules so labels do not overlap. Uses a private ``Figure`` with the Agg
    canvas, so no pyplot state is created or changed.
    """
    require("matplotlib", "the plot of the modules report")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    run_names = report["runs"]
    splits = report_splits(report)
    rows_by_split = {split: [row for row in report["modules"] if row["split"] == split] for split in splits}
    run_count = max(1, len(run_names))
    inches_per_module = 0.12 + 0.13 * run_count
    inches_per_panel = 1.0  # title, axis labels and ticks
    height = 1.0 + sum(inches_per_panel + inches_per_module * len(rows) for rows in rows_by_split.values())

    figure = Figure(figsize=(11, max(height, 3.0)), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    if not splits:
        axes = figure.add_subplot()
        axes.set_axis_off()
        axes.text(0.5, 0.5, "no records", ha="center", va="center")
    else:
        height_ratios = [inches_per_panel + inches_per_module * len(rows_by_split[split]) for split in splits]
        axes_grid = figure.subplots(len(splits), 1, squeeze=False, gridspec_kw={"height_ratios": height_ratios})
        bar_height = 0.8 / run_count
        for axes, split in zip(axes_grid[:, 0], splits):
            rows = rows_by_split[split]
            for run_index, name in enumerate(run_names):
                positions, widths = [], []
                for module_index, row in enumerate(rows):
                    if row["accuracy"][name] is not None:
                        positions.append(module_index - 0.4 + (run_index + 0.5) * bar_height)
                        widths.append(100 * row["accuracy"][name])
                axes.barh(positions, widths, height=bar_height, color=f"C{run_index % 10}")
            axes.set_yticks(range(len(rows)), [figure_text(row["module"]) for row in rows], fontsize=8)
            axes.set_ylim(len(rows) - 0.5, -0.5)  # first module at the top
            axes.set_xlim(0, 100)
            axes.set_xlabel("accuracy (%)")
            axes.grid(axis="x", alpha=0.3)
            axes.axvline(100 * ABOVE_THRESHOLD, color="0.4", linestyle="--", linewidth=0.8)  # the 95% line of Table 1
            axes.set_axisbelow(True)
            means = ", ".join(
                f"{name} {format_percent(report['summary'][name][split]['mean_accuracy'])}"
                + ("%" if report["summary"][name][split]["mean_accuracy"] is not None else "")
                for name in run_names
            )
            axes.set_title(figure_text(f"{split}: mean accuracy over {len(rows)} modules: {means}", 400), fontsize=10)
        handles = [Patch(color=f"C{index % 10}", label=figure_text(name)) for index, name in enumerate(run_names)]
        if handles:
            figure.legend(handles=handles, loc="outside upper center", ncols=min(len(handles), 4))

    save_figure(figure, path)


def write_report(report: dict, out_dir) -> dict[str, Path]:
    """Write ``report.md``, ``report.csv``, ``report.json`` and ``accuracy.png`` into ``out_dir`` (created if needed).

    Every file is written under a temporary name and renamed. Returns
    ``{"markdown": path, "csv": path, "json": path, "plot": path}``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "markdown": out_dir / "report.md",
        "csv": out_dir / "report.csv",
        "json": out_dir / "report.json",
        "plot": out_dir / "accuracy.png",
    }
    write_text_atomic(paths["markdown"], to_markdown(report))
    write_text_atomic(paths["csv"], to_csv(report))
    write_text_atomic(paths["json"], json.dumps(report, indent=2) + "\n")
    plot(report, paths["plot"])
    return paths
