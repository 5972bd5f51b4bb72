"""results/: the committed pages are what `python -m tools.results_pages build` writes, the committed evidence
verifies, and recipes, the runner and verification refuse what does not match."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from neuromath.cli import main
from neuromath.errors import ConfigError, NeuromathError
from neuromath.results.evidence import PREDICTIONS_GZ, Evidence, read_gzip_lines, verify_recipe, write_gzip_lines
from neuromath.results.recipe_configs import config_differences, extra_settings
from neuromath.results.recipes import Run, find_recipes, load_recipe, sha256_of
from neuromath.results.runner import run_recipe
from tools.results_pages.command import main as build_main
from tools.results_pages.pages import RECIPE_ONLY, Book, build_pages, precision_label, stale_pages
from tools.results_pages.paired_pages import paired_line, render_robustness

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"


def test_committed_pages_are_what_the_page_builder_writes():
    files = build_pages(RESULTS, REPO / "docs", REPO / "README.md")
    assert REPO / "docs" / "results" / "leaderboard.md" in files
    stale = stale_pages(files)
    stale_names = [str(p.relative_to(REPO)) for p in stale]
    assert not stale, f"run `python -m tools.results_pages build` and commit: {stale_names}"


def test_committed_evidence_verifies():
    """Every summary of results/ follows from its predictions (and from the gold data where the data root has it)."""
    from neuromath.dataroot import data_root

    root = data_root()
    checked = 0
    for recipe in find_recipes(RESULTS):
        problems, lines = verify_recipe(recipe, root)
        assert not problems, problems
        checked += sum("scored sets" in line for line in lines)
    assert checked > 0


def test_no_committed_page_types_a_number_for_a_run_without_evidence():
    """A table cell of a recipe-only run says so and holds no number."""
    text = (REPO / "docs" / "results" / "identities.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if RECIPE_ONLY in line and line.startswith("|"):
            cells = [cell.strip() for cell in line.strip("|").split("|")[1:]]
            assert all(cell in ("", RECIPE_ONLY) for cell in cells), line


def test_results_stay_small_and_hold_no_weights():
    total = sum(path.stat().st_size for path in RESULTS.rglob("*") if path.is_file())
    assert total < 20 * 2**20
    assert not [p for p in RESULTS.rglob("*") if p.suffix in (".pt", ".ckpt", ".safetensors", ".bin")]


# -- a tiny experiment, end to end -----------------------------------------------------------------------------------

PROBLEMS = [
    ("Tom has number0 apples . He buys number1 more . How many apples does he have ?", "+ number0 number1"),
    ("Ann had number0 pens . She gave away number1 pens . How many pens are left ?", "- number0 number1"),
    ("A box holds number0 eggs . How many eggs are in number1 boxes ?", "* number0 number1"),
    ("Sam shares number0 sweets among number1 friends . How many does each get ?", "/ number0 number1"),
]


def write_folds(root: Path, folds: int = 2) -> list[str]:
    """Two word-problem folds in the CSV layout of the benchmark folds (train.csv, dev.csv)."""
    names = []
    for fold in range(folds):
        for split, count in (("train", 16), ("dev", 4)):
            rows = ["Question,Numbers,Equation,Answer"]
            for index in range(count):
                text, equation = PROBLEMS[(index + fold) % len(PROBLEMS)]
                a, b = 12 + index + fold, 3 + (index % 3)
                answer = {"+": a + b, "-": a - b, "*": a * b, "/": a / b}[equation[0]]
                rows.append(f"{text},{a}.0 {b}.0,{equation},{answer}")
            path = root / f"tiny-cv/fold{fold}/{split}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(rows) + "\n", encoding="utf-8")
            names.append(f"tiny-cv/fold{fold}/{split}.csv")
    return names


@pytest.fixture
def experiment(tmp_path, monkeypatch):
    """A data root with two tiny folds, and a results folder holding a recipe of the jaccard baseline over them."""
    root = tmp_path / "data"
    names = write_folds(root)
    monkeypatch.setenv("NEUROMATH_DATA", str(root))
    results = tmp_path / "results"
    recipe = {
        "title": "tiny", "page": "tiny", "protocol": "Nothing is selected. A test.",
        "data": {name: sha256_of(root / name) for name in names},
        "runs": {"jaccard-tiny": {"task": "word_problems", "model": "jaccard", "dataset": "tiny",
                                  "command": "neuromath cv --config word_problems/jaccard --folds tiny-cv"}},
        "tables": {"main": {"metrics": ["value_accuracy"], "columns": ["tiny"],
                            "rows": {"`jaccard`": ["jaccard-tiny"]}}},
    }
    (results / "tiny").mkdir(parents=True)
    (results / "tiny" / "recipe.yaml").write_text(yaml.safe_dump(recipe), encoding="utf-8")
    return results / "tiny", root, tmp_path / "work"


def test_run_collects_evidence_that_verifies_and_a_second_run_skips(experiment, capsys):
    folder, root, work = experiment
    outcome = run_recipe(load_recipe(folder), work, echo=lambda line: None)
    assert outcome == {"jaccard-tiny": "done"}
    evidence = folder / "runs" / "jaccard-tiny"
    assert sorted(p.name for p in (evidence / "fold0").iterdir()) == ["config.yaml", "predictions.jsonl.gz",
                                                                      "summary.json"]
    text = "".join(p.read_text(encoding="utf-8") for p in evidence.rglob("*") if p.suffix in (".json", ".yaml"))
    assert str(root) not in text and str(work) not in text  # no machine paths in the evidence
    record = read_gzip_lines(evidence / "fold0" / "predictions.jsonl.gz")[0]
    assert set(record) == {"id", "predicted_tokens", "correct", "equation_correct"}
    problems, lines = verify_recipe(load_recipe(folder), root)
    assert problems == [] and "gold data for 2 of 2" in lines[0]
    assert run_recipe(load_recipe(folder), work, echo=lambda line: None) == {
        "jaccard-tiny": "skipped (evidence is there)"}
    assert main(["results", "verify", str(folder)]) == 0


def test_verify_names_the_run_and_the_difference(experiment, capsys):
    folder, root, work = experiment
    run_recipe(load_recipe(folder), work, echo=lambda line: None)
    summary_path = folder / "runs" / "jaccard-tiny" / "fold1" / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    summary["test"]["value_correct"] += 1
    summary_path.write_text(json.dumps(summary), encoding="utf-8")
    problems, _ = verify_recipe(load_recipe(folder), root)
    stated, n = summary["test"]["value_correct"], summary["test"]["n"]
    expected = f"{summary_path}: test.value_correct is {stated}; recomputed from its {n} predictions: {stated - 1}"
    assert expected in problems, problems
    capsys.readouterr()
    assert main(["results", "verify", str(folder), "--json"]) == 1
    answer = json.loads(capsys.readouterr().out)  # --json: one object, the problems in it
    assert answer["verified"] is False and expected in answer["problems"] and list(answer["experiments"]) == [
        load_recipe(folder).name]


def test_verify_recomputes_verdicts_from_the_gold_data(experiment):
    """A prediction record whose verdict was flipped, with its summary made to agree, is caught by the gold data."""
    folder, root, work = experiment
    run_recipe(load_recipe(folder), work, echo=lambda line: None)
    unit = folder / "runs" / "jaccard-tiny" / "fold0"
    records = read_gzip_lines(unit / "predictions.jsonl.gz")
    records[0]["correct"] = not records[0]["correct"]
    write_gzip_lines(records, unit / "predictions.jsonl.gz")
    summary = json.loads((unit / "summary.json").read_text(encoding="utf-8"))
    delta = 1 if records[0]["correct"] else -1
    summary["test"]["value_correct"] += delta
    summary["test"]["value_accuracy"] = summary["test"]["value_correct"] / summary["test"]["n"]
    (unit / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    problems, _ = verify_recipe(load_recipe(folder), root, with_gold=False)
    assert any("report.json" in p for p in problems)  # the folds' report no longer matches its fold
    problems, _ = verify_recipe(load_recipe(folder), root)
    assert any("recorded verdict" in p for p in problems), problems


def test_evidence_made_by_another_command_fails_verify(experiment):
    folder, root, work = experiment
    run_recipe(load_recipe(folder), work, echo=lambda line: None)
    path = folder / "recipe.yaml"
    recipe = yaml.safe_load(path.read_text(encoding="utf-8"))
    recipe["runs"]["jaccard-tiny"]["command"] += " --set data.lowercase=false"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    problems, _ = verify_recipe(load_recipe(folder), root)
    assert any("the evidence was made by" in p for p in problems), problems


def test_evidence_of_an_older_command_verifies_only_while_the_recipe_gives_its_config(experiment):
    """made_by names the command that made the evidence; the recipe's command must give, with today's presets, the
    config each unit trained with."""
    folder, root, work = experiment
    run_recipe(load_recipe(folder), work, echo=lambda line: None)
    path = folder / "recipe.yaml"
    recipe = yaml.safe_load(path.read_text(encoding="utf-8"))
    made_by = recipe["runs"]["jaccard-tiny"]["command"]
    recipe["runs"]["jaccard-tiny"].update(made_by=made_by, command=made_by.replace("--folds", "--jobs 1 --folds"))
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    assert verify_recipe(load_recipe(folder), root)[0] == []  # another command, the same config: it holds
    recipe["runs"]["jaccard-tiny"]["command"] = made_by + " --set data.lowercase=false"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    problems, _ = verify_recipe(load_recipe(folder), root)
    assert any("data.lowercase is True in the evidence" in p and "gives False" in p for p in problems), problems


def test_every_committed_recipe_runs_its_preset_with_only_paths_threads_seeds_device_and_precision():
    """The preset beside a number is the recipe behind it: a results row sets nothing else."""
    allowed = ("train.num_threads", "train.seed", "train.precision")
    for recipe in find_recipes(RESULTS):
        for run in recipe.runs.values():
            assert extra_settings(run) == [], f"{recipe.name}/{run.name}: put these values in a preset"
            for key in (value.split("=", 1)[0] for flag, value in zip(run.argv, run.argv[1:]) if flag == "--set"):
                assert key.split(".")[0] not in ("model", "optim", "decode"), f"{recipe.name}/{run.name}: {key}"
                assert not key.startswith("train.") or key in allowed, key


def test_verify_compares_the_precision_a_row_trained_in_but_not_its_threads():
    """A row may set its precision, as it sets its threads; unlike threads, a precision other than the evidence's
    is a difference (a preset that now says auto must not pass for a float32 row)."""
    trained = {"train": {"precision": "32-true", "num_threads": 1}, "model": {"name": "gts"}}
    today = {"train": {"precision": "auto", "num_threads": 4}, "model": {"name": "gts"}}
    problems = config_differences("r", today, trained)
    assert len(problems) == 1 and "train.precision is '32-true' in the evidence" in problems[0], problems
    today["train"]["precision"] = "32-true"
    assert config_differences("r", today, trained) == []
    run = Run("r", ["cv", "--config", "word_problems/gts", "--set", "train.precision=32-true",
                    "--set", "train.num_threads=1", "--set", "model.dropout=0.1"], "gts", "d", "word_problems")
    assert extra_settings(run) == ["model.dropout=0.1"]


def test_a_missing_or_changed_data_file_stops_the_run_before_anything_trains(experiment):
    folder, root, work = experiment
    (root / "tiny-cv" / "fold1" / "dev.csv").write_text("Question,Numbers,Equation,Answer\n", encoding="utf-8")
    with pytest.raises(NeuromathError, match=r"tiny-cv/fold1/dev.csv has sha256 .* the recipe says"):
        run_recipe(load_recipe(folder), work, echo=lambda line: None)
    os.remove(root / "tiny-cv" / "fold1" / "dev.csv")
    with pytest.raises(NeuromathError, match=r"data file tiny-cv/fold1/dev.csv is not at"):
        run_recipe(load_recipe(folder), work, echo=lambda line: None)
    assert not work.exists()  # nothing ran


def test_pages_show_evidence_numbers_and_recipe_only_runs(experiment, tmp_path):
    folder, root, work = experiment
    pages = folder.parent / "pages"
    pages.mkdir()
    template = "# Tiny\n\n{{ table tiny.main }}\n\nvalue {{ value tiny.jaccard-tiny.value_accuracy }}\n"
    (pages / "tiny.md").write_text(template, encoding="utf-8")
    docs = tmp_path / "docs"
    before = build_pages(folder.parent, docs)[docs / "results" / "tiny.md"]
    assert f"| `jaccard` | {RECIPE_ONLY} |" in before and f"value ({RECIPE_ONLY})" in before
    run_recipe(load_recipe(folder), work, echo=lambda line: None)
    after = build_pages(folder.parent, docs)[docs / "results" / "tiny.md"]
    summaries = [json.loads((folder / "runs" / "jaccard-tiny" / f"fold{k}" / "summary.json").read_text())
                 for k in (0, 1)]
    values = [100 * s["test"]["value_accuracy"] for s in summaries]
    mean = sum(values) / 2
    assert f"| `jaccard` | {mean:.1f} ± " in after
    (pages / "bad.md").write_text("{{ table tiny.nothing }}\n", encoding="utf-8")
    with pytest.raises(NeuromathError, match=r"bad.md:1: .* declares no table 'nothing'"):
        build_pages(folder.parent, docs)


def test_a_runs_directive_gives_the_mean_and_spread_over_whole_runs(tmp_path):
    """``{{ runs METRIC RUN RUN ... }}``: each run counts once (its own test score), whatever its size."""
    runs = ("tp_transformer", "tp_transformer-rerun", "tp_transformer-seed1")
    scores = []
    for run in runs:
        records = read_gzip_lines(RESULTS / "mathematics-dataset-4" / "runs" / run / "predictions.jsonl.gz")
        scores.append(100 * sum(bool(record["correct"]) for record in records) / len(records))
    mean = sum(scores) / 3
    std = (sum((score - mean) ** 2 for score in scores) / 2) ** 0.5
    book = Book(RESULTS)
    page = tmp_path / "p.md"
    names = " ".join(f"mathematics-dataset-4.{run}" for run in runs)
    assert book.render(page, f"x {{{{ runs value_accuracy {names} }}}} y") == f"x {mean:.1f} ± {std:.1f} % (3 runs) y\n"
    with pytest.raises(NeuromathError, match="p.md:1: runs takes METRIC"):
        book.render(page, "{{ runs value_accuracy mathematics-dataset-4.tp_transformer }}")
    with pytest.raises(NeuromathError, match="p.md:1: mathematics-dataset-4.transformer has no evidence of nothing"):
        book.render(page, "{{ runs nothing mathematics-dataset-4.transformer mathematics-dataset-4.tp_transformer }}")


def test_a_value_of_wall_seconds_is_the_runs_own_training_time_not_the_test(tmp_path):
    """``wall_seconds`` reads the training's summary (without the beam search after it, which the evidence's own
    duration holds) and is written as a duration, not a percentage."""
    folder = RESULTS / "symbolic-integration-steps" / "runs" / "learned_positions"
    trained = json.loads((folder / "summary.json").read_text(encoding="utf-8"))["wall_seconds"]
    whole = json.loads((folder / "evidence.json").read_text(encoding="utf-8"))["wall_seconds"]
    assert whole > trained + 60  # the evidence's duration includes the evaluation
    book = Book(RESULTS)
    text = book.render(tmp_path / "p.md", "{{ value symbolic-integration-steps.learned_positions.wall_seconds }}")
    assert text == f"{trained / 60:.0f} min\n"


def test_the_page_builder_check_fails_on_a_stale_page(experiment, tmp_path, capsys):
    folder, root, work = experiment
    (folder.parent / "pages").mkdir()
    (folder.parent / "pages" / "tiny.md").write_text("{{ table tiny.main }}\n", encoding="utf-8")
    docs = tmp_path / "docs"
    args = ["build", "--results", str(folder.parent), "--docs", str(docs), "--no-readme"]
    assert build_main([*args, "--check"]) == 1
    assert "python -m tools.results_pages build" in capsys.readouterr().err
    assert build_main(args) == 0
    assert build_main([*args, "--check"]) == 0


def test_the_page_builder_runs_from_the_repository_root_and_the_wheel_has_no_build_command():
    """CI's page check is ``python -m tools.results_pages build --check`` run in the checkout; ``neuromath results``
    only runs and verifies (the wheel carries no page builder)."""
    done = subprocess.run([sys.executable, "-m", "tools.results_pages", "build", "--help"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "--check" in done.stdout, done.stderr[-2000:]
    with pytest.raises(SystemExit) as refused:
        main(["results", "build"])
    assert refused.value.code == 2


@pytest.mark.parametrize("change, message", [
    ({"runs": {"x": {"task": "t", "model": "m", "dataset": "d", "command": "neuromath serve runs"}}}, "not 'serve'"),
    ({"runs": {"x": {"task": "t", "model": "m", "dataset": "d", "command": "neuromath cv --out here"}}},
     "leave --out out"),
    ({"runs": {"x": {"task": "t", "model": "m", "dataset": "d", "command": "python evil.py"}}}, "starts with"),
    ({"data": {"a.csv": "abc"}}, "64 lowercase hex"),
    ({"colour": "red"}, "unknown key"),
])
def test_bad_recipes_are_clear_errors(tmp_path, change, message):
    recipe = {"title": "t", "page": "p", "protocol": "p",
              "runs": {"x": {"task": "t", "model": "m", "dataset": "d", "command": "neuromath cv --folds f"}}}
    recipe.update(change)
    path = tmp_path / "e" / "recipe.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_recipe(path.parent)


def test_gzip_evidence_is_byte_for_byte_reproducible(tmp_path):
    records = [{"id": "1", "correct": True}, {"id": "2", "correct": False}]
    write_gzip_lines(records, tmp_path / "a.gz")
    write_gzip_lines(records, tmp_path / "b.gz")
    assert (tmp_path / "a.gz").read_bytes() == (tmp_path / "b.gz").read_bytes()
    assert [json.loads(line) for line in gzip.open(tmp_path / "a.gz", "rt")] == records


def test_every_committed_recipe_loads_and_its_runs_have_unique_commands():
    recipes = find_recipes(RESULTS)
    assert {"word-problems-cv", "identities-40k"} <= {recipe.name for recipe in recipes}
    for recipe in recipes:
        commands = [run.command for run in recipe.runs.values()]
        assert len(set(commands)) == len(commands)


def test_copy_of_results_is_self_contained(tmp_path):
    """The pages build from a copy of results/ alone (no run folders, no data root needed)."""
    shutil.copytree(RESULTS, tmp_path / "results")
    files = build_pages(tmp_path / "results", tmp_path / "docs")
    assert any(path.name == "word-problems.md" for path in files)


def test_a_training_on_generated_data_collects_and_verifies_against_the_work_folder(tmp_path, monkeypatch):
    """A recipe whose setup generates identities files (pinned by sha256 under {work}) and trains on them: the
    evidence keeps every seed's slimmed predictions, and verify reads the generated gold file from --work."""
    monkeypatch.setenv("NEUROMATH_DATA", str(tmp_path / "data"))
    generate = "neuromath generate identities --n 400 --max-depth 9 --seed 0 --workers 1 --out {work}/eq.json"
    reference = tmp_path / "reference"
    assert main(generate.replace("{work}", str(reference)).split()[1:]) == 0
    splits = ("train", "valid", "test")
    recipe = {
        "title": "tiny identities", "page": "tiny", "protocol": "Selected on validation.",
        "setup": [generate],
        "data": {f"{{work}}/eq.{split}.json": sha256_of(reference / f"eq.{split}.json") for split in splits},
        "runs": {"tree_lstm-tiny": {
            "task": "identities", "model": "tree_lstm", "dataset": "tiny",
            "command": "neuromath train --config identities/tree_lstm " + " ".join(
                f"--set data.{split}={{work}}/eq.{split}.json" for split in splits)
            + " --set model.d_model=8 --set train.max_epochs=2 --set train.num_threads=1 --set train.progress=false"
              " --seeds 2"}},
    }
    folder = tmp_path / "results" / "tiny"
    folder.mkdir(parents=True)
    (folder / "recipe.yaml").write_text(yaml.safe_dump(recipe), encoding="utf-8")
    work = tmp_path / "work"
    assert run_recipe(load_recipe(folder), work, echo=lambda line: None) == {"tree_lstm-tiny": "done"}
    evidence = folder / "runs" / "tree_lstm-tiny"
    assert (evidence / "seeds.json").is_file()
    records = read_gzip_lines(evidence / "seed1" / "predictions.jsonl.gz")
    assert records and set(records[0]) == {"depth", "label", "predicted", "correct"}
    config = yaml.safe_load((evidence / "seed0" / "config.yaml").read_text(encoding="utf-8"))
    assert config["data"]["test"] == "{work}/eq.test.json"
    problems, lines = verify_recipe(load_recipe(folder), tmp_path / "data")
    assert problems == [] and "gold data for 0 of 2" in lines[0]
    problems, lines = verify_recipe(load_recipe(folder), tmp_path / "data", work=work)
    assert problems == [] and "gold data for 2 of 2" in lines[0]
    records[0]["label"] = not records[0]["label"]
    records[0]["correct"] = records[0]["predicted"] == records[0]["label"]
    write_gzip_lines(records, evidence / "seed1" / "predictions.jsonl.gz")
    problems, _ = verify_recipe(load_recipe(folder), tmp_path / "data", work=work)
    assert any("seed1" in p for p in problems), problems


def use_tiny_transformer_cv(folder: Path, run: str, options: str) -> None:
    """Make the tiny experiment's recipe one run: a cv of a tiny Transformer over its folds, with ``options``."""
    recipe = yaml.safe_load((folder / "recipe.yaml").read_text(encoding="utf-8"))
    tiny = ("--set model.d_model=16 --set model.n_heads=2 --set model.d_ff=32 --set model.n_encoder_layers=1 "
            "--set model.n_decoder_layers=1 --set train.num_threads=1 --set train.progress=false "
            "--set data.valid_fraction=0.2")
    recipe["runs"] = {run: {"task": "word_problems", "model": "transformer", "dataset": "tiny",
                            "command": f"neuromath cv --config word_problems/transformer --folds tiny-cv {options} "
                                       f"{tiny}"}}
    recipe["tables"]["main"]["rows"] = {run: [run]}
    (folder / "recipe.yaml").write_text(yaml.safe_dump(recipe), encoding="utf-8")


def test_a_vote_of_seeds_collects_its_voted_folds_and_verifies(experiment):
    """A cv --seeds row: its evidence is the vote's folds (their summary.json and voted predictions), which verify
    recomputes like any fold's, and report.json names the seeds."""
    folder, root, work = experiment
    use_tiny_transformer_cv(folder, "vote-tiny", "--seeds 2 --set train.max_epochs=2")
    assert run_recipe(load_recipe(folder), work, echo=lambda line: None) == {"vote-tiny": "done"}
    evidence = folder / "runs" / "vote-tiny"
    summary = json.loads((evidence / "fold1" / "summary.json").read_text(encoding="utf-8"))
    assert summary["vote_of_seeds"] == [0, 1] and summary["test"]["n"] == 4
    assert [seed["seed"] for seed in json.loads((evidence / "report.json").read_text())["seeds"]] == [0, 1]
    problems, lines = verify_recipe(load_recipe(folder), root)
    assert problems == [] and "gold data for 2 of 2" in lines[0]
    records = read_gzip_lines(evidence / "fold1" / "predictions.jsonl.gz")
    records[0]["correct"] = not records[0]["correct"]
    write_gzip_lines(records, evidence / "fold1" / "predictions.jsonl.gz")
    problems, _ = verify_recipe(load_recipe(folder), root)
    assert any("fold1" in problem for problem in problems), problems


def test_completion_evidence_is_recomputed_from_its_scores(tmp_path):
    """The released models' top-1 is recomputed from every blank's candidate scores and the gold classes; a reported
    top-1 its scores do not give fails."""
    from neuromath.dataroot import data_root

    root = data_root()
    if not (root / "identities" / "40k_test_blank_0.json").is_file():
        pytest.skip(f"the released blank file is not under the data root {root}")
    shutil.copytree(RESULTS / "identities-released", tmp_path / "identities-released")
    folder = tmp_path / "identities-released"
    problems, lines = verify_recipe(load_recipe(folder), root)
    assert problems == [] and all("gold data for 1 of 1" in line for line in lines)
    path = folder / "runs" / "tree_smu-released" / "completion.json"
    completion = json.loads(path.read_text(encoding="utf-8"))
    row = next(iter(completion.values()))
    row["top1"] += 1 / 277
    path.write_text(json.dumps(completion), encoding="utf-8")
    problems, _ = verify_recipe(load_recipe(folder), root)
    assert len(problems) == 1 and "tree_smu-released" in problems[0] and "top1" in problems[0]


def test_the_compute_of_a_run_the_runner_found_finished_is_not_recorded_rather_than_zero():
    from neuromath.results.evidence import Evidence
    from tools.results_pages.pages import describe_compute

    found_finished = Evidence(Path("run"), "train", environment={"wall_seconds": 0.0, "threads": 1},
                              units={"seed0": {}})
    assert found_finished.wall_seconds is None
    assert describe_compute(found_finished) == "time not recorded on CPU, 1 thread"
    seeds = Evidence(Path("run"), "train", environment={"wall_seconds": 0.0},
                     units={"seed0": {"wall_seconds": 60.0}, "seed1": {"wall_seconds": 120.0}})
    assert seeds.wall_seconds == 180.0 and describe_compute(seeds) == "3 min on CPU"


def test_a_paired_directive_reports_what_compare_reports_on_the_same_folds(experiment, tmp_path, capsys):
    """``{{ paired A B }}`` pairs two runs' evidence problem by problem, with the numbers ``neuromath compare`` gives
    for the same two cross-validations; a run without evidence shows "recipe only", and runs over other problems are
    refused."""
    folder, root, work = experiment
    recipe_path = folder / "recipe.yaml"
    recipe = yaml.safe_load(recipe_path.read_text())
    recipe["runs"]["cosine-tiny"] = {"task": "word_problems", "model": "cosine", "dataset": "tiny",
                                     "command": "neuromath cv --config word_problems/cosine --folds tiny-cv"}
    recipe_path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    pages = folder.parent / "pages"
    pages.mkdir()
    (pages / "tiny.md").write_text("cosine: {{ paired tiny.jaccard-tiny tiny.cosine-tiny }}\n", encoding="utf-8")
    docs = tmp_path / "docs"
    assert build_pages(folder.parent, docs)[docs / "results" / "tiny.md"].endswith(f"\ncosine: ({RECIPE_ONLY})\n")
    run_recipe(load_recipe(folder), work, echo=lambda line: None)
    page = build_pages(folder.parent, docs)[docs / "results" / "tiny.md"]
    runs = folder / "runs"
    assert main(["compare", str(runs / "jaccard-tiny"), str(runs / "cosine-tiny"), "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert f"over the same {compared['n']} test problems" in page
    assert f"{100 * compared['difference']:+.1f} points" in page
    assert f"p = {compared['mcnemar']['p_value']:.3g}" in page
    assert f"({compared['mcnemar']['only_a']} right only before, {compared['mcnemar']['only_b']} only after)" in page
    shutil.rmtree(runs / "cosine-tiny" / "fold1")
    with pytest.raises(NeuromathError, match="different folds or seeds"):
        build_pages(folder.parent, docs)


def test_a_paired_line_pairs_seeds_without_ids_by_position_and_says_they_repeat_one_test_file(tmp_path):
    """Identities predictions keep no id: the records pair by position, depth and label. The seeds of a training
    score one test file again, which the line says; the folds of a cross-validation are different problems."""
    labels = [True, False, True, False]

    def evidence(name: str, subcommand: str, units: dict[str, list[bool]], depths=(8, 8, 9, 9)) -> Evidence:
        run = Evidence(tmp_path / name, subcommand, environment={})
        for unit, correct in units.items():
            folder = tmp_path / name / unit
            folder.mkdir(parents=True)
            write_gzip_lines([{"depth": depth, "label": label, "predicted": label == right, "correct": right}
                              for depth, label, right in zip(depths, labels, correct)], folder / PREDICTIONS_GZ)
            run.units[unit], run.folders[unit] = {}, folder
        return run

    before = evidence("before", "train", {"seed0": [True, False, False, True], "seed1": [True, True, False, False]})
    after = evidence("after", "train", {"seed0": [True, True, True, True], "seed1": [True, True, False, True]})
    line = paired_line(before, after, "page.md:1")
    assert line.startswith("+37.5 points over the same 4 test problems, scored by each of 2 seeds (8 pairs, "
                           "resampled as if independent) (50.0 % → 87.5 %)")
    assert "(0 right only before, 3 only after)" in line
    folds = paired_line(evidence("cv-a", "cv", {"fold0": [True] * 4, "fold1": [False] * 4}),
                        evidence("cv-b", "cv", {"fold0": [True] * 4, "fold1": [True] * 4}), "page.md:2")
    assert folds.startswith("+50.0 points over the same 8 test problems (50.0 % → 100.0 %)")
    other_file = evidence("other", "train", {"seed0": [True] * 4, "seed1": [True] * 4}, depths=(8, 9, 8, 9))
    with pytest.raises(NeuromathError, match="seed0 of the two runs did not score the same test problems"):
        paired_line(before, other_file, "page.md:3")


def test_a_robustness_directive_tables_the_kept_reports(tmp_path):
    def row(variation, n, accuracy, plain, **extra):
        return {"variation": variation, "n": n, "accuracy": accuracy, "plain_accuracy": plain, **extra}

    folder = tmp_path / "robustness"
    folder.mkdir()
    report = {"seed": 0, "problems": 10, "rows": [
        row("plain", 10, 0.8, 0.8), row("question_removed", 9, 0.2, 0.75, cue_ratio=0.2 / 0.75),
        row("irrelevant_sentence", 10, 0.5, 0.8), row("sentences_reordered", 4, 0.25, 0.5),
        row("numbers_resampled", 10, 0.7, 0.8)]}
    (folder / "fold0.json").write_text(json.dumps(report), encoding="utf-8")
    page = render_robustness(folder, "page.md:3")
    assert ("| `fold0` | 80.0 (n 10) | 20.0 against 75.0 (n 9) | 50.0 against 80.0 (n 10) | 25.0 against 50.0 (n 4) "
            "| 70.0 against 80.0 (n 10) | - | 0.27 | - |") in page  # a report older than the question-changed row
    report["rows"].append(row("question_changed", 5, 0.4, 0.6, unchanged_answer=0.5))
    (folder / "fold0.json").write_text(json.dumps(report), encoding="utf-8")
    assert "| 70.0 against 80.0 (n 10) | 40.0 against 60.0 (n 5) | 0.27 | 50.0% |" in render_robustness(folder, "p")
    # a row's folds pooled on one line: accuracies over all their problems, the cue ratio's range over the folds
    (folder / "fold0.json").rename(folder / "g2t-fold0.json")
    report["rows"] = [row("plain", 30, 0.5, 0.5), row("question_removed", 30, 0.1, 0.5, cue_ratio=0.2),
                      row("irrelevant_sentence", 30, 0.4, 0.5), row("sentences_reordered", 0, 0.0, 0.0),
                      row("numbers_resampled", 30, 0.5, 0.5)]  # an older report: no question changed
    (folder / "g2t-fold1.json").write_text(json.dumps(report), encoding="utf-8")
    page = render_robustness(folder, "p")
    pooled, folds = page.split("Fold by fold:")
    assert ("| `g2t` (2) | 57.5 (n 40) | 12.3 against 55.8 (n 39) | 42.5 against 57.5 (n 40) "
            "| 25.0 against 50.0 (n 4) | 55.0 against 57.5 (n 40) | 40.0 against 60.0 (n 5) | 0.22 (0.20-0.27) "
            "| 50.0% |") in pooled
    assert "| `g2t-fold0` | 80.0 (n 10) |" in folds and "| `g2t-fold1` | 50.0 (n 30) |" in folds
    narrow = render_robustness(folder, "p", pooled_only=True)  # the same pooled cells in two tables of five columns
    assert ("| `g2t` (2) | 57.5 (n 40) | 12.3 against 55.8 (n 39) | 0.22 (0.20-0.27) | 40.0 against 60.0 (n 5) |"
            in narrow)
    assert ("| `g2t` (2) | 42.5 against 57.5 (n 40) | 25.0 against 50.0 (n 4) | 55.0 against 57.5 (n 40) | 50.0% |"
            in narrow)
    assert "fold0" not in narrow and all(line.count("|") == 6 for line in narrow.splitlines() if line)
    (folder / "fold1.json").write_text(json.dumps({"rows": [row("plain", 1, 1.0, 1.0)]}), encoding="utf-8")
    with pytest.raises(NeuromathError, match="page.md:3: cannot read the robustness report .*fold1.json"):
        render_robustness(folder, "page.md:3")
    with pytest.raises(NeuromathError, match="holds no robustness reports"):
        render_robustness(tmp_path / "empty", "page.md:3")


def test_a_refit_row_collects_its_refits_as_the_scored_folds_and_verifies(experiment):
    """A cv --refit row: each fold's scored run is its refit (fold<k>/refit, with predictions), the selection run
    beside it keeps its record without predictions; verify recomputes the refits and checks report.json against
    them, and the compute counts both runs."""
    from neuromath.results.evidence import read_evidence

    folder, root, work = experiment
    use_tiny_transformer_cv(folder, "refit-tiny", "--refit --set train.max_epochs=3")
    assert run_recipe(load_recipe(folder), work, echo=lambda line: None) == {"refit-tiny": "done"}
    runs = folder / "runs" / "refit-tiny"
    assert (runs / "fold0" / "refit" / "predictions.jsonl.gz").is_file()
    assert (runs / "fold0" / "summary.json").is_file() and not (runs / "fold0" / "predictions.jsonl.gz").exists()
    refit = json.loads((runs / "fold1" / "refit" / "summary.json").read_text(encoding="utf-8"))
    report = json.loads((runs / "report.json").read_text(encoding="utf-8"))
    assert report["folds"][1]["value_accuracy"] == refit["test"]["value_accuracy"]
    assert refit["test"]["n"] == 4 and refit["train_examples"] == 16  # the whole training fold, nothing carved out
    evidence = read_evidence(load_recipe(folder), load_recipe(folder).runs["refit-tiny"])
    assert sorted(evidence.units) == ["fold0", "fold1"]
    selection = json.loads((runs / "fold1" / "summary.json").read_text(encoding="utf-8"))
    assert evidence.wall_seconds == pytest.approx(sum(
        json.loads((runs / f"fold{k}" / part / "summary.json").read_text())["wall_seconds"]
        for k in (0, 1) for part in (".", "refit")))
    assert selection["wall_seconds"] > 0
    problems, lines = verify_recipe(load_recipe(folder), root)
    assert problems == [] and "gold data for 2 of 2" in lines[0]
    records = read_gzip_lines(runs / "fold1" / "refit" / "predictions.jsonl.gz")
    records[0]["correct"] = not records[0]["correct"]
    write_gzip_lines(records, runs / "fold1" / "refit" / "predictions.jsonl.gz")
    problems, _ = verify_recipe(load_recipe(folder), root)
    assert any("fold1" in problem for problem in problems), problems


def test_a_mathematics_dataset_run_on_generated_folders_keeps_its_answers_and_verifies(tmp_path, monkeypatch):
    """A Mathematics Dataset training reads generated folders: the recipe pins the files in them, verify accepts the
    folders, and the evidence keeps each predicted answer, so verify scores it again against the gold answers."""
    monkeypatch.setenv("NEUROMATH_DATA", str(tmp_path / "data"))
    module = "arithmetic__add_or_sub"
    generate = (f"neuromath generate mathematics_dataset --per-module 40 --modules {module} --workers 1 --seed 0 "
                "--splits {splits} --out {{work}}/{name}")
    setup = [generate.format(splits="train-easy", name="md"), generate.format(splits="interpolate", name="md-test")]
    reference = tmp_path / "reference"
    for command in setup:
        assert main(command.replace("{work}", str(reference)).split()[1:]) == 0
    files = sorted(p for p in reference.rglob("*.txt"))
    recipe = {
        "title": "tiny mathematics", "page": "tiny", "protocol": "A budget, not convergence.",
        "setup": setup,
        "data": {"{work}/" + p.relative_to(reference).as_posix(): sha256_of(p) for p in files},
        "runs": {"transformer-tiny": {
            "task": "mathematics_dataset", "model": "transformer", "dataset": "tiny",
            "command": f"neuromath train --config mathematics_dataset/transformer --set data.train={{work}}/md "
                       f"--set data.test={{work}}/md-test --set data.modules={module} --set model.d_model=16 "
                       "--set model.n_heads=2 --set model.d_ff=32 --set model.n_encoder_layers=1 "
                       "--set model.n_decoder_layers=1 --set train.max_steps=4 --set train.val_every_steps=2 "
                       "--set train.batch_size=8 --set optim.warmup_steps=1 --set train.progress=false"}},
    }
    folder = tmp_path / "results" / "tiny"
    folder.mkdir(parents=True)
    (folder / "recipe.yaml").write_text(yaml.safe_dump(recipe), encoding="utf-8")
    work = tmp_path / "work"
    assert run_recipe(load_recipe(folder), work, echo=lambda line: None) == {"transformer-tiny": "done"}
    evidence = folder / "runs" / "transformer-tiny"
    records = read_gzip_lines(evidence / "predictions.jsonl.gz")
    assert len(records) == 40 and all(isinstance(record["prediction"], str) for record in records)
    problems, lines = verify_recipe(load_recipe(folder), tmp_path / "data", work=work)
    assert problems == [] and "gold data for 1 of 1" in lines[0]
    records[0]["prediction"] += "7"  # an answer that no longer matches its recorded verdict (or a right one)
    records[0]["correct"] = True
    write_gzip_lines(records, evidence / "predictions.jsonl.gz")
    problems, _ = verify_recipe(load_recipe(folder), tmp_path / "data", work=work)
    assert any("recorded verdict" in p or "value_accuracy" in p for p in problems), problems
    recipe["data"] = {}
    (folder / "recipe.yaml").write_text(yaml.safe_dump(recipe), encoding="utf-8")
    problems, _ = verify_recipe(load_recipe(folder), tmp_path / "data", work=work)
    assert any("data.train {work}/md is not among the recipe's data files" in p for p in problems), problems


def test_a_leaderboard_row_names_the_precision_its_command_set():
    assert precision_label(["data.train=x.csv", "train.precision=32-true"]) == " (float32)"
    assert precision_label(["train.precision = bf16-mixed"]) == " (bf16)"
    assert precision_label(["train.precision=auto", "train.precision=32-true"]) == " (float32)"  # the last one counts
    assert precision_label(["train.seed=1", "train.num_threads=1"]) == ""
    # the float32 control of a bf16 preset is not listed as the preset itself
    board = (REPO / "docs" / "results" / "leaderboard.md").read_text(encoding="utf-8")
    assert "| `symbolic/tree_relative_fast_random` (float32) |" in board
