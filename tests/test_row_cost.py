"""benchmarks/row_cost.py: both sides run, CPU seconds are the processes' own, scores are read per seed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.patched_package import patched_package

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "row_cost.py"
sys.path.insert(0, str(SCRIPT.parent))
from row_cost import command_arguments, row_command, with_setup  # noqa: E402

TINY = ("neuromath train --config identities/tree_rnn --set data.generate_train=200 --set train.max_epochs=1 "
        "--set train.num_threads=1 --seeds 2")


def has_revision(revision: str) -> bool:
    return subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{revision}^{{commit}}"],
                          capture_output=True).returncode == 0


def test_a_row_command_comes_from_the_recipe_of_the_revision_asked():
    today = row_command("identities-40k:tree_lstm-paper-batch100", None)
    assert today[:3] == ["train", "--config", "identities/tree_lstm"] and "--seeds" in today
    assert row_command("identities-40k:tree_lstm-paper", None)[2] == "identities/tree_lstm_batch50"
    if has_revision("7c929cf"):  # a shallow clone lacks it
        # the recipe of an earlier revision: this row named the batch-50 preset by its old name there
        assert row_command("identities-40k:tree_lstm-paper", "7c929cf")[:3] == ["train", "--config",
                                                                                "identities/tree_lstm"]
    assert with_setup(["--set", "data.train={work}/a.json"], Path("/s")) == ["--set", "data.train=/s/a.json"]
    with pytest.raises(SystemExit, match="--setup"):
        with_setup(["{work}/a.json"], None)
    with pytest.raises(SystemExit, match="no run"):
        row_command("identities-40k:no-such-row", None)
    with pytest.raises(SystemExit, match="starts with neuromath"):
        command_arguments("python -m neuromath train")


def test_a_baseline_that_burns_cpu_costs_more_cpu_seconds(tmp_path):
    """The baseline is today's package whose training burns about two CPU seconds more per run (two seeds): its
    CPU seconds must come out higher by about that, and both sides must report the same scores per seed."""
    burn = ("    import time as _t\n    _end = _t.process_time() + 2.0\n"
            "    while _t.process_time() < _end:\n        pass\n")
    base = patched_package(tmp_path / "base", "training/classifier_training.py",
                           "    data = prepare_identity_data(config)\n", burn)
    out = tmp_path / "cost.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--baseline", str(base), "--command", TINY,
                           "--baseline-command", TINY, "--sequential", "--work", str(tmp_path / "work"),
                           "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    baseline, today = report["sides"]["baseline"], report["sides"]["today"]
    assert baseline["cpu_seconds"] - today["cpu_seconds"] > 2.5  # 4 s burnt, less the noise of two short runs
    assert report["today_over_baseline_cpu"] == pytest.approx(today["cpu_seconds"] / baseline["cpu_seconds"],
                                                              abs=1e-3)
    assert set(today["units"]) == {"seed0", "seed1"} and today["epochs"] == 2
    for seed in ("seed0", "seed1"):
        assert today["units"][seed]["metric"] == "accuracy"
        assert today["units"][seed]["test"] == baseline["units"][seed]["test"]  # the same training, seed by seed
    assert "| today |" in done.stdout and "today / baseline CPU seconds" in done.stdout
