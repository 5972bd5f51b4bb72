"""neuromath/results/evidence_checks.py through ``results verify --no-gold``: copies of the committed evidence
(one run each), tampered the way a hand edit would, each fail, naming the file and the number; the untouched copies
verify."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from neuromath.cli import main
from neuromath.evaluation.modules_report import build_report
from neuromath.results.beam_evidence import BEAM_REPORT
from neuromath.results.evidence import read_gzip_lines, verify_recipe, write_gzip_lines
from neuromath.results.evidence_checks import module_of
from neuromath.results.recipes import load_recipe

RESULTS = Path(__file__).resolve().parents[2] / "results"


def copy_run(tmp_path: Path, experiment: str, run: str) -> Path:
    """results/<experiment>/ with the evidence of ``run`` alone (its other runs become recipe-only)."""
    folder = tmp_path / "results" / experiment
    folder.mkdir(parents=True)
    shutil.copy(RESULTS / experiment / "recipe.yaml", folder / "recipe.yaml")
    shutil.copytree(RESULTS / experiment / "runs" / run, folder / "runs" / run)
    return folder


def problems_of(folder: Path) -> list[str]:
    problems, lines = verify_recipe(load_recipe(folder), folder.parent / "no-data", with_gold=False)
    assert any("scored sets" in line for line in lines)
    return problems


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def write(path: Path, value: dict) -> None:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


@pytest.fixture
def seeds(tmp_path):
    """A training of three seeds of an equation classifier (identities, per-depth scores, seeds.json)."""
    folder = copy_run(tmp_path, "identities-40k", "lstm-paper")
    assert problems_of(folder) == []
    return folder / "runs" / "lstm-paper"


def test_an_edited_per_depth_accuracy_fails(seeds):
    path = seeds / "seed1" / "summary.json"
    summary = read(path)
    stated = summary["test"]["by_depth"]["10"]["accuracy"]
    summary["test"]["by_depth"]["10"]["accuracy"] = stated + 0.01
    write(path, summary)
    problems = problems_of(seeds.parent.parent)
    assert f"{path}: test.by_depth.10.accuracy is {stated + 0.01!r}; recomputed from the 3592 predictions at " \
        f"depth 10: {stated!r}" in problems, problems


def test_every_seed_mean_raised_fails(seeds):
    path = seeds / "seeds.json"
    combined = read(path)
    for value in [combined[key] for key in ("accuracy", "precision", "recall")] + [
            spread for depth in combined["by_depth"].values() for spread in depth.values()]:
        value["mean"] += 0.05
    write(path, combined)
    problems = problems_of(seeds.parent.parent)
    assert any(p.startswith(f"{path}: accuracy.mean is ") for p in problems), problems
    assert any(p.startswith(f"{path}: by_depth.13.recall.mean is ") for p in problems), problems


def test_an_edited_seed_std_fails(seeds):
    path = seeds / "seeds.json"
    combined = read(path)
    combined["by_depth"]["8"]["accuracy"]["std"] *= 2
    write(path, combined)
    problems = problems_of(seeds.parent.parent)
    assert len(problems) == 1 and problems[0].startswith(f"{path}: by_depth.8.accuracy.std is "), problems


def test_predictions_all_made_right_with_the_seed_accuracy_one_fail(seeds):
    """Every prediction of a seed made right (its predicted label the label) and its accuracy 1.0: the per-depth
    scores, precision and recall no longer follow, nor does the seeds' mean."""
    unit = seeds / "seed0"
    records = read_gzip_lines(unit / "predictions.jsonl.gz")
    for record in records:
        record["predicted"], record["correct"] = record["label"], True
    write_gzip_lines(records, unit / "predictions.jsonl.gz")
    summary = read(unit / "summary.json")
    summary["test"]["accuracy"] = 1.0
    write(unit / "summary.json", summary)
    problems = problems_of(seeds.parent.parent)
    assert not any("test.accuracy" in p for p in problems)  # that one was made to agree
    assert any(p.startswith(f"{unit / 'summary.json'}: test.by_depth.8.accuracy is ") for p in problems), problems
    assert any(p.startswith(f"{unit / 'summary.json'}: test.precision is ") for p in problems), problems
    assert any(p.startswith(f"{seeds / 'seeds.json'}: accuracy.mean is ") for p in problems), problems


def test_a_best_validation_score_its_log_does_not_give_fails(seeds):
    path = seeds / "seed2" / "summary.json"
    summary = read(path)
    summary["best_val_accuracy"] += 0.02
    summary["epochs"] += 1
    write(path, summary)
    problems = problems_of(seeds.parent.parent)
    assert any(p.startswith(f"{path}: best_val_accuracy is ") and "highest val_accuracy of metrics.csv" in p
               for p in problems), problems
    assert any(p.startswith(f"{path}: epochs is ") for p in problems), problems


@pytest.fixture
def folds(tmp_path):
    """A five-fold cross-validation of a word-problem model (report.json over the folds)."""
    folder = copy_run(tmp_path, "word-problems-cv", "graph2tree-asdiv")
    assert problems_of(folder) == []
    return folder / "runs" / "graph2tree-asdiv"


def test_an_edited_fold_std_fails(folds):
    path = folds / "report.json"
    report = read(path)
    report["value_accuracy"]["std"] += 0.01
    write(path, report)
    problems = problems_of(folds.parent.parent)
    assert len(problems) == 1 and problems[0].startswith(f"{path}: value_accuracy.std is "), problems


def test_a_fold_row_and_its_mean_edited_together_fail(folds):
    """A row and the mean made to agree with each other no longer agree with the fold's summary."""
    path = folds / "report.json"
    report = read(path)
    report["folds"][2]["equation_accuracy"] += 0.05
    report["equation_accuracy"]["mean"] += 0.01
    write(path, report)
    problems = problems_of(folds.parent.parent)
    assert any(p.startswith(f"{path}: fold2.equation_accuracy is ") for p in problems), problems


def test_an_edited_equation_accuracy_of_a_fold_fails(folds):
    path = folds / "fold3" / "summary.json"
    summary = read(path)
    summary["test"]["equation_accuracy"] += 0.1
    write(path, summary)
    problems = problems_of(folds.parent.parent)
    assert any(p.startswith(f"{path}: test.equation_accuracy is ") for p in problems), problems


def test_an_edited_per_module_score_fails(tmp_path):
    """A Mathematics Dataset run's per-module report (``evaluate``'s) is recomputed from the run's predictions."""
    folder = copy_run(tmp_path, "mathematics-dataset-4", "transformer")
    run = folder / "runs" / "transformer"
    records = read_gzip_lines(run / "predictions.jsonl.gz")
    tagged = [{"split": module_of(r)[0], "module": module_of(r)[1], "correct": r["correct"]} for r in records]
    report = build_report({"transformer": tagged})
    assert len(report["modules"]) == 7  # four modules interpolated, three extrapolated
    (run / "evaluation").mkdir()
    write(run / BEAM_REPORT, report)
    assert problems_of(folder) == []
    row = next(row for row in report["modules"] if row["module"] == "numbers__place_value")
    row["accuracy"]["transformer"] = min(1.0, row["accuracy"]["transformer"] + 0.05)
    write(run / BEAM_REPORT, report)
    problems = problems_of(folder)
    assert problems == [f"{run / BEAM_REPORT}: interpolate/numbers__place_value accuracy is "
                        f"{row['accuracy']['transformer']!r}; recomputed from the {len(records)} predictions of that "
                        f"module: {row['correct']['transformer'] / row['n']['transformer']!r}"], problems


@pytest.fixture
def beams(tmp_path):
    """A symbolic integration run scored by evaluate --beams at widths 1, 10 and 50."""
    folder = copy_run(tmp_path, "symbolic-integration", "tree_relative")
    assert problems_of(folder) == []
    return folder / "runs" / "tree_relative"


def test_an_edited_per_width_score_fails(beams):
    path = beams / BEAM_REPORT
    report = read(path)
    entry = report["subsets"]["dedup"]["overall"]["10"]
    entry["verified_count"] += 5
    entry["verified"] = entry["verified_count"] / report["subsets"]["dedup"]["overall"]["n"]
    write(path, report)
    problems = problems_of(beams.parent.parent)
    assert any("dedup beam 10 verified" in p for p in problems), problems


def test_a_per_width_score_whose_width_is_left_out_of_the_list_fails(beams):
    """A width dropped from the report's list of widths (so that its edited score would not be recounted) fails:
    the records hold a width the list leaves out."""
    path = beams / BEAM_REPORT
    report = read(path)
    report["beams"] = [1, 10]
    report["subsets"]["dedup"]["overall"]["50"]["verified"] = 0.99
    write(path, report)
    problems = problems_of(beams.parent.parent)
    assert any("lists beam widths ['1', '10'], the records hold ['1', '10', '50']" in p for p in problems), problems


def test_an_edited_per_size_row_fails(beams):
    path = beams / BEAM_REPORT
    report = read(path)
    report["subsets"]["full"]["by_size"]["6-10"]["10"]["verified_count"] += 3
    write(path, report)
    problems = problems_of(beams.parent.parent)
    assert any(p.startswith(f"{path}: full by_size 6-10 beam 10 verified is ") for p in problems), problems
    assert any("full by_size: the sum of beam 10 verified_count" in p for p in problems), problems


@pytest.mark.slow
def test_verify_of_a_copied_results_folder_names_what_was_edited(tmp_path, capsys):
    """`results verify --no-gold COPY`, COPY a copy of results/ with an edited seed mean and an edited per-depth
    score: exit status 1, and each edit named with its file; the untouched copy passes."""
    copy = tmp_path / "results"
    shutil.copytree(RESULTS, copy)
    assert main(["results", "verify", "--no-gold", str(copy)]) == 0
    seeds = copy / "identities-40k" / "runs" / "tree_lstm-paper"
    combined = read(seeds / "seeds.json")
    combined["accuracy"]["mean"] += 0.05
    write(seeds / "seeds.json", combined)
    summary = read(seeds / "seed0" / "summary.json")
    summary["test"]["by_depth"]["12"]["accuracy"] -= 0.03
    write(seeds / "seed0" / "summary.json", summary)
    capsys.readouterr()
    assert main(["results", "verify", "--no-gold", str(copy)]) == 1
    errors = capsys.readouterr().err
    assert f"FAILED {seeds / 'seeds.json'}: accuracy.mean is " in errors
    assert f"FAILED {seeds / 'seed0' / 'summary.json'}: test.by_depth.12.accuracy is " in errors


def test_a_training_of_seeds_without_its_seeds_file_fails(seeds):
    (seeds / "seeds.json").unlink()
    problems = problems_of(seeds.parent.parent)
    assert problems == [f"{seeds / 'seeds.json'}: missing: the seeds' mean and spread cannot be checked"]
