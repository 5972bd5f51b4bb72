"""The reports of ``neuromath cv`` (``neuromath.experiments.cross_validation``): the table rows of a fold (its run's
test scores, or its refit's), the report dict of a cross-validation (every fold and the mean ± sample standard
deviation over folds, written as ``OUT/report.json``), the rows and report dict of a vote of seeds
(``cv --seeds N``), and both reports as Markdown (``OUT/report.md``). Nothing here runs a fold or writes a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from neuromath.config import Config
from neuromath.evaluation.bleu import (
    bleu_definition_of,
    bleu_label,
    bleu_scores,
    common_definition,
)
from neuromath.evaluation.spread import mean_std


def fold_row(name: str, train_path: Path, test_path: Path, summary: dict, reused: bool) -> dict:
    test = summary["test"]
    return {
        "fold": name,
        "run_dir": summary.get("run_dir"),
        "train_file": str(train_path),
        "test_file": str(test_path),
        "train_examples": summary.get("train_examples"),
        "valid_examples": summary.get("valid_examples"),
        "test_examples": test["n"],
        "value_accuracy": test["value_accuracy"],
        "equation_accuracy": test["equation_accuracy"],
        # corpus BLEU (0-100) of the predicted equations; None in the summary of a fold run before it was measured
        "bleu": test.get("bleu"),
        "bleu_definition": bleu_definition_of(test),
        # the test fold's source tokens (and examples with any) unknown to the run's vocabulary; None in the summary
        # of a fold run before they were measured
        "unknown_token_rate": test.get("unknown_token_rate"),
        "unknown_example_rate": test.get("unknown_example_rate"),
        "best_val_value_accuracy": summary.get("best_val_value_accuracy"),
        "epochs": summary.get("epochs"),
        "wall_seconds": summary.get("wall_seconds"),
        "reused": reused,
    }


def refit_row(row: dict, refit: dict, reused: bool) -> dict:
    """A fold's row with the refit's test scores in place of the selection run's (whose best validation score and
    epochs stay); the seconds are both runs'."""
    test = refit["test"]
    selection_seconds = row["wall_seconds"] or 0.0
    return {
        **row,
        "run_dir": refit.get("run_dir"),
        "train_examples": refit.get("train_examples"),
        "value_accuracy": test["value_accuracy"],
        "equation_accuracy": test["equation_accuracy"],
        "bleu": test.get("bleu"),
        "bleu_definition": bleu_definition_of(test),
        "unknown_token_rate": test.get("unknown_token_rate"),
        "unknown_example_rate": test.get("unknown_example_rate"),
        "refit_epochs": refit.get("epochs"),
        "selection_value_accuracy": row["value_accuracy"],
        "wall_seconds": selection_seconds + (refit.get("wall_seconds") or 0.0),
        "reused": row["reused"] and reused,
    }


def cross_validation_report(config: Config, rows: Sequence[dict], out_dir: Path, refit: bool) -> dict:
    """The report of ``run_cross_validation`` from its fold rows, but for the seconds of this invocation
    (``elapsed_seconds``, which the caller adds)."""
    report = {"model": config.model.name, "task": config.data.task, "k": len(rows), "out": str(out_dir),
              "protocol": config.train.protocol, "refit": refit, "folds": rows}
    for measure in ("value_accuracy", "equation_accuracy"):
        report[measure] = mean_std([row[measure] for row in rows])
    for measure in ("bleu", "unknown_token_rate"):
        values = [row[measure] for row in rows]
        if None in values:  # a fold reused from before the measure was taken
            report[measure] = None
        else:
            report[measure] = mean_std(values)
    add_bleu_definition(report, rows)
    report["test_examples"] = sum(row["test_examples"] for row in rows)
    report["wall_seconds"] = sum(row["wall_seconds"] or 0.0 for row in rows)  # every fold's run, reused ones too
    return report


def add_bleu_definition(report: dict, rows: Sequence[dict]) -> None:
    """The report's ``bleu_definition``: the one its rows share (``common_definition``); where they do not share one,
    no mean of their BLEU either (``bleu`` None)."""
    report["bleu_definition"] = common_definition(rows)
    if report["bleu_definition"] is None:
        report["bleu"] = None


def vote_row(index: int, name: str, train_path: Path, test_path: Path, fold_dir: Path, voted: Sequence[dict],
             members: Sequence[Sequence[dict]], reports: Sequence[dict]) -> dict:
    """The row of fold number ``index`` (from 0) of a vote of seeds: ``voted`` the vote's records (in ``fold_dir``),
    ``members`` each seed's records of the fold, ``reports`` each seed's cross-validation report."""
    n = len(voted)
    return {
        "fold": name, "run_dir": str(fold_dir), "train_file": str(train_path), "test_file": str(test_path),
        "train_examples": reports[0]["folds"][index]["train_examples"],
        "valid_examples": reports[0]["folds"][index]["valid_examples"], "test_examples": n,
        "value_accuracy": sum(bool(record["correct"]) for record in voted) / n,
        "equation_accuracy": sum(bool(record.get("equation_correct")) for record in voted) / n,
        "bleu": None, "bleu_definition": None, **bleu_scores(voted),
        "unknown_token_rate": reports[0]["folds"][index].get("unknown_token_rate"),
        "seed_value_accuracy": [report["folds"][index]["value_accuracy"] for report in reports],
        "any_correct": sum(any(bool(member[i]["correct"]) for member in members) for i in range(n)) / n,
        "unanimous": sum(record["votes"] == len(members) for record in voted) / n,
        "best_val_value_accuracy": None, "epochs": None,
        "wall_seconds": sum(report["folds"][index]["wall_seconds"] or 0.0 for report in reports),
        "reused": all(report["folds"][index]["reused"] for report in reports),
    }


def vote_summary(row: dict, voted: Sequence[dict], seeds: Sequence[int]) -> dict:
    """The summary.json of a vote's fold (``OUT/<fold>``): its test scores as a trained fold's summary holds them, so
    that results evidence keeps and verifies the vote like any fold's run, the seconds of the seeds' runs of the fold,
    and the seeds voted (``vote_of_seeds``), which tells it from a fold run of a cross-validation."""
    test = {"value_accuracy": row["value_accuracy"], "equation_accuracy": row["equation_accuracy"],
            "n": len(voted), "value_correct": sum(bool(record["correct"]) for record in voted),
            "equation_correct": sum(bool(record.get("equation_correct")) for record in voted)}
    if row["bleu"] is not None:
        test.update(bleu=row["bleu"], bleu_definition=row["bleu_definition"])
    return {"vote_of_seeds": list(seeds), "test": test, "wall_seconds": row["wall_seconds"]}


def vote_report(config: Config, out_dir: Path, rows: Sequence[dict], reports: Sequence[dict]) -> dict:
    """The report of a vote of seeds (``run_seeded_cross_validation``) from its fold rows (``vote_row``) and each
    seed's cross-validation report, but for the seconds of the invocation (``elapsed_seconds``)."""
    seeds = [config.train.seed + offset for offset in range(len(reports))]
    report = {"model": config.model.name, "task": config.data.task, "k": len(rows), "out": str(out_dir),
              "refit": False,  # the vote's folds hold its own predictions (the seeds' refit: "seeds_refit")
              "seeds_refit": bool(reports[0].get("refit")), "folds": rows,
              "seeds": [{"seed": seed, "out": report["out"], "value_accuracy": report["value_accuracy"],
                         "equation_accuracy": report["equation_accuracy"]} for seed, report in zip(seeds, reports)]}
    for measure in ("value_accuracy", "equation_accuracy", "bleu", "unknown_token_rate", "any_correct", "unanimous"):
        values = [row[measure] for row in rows]
        report[measure] = None if None in values else mean_std(values)
    add_bleu_definition(report, rows)
    report["test_examples"] = sum(row["test_examples"] for row in rows)
    report["wall_seconds"] = sum(row["wall_seconds"] for row in rows)
    return report


def cell(value: float | None) -> str:
    """A share as a percentage with one decimal, or n/a."""
    return "n/a" if value is None else f"{100 * value:.1f}"


def mean_cell(measure: dict | None) -> str:
    return "n/a" if measure is None else f"{cell(measure['mean'])} ± {cell(measure['std'])}"


def format_vote_report(report: dict) -> str:
    """The report of ``run_seeded_cross_validation`` as Markdown: the vote's mean ± std, each seed's, and a row per
    fold with the vote's and every seed's value accuracy."""
    seeds, bleu = report["seeds"], report.get("bleu")
    bleu_mean = "n/a" if bleu is None else f"{bleu['mean']:.1f} ± {bleu['std']:.1f}"
    scored_by = "its refit's" if report.get("seeds_refit") else "its"
    lines = [
        f"# {report['model']}: majority vote of {len(seeds)} training seeds, {report['k']}-fold cross-validation "
        f"({report['task']})",
        "",
        f"value accuracy {mean_cell(report['value_accuracy'])} %, equation accuracy "
        f"{mean_cell(report['equation_accuracy'])} %, BLEU {bleu_mean} (mean ± sample standard deviation over "
        f"{report['k']} folds; {report['test_examples']} test problems in all)",
        "",
        f"Each seed's cross-validation scored every test problem with {scored_by} answer; the vote takes the answer "
        "most seeds gave (values within the value-accuracy tolerance are one answer; a seed with no value does not "
        "vote; ties go to the lowest seed).",
        "",
        "| seed | value acc. % | equation acc. % | folder |",
        "| --- | ---: | ---: | --- |",
    ]
    for seed in seeds:
        lines.append(f"| {seed['seed']} | {mean_cell(seed['value_accuracy'])} | "
                     f"{mean_cell(seed['equation_accuracy'])} | {seed['out']} |")
    lines += ["", "| fold | test | vote value acc. % | equation acc. % | BLEU | seeds' value acc. % | "
                  "some seed right % | unanimous % | seconds |",
              "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for row in report["folds"]:
        bleu_cell = "n/a" if row["bleu"] is None else f"{row['bleu']:.1f}"
        lines.append(f"| {row['fold']} | {row['test_examples']} | {cell(row['value_accuracy'])} | "
                     f"{cell(row['equation_accuracy'])} | {bleu_cell} | "
                     f"{' / '.join(cell(value) for value in row['seed_value_accuracy'])} | "
                     f"{cell(row['any_correct'])} | {cell(row['unanimous'])} | {row['wall_seconds']:.1f} |")
    lines.append(f"| mean ± std | | {mean_cell(report['value_accuracy'])} | {mean_cell(report['equation_accuracy'])} | "
                 f"{bleu_mean} | | {mean_cell(report['any_correct'])} | {mean_cell(report['unanimous'])} | "
                 f"{report['wall_seconds']:.1f} (sum) |")
    lines += ["", "some seed right: the share of the fold's problems that at least one seed answered right (what no "
                  "vote can exceed); unanimous: the share on which every seed gave the same answer; BLEU: "
                  f"{bleu_label(bleu_definition_of(report))}"]
    return "\n".join(lines) + "\n"


LITERATURE_NOTE = ("Literature protocol: each fold kept the epoch with the best value accuracy on its test fold, as "
                   "MWPToolkit's and SVAMP's k-fold code do; these test scores chose the epoch, so they are optimistic "
                   "(best valid: the test fold's greedy score).")


def format_report(report: dict) -> str:
    """The report as Markdown: a title, the mean ± standard deviation, and one table row per fold (a vote of seeds:
    ``format_vote_report``)."""
    if "seeds" in report:
        return format_vote_report(report)

    def plain(value) -> str:
        if value is None:
            return "n/a"
        return f"{value:.1f}" if isinstance(value, float) else str(value)

    value, equation = report["value_accuracy"], report["equation_accuracy"]
    unknown, bleu = report.get("unknown_token_rate"), report.get("bleu")
    unknown_mean = "n/a" if unknown is None else f"{cell(unknown['mean'])} ± {cell(unknown['std'])}"
    bleu_mean = "n/a" if bleu is None else f"{bleu['mean']:.1f} ± {bleu['std']:.1f}"  # BLEU is 0-100 already
    lines = [
        f"# {report['model']}: {report['k']}-fold cross-validation ({report['task']})",
        "",
        f"value accuracy {cell(value['mean'])} ± {cell(value['std'])} %, equation accuracy "
        f"{cell(equation['mean'])} ± {cell(equation['std'])} %, BLEU {bleu_mean} (mean ± sample standard deviation "
        f"over {report['k']} folds; {report['test_examples']} test problems in all)",
        "",
        "| fold | train | valid | test | value acc. % | equation acc. % | BLEU | unk % | best valid value acc. % | "
        "epochs | seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    if report.get("protocol") == "literature":
        lines[2:2] = [LITERATURE_NOTE, ""]
    refit = report.get("refit", False)
    if refit:
        lines[2:2] = ["Refit: each fold chose its epochs on its validation carve-out (best valid, epochs: the "
                      "selection run), then a run on the whole training fold (train) trained that many epochs and its "
                      "last weights scored the test fold (value and equation accuracy, BLEU, unk %; the selection "
                      "run's own value accuracy in brackets).", ""]
    for row in report["folds"]:
        value_cell = cell(row["value_accuracy"])
        if refit:
            value_cell += f" ({cell(row.get('selection_value_accuracy'))})"
        lines.append(
            f"| {row['fold']} | {plain(row['train_examples'])} | {plain(row['valid_examples'])} | "
            f"{row['test_examples']} | {value_cell} | {cell(row['equation_accuracy'])} | "
            f"{plain(row.get('bleu'))} | {cell(row.get('unknown_token_rate'))} | "
            f"{cell(row['best_val_value_accuracy'])} | {plain(row['epochs'])} | {plain(row['wall_seconds'])} |"
        )
    lines.append(
        f"| mean ± std | | | | {cell(value['mean'])} ± {cell(value['std'])} | "
        f"{cell(equation['mean'])} ± {cell(equation['std'])} | {bleu_mean} | {unknown_mean} | | | "
        f"{report['wall_seconds']:.1f} (sum) |"
    )
    lines += ["", f"BLEU: {bleu_label(bleu_definition_of(report))} of the fold's predicted equations against the gold "
                  "ones; unk %: the share of the test fold's input tokens that are not in the fold's source vocabulary "
                  "(read as <unk>)"]
    return "\n".join(lines) + "\n"
