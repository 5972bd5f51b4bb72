"""A tiny character-level model learns one easy Mathematics Dataset module; the CLI generates,
evaluates two runs side by side and writes the per-module report."""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest

from neuromath.cli import main
from neuromath.config import load_config
from neuromath.experiments.evaluate_runs import evaluation_file
from neuromath.experiments.fit_then_test import train
from neuromath.tasks import mathematics_dataset as md


@pytest.mark.slow
def test_tiny_model_learns_place_value_and_evaluate_compares_runs(tmp_path, one_thread, capsys):
    module = "numbers__place_value"  # "What is the tens digit of 4713?" -> "1"
    data = tmp_path / "md"
    md.write_release(md.generate(3000, random.Random(0), modules=module), data)
    held_out = [dataclasses.replace(e, split="interpolate")
                for e in md.generate(400, random.Random(1), modules=module)]
    md.write_release(held_out, data)

    config = load_config(None, [
        "data.task=mathematics_dataset", f"data.train={data}", f"data.modules={module}",
        "data.valid_fraction=0.1", "data.valid_max=200",
        "model.d_model=64", "model.n_heads=4", "model.d_ff=128", "model.dropout=0.0",
        "model.n_encoder_layers=2", "model.n_decoder_layers=1",
        "train.max_epochs=12", "train.patience=0", "train.progress=false", "train.batch_size=64",
        "optim.warmup_steps=200", "decode.max_len=8",
    ])
    run = tmp_path / "tiny"
    summary = train(config, run).summary
    vocabulary = json.loads((run / "source_vocab.json").read_text())["tokens"]
    assert (run / "target_vocab.json").read_text() == (run / "source_vocab.json").read_text()  # one shared table
    assert vocabulary[:3] == ["<pad>", "<bos>", "<eos>"] and "?" in vocabulary and "7" in vocabulary

    majority = Counter(e.answer for e in held_out).most_common(1)[0][1] / len(held_out)
    assert majority < 0.3
    assert summary["best_val_value_accuracy"] >= 0.45

    # two runs side by side (the same weights under two names: the columns must agree)
    twin = tmp_path / "twin"
    shutil.copytree(run, twin)
    report_dir = tmp_path / "report"
    assert main(["evaluate", str(run), str(twin), "--data", str(data), "--report", str(report_dir)]) == 0
    printed = capsys.readouterr().out
    assert "| interpolate | numbers__place_value |" in printed and "difference" in printed
    report = json.loads((report_dir / "report.json").read_text())
    [row] = report["modules"]
    accuracy = row["accuracy"]["tiny"]
    assert accuracy == row["accuracy"]["twin"] and row["n"]["tiny"] == 400
    assert accuracy >= 0.45 > majority + 0.1
    assert report["summary"]["tiny"]["interpolate"]["mean_accuracy"] == accuracy
    assert (report_dir / "accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # each run's records beside its own, named after the data; never over the test records train wrote
    written = evaluation_file(run, data)
    assert written.parent == run / "evaluations" and written.name.endswith(f"{Path(data).name}.jsonl")
    predictions = [json.loads(line) for line in written.read_text().splitlines()]
    assert len(predictions) == 400 and sum(p["correct"] for p in predictions) == round(accuracy * 400)

    # --json with one run: the metrics plus the report; unknown characters are counted
    strange = tmp_path / "strange" / "interpolate"
    strange.mkdir(parents=True)
    (strange / f"{module}.txt").write_text("What is the tens digit of 4713€?\n1\n", encoding="utf-8")
    assert main(["evaluate", str(run), "--data", str(strange.parent), "--json"]) == 0
    output = json.loads(capsys.readouterr().out)
    assert output["n"] == 1 and output["unknown_tokens"] == 1 and output["examples_with_unknown"] == 1
    assert output["report"]["modules"][0]["module"] == module


def test_generate_command_writes_a_tree(tmp_path, capsys):
    out = tmp_path / "gen"
    code = main(["generate", "mathematics_dataset", "--per-module", "2", "--splits", "train-easy,extrapolate",
                 "--modules", "comparison__sort", "--seed", "3", "--out", str(out), "--workers", "1", "--no-progress"])
    assert code == 0
    assert "wrote 2 module files (4 questions)" in capsys.readouterr().out
    assert sorted(p.name for p in out.rglob("*.txt")) == ["comparison__sort.txt", "comparison__sort_more.txt"]
    assert main(["generate", "mathematics_dataset", "--per-module", "2", "--splits", "train", "--out", str(out)]) == 1
    assert "unknown split" in capsys.readouterr().err
