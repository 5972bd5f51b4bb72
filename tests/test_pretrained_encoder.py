"""Pretrained encoders under the tree decoders (model.encoder pretrained): tiny BERT and RoBERTa encoders built here
(tests/support/tiny_pretrained.py, no download) read masked numbers through subword pieces, learn a tiny task, and a
trained run, its export and a resumed run load offline from their own files and answer as the run did."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("transformers")

import torch  # noqa: E402
from support.tiny_pretrained import tiny_encoder  # noqa: E402

from neuromath.api import load  # noqa: E402
from neuromath.cli import main  # noqa: E402
from neuromath.config import load_config  # noqa: E402
from neuromath.errors import ConfigError  # noqa: E402
from neuromath.experiments.fit_then_test import train  # noqa: E402
from neuromath.nn.pretrained import NUMBER_TOKEN, PRETRAINED_DIR, PretrainedWordEncoder  # noqa: E402
from neuromath.tasks import get_task  # noqa: E402
from neuromath.tasks.word_problems import MASK_REGEX  # noqa: E402
from neuromath.tasks.word_problems.word_problem_task import generate  # noqa: E402
from neuromath.training.run import prepare_data  # noqa: E402

TEXTS = ["Tom has n0 apples . He buys n1 more . How many apples does he have ?",
         "A box holds n0 eggs . How many eggs are in n1 boxes ?",
         "Sam shares n0 sweets among n1 friends . How many does each get ?"]


@pytest.fixture(scope="module", params=["bert", "roberta"])
def encoder_folder(request, tmp_path_factory):
    """A tiny encoder of each family, its tokenizer trained on generated problems' words."""
    import random

    words = [problem.masked_text for problem in generate(300, random.Random(0))]
    return tiny_encoder(tmp_path_factory.mktemp(request.param), request.param, words + TEXTS)


def test_numbers_stay_masked_and_each_word_is_its_first_piece(encoder_folder):
    encoder = PretrainedWordEncoder(encoder_folder, 8, from_files=False, number_pattern=MASK_REGEX)
    rows = [TEXTS[0].split(), "How many n0 ?".split()]
    states = encoder(rows, 20, torch.device("cpu"))
    assert states.shape == (2, 20, 8)
    present = states.abs().sum(-1).gt(0)
    assert present.sum(1).tolist() == [len(rows[0]), 4]  # a state for every word, zeros past the words
    pieces = encoder.tokenizer([[NUMBER_TOKEN if MASK_REGEX.fullmatch(w) else w for w in rows[1]]],
                               is_split_into_words=True)
    tokens = encoder.tokenizer.convert_ids_to_tokens(pieces["input_ids"][0])
    assert NUMBER_TOKEN in tokens and not any(token.strip("Ġ#") in ("n0", "n", "0") for token in tokens)
    # word 2 ("n0") is the [NUM] piece
    assert pieces.word_ids(0)[tokens.index(NUMBER_TOKEN)] == 2


def test_the_freezing_keys_stop_the_lower_layers(encoder_folder):
    encoder = PretrainedWordEncoder(encoder_folder, 8, from_files=False, number_pattern=MASK_REGEX, freeze_layers=1)
    layers = encoder.encoder.encoder.layer
    assert not any(p.requires_grad for p in encoder.encoder.embeddings.parameters())
    assert not any(p.requires_grad for p in layers[0].parameters())
    assert all(p.requires_grad for p in layers[1].parameters())
    with pytest.raises(ConfigError, match="model.freeze_layers is 3, but the encoder .* has 2 layers"):
        PretrainedWordEncoder(encoder_folder, 8, from_files=False, number_pattern=MASK_REGEX, freeze_layers=3)


def tiny_config(folder: Path, extra: list[str] = ()):
    return load_config("word_problems/gts", [
        "data.train=null", "data.test=null", "data.generate_train=400", "data.generate_valid=60",
        "data.generate_test=60", "model.encoder=pretrained", f"model.pretrained={folder}", "model.encoder_hidden=32",
        "model.d_model=16", "model.dropout=0.0", "optim.schedule=constant", "optim.lr=0.003", "optim.encoder_lr=0.001",
        "optim.encoder_warmup_steps=10", "train.batch_size=32", "train.max_epochs=20", "train.min_epochs=1",
        "train.patience=0",
        "train.num_threads=1", "train.progress=false", "decode.beam=1", *extra], strict=True)


def test_a_gts_with_a_pretrained_encoder_learns_and_loads_offline_as_it_answered(encoder_folder, tmp_path,
                                                                                 monkeypatch):
    run = tmp_path / "run"
    result = train(tiny_config(encoder_folder), run, predictions=run / "predictions.jsonl")
    with open(run / "metrics.csv", encoding="utf-8") as stream:
        losses = [float(row["train_loss_epoch"]) for row in csv.DictReader(stream) if row.get("train_loss_epoch")]
    assert losses[-1] < 0.3 * losses[0], losses
    assert result.summary["test"]["value_accuracy"] >= 0.3, result.summary["test"]  # 0-2% before training
    assert sorted(p.name for p in (run / PRETRAINED_DIR).iterdir()) == ["config.json", "tokenizer.json",
                                                                        "tokenizer_config.json"]
    # the encoder's weights live in model.pt only: the pretrained folder may vanish, the hub is unreachable
    moved = tmp_path / "gone"
    shutil.move(encoder_folder, moved)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    try:
        config = tiny_config(run / PRETRAINED_DIR)
        task = get_task("word_problems").configured(config.data)
        test = prepare_data(tiny_config(moved), task).test
        records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
        solver = load(run)
        same = [(example, record) for example, record in zip(test, records)
                if solver.task.prepare(example.text).masked_text == example.masked_text][:30]
        assert len(same) >= 10
        answered = [answer.masked_equation for answer in solver.solve_many([example.text for example, _ in same])]
        assert answered == [tuple(record["predicted_tokens"]) for _, record in same]  # as the run's own test
        assert main(["export", str(run), str(tmp_path / "export")]) == 0
        assert (tmp_path / "export" / PRETRAINED_DIR / "tokenizer.json").is_file()
        exported_config = (tmp_path / "export" / "config.yaml").read_text(encoding="utf-8")
        assert f"pretrained: {encoder_folder.name}\n" in exported_config and str(tmp_path) not in exported_config
        exported = load(tmp_path / "export").solve_many([example.text for example, _ in same])
        assert [answer.masked_equation for answer in exported] == answered
    finally:
        shutil.move(moved, encoder_folder)


def test_the_encoder_has_its_own_rate_and_warm_up(encoder_folder, tmp_path):
    from neuromath.models import build_task_model
    from neuromath.training.module import SequenceModule
    from neuromath.training.run import build_vocabularies

    config = tiny_config(encoder_folder, ["train.max_epochs=1"])
    task = get_task("word_problems").configured(config.data)
    data = prepare_data(config, task)
    source, target = build_vocabularies(task, data.train, config)
    model = build_task_model(config.model, task, source, target)
    module = SequenceModule(config, model, None)
    setup = module.configure_optimizers()
    optimizer, scheduler = setup["optimizer"], setup["lr_scheduler"]["scheduler"]
    own, encoder = optimizer.param_groups
    assert {id(p) for p in encoder["params"]} == {id(p) for p in model.pretrained_parameters()}
    assert own["lr"] == pytest.approx(0.003) and encoder["lr"] == pytest.approx(0.001 / 10)  # step 1 of 10
    for _ in range(12):
        optimizer.step()
        scheduler.step()
    assert own["lr"] == pytest.approx(0.003) and encoder["lr"] == pytest.approx(0.001)


def test_pretrained_keys_are_checked_when_the_config_is_built(tmp_path):
    with pytest.raises(ConfigError, match="model.encoder pretrained needs model.pretrained"):
        load_config("word_problems/graph2tree", ["model.encoder=pretrained"], strict=True)
    with pytest.raises(ConfigError, match="model.freeze_layers applies to model.encoder pretrained"):
        load_config("word_problems/graph2tree", ["model.freeze_layers=2"], strict=True)
    with pytest.raises(ConfigError, match="model.subwords adds word parts"):
        load_config("word_problems/gts", ["model.encoder=pretrained", "model.pretrained=x", "model.subwords=50"],
                    strict=True)
    with pytest.raises(ConfigError, match=re.escape(f"model.pretrained {tmp_path / 'none'}: cannot load")):
        PretrainedWordEncoder(tmp_path / "none", 8, from_files=False, number_pattern=MASK_REGEX)


def test_a_bf16_run_resumes_from_its_own_encoder_files(encoder_folder, tmp_path):
    run = tmp_path / "run"
    first = train(tiny_config(encoder_folder, ["train.max_epochs=2", "train.precision=bf16-mixed"]), run).summary
    assert first["precision"] == "bf16-mixed" and first["epochs"] == 2
    moved = tmp_path / "gone"
    shutil.move(encoder_folder, moved)  # resuming reads run/pretrained, not model.pretrained
    try:
        resumed = train(tiny_config(encoder_folder, ["train.max_epochs=3", "train.precision=bf16-mixed"]), run,
                        resume=True).summary
    finally:
        shutil.move(moved, encoder_folder)
    assert resumed["epochs"] == 3


@pytest.mark.parametrize("model", ["bilstm_seq2seq", "group_attention", "dns", "transformer"])
def test_the_other_word_problem_models_read_pretrained_word_vectors_too(model, encoder_folder, tmp_path):
    if "roberta" in str(encoder_folder):
        pytest.skip("one encoder family is enough for these models")
    sizes = {"dns": ["model.decoder_hidden=32"],
             "bilstm_seq2seq": ["model.encoder_hidden=16", "model.decoder_hidden=32"],
             "group_attention": ["model.encoder_hidden=16", "model.decoder_hidden=32", "model.d_ff=32"],
             "transformer": ["model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1",
                             "model.n_decoder_layers=1", "optim.schedule=constant"]}[model]
    config = load_config(f"word_problems/{model}", [
        "data.train=null", "data.test=null", "data.generate_train=400", "data.generate_valid=60",
        "data.generate_test=60", "model.encoder=pretrained", f"model.pretrained={encoder_folder}", "model.d_model=16",
        *sizes, "model.dropout=0.0", "optim.schedule=constant", "optim.lr=0.005", "train.batch_size=32",
        "train.max_epochs=8", "train.min_epochs=1", "train.patience=0", "train.num_threads=1", "train.progress=false",
        "decode.beam=1"],
        strict=True)
    run = tmp_path / "run"
    result = train(config, run, predictions=run / "predictions.jsonl")
    with open(run / "metrics.csv", encoding="utf-8") as stream:
        losses = [float(row["train_loss_epoch"]) for row in csv.DictReader(stream) if row.get("train_loss_epoch")]
    assert losses[-1] < 0.5 * losses[0], losses
    assert (run / PRETRAINED_DIR / "config.json").is_file() and result.summary["test"]["n"] == 60
    assert load(run).model.pretrained is not None  # built from the run's own files


@pytest.mark.parametrize("model", ["gts", "bilstm_seq2seq", "transformer"])
def test_the_models_start_from_the_pretrained_weights(model, encoder_folder):
    import transformers

    from neuromath.models import build_task_model
    from neuromath.text import Vocabulary

    config = load_config(f"word_problems/{model}", ["model.encoder=pretrained", f"model.pretrained={encoder_folder}"],
                         strict=True)
    source, target = Vocabulary(["n0", "n1", "apples"]), Vocabulary(["+", "-", "*", "/", "n0", "n1"])
    built = build_task_model(config.model, get_task("word_problems"), source, target)
    original = transformers.AutoModel.from_pretrained(str(encoder_folder)).state_dict()
    mine = built.pretrained.encoder.state_dict()
    for name, tensor in original.items():
        rows = tensor.shape[0] if tensor.dim() else None
        assert torch.equal(mine[name][:rows] if rows else mine[name], tensor), name  # the [NUM] row is added
    assert mine["embeddings.word_embeddings.weight"].shape[0] == original["embeddings.word_embeddings.weight"].shape[
        0] + 1
