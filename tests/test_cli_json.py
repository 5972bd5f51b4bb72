"""--json on train, export and import: one JSON object on stdout with the run's key fields, and nothing else there
(what the commands print as they work goes to stderr)."""

from __future__ import annotations

import io
import json
import sys

import pytest
import torch

from neuromath.cli import main
from neuromath.evaluation.bleu import BLEU_DEFINITION
from neuromath.models.released_weights import released_keys

TINY = [
    "--set", "model.d_model=16", "--set", "model.n_heads=2", "--set", "model.d_ff=32",
    "--set", "model.n_encoder_layers=1", "--set", "model.n_decoder_layers=1", "--set", "train.progress=false",
    "--set", "train.max_epochs=1", "--set", "train.patience=0", "--set", "train.num_threads=1",
    "--set", "data.generate_train=40", "--set", "data.generate_valid=8", "--set", "data.generate_test=8",
]


def only_json(capsys) -> dict:
    """The one JSON object the command printed on stdout (json.loads fails on anything else there)."""
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny word-problem run trained with --json, and what stdout held."""
    out = tmp_path_factory.mktemp("json") / "run"
    threads, stdout = torch.get_num_threads(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:  # capsys is per test; the run is trained once for the module
        patch.setattr(sys, "stdout", stdout)
        try:
            assert main(["train", "--config", "word_problems/transformer", *TINY, "--json", "--out", str(out)]) == 0
        finally:
            torch.set_num_threads(threads)
    return out, stdout.getvalue()


def test_train_json_is_one_object_with_the_runs_scores(trained):
    out, stdout = trained
    outcome = json.loads(stdout)
    summary = json.loads((out / "summary.json").read_text())
    assert outcome["run_dir"] == str(out) and outcome["summary"] == str(out / "summary.json")
    assert outcome["epochs"] == summary["epochs"] == 1 and outcome["best_epoch"] == 1
    assert outcome["best_val_value_accuracy"] == summary["best_val_value_accuracy"]
    assert outcome["test"] == summary["test"] and outcome["test"]["n"] == 8
    assert outcome["test"]["bleu_definition"] == BLEU_DEFINITION  # the summary says which BLEU it holds


def test_export_json_names_the_folder_and_the_files_written(trained, tmp_path, capsys):
    run, _ = trained
    out = tmp_path / "export"
    capsys.readouterr()
    assert main(["export", str(run), str(out), "--json"]) == 0
    outcome = only_json(capsys)
    assert outcome["run_dir"] == str(run) and outcome["out"] == str(out)
    assert str(out / "model.safetensors") in outcome["files"] and str(out / "summary.json") in outcome["files"]
    assert all((out / path.rsplit("/", 1)[-1]).is_file() for path in outcome["files"])


def test_import_json_names_the_run_folder_and_its_scores(tmp_path, capsys):
    # a state dict with the keys and shapes of a released Tree-LSTM (hidden 4): the weights' values do not matter
    torch.manual_seed(0)
    state = {key: torch.randn(shape) for key, shape in released_keys("tree_lstm", 4).items()}
    checkpoint = tmp_path / "tiny-model-1.checkpoint"
    torch.save(state, checkpoint)
    out = tmp_path / "imported"
    capsys.readouterr()
    assert main(["import", "released", str(checkpoint), "--model", "tree_lstm", "--out", str(out), "--json"]) == 0
    outcome = only_json(capsys)
    summary = json.loads((out / "summary.json").read_text())
    assert outcome["run_dir"] == str(out) and outcome["model"] == "tree_lstm"
    assert outcome["checkpoint_sha256"] == summary["checkpoint_sha256"]
    assert outcome["parameters"] == summary["parameters"] and outcome["test"] is None  # an import is not tested
    assert str(out / "summary.json") in outcome["files"] and (out / "model.pt").is_file()
