"""benchmarks/time_to_result.py: a short run (generated problems, three epochs) writes each epoch's cost and reads
the row's goal from its committed evidence; and the allocator setting it reports on keeps freed memory."""

import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neuromath.config import load_config
from neuromath.training.classifier_training import fit_classifier
from neuromath.training.run import fit_sequence_model

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "time_to_result.py"


def test_a_short_run_records_every_epochs_cost_and_the_rows_goal(tmp_path):
    out = tmp_path / "ttr.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--short", "--rows", "word-problems-cv:gts-mawps-levels",
                           "--work", str(tmp_path / "runs"), "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = json.loads(out.read_text())["rows"]
    report = json.loads((ROOT / "results/word-problems-cv/runs/gts-mawps-levels/report.json").read_text())
    accuracy = report["value_accuracy"]
    assert row["preset"] == "word_problems/gts" and row["short"] is True
    assert row["goal"] == pytest.approx(accuracy["mean"] - accuracy["std"])
    assert "data.train=mawps-cv/fold0/train.csv" in row["sets"] and "train.num_threads=1" in row["sets"]
    epochs = row["epochs"]
    assert [epoch["epoch"] for epoch in epochs] == [1, 2, 3]
    seconds = [epoch["cpu_seconds"] for epoch in epochs]
    assert 0 < seconds[0] < seconds[1] < seconds[2] and row["cpu_seconds_total"] == seconds[-1]
    assert all(0 <= epoch["test_value_accuracy"] <= 1 and epoch["faults_per_step"] >= 0 for epoch in epochs)
    kept = max(epochs, key=lambda epoch: (epoch["val_value_accuracy"], -epoch["epoch"]))
    assert row["kept_epoch"] == kept["epoch"] and row["end_test_value_accuracy"] == kept["test_value_accuracy"]
    assert row["cpu_seconds_to_kept_epoch"] == kept["cpu_seconds"]
    reached = [epoch for epoch in epochs if epoch["test_value_accuracy"] >= row["goal"]]
    assert row["epoch_of_goal"] == (reached[0]["epoch"] if reached else None)
    assert (tmp_path / "runs/word-problems-cv-gts-mawps-levels/model.pt").exists()
    assert sorted(row["patience"], key=int) == ["3", "5"]  # up to the preset's own 6
    assert row["patience"]["5"]["kept_epoch"] == row["kept_epoch"]  # three epochs: none stops early


def load_script():
    spec = importlib.util.spec_from_file_location("time_to_result", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_shorter_patience_is_worked_out_from_the_recorded_epochs():
    with_patience = load_script().with_patience
    validation = [0.2, 0.5, 0.5, 0.4, 0.6, 0.5, 0.55, 0.6, 0.58, 0.59]  # best 0.6 first at epoch 5, tied at 8
    epochs = [{"epoch": n, "cpu_seconds": 10.0 * n, "val_value_accuracy": v, "test_value_accuracy": v / 2}
              for n, v in enumerate(validation, start=1)]
    # patience 2: epoch 3 ties 0.5 (no better), epoch 4 is the second without: stop there, keep epoch 2
    assert with_patience(epochs, 2) == {"stops_at": 4, "cpu_seconds": 40.0, "kept_epoch": 2,
                                        "kept_cpu_seconds": 20.0, "test_value_accuracy": 0.25}
    assert with_patience(epochs, 3)["stops_at"] == 8 and with_patience(epochs, 3)["kept_epoch"] == 5  # a tie
    # not before min_epochs: patience 2 runs out at epoch 4, the run goes on, keeps epoch 5, stops two epochs later
    assert with_patience(epochs, 2, min_epochs=6) == {"stops_at": 7, "cpu_seconds": 70.0, "kept_epoch": 5,
                                                      "kept_cpu_seconds": 50.0, "test_value_accuracy": 0.3}
    assert with_patience(epochs, 2, min_epochs=9)["stops_at"] == 9  # epoch 7 is 2 after the best, 9 the minimum
    assert with_patience(epochs, 20) == {"stops_at": 10, "cpu_seconds": 100.0, "kept_epoch": 5,
                                         "kept_cpu_seconds": 50.0, "test_value_accuracy": 0.3}
    assert with_patience(epochs, 0) == with_patience(epochs, 20)  # patience 0: no early stopping


def test_an_unknown_row_is_refused_with_the_runs_the_recipe_has(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--short", "--rows", "word-problems-cv:no-such-run"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "no run 'no-such-run'" in done.stderr and "graph2tree-mawps" in done.stderr


def test_a_row_over_seeds_trains_its_seed_and_reads_its_goal_from_seeds_json(tmp_path):
    """An identities row (``neuromath train ... --seeds 3``): the fold-th seed, the accuracy of seeds.json, the
    classifier's validation and test accuracy each epoch."""
    out = tmp_path / "ttr.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--short", "--rows", "identities-40k:tree_lstm-paper-batch100",
                           "--fold", "1", "--setup", str(tmp_path / "setup"), "--work", str(tmp_path / "runs"),
                           "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = json.loads(out.read_text())["rows"]
    accuracy = json.loads((ROOT / "results/identities-40k/runs/tree_lstm-paper-batch100/seeds.json").read_text())
    accuracy = accuracy["accuracy"]
    assert row["preset"] == "identities/tree_lstm" and row["metric"] == "accuracy"
    assert row["goal"] == pytest.approx(accuracy["mean"] - accuracy["std"])
    assert f"data.train={tmp_path / 'setup'}/pap40.train.json" in row["sets"] and "train.seed=1" in row["sets"]
    assert row["reported_fold"]["epochs"] > 10  # seed 1 of the committed evidence
    epochs = row["epochs"]
    assert [epoch["epoch"] for epoch in epochs] == [1, 2, 3]
    assert all(0 <= epoch["val_accuracy"] <= 1 and 0 <= epoch["test_accuracy"] <= 1 for epoch in epochs)
    kept = max(epochs, key=lambda epoch: (epoch["val_accuracy"], -epoch["epoch"]))
    assert row["kept_epoch"] == kept["epoch"] and row["end_test_accuracy"] == kept["test_accuracy"]
    assert sorted(row["patience"], key=int) == ["3", "5", "8", "10", "15"]  # up to the preset's own 20
    assert (tmp_path / "runs/identities-40k-tree_lstm-paper-batch100/node_vocab.json").exists()


@pytest.mark.parametrize("preset", ["word_problems/gts", "identities/tree_lstm"])
def test_scoring_the_test_file_each_epoch_leaves_the_training_as_it_was(tmp_path, preset):
    """The callback restores the random state after its test scoring (decoding the test file drew from the global
    generator, so the dropout masks of the next epochs changed), so the measured run's epochs are the row's own."""
    script = load_script()
    classifier = script.is_classifier(load_config(preset))
    short = script.SHORT_CLASSIFIER if classifier else script.SHORT
    config = load_config(preset, ["train.num_threads=1", "train.progress=false", *short])
    fit = fit_classifier if classifier else fit_sequence_model
    fit(config, tmp_path / "plain")
    costs = script.EpochCosts(config, tmp_path / "measured")
    fit(config, tmp_path / "measured", callbacks=[costs])
    losses = read_column(tmp_path / "plain", "train_loss_epoch")
    assert len(losses) == 3 and read_column(tmp_path / "measured", "train_loss_epoch") == losses
    assert [row[f"val_{costs.metric}"] for row in costs.rows] == read_column(tmp_path / "plain", f"val_{costs.metric}")
    assert all(row[f"test_{costs.metric}"] is not None for row in costs.rows)


def read_column(run_dir: Path, column: str) -> list[float]:
    with (run_dir / "metrics.csv").open(encoding="utf-8") as stream:
        return [float(row[column]) for row in csv.DictReader(stream) if row.get(column)]


def test_a_row_that_reads_setup_files_needs_their_folder_and_a_seed_it_has():
    run = lambda *extra: subprocess.run([sys.executable, str(SCRIPT), "--short", "--rows",  # noqa: E731
                                         "identities-40k:tree_lstm-paper", *extra],
                                        capture_output=True, text=True, timeout=120)
    done = run()
    assert done.returncode != 0 and "--setup DIR" in done.stderr
    done = run("--setup", "anywhere", "--fold", "3")
    assert done.returncode != 0 and "--fold 3 is not one of its 3 seeds" in done.stderr


HELD = """
import ctypes, sys
from neuromath.training.allocator import keep_freed_memory
applied = keep_freed_memory() if sys.argv[1] == "keep" else False
assert sys.argv[1] != "keep" or keep_freed_memory() is applied  # once per process, the same answer

class Info(ctypes.Structure):  # glibc's struct mallinfo2
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                    "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = Info
blocks = [libc.malloc(4 << 20) for _ in range(40)]  # a step's tensors: 160 MiB in blocks of 4 MiB
for block in blocks:
    libc.free(block)
print(applied, libc.mallinfo2().fordblks >= 160 << 20)  # still held by the process, free for the next step
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt and mallinfo2")
def test_freed_large_blocks_stay_in_the_process_for_the_next_step():
    def held(mode: str, **env) -> list[str]:
        done = subprocess.run([sys.executable, "-c", HELD, mode], capture_output=True, text=True, timeout=120,
                              env={**os.environ, **env}, check=True)
        return done.stdout.split()

    assert held("keep") == ["True", "True"]
    assert held("default") == ["False", "False"]  # glibc gives the freed heap back, and the next step faults it in
    assert held("keep", NEUROMATH_MALLOC="system") == ["False", "False"]  # the user's way out
