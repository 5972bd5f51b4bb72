"""Training writes only inside its run folder and never leaves a half-written file: a link planted in the run
folder (at model.pt's old temporary name, as a log session folder, as the logs folder) is neither followed nor
reused; a checkpoint write that fails midway (a full disk) or is killed at any point leaves whole checkpoints and a
resumable run; a damaged row of a session log is skipped, not a failure of every later resume."""

import io
import logging
import os
import signal
import subprocess
import sys

import pytest
import torch

from neuromath.config import load_config
from neuromath.errors import NeuromathError
from neuromath.experiments.fit_then_test import train
from neuromath.training.run_folder import RunCheckpointIO, merge_metrics, read_checkpoint

SMALL = [  # a tiny word-problems run of a few seconds (as tests/training/test_train.py trains)
    "model.d_model=32", "model.n_heads=4", "model.d_ff=64", "train.progress=false", "train.num_threads=2",
    "train.batch_size=32", "data.generate_train=120", "data.generate_valid=20", "data.generate_test=0",
    "train.patience=0",
]


def small_config(tmp_path, *extra):
    return load_config(None, [*SMALL, *extra])


def plant_link(link, outside):
    """``link`` made a symbolic link to ``outside`` (a file holding 'keep', or a folder when it ends with /)."""
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)


def test_a_link_at_model_pts_old_temporary_name_is_neither_followed_nor_touched(tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep")
    run = tmp_path / "run"
    plant_link(run / ".model.pt.tmp", outside)
    train(small_config(tmp_path, "train.max_epochs=1"), run)
    assert outside.read_text() == "keep"
    assert (run / ".model.pt.tmp").is_symlink() and os.readlink(run / ".model.pt.tmp") == str(outside)
    assert torch.load(run / "model.pt", weights_only=True)  # the weights went to model.pt itself
    assert not [path.name for path in (run / "checkpoints").iterdir() if path.name.endswith(".tmp")]


def test_a_planted_session_link_is_not_reused_and_the_resume_logs_inside_the_run(tmp_path):
    run = tmp_path / "run"
    train(small_config(tmp_path, "train.max_epochs=1"), run)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    plant_link(run / "logs" / "session2", outside)  # two session* entries: the name a count of them would give
    train(small_config(tmp_path, "train.max_epochs=2"), run, resume=True)
    assert list(outside.iterdir()) == []
    assert (run / "logs" / "session3" / "metrics.csv").is_file()
    assert (run / "logs" / "session2").is_symlink()
    epochs = [int(row["epoch"]) for row in merge_metrics(run) if row.get("val_loss")]
    assert epochs == [0, 1]  # both sessions merged; nothing read through the link


def test_a_logs_folder_that_is_a_link_is_refused_before_training(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    run = tmp_path / "run"
    plant_link(run / "logs", outside)
    with pytest.raises(NeuromathError, match=r"logs is a link: a run writes only into folders of its own"):
        train(small_config(tmp_path, "train.max_epochs=1"), run)
    assert list(outside.iterdir()) == []


def write_session(run, number, text):
    folder = run / "logs" / f"session{number}"
    folder.mkdir(parents=True)
    (folder / "metrics.csv").write_text(text)


def test_merge_metrics_skips_a_row_whose_step_is_not_a_whole_number_and_says_where(tmp_path, caplog):
    write_session(tmp_path, 0, "epoch,step,val_loss\n0,4,1.5\nzero,four-ish,1.0\n1,9,1.2\n")
    write_session(tmp_path, 1, "epoch,step,val_loss\n1,9,1.1\n2,14,0.9\n")
    with caplog.at_level(logging.WARNING, logger="neuromath"):
        rows = merge_metrics(tmp_path)
    assert [(row["step"], row["val_loss"]) for row in rows] == [("4", "1.5"), ("9", "1.1"), ("14", "0.9")]
    assert "session0/metrics.csv: skipped 1 malformed rows: line 3 (step 'four-ish')" in caplog.text
    assert (tmp_path / "metrics.csv").read_text().splitlines()[1:] == ["0,4,1.5", "1,9,1.1", "2,14,0.9"]


def test_a_checkpoint_write_that_fails_midway_leaves_the_previous_checkpoint_loadable(tmp_path, monkeypatch):
    run = tmp_path / "run"
    train(small_config(tmp_path, "train.max_epochs=1"), run)
    last = run / "checkpoints" / "last.ckpt"
    before = last.read_bytes()
    real_save = torch.save
    written = []

    def disk_full_halfway(obj, target, *args, **kwargs):
        if not (isinstance(obj, dict) and "state_dict" in obj and "epoch" in obj):
            return real_save(obj, target, *args, **kwargs)
        written.append(sorted(os.listdir(last.parent)))  # what the checkpoints folder holds while it is written
        buffer = io.BytesIO()
        real_save(obj, buffer)
        target.write(buffer.getvalue()[: len(buffer.getvalue()) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", disk_full_halfway)
    with pytest.raises(OSError, match="No space left on device"):
        train(small_config(tmp_path, "train.max_epochs=2"), run, resume=True)
    monkeypatch.setattr(torch, "save", real_save)
    # written straight into a new temporary file beside the target (not a buffer, not /tmp), then given up
    assert len(written) == 1 and [name for name in written[0] if name.endswith(".tmp")] != []
    assert last.read_bytes() == before and read_checkpoint(last)["epoch"] == 0
    assert sorted(path.name for path in (run / "checkpoints").iterdir()) == ["best.ckpt", "last.ckpt"]  # no temp
    result = train(small_config(tmp_path, "train.max_epochs=2"), run, resume=True)  # and the run resumes
    assert read_checkpoint(last)["epoch"] == 1 and result.summary["epochs"] == 2


def test_checkpoint_io_refuses_a_link_target_and_removes_a_link_not_what_it_points_to(tmp_path):
    outside = tmp_path / "precious.ckpt"
    outside.write_text("keep")
    link = tmp_path / "checkpoints" / "best.ckpt"
    plant_link(link, outside)
    io_plugin = RunCheckpointIO()
    with pytest.raises(NeuromathError, match="best.ckpt exists and is a symbolic link"):
        io_plugin.save_checkpoint({"state_dict": {}, "epoch": 0}, link)
    io_plugin.remove_checkpoint(link)
    assert not link.exists() and not link.is_symlink() and outside.read_text() == "keep"
    io_plugin.save_checkpoint({"state_dict": {"w": torch.ones(2)}, "epoch": 3}, link)
    assert read_checkpoint(link)["epoch"] == 3 and os.listdir(link.parent) == ["best.ckpt"]


KILLED_RESUME = """
import io, os, signal, sys
import torch
from neuromath.config import load_config
from neuromath.experiments.fit_then_test import train

point, run, overrides = sys.argv[1], sys.argv[2], sys.argv[3:]
real_save, real_replace = torch.save, os.replace

def die():
    os.kill(os.getpid(), signal.SIGKILL)

def save(obj, target, *args, **kwargs):
    if point == "writing" and isinstance(obj, dict) and "state_dict" in obj and "epoch" in obj:
        buffer = io.BytesIO()
        real_save(obj, buffer)
        target.write(buffer.getvalue()[: len(buffer.getvalue()) // 2])
        target.flush()
        die()
    return real_save(obj, target, *args, **kwargs)

def replace(source, target):
    if point == "renaming" and str(target).endswith(".ckpt"):
        die()
    real_replace(source, target)
    if point == "renamed" and str(target).endswith(".ckpt"):
        die()

torch.save, os.replace = save, replace
train(load_config(None, overrides), run, resume=True)
"""


@pytest.mark.parametrize("point", ["writing", "renaming", "renamed"])
def test_a_kill_at_any_point_of_a_checkpoint_write_leaves_a_resumable_run(tmp_path, point):
    run = tmp_path / "run"
    train(small_config(tmp_path, "train.max_epochs=1"), run)
    killed = subprocess.run([sys.executable, "-c", KILLED_RESUME, point, str(run), *SMALL, "train.max_epochs=2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    for name in ("last.ckpt", "best.ckpt"):
        assert read_checkpoint(run / "checkpoints" / name)["epoch"] in (0, 1)  # whole, old or new
    result = train(small_config(tmp_path, "train.max_epochs=2"), run, resume=True)
    assert read_checkpoint(run / "checkpoints" / "last.ckpt")["epoch"] == 1 and result.summary["epochs"] == 2
    assert sorted(path.name for path in (run / "checkpoints").iterdir()) == ["best.ckpt", "last.ckpt"]
