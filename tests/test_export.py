"""Model cards and export (neuromath/sharing/card.py, neuromath/sharing/export_run.py, neuromath export): train
writes README.md and environment.json in each run folder; an exported folder holds safetensors weights, the config,
vocabularies, summary and card and nothing that can run code; it loads, solves and serves exactly as the run does;
a broken or misplaced export is one clear error."""

import json
import os
import shutil
import sys

import pytest
import safetensors.torch
import torch
import yaml

import neuromath
from neuromath.api import load_classifier
from neuromath.cli import main
from neuromath.config import load_config
from neuromath.environment import describe
from neuromath.errors import DataFormatError, NeuromathError
from neuromath.experiments.fit_then_test import train, train_seeds
from neuromath.models.weights import read_weights, save_safetensors, weights_file
from neuromath.sharing.card import PYTHON_ENTRY, model_card, training_command
from neuromath.sharing.export_run import export_run
from neuromath.tasks import get_task

JERRY = "Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?"
PROBLEMS = [JERRY, "Tom has 5 apples. He buys 3 more. How many apples does he have?",
            "A box holds 12 eggs. How many eggs are in 4 boxes?"]
EQUATIONS = ["sin(x)^2 + cos(x)^2 = 1", "x + y = y + x", "x*2 = x + x", "exp(x) = x", "cos(x) = 1"]
TINY_WORD_PROBLEMS = [
    "data.task=word_problems", "model.d_model=16", "model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1",
    "model.n_decoder_layers=1", "data.generate_train=60", "data.generate_valid=10", "data.generate_test=10",
    "train.max_epochs=1", "train.progress=false", "train.num_threads=1",
]
TINY_IDENTITIES = [
    "data.task=identities", "model.name=tree_lstm", "model.d_model=8", "data.generate_train=200",
    "data.train_depths=1-3", "data.test_depths=4-4", "optim.schedule=plateau", "train.max_epochs=1",
    "train.progress=false", "train.num_threads=1",
]
RUN_ONLY = {"checkpoints", "logs", "metrics.csv", "data.json", "learning_curves.png", "predictions.jsonl", "model.pt"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two tiny trained runs and their exports: a word-problem Transformer trained with --seeds 2 (its seed0 folder
    is the run) and an identities Tree-LSTM."""
    root = tmp_path_factory.mktemp("export")
    threads = torch.get_num_threads()
    try:
        train_seeds(load_config(None, TINY_WORD_PROBLEMS), root / "wp", 2)
        train(load_config(None, TINY_IDENTITIES), root / "ids")
    finally:
        torch.set_num_threads(threads)
    folders = {"wp": root / "wp" / "seed0", "ids": root / "ids"}
    for name, run in list(folders.items()):
        export_run(run, root / f"{name}-export")
        folders[f"{name}-export"] = root / f"{name}-export"
    return folders


def front_matter(path) -> dict:
    """The YAML header of a model card, between its first two ``---`` lines, read with yaml.safe_load."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "---", lines[:3]
    end = lines.index("---", 1)
    return yaml.safe_load("\n".join(lines[1:end]))


def test_train_writes_a_card_and_the_environment_in_each_seed_folder(runs):
    for seed in ("seed0", "seed1"):
        folder = runs["wp"].parent / seed
        assert (folder / "README.md").is_file()
        environment = json.loads((folder / "environment.json").read_text(encoding="utf-8"))
        assert environment.keys() == describe().keys()
        assert environment["neuromath"] == neuromath.__version__ and environment["packages"]["safetensors"]
    card = (runs["wp"].parent / "seed1" / "README.md").read_text(encoding="utf-8")
    assert "(seed 1)" in card and f"Command: `{PYTHON_ENTRY}`" in card


@pytest.mark.parametrize("name, task, model", [("wp", "word_problems", "transformer"),
                                               ("ids", "identities", "tree_lstm")])
def test_the_cards_header_names_task_model_and_the_scores_of_summary_json(runs, name, task, model):
    run = runs[name]
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    header = front_matter(run / "README.md")
    assert header["library_name"] == "neuromath" and header["license"] == "other"
    assert {task, model} <= set(header["tags"]) and header["datasets"] == ["generated"]
    [entry] = header["model-index"]
    [result] = entry["results"]
    assert result["task"]["name"] == task and result["dataset"]["split"] == "test"
    scores = {metric["type"]: metric["value"] for metric in result["metrics"]}
    assert scores and set(header["metrics"]) == set(scores)
    assert {"value_accuracy", "equation_accuracy"} <= set(scores) if name == "wp" else \
        {"accuracy", "precision", "recall"} <= set(scores)
    for key, value in scores.items():
        assert value == summary["test"][key], key
    body = (run / "README.md").read_text(encoding="utf-8")
    for needed in ("## Intended use and limits", "## Licence", f"{summary['parameters']:,} parameters",
                   get_task(task).card.limits[0], get_task(task).card.example):
        assert needed in body, needed
    # the exported card is the run's own
    assert (runs[f"{name}-export"] / "README.md").read_text(encoding="utf-8") == body


def test_the_card_names_the_task_limits_and_the_limit_that_ended_training(runs):
    card = (runs["wp"] / "README.md").read_text(encoding="utf-8")
    for limit in get_task("word_problems").card.limits:
        assert limit in card
    assert "ended by its epoch limit (train.max_epochs)" in card and "not the scores of a converged run" in card
    assert "Trained on examples made by the task's built-in generator only." in card


@pytest.mark.parametrize("name, vocabularies", [("wp", {"source_vocab.json", "target_vocab.json"}),
                                                ("ids", {"node_vocab.json"})])
def test_an_export_holds_the_weights_as_safetensors_and_nothing_that_can_run(runs, name, vocabularies):
    export = runs[f"{name}-export"]
    names = {path.name for path in export.iterdir()}
    assert names == {"model.safetensors", "config.yaml", "summary.json", "environment.json", "README.md",
                     *vocabularies}
    assert not names & RUN_ONLY
    assert not [path for path in export.rglob("*") if path.suffix in (".pt", ".ckpt", ".pkl", ".pickle")]
    assert not [path for path in export.parent.iterdir() if path.name.startswith(f".{export.name}")]  # no staging
    for copied in ("config.yaml", *vocabularies):  # no absolute path in them: copied byte for byte
        assert (export / copied).read_bytes() == (runs[name] / copied).read_bytes()
    summary, ours = (json.loads((folder / "summary.json").read_text(encoding="utf-8"))
                     for folder in (runs[name], export))
    assert ours["run_dir"] == runs[name].name  # the folder's name, not the path of the machine that trained it
    assert {k: v for k, v in ours.items() if k not in ("run_dir", "best_checkpoint")} == \
        {k: v for k, v in summary.items() if k not in ("run_dir", "best_checkpoint")}


@pytest.mark.parametrize("name", ["wp", "ids"])
def test_the_safetensors_file_alone_holds_the_models_state_dict(runs, name):
    """What a Hub upload takes: the weights load with safetensors alone, under the model's own names."""
    tensors = safetensors.torch.load_file(runs[f"{name}-export"] / "model.safetensors")
    model_state = neuromath.load(runs[name]).model.state_dict()
    assert tensors.keys() == model_state.keys()
    saved = torch.load(runs[name] / "model.pt", weights_only=True)
    for key, tensor in tensors.items():
        assert tensor.dtype == saved[key].dtype and torch.equal(tensor, saved[key]), key


def test_a_word_problem_export_solves_exactly_as_its_run(runs):
    run, export = neuromath.load(runs["wp"]), neuromath.load(runs["wp-export"])
    assert export.run_dir == runs["wp-export"]
    assert [s.to_json() for s in export.solve_many(PROBLEMS)] == [s.to_json() for s in run.solve_many(PROBLEMS)]
    wide_run, wide_export = run.with_decode(beam=3, nbest=3), export.with_decode(beam=3, nbest=3)
    assert [s.to_json() for s in wide_export.solve_many(PROBLEMS)] == \
        [s.to_json() for s in wide_run.solve_many(PROBLEMS)]


def test_an_identities_export_verifies_exactly_as_its_run(runs):
    run, export = neuromath.load(runs["ids"]), load_classifier(runs["ids-export"])  # what neuromath complete loads
    assert [v.to_json() for v in export.solve_many(EQUATIONS)] == [v.to_json() for v in run.solve_many(EQUATIONS)]


def test_solve_on_the_command_line_reads_an_export(runs, capsys):
    answers = []
    for folder in (runs["wp"], runs["wp-export"]):
        status = main(["solve", str(folder), JERRY, "--json"])
        answers.append((status, json.loads(capsys.readouterr().out)))
    assert answers[0] == answers[1] and answers[0][0] in (0, 1)
    assert main(["solve", str(runs["ids-export"]), EQUATIONS[0]]) == 0
    assert "numeric check: true" in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")  # starlette 1.x on httpx
def test_serve_lists_an_export_with_its_summary(runs):
    pytest.importorskip("fastapi", reason="neuromath serve needs the serve extra")
    from fastapi.testclient import TestClient

    from neuromath.serve.app import create_app

    summary = json.loads((runs["ids"] / "summary.json").read_text(encoding="utf-8"))
    with TestClient(create_app([runs["wp-export"], runs["ids-export"]], max_wait_ms=1)) as client:
        listed = {run["name"]: run for run in client.get("/api/runs").json()}
        answer = client.post("/api/solve", json={"run": "ids-export", "text": EQUATIONS[0]}).json()
    assert listed["ids-export"]["task"] == "identities" and listed["ids-export"]["accuracy_of"] == "test"
    assert listed["ids-export"]["accuracy"] == summary["test"]["accuracy"]
    assert listed["wp-export"]["model"] == "transformer"
    assert answer == load_classifier(runs["ids"]).solve(EQUATIONS[0]).to_json()


def test_garbage_in_place_of_the_safetensors_is_one_clear_error(runs, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(runs["wp-export"], broken)
    weights = broken / "model.safetensors"
    weights.write_bytes(b"\x00garbage, not tensors" * 10)
    with pytest.raises(DataFormatError, match=rf"^{weights}: not a safetensors weights file: truncated, corrupt or "
                                              r"another format \(.+\)$"):
        neuromath.load(broken)
    assert main(["solve", str(broken), JERRY]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {weights}: not a safetensors weights file")
    weights.write_bytes(b"")
    with pytest.raises(DataFormatError, match=r"\(an empty file\)$"):
        neuromath.load(broken)


def test_weights_of_another_model_in_an_export_are_refused(runs, tmp_path):
    mixed = tmp_path / "mixed"
    shutil.copytree(runs["wp-export"], mixed)
    shutil.copy(runs["ids-export"] / "model.safetensors", mixed / "model.safetensors")
    with pytest.raises(DataFormatError, match=r"model.safetensors: not a weights file of this run's model"):
        neuromath.load(mixed)


def test_a_folder_without_weights_is_an_error_naming_it(runs, tmp_path):
    for name in ("wp", "ids"):
        bare = tmp_path / name
        shutil.copytree(runs[f"{name}-export"], bare)
        (bare / "model.safetensors").unlink()
        with pytest.raises(NeuromathError, match=rf"^{bare} (has no trained weights|is not a trained identities "
                                                 r"run) \(.*model.safetensors"):
            neuromath.load(bare)
        with pytest.raises(NeuromathError, match=rf"^{bare} has no trained weights"):
            weights_file(bare)


def test_export_refuses_an_out_that_is_not_new_and_leaves_it_alone(runs, tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine\n")
    with pytest.raises(NeuromathError, match=rf"^{taken} exists and is not empty: refusing to export into it"):
        export_run(runs["wp"], taken)
    assert [path.name for path in taken.iterdir()] == ["notes.txt"]
    a_file = tmp_path / "a_file"
    a_file.write_text("mine\n")
    assert main(["export", str(runs["wp"]), str(a_file)]) == 1
    assert a_file.read_text() == "mine\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a_file", "taken"]  # no staging folder left
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "model.safetensors" in export_run(runs["ids"], empty)


def test_an_export_of_a_run_without_a_card_gets_one_written(runs, tmp_path):
    old = tmp_path / "old_run"
    old.mkdir()
    for name in ("config.yaml", "model.pt", "node_vocab.json", "summary.json"):  # a run trained before cards
        shutil.copy(runs["ids"] / name, old / name)
    export_run(old, tmp_path / "out")
    header = front_matter(tmp_path / "out" / "README.md")
    summary = json.loads((old / "summary.json").read_text(encoding="utf-8"))
    assert header["model-index"][0]["results"][0]["metrics"][0]["value"] == summary["test"]["accuracy"]
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "Command: `not recorded`" in card and "not recorded (no environment.json)" in card
    assert not (tmp_path / "out" / "environment.json").exists()


def test_export_refuses_a_run_that_has_not_finished(runs, tmp_path):
    unfinished = tmp_path / "unfinished"
    shutil.copytree(runs["wp-export"], unfinished)
    (unfinished / "summary.json").unlink()
    with pytest.raises(NeuromathError, match=rf"^{unfinished}: no summary.json"):
        export_run(unfinished, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_export_can_be_exported_again(runs, tmp_path):
    export_run(runs["wp-export"], tmp_path / "again")
    first = read_weights(runs["wp-export"] / "model.safetensors")
    again = read_weights(tmp_path / "again" / "model.safetensors")
    assert first.keys() == again.keys() and all(torch.equal(first[key], again[key]) for key in first)


def test_tied_and_viewed_tensors_are_saved_as_copies_that_load_back_equal(tmp_path):
    """safetensors refuses tensors that share storage: save_safetensors writes a copy of each."""
    shared = torch.arange(12.0).reshape(3, 4)
    state = {"embedding.weight": shared, "output.weight": shared, "row": shared[1], "column": shared[:, 2]}
    with pytest.raises(RuntimeError):
        safetensors.torch.save_file(state, str(tmp_path / "refused.safetensors"))
    save_safetensors(state, tmp_path / "model.safetensors")
    loaded = safetensors.torch.load_file(tmp_path / "model.safetensors")
    assert loaded.keys() == state.keys() and all(torch.equal(loaded[key], state[key]) for key in state)
    assert [path.name for path in tmp_path.iterdir()] == ["model.safetensors"]  # no temporary file left


def test_the_training_command_is_rebuilt_from_the_command_line(monkeypatch):
    assert training_command() == PYTHON_ENTRY  # pytest is not the neuromath command
    monkeypatch.setattr(sys, "argv", [os.path.join("venv", "bin", "neuromath"), "train", "--config",
                                      "word_problems/transformer", "--set", "data.train=my data.csv", "--out", "r"])
    assert training_command() == ("neuromath train --config word_problems/transformer --set 'data.train=my data.csv' "
                                  "--out r")
    monkeypatch.setattr(sys, "argv", [os.path.join("src", "neuromath", "__main__.py"), "train", "--out", "r"])
    assert training_command() == "neuromath train --out r"


def test_a_card_names_data_files_under_the_data_root_as_presets_do_and_falls_back_to_validation(tmp_path):
    root = tmp_path / "data"
    config = load_config(None, ["data.task=word_problems", f"data.root={root}",
                                f"data.train={root}/mawps-cv/fold0/train.csv",
                                f"data.test={tmp_path}/elsewhere/dev.csv"])
    summary = {"best_val_value_accuracy": 0.5, "epochs": 3, "steps": 30, "stopped_by": "early_stopping",
               "train_examples": 90, "valid_examples": 10, "parameters": 1234}
    card = model_card(config, summary, None, None)
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["datasets"] == ["mawps-cv/fold0/train.csv", f"{tmp_path}/elsewhere/dev.csv"]
    [result] = header["model-index"][0]["results"]
    assert result["dataset"] == {"type": "mawps-cv/fold0/train.csv (held out)",
                                 "name": "mawps-cv/fold0/train.csv (held out)", "split": "validation"}
    assert result["metrics"] == [{"type": "value_accuracy", "name": "value accuracy (validation)", "value": 0.5}]
    assert str(root) not in card and "Trained on `mawps-cv/fold0/train.csv` only." in card
    assert "each under its corpus's own licence" in card and "converged" not in card
    assert "Command: `not recorded`" in card and "3 epochs (30 steps), ended by early stopping" in card

    classifier = load_config(None, ["data.task=identities", "model.name=tree_lstm"])
    header = yaml.safe_load(model_card(classifier, {"best_val_accuracy": 0.75}, None, None).split("---\n")[1])
    assert header["metrics"] == ["accuracy"] and header["datasets"] == ["generated"]
    assert header["model-index"][0]["results"][0]["task"]["type"] == "text-classification"
    untested = model_card(config, {"best_val_value_accuracy": None}, None, None)
    assert "model-index" not in yaml.safe_load(untested.split("---\n")[1])
    assert "None: the run had neither a test split nor validation." in untested


def test_an_export_names_no_absolute_path_of_the_machine_that_trained_it(tmp_path):
    data = tmp_path / "corpus" / "train.jsonl"
    data.parent.mkdir()
    assert main(["generate", "word_problems", "--n", "40", "--seed", "3", "--out", str(data)]) == 0
    run, out = tmp_path / "somewhere" / "run", tmp_path / "export"
    assert main(["train", "--config", "word_problems/transformer", "--set", f"data.train={data}",
                 "--set", "data.generate_valid=8", "--set", "data.generate_test=0", "--set", "model.d_model=32",
                 "--set", "model.n_heads=2", "--set", "model.d_ff=64", "--set", "train.max_epochs=1",
                 "--set", "train.progress=false", "--out", str(run)]) == 0
    assert str(tmp_path) in (run / "config.yaml").read_text(encoding="utf-8")  # the run keeps its paths as given
    assert main(["export", str(run), str(out)]) == 0
    for path in out.iterdir():
        if path.suffix in (".yaml", ".json", ".md"):
            assert str(tmp_path) not in path.read_text(encoding="utf-8"), path.name
    config = yaml.safe_load((out / "config.yaml").read_text(encoding="utf-8"))
    assert config["data"]["train"] == "train.jsonl"  # outside the data root: its name
    assert neuromath.load(out).solve("Tom has 3 apples and buys 4 more. How many apples does he have?") is not None
