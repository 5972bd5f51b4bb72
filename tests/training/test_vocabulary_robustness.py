"""Vocabulary robustness of the word-problem tasks: ``data.lowercase`` at training and at solve time,
``data.min_count``, the number slots n0 .. n{K-1} reserved in both vocabularies, word dropout in the training step
only (about its rate, never on protected tokens, seeded, exact on resume), and the unknown-token rate of a test set."""

import csv
import dataclasses
import json

import pytest
import torch

import neuromath
from neuromath.config import load_config
from neuromath.evaluation.scoring import accuracy_by_unknown, unknown_input
from neuromath.experiments.fit_then_test import train, train_and_report
from neuromath.models.batching import EncodedExamples, collate
from neuromath.tasks import VocabularyOptions, get_task
from neuromath.tasks.word_problems import MASK_REGEX, SPAN_BREAKS, prepare_problem, write_jsonl
from neuromath.text import SPECIALS, UNK, Vocabulary
from neuromath.training.module import SequenceModule
from neuromath.training.run import build_vocabularies, droppable_source

# Words seen 8 times in TRAIN; the one long problem adds words seen once ("pears", ..., "Quux") and n2 .. n7.
COMMON = ["Zorblax", "has", "n0", "apples", ".", "He", "gets", "n1", "more"]
LONG = ("Zorblax has 1 apples , 2 pears , 3 plums , 4 figs , 5 kiwis , 6 limes and 7 nuts . Quux ate 8 .")
RARE = ["pears", "plums", "figs", "kiwis", "limes", "and", "nuts", "Quux", "ate"]


def problem(text: str, id: str, equation=("+", "n0", "n1")):
    example = prepare_problem(text, id)
    a, b = (float(number) for number in example.numbers[:2])
    return dataclasses.replace(example, equation=tuple(equation), answer=a + b)


TRAIN = [problem(f"Zorblax has {a} apples . He gets {a + 2} more .", f"t{a}") for a in range(3, 11)] + [
    problem(LONG, "long")]
VALID = [problem(f"Zorblax has {a} apples . He gets {a + 1} more .", f"v{a}") for a in range(20, 23)]
TEST = [problem("zorblax has 3 apples . Quux gets 4 more .", "test")]  # 10 tokens


def tiny_config(*extra):
    return load_config(None, [
        "model.d_model=16", "model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1",
        "model.n_decoder_layers=1", "train.batch_size=4", "train.patience=0", "train.progress=false",
        "train.num_threads=1", "optim.warmup_steps=10", *extra,
    ], strict=True)


def vocabularies(*settings):
    config = tiny_config(*settings)
    task = get_task(config.data.task).configured(config.data)
    return task, *build_vocabularies(task, TRAIN, config)


def test_min_count_turns_rare_words_into_unknown_but_never_numbers():
    task, source, target = vocabularies("data.min_count=2")
    numbers = [f"n{index}" for index in range(8)]  # the long problem has eight numbers
    expected = {"zorblax", "has", "apples", ".", "he", "gets", "more", ","} | set(numbers)
    assert set(source.tokens) == set(SPECIALS) | expected
    assert source.tokens[-6:] == numbers[2:]  # each seen once, below min_count, kept by frequency then name
    assert source.encode(task.source_tokens(TRAIN[-1])).count(source.unk_id) == len(RARE)

    task, every_word, _ = vocabularies()  # min_count 1: every training word
    assert set(every_word.tokens) == set(SPECIALS) | expected | {word.lower() for word in RARE}
    task, frequent, _ = vocabularies("data.min_count=19")  # above every word's count: only the numbers are left
    assert frequent.tokens == [*SPECIALS, "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"]


def test_number_slots_are_in_both_vocabularies_used_in_an_equation_or_not():
    _, source, target = vocabularies()
    assert target.tokens == [*SPECIALS, "+", "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"]  # unseen: appended
    assert all(f"n{index}" in source for index in range(8)) and "n8" not in source and "n8" not in target
    normalized = get_task("word_problems_normalized")
    assert normalized.source_text.reserved_tokens(TRAIN) == ([f"n{i}" for i in range(8)], [f"n{i}" for i in range(8)])
    assert normalized.source_text.reserved_tokens([]) == ([], [])
    # the tasks without source text reserve nothing (and keep nothing from word dropout)
    symbolic = get_task("symbolic")
    assert symbolic.source_text is None and symbolic.configured(None) is symbolic
    assert symbolic.vocabulary_options(None) == VocabularyOptions()


def test_lowercase_false_keeps_case_in_the_vocabulary_and_the_unknown_count():
    task, source, _ = vocabularies("data.lowercase=false", "data.min_count=2")
    assert "Zorblax" in source and "He" in source and "zorblax" not in source and "he" not in source
    assert task.source_tokens(TEST[0])[:2] == ["zorblax", "has"]
    # zorblax (the vocabulary has Zorblax) and Quux (below min_count) of 10 tokens
    assert unknown_input(source, task, TEST) == {"unknown_tokens": 2, "source_tokens": 10, "unknown_token_rate": 0.2,
                                                 "examples_with_unknown": 1, "unknown_example_rate": 1.0}
    task, source, _ = vocabularies("data.min_count=2")
    assert unknown_input(source, task, TEST)["unknown_tokens"] == 1  # quux alone: zorblax is known lower-cased
    assert unknown_input(source, task, TEST + VALID)["unknown_example_rate"] == 0.25


def write_data(tmp_path):
    paths = {}
    for split, examples in (("train", TRAIN), ("valid", VALID), ("test", TEST)):
        paths[split] = tmp_path / f"{split}.jsonl"
        write_jsonl(examples, paths[split])
    return [f"data.{split}={path}" for split, path in paths.items()]


def test_accuracy_is_split_by_whether_the_input_holds_an_unknown_token():
    records = [{"correct": True, "unknown_tokens": 0}, {"correct": False, "unknown_tokens": 0},
               {"correct": True, "unknown_tokens": 0}, {"correct": False, "unknown_tokens": 3}]
    assert accuracy_by_unknown(records) == {"value_accuracy_with_unknown": 0.0,
                                            "value_accuracy_without_unknown": pytest.approx(2 / 3)}
    assert accuracy_by_unknown(records[:1]) == {"value_accuracy_with_unknown": None,
                                                "value_accuracy_without_unknown": 1.0}


def test_lowercase_false_holds_at_training_and_when_a_run_solves(tmp_path, capsys, one_thread):
    run = tmp_path / "run"
    config = tiny_config(*write_data(tmp_path), "data.lowercase=false", "data.min_count=2", "train.max_epochs=1")
    summary = train_and_report(config, run)
    source = Vocabulary.load(run / "source_vocab.json")
    assert "Zorblax" in source and "zorblax" not in source and "Quux" not in source
    assert Vocabulary.load(run / "target_vocab.json").tokens[-6:] == [f"n{i}" for i in range(2, 8)]
    assert summary["test"]["unknown_tokens"] == 2 and summary["test"]["unknown_token_rate"] == pytest.approx(0.2)
    assert json.loads((run / "summary.json").read_text())["test"]["unknown_example_rate"] == 1.0
    out = capsys.readouterr().out
    assert "test input unknown to the run's vocabulary: 2 of 10 tokens (20.0%) in 1 of 1 examples (100.0%)" in out
    # the one test problem holds the unknown words: its record says how many, and the split puts it on that side
    assert json.loads((run / "predictions.jsonl").read_text())["unknown_tokens"] == 2
    assert summary["test"]["value_accuracy_with_unknown"] == summary["test"]["value_accuracy"]
    assert summary["test"]["value_accuracy_without_unknown"] is None
    assert f"{100 * summary['test']['value_accuracy']:.1f}% with unknown input (1 examples), n/a without (0)" in out

    solver = neuromath.load(run)  # the saved config's data.lowercase, read back by the solver
    example = prepare_problem("Zorblax has 3 apples . He gets 4 more .")
    assert solver.task.source_tokens(example)[:2] == ["Zorblax", "has"]
    (ids, _), = EncodedExamples([example], solver.task, solver.source_vocab, solver.target_vocab).items
    assert source.unk_id not in ids
    (lowered, _), = EncodedExamples([prepare_problem("zorblax has 3 apples . he gets 4 more .")], solver.task,
                                    solver.source_vocab, solver.target_vocab).items
    assert lowered.count(source.unk_id) == 2
    assert solver.solve("Zorblax has 3 apples . He gets 4 more .").text.startswith("Zorblax")  # solves, no error


# ------------------------------------------------------------------------------------------ word dropout


class Recorder(torch.nn.Module):
    """A stand-in model: remembers the sources it was given and returns logits that depend on a parameter."""

    def __init__(self, vocab_size: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(vocab_size))
        self.sources = []

    def forward(self, batch):
        self.sources.append(batch["source"].clone())
        return self.weight.expand(*batch["target_out"].shape, -1)  # (B, T, V)


def dropout_module(rate: float):
    config = tiny_config(f"data.word_dropout={rate}")
    task, source, target = vocabularies()
    module = SequenceModule(config, Recorder(len(target)), droppable_source=droppable_source(task, source, config),
                            word_dropout=task.vocabulary_options(config.data).word_dropout)
    examples = (TRAIN + VALID) * 24  # 78 ordinary words in each copy
    batch = collate([EncodedExamples(examples, task, source, target)[i] for i in range(len(examples))])
    return module, batch, source


@pytest.mark.filterwarnings("ignore:.*self.log.*")
def test_word_dropout_replaces_about_its_rate_of_ordinary_words_in_training_only():
    module, batch, vocab = dropout_module(0.3)
    original = batch["source"].clone()
    torch.manual_seed(0)
    module.training_step(batch, 0)
    dropped = module.model.sources[-1]
    assert torch.equal(batch["source"], original)  # a copy was changed, not the loader's batch
    changed = dropped != original
    assert torch.all(dropped[changed] == vocab.unk_id)
    protected = [token for token in vocab.tokens
                 if token in SPECIALS or MASK_REGEX.fullmatch(token) or token in SPAN_BREAKS]
    assert {"n0", "n7", ".", ",", UNK} <= set(protected)
    is_protected = torch.tensor([token in protected for token in vocab.tokens])[original]
    assert not changed[is_protected].any()
    ordinary = ~is_protected
    assert ordinary.sum() == 24 * 78  # the share of 1872 draws is within 0.05 of the rate (4.7 standard deviations)
    assert abs(changed[ordinary].float().mean().item() - 0.3) < 0.05

    module.validation_step(batch, 0)  # validation (and test, which decodes through neuromath.api) drops nothing
    assert torch.equal(module.model.sources[-1], original)
    none, batch, _ = dropout_module(0.0)
    assert none.droppable_source is None
    state = torch.get_rng_state()
    none.training_step(batch, 0)
    assert torch.equal(none.model.sources[-1], batch["source"]) and torch.equal(torch.get_rng_state(), state)


def test_word_dropout_follows_the_seed():
    module, batch, _ = dropout_module(0.2)
    draws = []
    for seed in (5, 5, 6):
        torch.manual_seed(seed)
        draws.append(module.drop_words(batch["source"]))
    assert torch.equal(draws[0], draws[1]) and not torch.equal(draws[0], draws[2])


def test_a_run_with_word_dropout_resumes_exactly(tmp_path, one_thread):
    data = write_data(tmp_path)
    settings = [*data[:2], "data.word_dropout=0.3", "train.batch_size=3"]
    straight, interrupted = tmp_path / "straight", tmp_path / "interrupted"
    train(tiny_config(*settings, "train.max_epochs=2"), straight)
    train(tiny_config(*settings, "train.max_epochs=1"), interrupted)
    train(tiny_config(*settings, "train.max_epochs=2"), interrupted, resume=True)
    a = torch.load(straight / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    b = torch.load(interrupted / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    assert a.keys() == b.keys() and "droppable_source" not in a  # the table is no weight
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=key)
    undropped = tmp_path / "undropped"  # and the dropout changed what was learnt
    train(tiny_config(*data[:2], "train.batch_size=3", "train.max_epochs=2"), undropped)
    c = torch.load(undropped / "checkpoints" / "last.ckpt", weights_only=True)["state_dict"]
    assert any(not torch.equal(a[key], c[key]) for key in a)
    rows = list(csv.DictReader(open(interrupted / "metrics.csv")))
    assert [int(row["epoch"]) for row in rows if row.get("val_loss")] == [0, 1]


def test_word_problem_batches_carry_the_words_as_written_beside_the_unknown_ids():
    task, source, target = vocabularies("data.min_count=2")  # the rare words are <unk>
    examples = [problem(LONG, "long"), *TEST]
    encoded = EncodedExamples(examples, task, source, target)
    batch = collate([encoded[i] for i in range(len(examples))])
    for row, example in enumerate(examples):
        words = task.source_tokens(example)
        assert batch["source_words"][row] == tuple(words)
        assert [source.tokens[i] for i in batch["source"][row, : len(words)].tolist()] == [
            word if word in source.index else UNK for word in words]
    assert "plums" in batch["source_words"][0] and "plums" not in source.index
    assert "source_words" not in collate([item[:4] for item in (encoded[0], encoded[1])])
