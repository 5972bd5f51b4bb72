"""The two selection protocols (train.protocol): clean chooses the kept epoch on validation data carved out of
training; literature chooses it on the test split, as the published k-fold code does, and every number it makes is
labelled: in the summary, the cv report, the model card, the results pages and the checks of results verify."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from test_results import experiment, write_folds  # noqa: F401  (the fixture of a tiny experiment, and its folds)

from neuromath.cli import main
from neuromath.config import load_config
from neuromath.errors import ConfigError
from neuromath.results.evidence import verify_recipe
from neuromath.results.recipes import load_recipe
from neuromath.results.runner import run_recipe
from neuromath.tasks import get_task
from neuromath.training.run import prepare_data
from tools.results_pages.pages import build_pages

TINY = ("--set model.d_model=16 --set model.n_heads=2 --set model.d_ff=32 --set model.n_encoder_layers=1 "
        "--set model.n_decoder_layers=1 --set train.num_threads=1 --set train.progress=false "
        "--set data.valid_fraction=0.25 --set train.max_epochs=3")


@pytest.mark.parametrize("overrides, message", [
    (["data.valid=somewhere.csv"], r"data.valid \(somewhere.csv\) would go unused"),
    (["train.validate=false", "train.max_epochs=3", "train.min_epochs=1"], r"needs train.validate true"),
])
def test_the_literature_protocol_needs_a_test_split_and_nothing_else_to_choose_on(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config("word_problems/graph2tree", ["train.protocol=literature", *overrides], strict=True)
    with pytest.raises(ConfigError, match=r"train.protocol must be one of clean, literature, got 'test'"):
        load_config("word_problems/transformer", ["train.protocol=test"], strict=True)
    with pytest.raises(ConfigError, match=r"'tree_lstm' \(tree classifier\) does not"):
        load_config("identities/tree_lstm", ["train.protocol=literature"], strict=True)


def test_literature_validates_on_the_test_split_and_trains_on_the_whole_training_file(tmp_path, monkeypatch):
    write_folds(tmp_path)
    monkeypatch.chdir(tmp_path)
    paths = ["data.train=tiny-cv/fold0/train.csv", "data.test=tiny-cv/fold0/dev.csv", "data.valid_fraction=0.25"]
    task = get_task("word_problems")
    clean = prepare_data(load_config("word_problems/transformer", paths, strict=True), task)
    literature = prepare_data(load_config("word_problems/transformer", [*paths, "train.protocol=literature"],
                                          strict=True), task)
    assert (len(clean.train), len(clean.valid), len(clean.test)) == (12, 4, 4)
    assert len(literature.train) == 16 and literature.valid == literature.test and len(literature.test) == 4
    assert "literature" in literature.report["valid"]["source"]


def twin_recipe(folder: Path) -> None:
    """The tiny experiment as two cross-validations of one preset, one per protocol."""
    recipe = yaml.safe_load((folder / "recipe.yaml").read_text(encoding="utf-8"))
    command = f"neuromath cv --config word_problems/transformer --folds tiny-cv {TINY}"
    recipe["runs"] = {name: {"task": "word_problems", "model": "transformer", "dataset": "tiny",
                             "command": command + extra}
                      for name, extra in (("clean-tiny", ""), ("literature-tiny", " --protocol literature"))}
    recipe["tables"]["main"]["rows"] = {"`transformer`": ["clean-tiny"],
                                        "`transformer` literature": ["literature-tiny"]}
    (folder / "recipe.yaml").write_text(yaml.safe_dump(recipe), encoding="utf-8")


def mean_value(folder: Path, run: str) -> float:
    report = json.loads((folder / "runs" / run / "report.json").read_text(encoding="utf-8"))
    return 100 * report["value_accuracy"]["mean"]


def test_both_protocols_side_by_side_are_labelled_everywhere_and_verify(experiment, tmp_path):  # noqa: F811
    folder, root, work = experiment
    twin_recipe(folder)
    assert run_recipe(load_recipe(folder), work, echo=lambda line: None) == {"clean-tiny": "done",
                                                                           "literature-tiny": "done"}
    for run, protocol in (("clean-tiny", "clean"), ("literature-tiny", "literature")):
        for fold in ("fold0", "fold1"):
            summary = json.loads((folder / "runs" / run / fold / "summary.json").read_text(encoding="utf-8"))
            assert summary["protocol"] == protocol
            # literature: the epoch's "validation" is the test fold; clean: a quarter of the training fold
            assert summary["valid_examples"] == 4 and summary["test"]["n"] == 4
            assert summary["train_examples"] == (16 if protocol == "literature" else 12)
        report = json.loads((folder / "runs" / run / "report.json").read_text(encoding="utf-8"))
        assert report["protocol"] == protocol
    card = (work / "tiny" / "literature-tiny" / "fold0" / "README.md").read_text(encoding="utf-8")
    assert "**literature protocol**" in card
    assert "literature protocol" not in (work / "tiny" / "clean-tiny" / "fold0" / "README.md").read_text()
    assert "Literature protocol" in (work / "tiny" / "literature-tiny" / "report.md").read_text()
    assert verify_recipe(load_recipe(folder), root)[0] == []

    pages = folder.parent / "pages"
    pages.mkdir()
    (pages / "tiny.md").write_text("{{ table tiny.main }}\n\nlit {{ value tiny.literature-tiny.value_accuracy }}\n\n"
                                   "clean {{ value tiny.clean-tiny.value_accuracy }}\n\n{{ leaderboard }}\n",
                                   encoding="utf-8")
    page = build_pages(folder.parent, tmp_path / "docs")[tmp_path / "docs" / "results" / "tiny.md"]
    clean, literature = mean_value(folder, "clean-tiny"), mean_value(folder, "literature-tiny")
    assert re.search(rf"\| `transformer` literature \| {literature:.1f} ± [0-9.]+ \(literature\) \|", page), page
    assert re.search(rf"\| `transformer` \| {clean:.1f} ± [0-9.]+ \|", page), page
    assert re.search(r"lit [0-9.]+ ± [0-9.]+ % \(literature protocol\)", page)
    assert not re.search(r"clean [0-9.]+ ± [0-9.]+ % \(literature", page)
    gap = f"{literature - clean:+.1f}"
    assert f"Selected on the test fold (literature protocol); {gap} over clean |" in page, page
    assert f"Nothing is selected; literature {gap} |" in page, page


def test_verify_refuses_a_literature_number_that_its_recipe_does_not_label(experiment):  # noqa: F811
    folder, root, work = experiment
    twin_recipe(folder)
    run_recipe(load_recipe(folder), work, only=["literature-tiny"], echo=lambda line: None)
    text = (folder / "recipe.yaml").read_text(encoding="utf-8")
    (folder / "recipe.yaml").write_text(text.replace(" --protocol literature", ""), encoding="utf-8")
    problems = verify_recipe(load_recipe(folder), root)[0]
    label = "tiny/literature-tiny/fold0: chosen under the literature protocol, but the recipe's run is clean"
    assert any(problem.startswith(label) for problem in problems), problems
    assert any("report.json: chosen under the literature protocol" in problem for problem in problems), problems
    assert main(["results", "verify", str(folder)]) == 1


def test_the_commands_take_the_protocol_and_refuse_a_refit_under_literature(tmp_path, monkeypatch, capsys):
    write_folds(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["cv", "--config", "word_problems/transformer", "--folds", "tiny-cv", "--protocol", "literature",
                 "--refit", "--out", str(tmp_path / "cv"), *TINY.split()]) != 0
    assert "under --protocol literature the test fold chose the epoch" in capsys.readouterr().err
    assert not (tmp_path / "cv" / "fold0").exists()  # refused before any fold trained
    assert main(["train", "--config", "word_problems/transformer", "--set", "data.train=tiny-cv/fold0/train.csv",
                 "--protocol", "literature", "--out", str(tmp_path / "run")]) != 0
    assert "chooses the epoch on the test split, and this run has none: name it in data.test" in (
        capsys.readouterr().err)
    with pytest.raises(SystemExit):
        main(["train", "--config", "word_problems/transformer", "--protocol", "test", "--out", str(tmp_path / "r")])
    assert "invalid choice: 'test'" in capsys.readouterr().err


def test_the_server_says_when_a_runs_accuracy_was_chosen_on_test(tmp_path):
    pytest.importorskip("fastapi")
    from support.run_folders import write_sequence_run

    import neuromath.serve as serve_package
    from neuromath.api import load
    from neuromath.serve.app import run_info

    run = write_sequence_run(tmp_path / "run")
    for written, shown in (({}, "clean"), ({"protocol": "clean"}, "clean"), ({"protocol": "literature"}, "literature")):
        (run / "summary.json").write_text(json.dumps({"test": {"value_accuracy": 0.5}, **written}), encoding="utf-8")
        info = run_info("run", run, load(run))
        assert (info["accuracy"], info["accuracy_of"], info["protocol"]) == (0.5, "test", shown)
    page = (Path(serve_package.__file__).parent / "page.html").read_text(encoding="utf-8")
    assert 'run.protocol === "literature"' in page  # the page labels what the API says
