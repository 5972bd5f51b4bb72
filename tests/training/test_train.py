"""Training end to end: a tiny Transformer learns generated word problems; resume is exact, follows no path
stored in a checkpoint and loads no code; a run folder has one writer at a time."""

import csv
import json
import random
import shutil
from collections import Counter

import pytest
import torch

import neuromath
from neuromath.config import load_config
from neuromath.errors import ConfigError, LockedError, NeuromathError
from neuromath.experiments.fit_then_test import sequence_outcome, train
from neuromath.tasks import get_task

TINY = [
    "model.d_model=64", "model.n_heads=4", "model.d_ff=128", "model.dropout=0.1",
    "train.progress=false", "train.num_threads=2", "train.batch_size=32",
    "optim.warmup_steps=200", "optim.lr_scale=0.5",
]


@pytest.mark.slow
def test_tiny_transformer_learns_generated_word_problems(tmp_path):
    config = load_config(None, TINY + [
        "data.generate_train=1500", "data.generate_valid=150", "data.generate_test=300",
        "train.max_epochs=12", "train.patience=0",
    ])
    result = train(config, tmp_path / "run")
    losses = [float(row["train_loss_epoch"]) for row in csv.DictReader(open(tmp_path / "run" / "metrics.csv"))
              if row.get("train_loss_epoch")]
    assert losses[-1] < 0.25 * losses[0], losses

    test = result.data.test
    task = get_task("word_problems")
    solver = neuromath.load(tmp_path / "run")
    hypotheses = solver.predict(test)
    accuracy = sum(task.is_correct(h, e) for h, e in zip(hypotheses, test)) / len(test)
    assert result.summary["test"]["value_accuracy"] == accuracy and result.summary["test"]["n"] == len(test)
    # The threshold: always answering with the most frequent training equation scores the
    # baseline below; a model that reads the problem must beat it by far. 12 epochs of this
    # tiny model reach ~99% on a quiet machine, so 85% leaves room for noise but not for a bug.
    majority = Counter(e.equation for e in result.data.train).most_common(1)[0][0]
    baseline = sum(task.is_correct(list(majority), e) for e in test) / len(test)
    assert baseline < 0.2
    assert accuracy >= 0.85, (accuracy, baseline)

    solution = solver.solve("Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?")
    assert solution.equation == "135 - 19" and solution.answer == 116 and solution.answer_text == "116"


def small_config(tmp_path, *extra):
    return load_config(None, TINY + [
        "data.generate_train=120", "data.generate_valid=20", "data.generate_test=0", "train.patience=0", *extra,
    ])


def test_resume_continues_exactly(tmp_path):
    straight = tmp_path / "straight"
    train(small_config(tmp_path, "train.max_epochs=2"), straight)
    interrupted = tmp_path / "interrupted"
    first = train(small_config(tmp_path, "train.max_epochs=1"), interrupted).summary
    kept = torch.load(interrupted / "checkpoints" / "last.ckpt", weights_only=True)["callbacks"]["TrainingClock"]
    resumed = train(small_config(tmp_path, "train.max_epochs=2"), interrupted, resume=True).summary
    # The cost of a resumed run counts the seconds its checkpoint kept of the first session, which trained alone.
    assert "resumed_seconds" not in first and 0 < kept["seconds"] <= first["wall_seconds"]
    assert resumed["resumed_seconds"] == round(kept["seconds"], 1)
    assert resumed["wall_seconds"] >= resumed["resumed_seconds"] + 0.1

    a = torch.load(straight / "checkpoints" / "last.ckpt", weights_only=False)["state_dict"]
    b = torch.load(interrupted / "checkpoints" / "last.ckpt", weights_only=False)["state_dict"]
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=key)
    # The merged metrics hold both sessions, each epoch's validation once.
    epochs = [int(row["epoch"]) for row in csv.DictReader(open(interrupted / "metrics.csv")) if row.get("val_loss")]
    assert epochs == [0, 1]
    files = {p.name for p in interrupted.iterdir()}
    assert {"config.yaml", "source_vocab.json", "target_vocab.json", "checkpoints", "metrics.csv", "model.pt"} <= files
    assert json.loads((interrupted / "summary.json").read_text())["epochs"] == 2


def test_resume_refuses_a_changed_config_and_a_missing_run(tmp_path):
    run = tmp_path / "run"
    train(small_config(tmp_path, "train.max_epochs=1"), run)
    with pytest.raises(ConfigError, match=r"model.d_model: 64 -> 32"):
        train(small_config(tmp_path, "train.max_epochs=2", "model.d_model=32"), run, resume=True)
    with pytest.raises(NeuromathError, match="already holds a run"):
        train(small_config(tmp_path, "train.max_epochs=1"), run)
    with pytest.raises(NeuromathError, match="nothing to resume"):
        train(small_config(tmp_path), tmp_path / "empty", resume=True)


def test_same_seed_same_weights(tmp_path):
    train(small_config(tmp_path, "train.max_epochs=1"), tmp_path / "a")
    train(small_config(tmp_path, "train.max_epochs=1"), tmp_path / "b")
    a = torch.load(tmp_path / "a" / "model.pt", weights_only=True)
    b = torch.load(tmp_path / "b" / "model.pt", weights_only=True)
    assert all(torch.equal(a[key], b[key]) for key in a)


def test_step_schedule_multiplies_the_rate_every_step_epochs_and_a_resume_keeps_its_place(tmp_path):
    """optim.schedule step (GTS / Graph2Tree's recipe): lr * gamma^(epoch // step_epochs), counted in epochs, not
    in optimiser steps (each epoch here has several), and restored by --resume."""
    step = ["optim.schedule=step", "optim.lr=0.004", "optim.step_epochs=2", "optim.step_gamma=0.25"]

    def rate(run):
        checkpoint = torch.load(run / "checkpoints" / "last.ckpt", weights_only=False)
        return checkpoint["optimizer_states"][0]["param_groups"][0]["lr"]

    run = tmp_path / "run"
    train(small_config(tmp_path, *step, "train.max_epochs=1"), run)
    assert rate(run) == pytest.approx(0.004)  # one epoch done: still the first rate
    train(small_config(tmp_path, *step, "train.max_epochs=3"), run, resume=True)
    assert rate(run) == pytest.approx(0.004 * 0.25)  # epochs 2 and 3 (indices 2..) run at lr * gamma
    train(small_config(tmp_path, *step, "train.max_epochs=5"), run, resume=True)
    assert rate(run) == pytest.approx(0.004 * 0.25**2)
    with pytest.raises(ConfigError, match="optim.step_gamma"):
        small_config(tmp_path, *step, "optim.step_gamma=1.5")


def test_validation_schedule_counts_steps_and_must_reach_the_last_step():
    from neuromath.training.run import validation_schedule

    assert validation_schedule(load_config(None, []), 10, True) == {}
    every = load_config(None, ["train.max_steps=1500", "train.val_every_steps=500"])
    assert validation_schedule(every, 2000, True) == {"val_check_interval": 500, "check_val_every_n_epoch": None}
    short = load_config(None, ["train.max_steps=5"])  # inside the first epoch of 10 steps, validated at its end
    with pytest.raises(ConfigError, match=r"train.max_steps \(5\) ends the run inside its first epoch \(10 steps\)"):
        validation_schedule(short, 10, True)
    assert validation_schedule(short, 10, False) == {} == validation_schedule(short, 5, True)  # none; a whole epoch
    with pytest.raises(ConfigError, match="multiple of train.val_every_steps"):  # refused when the config is built
        load_config(None, ["train.max_steps=1200", "train.val_every_steps=500"])


def test_carved_validation_set_is_capped(tmp_path):
    from neuromath.training.run import prepare_data

    task = get_task("word_problems")
    path = tmp_path / "train.jsonl"
    task.write(task.generate(200, random.Random(0)), str(path))
    fraction = prepare_data(load_config(None, [f"data.train={path}", "data.valid_fraction=0.25"]), task)
    assert (len(fraction.valid), len(fraction.train)) == (50, 150)
    capped = prepare_data(
        load_config(None, [f"data.train={path}", "data.valid_fraction=0.25", "data.valid_max=7"]), task
    )
    assert (len(capped.valid), len(capped.train)) == (7, 193)
    assert "capped by valid_max" in capped.report["valid"]["source"]
    assert fraction.report["valid"]["source"].startswith("25% of train")


class WritesAFileWhenUnpickled:
    """What a poisoned file holds: unpickling it with weights_only=False calls open(path, "w")."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


def test_resume_follows_no_path_from_a_poisoned_checkpoint_and_runs_no_pickle(tmp_path):
    run = tmp_path / "run"
    train(small_config(tmp_path, "train.max_epochs=1"), run)
    marker = tmp_path / "code-ran"
    evil = tmp_path / "evil.ckpt"
    torch.save({"state_dict": WritesAFileWhenUnpickled(marker)}, evil)

    # last.ckpt edited to name the pickle as the best checkpoint, with a score no later epoch can beat, so the
    # pickle would be what training loads as the best weights when it ends (it did before: weights_only=False)
    last = run / "checkpoints" / "last.ckpt"
    checkpoint = torch.load(last, weights_only=True)
    for state in checkpoint["callbacks"].values():
        if state.get("monitor"):
            state.update(best_model_path=str(evil), kth_best_model_path=str(evil), best_k_models={str(evil): 2.0},
                         best_model_score=torch.tensor(2.0))
    torch.save(checkpoint, last)
    best = torch.load(run / "checkpoints" / "best.ckpt", weights_only=True)["state_dict"]
    result = train(small_config(tmp_path, "train.max_epochs=2"), run, resume=True)
    assert not marker.exists() and evil.exists()  # nothing ran, nothing was deleted
    assert result.summary["best_checkpoint"] == str(run / "checkpoints" / "best.ckpt")
    weights = torch.load(run / "model.pt", weights_only=True)
    for key, value in best.items():  # the best epoch is still epoch 1 (the forged score 2.0 was kept, not beaten)
        torch.testing.assert_close(weights[key.removeprefix("model.")], value, rtol=0, atol=0)

    # a last.ckpt that is itself a pickle of code is refused before anything loads it
    torch.save({"state_dict": {}, "epoch": WritesAFileWhenUnpickled(marker)}, last)
    with pytest.raises(NeuromathError, match=r"last.ckpt: not a file of plain saved data: truncated, corrupt or code"):
        train(small_config(tmp_path, "train.max_epochs=3"), run, resume=True)
    assert not marker.exists()


def test_a_copied_run_resumes_from_its_own_files(tmp_path):
    original = tmp_path / "original"
    train(small_config(tmp_path, "train.max_epochs=1"), original)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    shutil.rmtree(original / "checkpoints")  # the copy must not need (or touch) the original's checkpoints
    result = train(small_config(tmp_path, "train.max_epochs=2"), copy, resume=True)
    assert result.summary["best_checkpoint"] == str(copy / "checkpoints" / "best.ckpt")
    assert not (original / "checkpoints").exists()


def test_two_trainings_never_write_one_folder(tmp_path, lock_held_elsewhere):
    run = tmp_path / "run"
    holder = lock_held_elsewhere(run)
    with pytest.raises(LockedError, match=rf"run is being written by process {holder} on host .*lock file"):
        train(small_config(tmp_path, "train.max_epochs=1"), run)
    assert [path.name for path in run.iterdir()] == [".neuromath.lock"]  # nothing of the refused run was written


def test_weight_average_is_what_the_checkpoints_and_model_pt_keep_and_resume_restores(tmp_path):
    # 32 examples in batches of 32: an epoch is one optimiser step, so after two epochs the average is
    # decay * w1 + (1 - decay) * w2 (the first update copies w1), where w1 and w2 are the raw weights after steps 1
    # and 2; the same seed gives the same w1 in a one-epoch run. A decay of 0.25 tells the two orders apart.
    def run(name, epochs):
        config = small_config(tmp_path, "data.generate_train=32", f"train.max_epochs={epochs}", "optim.ema_decay=0.25")
        train(config, tmp_path / name)
        return torch.load(tmp_path / name / "checkpoints" / "last.ckpt", weights_only=True)

    one, two = run("one", 1), run("two", 2)
    w1, w2 = one["current_model_state"], two["current_model_state"]
    average = two["state_dict"]
    assert average.keys() == w2.keys()
    torch.testing.assert_close(one["state_dict"], w1, rtol=0, atol=0)  # the first update copies
    moved = 0
    for key in w2:
        torch.testing.assert_close(average[key], 0.25 * w1[key] + 0.75 * w2[key], msg=key)
        moved += not torch.equal(w1[key], w2[key])
    assert moved > 0
    # model.pt, which evaluate and serve load, is the average as it stood at the best validation
    best = torch.load(tmp_path / "two" / "checkpoints" / "best.ckpt", weights_only=True)
    expected = average if best["epoch"] == 1 else w1  # Lightning counts epochs from 0
    saved = torch.load(tmp_path / "two" / "model.pt", weights_only=True)
    assert saved.keys() == {key.removeprefix("model.") for key in expected}
    assert all(torch.equal(saved[key], expected["model." + key]) for key in saved)
    # resuming restores both: the raw weights go on training, the average goes on averaging
    train(small_config(tmp_path, "data.generate_train=32", "train.max_epochs=1", "optim.ema_decay=0.25"),
          tmp_path / "resumed")
    train(small_config(tmp_path, "data.generate_train=32", "train.max_epochs=2", "optim.ema_decay=0.25"),
          tmp_path / "resumed", resume=True)
    resumed = torch.load(tmp_path / "resumed" / "checkpoints" / "last.ckpt", weights_only=True)
    for key in w2:
        torch.testing.assert_close(resumed["state_dict"][key], average[key], rtol=0, atol=0, msg=key)
        torch.testing.assert_close(resumed["current_model_state"][key], w2[key], rtol=0, atol=0, msg=key)


def test_a_step_limit_inside_the_first_epoch_needs_validation_by_steps(tmp_path):
    """Validation at epoch ends never comes when max_steps ends the first epoch early: a ConfigError before training,
    not a run with no validated weights. Validating by steps makes the same limit train."""
    settings = ["data.generate_train=400", "train.batch_size=32", "train.num_threads=1", "train.max_steps=2"]
    with pytest.raises(ConfigError, match=r"train.max_steps \(2\) ends the run inside its first epoch \(\d+ steps\)"):
        train(small_config(tmp_path, *settings), tmp_path / "cut")
    assert not (tmp_path / "cut" / "checkpoints" / "last.ckpt").exists()
    summary = train(small_config(tmp_path, *settings, "train.val_every_steps=2"), tmp_path / "by_steps").summary
    assert summary["stopped_by"] == "max_steps" and summary["steps"] == 2


def test_summary_says_what_ended_training_and_warns_when_a_limit_cut_it(tmp_path):
    """Only early stopping means the run went on until validation stopped improving; an epoch, step or time limit
    may cut an improving run, and the lines printed after training say so."""
    cases = {
        "max_epochs": ["train.max_epochs=1"],
        "max_steps": ["train.max_epochs=5", "train.max_steps=1"],
        "max_time": ["train.max_epochs=5", "train.max_time_minutes=0.00001"],
        # a learning rate too small to change a prediction: validation never improves, patience 1 ends it
        "early_stopping": ["train.max_epochs=30", "train.patience=1", "optim.lr_scale=1e-12"],
    }
    task = get_task("word_problems")
    for reason, extra in cases.items():
        config = small_config(tmp_path, "data.generate_train=32", "train.num_threads=1", *extra)
        result = train(config, tmp_path / reason)
        summary = json.loads((tmp_path / reason / "summary.json").read_text())
        assert summary["stopped_by"] == reason == result.summary["stopped_by"], (reason, summary["epochs"])
        warnings = [line for line in sequence_outcome(summary, task) if line.startswith("warning:")]
        assert bool(warnings) == (reason != "early_stopping"), warnings
        if reason == "early_stopping":
            assert summary["epochs"] < 30
    assert "time limit" in " ".join(sequence_outcome(json.loads((tmp_path / "max_time" / "summary.json").read_text()),
                                                     task))
