"""Training in two processes (DDP on the CPU, gloo), started the way a user starts it: ``python -m neuromath train
... --set train.devices=2``, Lightning's launcher starting the second process. Two processes of batch 8 end with the
weights of one process of batch 16, only rank zero writes the run folder, and ``--resume`` continues a two-process
run exactly."""

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from neuromath.config import load_config
from neuromath.errors import ConfigError
from neuromath.experiments.fit_then_test import train

# Word problems, a two-layer Transformer. No dropout: the processes draw their masks from the same seed, so with
# dropout two processes differ from one by their random draws. Adam's eps is 1e-6, not 1e-9: the key biases of
# attention have no true gradient (a bias added to every key shifts all scores alike), so their gradients are float
# noise that eps 1e-9 would turn into full-sized Adam steps, different in one process and two; with 1e-6 they stay
# put and every weight can be compared.
SETTINGS = [
    "model.d_model=32", "model.n_heads=2", "model.d_ff=64", "model.dropout=0.0", "optim.eps=1e-6",
    "train.progress=false", "train.num_threads=1", "train.patience=0",
    "data.generate_train=96", "data.generate_valid=21", "data.generate_test=0",
]
TOLERANCE = 1e-5  # after 18 steps the largest difference measured was 1.1e-6 (summation order)

# Loaded by every Python process started with this folder on PYTHONPATH; in the process Lightning's launcher starts
# as rank 1 (LOCAL_RANK=1), it records every file the process opens for writing, creates, renames or removes.
WATCH = textwrap.dedent("""
    import os, sys
    if os.environ.get("LOCAL_RANK") == "1":
        log = open(os.environ["NEUROMATH_TEST_WRITES"], "a", buffering=1)
        log.write(f"started {os.getpid()}\\n")
        WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

        def watch(event, args):
            if event == "open" and args[0] is not None and not isinstance(args[0], int):
                mode, flags = args[1], args[2]
                if (mode and any(c in mode for c in "wax+")) or (not mode and flags & WRITING):
                    log.write(f"open {os.path.abspath(os.fsdecode(args[0]))}\\n")
            elif event in ("os.rename", "os.mkdir", "os.remove", "os.rmdir", "shutil.rmtree"):
                for value in args:
                    if isinstance(value, (str, bytes, os.PathLike)):
                        log.write(f"{event} {os.path.abspath(os.fsdecode(value))}\\n")

        sys.addaudithook(watch)
""")


def train_in_two_processes(run: Path, watch: Path, writes: Path, *settings: str, resume: bool = False) -> None:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(watch), os.environ.get("PYTHONPATH", "")]),
                   "NEUROMATH_TEST_WRITES": str(writes)}
    for name in ("RANK", "LOCAL_RANK", "NODE_RANK", "WORLD_SIZE"):
        environment.pop(name, None)
    arguments = [sys.executable, "-m", "neuromath", "train", "--config", "word_problems/transformer",
                 "--out", str(run), *(f"--set={item}" for item in [*SETTINGS, *settings])]
    done = subprocess.run(arguments + (["--resume"] if resume else []), env=environment, capture_output=True,
                          text=True, timeout=600, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]


def last_weights(run: Path) -> dict:
    return torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]


def test_two_processes_train_as_one_with_the_global_batch_and_only_rank_zero_writes(tmp_path):
    watch = tmp_path / "watch"
    watch.mkdir()
    (watch / "sitecustomize.py").write_text(WATCH)
    writes, run = tmp_path / "rank1_writes.txt", tmp_path / "two"

    # two processes of 8 for two epochs, then resumed for a third
    two = ["train.batch_size=8", "train.devices=2"]
    train_in_two_processes(run, watch, writes, *two, "train.max_epochs=2")
    summary = json.loads((run / "summary.json").read_text())
    assert (summary["processes"], summary["global_batch_size"], summary["steps"]) == (2, 16, 12)  # 96 / 16 a epoch
    train_in_two_processes(run, watch, writes, *two, "train.max_epochs=3", resume=True)

    # one process of 16 for three epochs, in this process
    alone = tmp_path / "one"
    train(load_config(None, [*SETTINGS, "train.batch_size=16", "train.max_epochs=3"]), alone)

    a, b = last_weights(alone), last_weights(run)
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(b[key], a[key], rtol=0, atol=TOLERANCE, msg=key)
    assert json.loads((run / "summary.json").read_text())["steps"] == 18
    # each epoch validated once across both sessions, scoring as the one process did (21 examples, 11 a process,
    # one of them padding; that gathering counts each example once is tested in tests/nn/test_distributed.py)
    def scores(folder):
        return [(row["epoch"], row["val_value_accuracy"]) for row in csv.DictReader(open(folder / "metrics.csv"))
                if row.get("val_value_accuracy")]
    assert [epoch for epoch, _ in scores(run)] == ["0", "1", "2"] and scores(run) == scores(alone)

    # rank 1 ran in both sessions and wrote nothing in the run folder
    lines = writes.read_text().splitlines()
    assert sum(line.startswith("started ") for line in lines) == 2, lines
    inside = [line for line in lines if str(run.resolve()) in line or str(run) in line]
    assert inside == [], inside
    assert sorted(p.name for p in (run / "logs").iterdir()) == ["session0", "session1"]

    # a resume in another number of processes would read the epochs' shuffles differently: refused
    with pytest.raises(ConfigError, match=r"train.devices: 2 -> 1"):
        train(load_config(None, [*SETTINGS, "train.batch_size=8", "train.max_epochs=4"]), run, resume=True)


def test_two_processes_weigh_contrast_problems_as_one_process_does(tmp_path):
    """data.contrast: each process's unlikelihood term is scaled by the global counts, so two processes of 8 still
    end with the weights of one process of 16 (question_removed contrasts: most generated problems have one)."""
    watch = tmp_path / "watch"
    watch.mkdir()
    (watch / "sitecustomize.py").write_text(WATCH)
    # 101 generated problems and their 91 contrasts: 192, twelve batches of 16 (a last, partial batch would be split
    # differently by two processes)
    contrast = ["data.contrast=question_removed", "optim.contrast_weight=0.5", "train.max_epochs=2",
                "data.generate_train=101"]
    run = tmp_path / "two"
    train_in_two_processes(run, watch, tmp_path / "writes.txt", "train.batch_size=8", "train.devices=2", *contrast)
    alone = tmp_path / "one"
    train(load_config(None, [*SETTINGS, "train.batch_size=16", *contrast]), alone)
    assert json.loads((alone / "data.json").read_text())["train"]["contrast"]["added"] == 91
    a, b = last_weights(alone), last_weights(run)
    for key in a:
        torch.testing.assert_close(b[key], a[key], rtol=0, atol=TOLERANCE, msg=key)
