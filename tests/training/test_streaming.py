"""Training on a streamed corpus (``data.streaming``): a tiny model learns from a release tree read lazily, a run
interrupted mid-epoch and resumed with two loader workers ends with the weights of the run that was never
interrupted, the shards of every process and worker split an epoch without overlap, and what cannot stream says so."""

from __future__ import annotations

import random
from itertools import islice

import pytest
import torch

from neuromath.config import load_config
from neuromath.errors import ConfigError
from neuromath.experiments.fit_then_test import train
from neuromath.tasks import get_task
from neuromath.tasks import mathematics_dataset as md
from neuromath.text import Vocabulary, char_tokens
from neuromath.training import streaming
from neuromath.training.run_folder import read_checkpoint


def write_tree(root, sizes=(400, 300, 200), seed=0):
    """Module files of unequal sizes asking for a number's first digit: ``What is the first digit of 4713?`` -> 4."""
    numbers = iter(random.Random(seed).sample(range(10, 100000), sum(sizes)))  # no question twice
    questions = []
    for k, size in enumerate(sizes):
        for number in islice(numbers, size):
            questions.append(md.MathQuestion("", f"What is the first digit of {number}?", str(number)[0],
                                             f"numbers__digit{k}", "train-easy"))
    md.write_release(questions, root)
    return root


def config(data, *overrides):
    return load_config(None, [
        "data.task=mathematics_dataset", f"data.train={data}", "data.streaming=true", "data.valid_max=60",
        "data.shuffle_window=50", "data.train_splits=train-easy",
        "model.d_model=32", "model.n_heads=2", "model.d_ff=64", "model.n_encoder_layers=1",
        "model.n_decoder_layers=1", "model.dropout=0.1", "train.batch_size=16", "train.max_epochs=-1",
        "train.patience=0", "train.progress=false", "optim.warmup_steps=50", "decode.max_len=4", *overrides])


@pytest.mark.slow
def test_a_tiny_model_learns_from_a_stream(tmp_path, one_thread):
    data = write_tree(tmp_path / "md")
    summary = train(config(data, "train.max_steps=300", "train.val_every_steps=100", "model.dropout=0.0",
                           "optim.schedule=constant", "optim.lr=0.003"), tmp_path / "run").summary
    assert summary["train_examples"] == 900 - 60 and summary["steps"] == 300
    assert summary["best_val_value_accuracy"] >= 0.8  # a tenth by chance
    report = (tmp_path / "run" / "data.json").read_text()
    assert '"streaming": true' in report and '"held_out_as_valid": 60' in report


def test_a_validation_file_leaves_the_whole_stream_to_training(tmp_path, one_thread):
    data = write_tree(tmp_path / "md", sizes=(100, 60))
    valid = write_tree(tmp_path / "valid", sizes=(30,), seed=1)
    summary = train(config(data, f"data.valid={valid}", "train.max_steps=2", "train.val_every_steps=2"),
                    tmp_path / "run").summary
    assert summary["train_examples"] == 160 and summary["valid_examples"] == 30


@pytest.mark.slow
def test_resume_mid_epoch_with_two_workers_continues_exactly(tmp_path, one_thread):
    data = write_tree(tmp_path / "md")
    settings = ["data.loader_workers=2", "train.val_every_steps=5"]
    # 840 training records in 2 shards of 16-record batches: 26 batches an epoch; 60 steps cross two epochs and
    # each shard's end of the files (a new pass), and the interruption at 35 falls on the second worker's turn
    def loader_state(run):
        [state] = read_checkpoint(tmp_path / run / "checkpoints" / "last.ckpt")["loops"]["fit_loop"]["state_dict"][
            "combined_loader"]
        return state

    train(config(data, *settings, "train.max_steps=60"), tmp_path / "full")
    assert loader_state("full")["epoch_consumed"] == 60 - 2 * 26
    train(config(data, *settings, "train.max_steps=35"), tmp_path / "part")
    state = loader_state("part")
    assert state["shards"] == 2 and state["turn"] == 1 and state["epoch_consumed"] == 35 - 26
    train(config(data, *settings, "train.max_steps=60"), tmp_path / "part", resume=True)
    weights = [read_checkpoint(tmp_path / run / "checkpoints" / "last.ckpt")["state_dict"] for run in ("full", "part")]
    assert weights[0].keys() == weights[1].keys()
    for key in weights[0]:
        assert torch.equal(weights[0][key], weights[1][key]), key

    with pytest.raises(ConfigError, match="data.loader_workers: 2 -> 0"):  # another shard layout cannot go on
        train(config(data, "train.val_every_steps=5", "train.max_steps=70"), tmp_path / "part", resume=True)


def test_every_process_and_worker_reads_its_own_shard(tmp_path, monkeypatch):
    data = write_tree(tmp_path / "md", sizes=(100, 60))
    run_config = config(data, "data.loader_workers=2", "data.valid_max=8")
    task = get_task("mathematics_dataset")
    setup = streaming.open_stream(run_config, task)
    vocab = Vocabulary.build([char_tokens("What is the first digit of 0123456789?")], level="char")
    seen = []
    for rank in range(2):
        monkeypatch.setattr(streaming, "process_rank", lambda rank=rank: (rank, 2))
        loader, _ = streaming.streaming_loader(setup, task, vocab, vocab, run_config)
        assert len(loader) == 152 // 4 // 16  # every process trains on the same number of batches
        batches = list(loader)
        assert [batch["stream"]["shard"] for batch in batches] == [2 * rank, 2 * rank + 1]  # its workers in turn
        seen += [tuple(row) for batch in batches for row in batch["source"].tolist()]
    assert len(seen) == 4 * 16 and len(set(seen)) == len(seen)

    with pytest.raises(ConfigError, match="read in 8 shards.*this run reads it in 4"):  # e.g. torchrun's process count
        loader.load_state_dict({"shards": 8, "positions": [], "turn": 0, "epoch_consumed": 0})


def test_what_cannot_stream_says_so(tmp_path):
    data = write_tree(tmp_path / "md", sizes=(20,))
    with pytest.raises(ConfigError, match="needs a validation set"):
        train(config(data, "data.valid_max=0"), tmp_path / "a")
    with pytest.raises(ConfigError, match="data.per_module keeps the head"):
        train(config(data, "data.per_module=5"), tmp_path / "b")
    with pytest.raises(ConfigError, match="reads data.train lazily"):
        train(config("", "data.train="), tmp_path / "c")
    with pytest.raises(ConfigError, match="data.streaming does not apply to the word_problems task"):
        load_config(None, ["data.task=word_problems", "data.streaming=true"], strict=True)
