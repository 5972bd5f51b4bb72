"""neuromath/experiments/cross_validation.py and `neuromath cv`: folds found and split, a retrieval baseline
cross-validated on hand-made folds with hand-computed accuracies, and a tiny Transformer cross-validated end to end
through the command line, reusing and resuming folds (never under other settings) and locking its folder; with
--jobs, folds train in worker processes and give the sequential runs' results."""

import json
import math
import random

import pytest
import torch
import yaml
from hand_folds import ADD, BOX, EAT, SHARE, make_fold, svamp_csv, write_jaccard_folds

from neuromath.cli import main
from neuromath.config import load_config
from neuromath.errors import ConfigError, DataFormatError, NeuromathError
from neuromath.evaluation.bleu import BLEU_DEFINITION, equation_bleu
from neuromath.experiments.cross_validation import run_cross_validation, write_random_folds
from neuromath.experiments.cv_reports import format_report
from neuromath.experiments.fit_then_test import train as train_run
from neuromath.experiments.folds import find_folds
from neuromath.tasks.word_problems import generate, read_jsonl, write_jsonl
from neuromath.text import Vocabulary, word_tokens
from neuromath.training.run_folder import read_checkpoint


def test_find_folds_orders_by_number_and_names_a_missing_file(tmp_path):
    for k in (10, 2, 0):
        make_fold(tmp_path / f"fold{k}")
    (tmp_path / "notes").mkdir()
    (tmp_path / "fold3").write_text("a file, not a fold folder")
    folds = find_folds(tmp_path)
    assert [name for name, _, _ in folds] == ["fold0", "fold2", "fold10"]
    assert folds[2][1:] == (tmp_path / "fold10" / "train.csv", tmp_path / "fold10" / "dev.csv")

    make_fold(tmp_path / "fold4", dev=None)
    with pytest.raises(DataFormatError, match=r"fold4/dev\.csv: missing"):
        find_folds(tmp_path)
    with pytest.raises(NeuromathError, match="no fold folders"):
        find_folds(tmp_path / "notes")
    with pytest.raises(NeuromathError, match="no such folder"):
        find_folds(tmp_path / "absent")


def test_random_folds_partition_the_examples_and_follow_the_seed(tmp_path):
    examples = generate(23, random.Random(0))
    ids = [example.id for example in examples]
    assert len(set(ids)) == 23
    folds = write_random_folds(examples, 5, seed=7, out_dir=tmp_path / "a")
    assert [name for name, _, _ in folds] == [f"fold{k}" for k in range(5)]
    test_ids = [[example.id for example in read_jsonl(test)] for _, _, test in folds]
    assert sorted(len(fold) for fold in test_ids) == [4, 4, 5, 5, 5]
    assert sorted(id for fold in test_ids for id in fold) == sorted(ids)  # disjoint, and together every example
    for (_, train, _), tested in zip(folds, test_ids):
        assert [example.id for example in read_jsonl(train)] == [id for id in ids if id not in tested]
    assert read_jsonl(folds[0][2])[0] == next(e for e in examples if e.id == test_ids[0][0])  # whole records kept

    again = write_random_folds(examples, 5, seed=7, out_dir=tmp_path / "b")
    for (_, train_a, test_a), (_, train_b, test_b) in zip(folds, again):
        assert train_a.read_bytes() == train_b.read_bytes() and test_a.read_bytes() == test_b.read_bytes()
    other = write_random_folds(examples, 5, seed=8, out_dir=tmp_path / "c")
    assert [[e.id for e in read_jsonl(test)] for _, _, test in other] != test_ids

    write_random_folds(examples, 5, seed=7, out_dir=tmp_path / "a")  # the same split again: fine
    with pytest.raises(NeuromathError, match="holds another split"):
        write_random_folds(examples, 5, seed=8, out_dir=tmp_path / "a")
    for k in (1, 24):
        with pytest.raises(ConfigError, match="at least 2 and at most the number of examples"):
            write_random_folds(examples, k, seed=7, out_dir=tmp_path / f"k{k}")


def test_jaccard_cross_validation_by_hand(tmp_path, capsys):
    folds_dir = tmp_path / "folds"
    write_jaccard_folds(folds_dir)
    config = load_config(None, ["model.name=jaccard"])
    out = tmp_path / "out"
    report = run_cross_validation(config, find_folds(folds_dir), out, progress=False)

    rows = report["folds"]
    assert [(r["fold"], r["train_examples"], r["valid_examples"], r["test_examples"]) for r in rows] == [
        ("fold0", 2, 0, 3), ("fold1", 2, 0, 2)]
    assert [r["value_accuracy"] for r in rows] == pytest.approx([2 / 3, 1 / 2])
    assert [r["equation_accuracy"] for r in rows] == pytest.approx([1 / 3, 1 / 2])
    spread = (2 / 3 - 1 / 2) / math.sqrt(2)  # sample std of two values: |a - b| / sqrt(2)
    assert report["value_accuracy"] == pytest.approx({"mean": 7 / 12, "std": spread})
    assert report["equation_accuracy"] == pytest.approx({"mean": 5 / 12, "std": spread})
    predicted = [json.loads(line)["predicted_tokens"] for line in (out / "fold0" / "predictions.jsonl").open()]
    assert predicted == [["+", "n0", "n1"], ["*", "n0", "n1"], ["+", "n0", "n1"]]
    assert json.loads((out / "report.json").read_text()) == report
    markdown = (out / "report.md").read_text()
    assert markdown == format_report(report)
    assert ("| fold0 | 2 | 0 | 3 | 66.7 | 33.3 |" in markdown
            and "| mean ± std | | | | 58.3 ± 11.8 | 41.7 ± 11.8 |" in markdown)
    summary = json.loads((out / "fold1" / "summary.json").read_text())
    assert summary["test"]["n"] == 2 and summary["test"]["value_correct"] == 1

    # a second invocation reuses both folds; another model in the same folder is refused
    mtime = (out / "fold0" / "summary.json").stat().st_mtime_ns
    capsys.readouterr()
    again = run_cross_validation(config, find_folds(folds_dir), out, progress=False)
    assert [r["reused"] for r in again["folds"]] == [True, True] and again["value_accuracy"] == report["value_accuracy"]
    assert (out / "fold0" / "summary.json").stat().st_mtime_ns == mtime
    assert capsys.readouterr().err.count("reused") == 2
    with pytest.raises(ConfigError, match=r"model.name: 'jaccard' -> 'cosine'"):
        run_cross_validation(load_config(None, ["model.name=cosine"]), find_folds(folds_dir), out, progress=False)

    # with normalised postfix targets the baseline answers with the neighbour's postfix target: same values,
    # and the equation of Ann's problem (n1 + n0 in the data) now matches its normalised form n0 n1 +
    normalised = run_cross_validation(load_config(None, ["model.name=jaccard", "data.task=word_problems_normalized"]),
                                      find_folds(folds_dir), tmp_path / "normalised", progress=False)
    assert [r["value_accuracy"] for r in normalised["folds"]] == pytest.approx([2 / 3, 1 / 2])
    assert [r["equation_accuracy"] for r in normalised["folds"]] == pytest.approx([2 / 3, 1 / 2])
    predicted = [json.loads(line)["predicted_tokens"]
                 for line in (tmp_path / "normalised" / "fold0" / "predictions.jsonl").open()]
    assert predicted == [["n0", "n1", "+"], ["n0", "n1", "*"], ["n0", "n1", "+"]]


def test_cv_report_gives_each_folds_unknown_token_rate_by_hand(tmp_path):
    """The share of a test fold's tokens that the fold's training words do not hold, counted by hand from the
    lower-cased masked texts (the retrieval baseline is measured against the vocabulary a trained model would have)."""
    folds_dir = tmp_path / "folds"
    make_fold(folds_dir / "fold0",
              # tom has n0 apples . he buys n1 more apples . how many apples now ? | a box holds n0 pens . how many
              # pens in n1 boxes ?
              train=svamp_csv([(ADD.format("Tom", "He"), "5 3", "+ number0 number1", 8),
                               (BOX, "6 7", "* number0 number1", 42)]),
              dev=svamp_csv([(ADD.format("Ann", "She"), "2 4", "+ number1 number0", 6),  # ann, she: 2 of 16 tokens
                             (BOX, "3 5", "* number0 number1", 15),  # 0 of 13
                             (EAT.format("TOM", "He"), "9 4", "- number0 number1", 5)]))  # eats: 1 of 15
    make_fold(folds_dir / "fold1",
              # tom has n0 apples . he eats n1 apples . how many apples now ? | sue shares n0 pens among n1 friends .
              # how many pens each ?
              train=svamp_csv([(EAT.format("Tom", "He"), "9 4", "- number0 number1", 5),
                               (SHARE, "12 4", "/ number0 number1", 3)]),
              dev=svamp_csv([(EAT.format("Ann", "She"), "8 3", "- number0 number1", 5),  # ann, she: 2 of 15
                             (ADD.format("Tom", "He"), "5 3", "+ number0 number1", 8)]))  # buys, more: 2 of 16
    report = run_cross_validation(load_config(None, ["model.name=jaccard"]), find_folds(folds_dir),
                                  tmp_path / "out", progress=False)
    rows = report["folds"]
    assert [row["unknown_token_rate"] for row in rows] == pytest.approx([3 / 44, 4 / 31])
    assert [row["unknown_example_rate"] for row in rows] == pytest.approx([2 / 3, 2 / 2])
    spread = (4 / 31 - 3 / 44) / math.sqrt(2)
    assert report["unknown_token_rate"] == pytest.approx({"mean": (3 / 44 + 4 / 31) / 2, "std": spread})
    summary = json.loads((tmp_path / "out" / "fold0" / "summary.json").read_text())
    assert summary["test"]["unknown_tokens"] == 3 and summary["test"]["source_tokens"] == 44
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "| value acc. % | equation acc. % | BLEU | unk % |" in markdown
    # every predicted equation has 3 tokens: BLEU takes orders 1 to 3 (effective order, neuromath.evaluation.bleu).
    # fold0 predicts + n0 n1 (gold + n1 n0), * n0 n1 (right), + n0 n1 (gold - n0 n1): unigrams 8/9, bigrams 3/6,
    # trigrams 1/3; fold1 predicts - n0 n1 (right), - n0 n1 (gold + n0 n1): 5/6, 3/4, 1/2; BP = 1 in both
    fold0, fold1 = 100 * (8 / 9 * 3 / 6 * 1 / 3) ** (1 / 3), 100 * (5 / 6 * 3 / 4 * 1 / 2) ** (1 / 3)
    assert [row["bleu"] for row in rows] == pytest.approx([fold0, fold1])
    assert "| fold0 | 2 | 0 | 3 | 66.7 | 33.3 | 52.9 | 6.8 |" in markdown
    assert "| fold1 | 2 | 0 | 2 | 50.0 | 50.0 | 67.9 | 12.9 |" in markdown
    assert "| 58.3 ± 11.8 | 41.7 ± 11.8 | 60.4 ± 10.6 | 9.9 ± 4.3 |" in markdown
    assert "BLEU: corpus BLEU-4, 0-100, exp smoothing of the fold's" in markdown
    assert report["bleu_definition"] == summary["test"]["bleu_definition"] == BLEU_DEFINITION
    assert json.loads((tmp_path / "out" / "report.json").read_text()) == report

    # with the case kept, TOM is unknown to fold0 (which has Tom) and How, He are known as written: 4 of 44
    cased = run_cross_validation(load_config(None, ["model.name=jaccard", "data.lowercase=false"]),
                                 find_folds(folds_dir), tmp_path / "cased", progress=False)
    assert [row["unknown_token_rate"] for row in cased["folds"]] == pytest.approx([4 / 44, 4 / 31])


ADD3 = "{} has number0 apples . {} buys number1 more and then number2 more . How many apples now ?"
BUY_EAT = "{} has number0 apples . {} buys number1 more and then eats number2 . How many apples now ?"


def test_cv_report_gives_each_folds_bleu_by_hand(tmp_path):
    """Corpus BLEU-4 (0-100) of each fold's predicted equations, counted by hand from the retrieval baseline's
    answers (the nearest training problem's template)."""
    train = svamp_csv([(ADD3.format("Tom", "He"), "5 3 2", "+ + number0 number1 number2", 10),
                       (BOX, "6 7", "* number0 number1", 42)])
    folds_dir = tmp_path / "folds"
    make_fold(folds_dir / "fold0", train=train,
              dev=svamp_csv([(BUY_EAT.format("Ann", "She"), "5 3 2", "- + number0 number1 number2", 6),  # nearest ADD3
                             (BOX, "3 5", "* number0 number1", 15)]))
    make_fold(folds_dir / "fold1", train=train,
              dev=svamp_csv([(ADD3.format("Ann", "She"), "4 1 2", "+ + number0 number1 number2", 7),
                             (BOX, "2 9", "* number0 number1", 18)]))
    report = run_cross_validation(load_config(None, ["model.name=jaccard"]), find_folds(folds_dir),
                                  tmp_path / "out", progress=False)
    # fold0 predicts "+ + n0 n1 n2" for "- + n0 n1 n2" and "* n0 n1" for "* n0 n1": matched / predicted n-grams
    # unigrams 4/5 + 3/3 (the second + is clipped), bigrams 3/4 + 2/2, trigrams 2/3 + 1/1, 4-grams 1/2 + 0/0;
    # 8 tokens predicted, 8 in the references: BP = 1. fold1 predicts both equations exactly: 100.
    fold0 = 100 * (7 / 8 * 5 / 6 * 3 / 4 * 1 / 2) ** 0.25
    assert [row["bleu"] for row in report["folds"]] == pytest.approx([fold0, 100.0])
    assert report["bleu"] == pytest.approx({"mean": (fold0 + 100) / 2, "std": (100 - fold0) / math.sqrt(2)})
    assert [row["value_accuracy"] for row in report["folds"]] == [0.5, 1.0]
    summary = json.loads((tmp_path / "out" / "fold0" / "summary.json").read_text())
    assert summary["test"]["bleu"] == pytest.approx(fold0)
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "| fold0 | 2 | 0 | 2 | 50.0 | 50.0 | 72.3 |" in markdown
    assert "| fold1 | 2 | 0 | 2 | 100.0 | 100.0 | 100.0 |" in markdown
    assert "| 75.0 ± 35.4 | 75.0 ± 35.4 | 86.2 ± 19.6 |" in markdown and "BLEU 86.2 ± 19.6 (mean" in markdown


def test_a_fold_reused_from_before_bleu_and_the_rate_were_measured_shows_n_a():
    row = {"fold": "fold0", "train_examples": 4, "valid_examples": 1, "test_examples": 2, "value_accuracy": 0.5,
           "equation_accuracy": 0.5, "best_val_value_accuracy": None, "epochs": 3, "wall_seconds": 1.0}
    report = {"model": "transformer", "task": "word_problems", "k": 1, "folds": [row], "test_examples": 2,
              "value_accuracy": {"mean": 0.5, "std": 0.0}, "equation_accuracy": {"mean": 0.5, "std": 0.0},
              "unknown_token_rate": None, "wall_seconds": 1.0}
    markdown = format_report(report)
    assert "| fold0 | 4 | 1 | 2 | 50.0 | 50.0 | n/a | n/a | n/a | 3 | 1.0 |" in markdown  # BLEU, unk %, best valid
    assert "| 50.0 ± 0.0 | 50.0 ± 0.0 | n/a | n/a |" in markdown and "BLEU n/a" in markdown



def test_folds_scored_under_two_bleu_definitions_get_no_bleu_mean(tmp_path):
    """A fold reused from a run whose summary holds a BLEU without a definition (unsmoothed BLEU-4) beside a fold with
    today's: no mean of the two, and results verify expects none."""
    from neuromath.experiments.cv_reports import cross_validation_report, fold_row
    from neuromath.results.evidence_checks import check_cv_report

    summaries = {"fold0": {"test": {"n": 2, "value_accuracy": 0.5, "equation_accuracy": 0.5, "bleu": 0.0}},
                 "fold1": {"test": {"n": 2, "value_accuracy": 1.0, "equation_accuracy": 1.0, "bleu": 100.0,
                                    "bleu_definition": BLEU_DEFINITION}}}
    rows = [fold_row(name, tmp_path / "train", tmp_path / "test", summary, reused=name == "fold0")
            for name, summary in summaries.items()]
    report = cross_validation_report(load_config(None, ["model.name=jaccard"]), rows, tmp_path, refit=False)
    assert report["bleu"] is None and report["bleu_definition"] is None
    assert rows[0]["bleu_definition"] == "nrefs:1|case:mixed|eff:no|tok:none|smooth:none"
    assert check_cv_report(tmp_path / "report.json", report, summaries, {}) == []
    assert "BLEU n/a" in format_report(report)
    # both folds under one definition: their mean, and the definition in the report and its Markdown
    summaries["fold0"]["test"]["bleu_definition"] = BLEU_DEFINITION
    rows[0] = fold_row("fold0", tmp_path / "train", tmp_path / "test", summaries["fold0"], reused=False)
    report = cross_validation_report(load_config(None, ["model.name=jaccard"]), rows, tmp_path, refit=False)
    assert report["bleu"] == pytest.approx({"mean": 50.0, "std": 100 / math.sqrt(2)})
    assert report["bleu_definition"] == BLEU_DEFINITION and "exp smoothing" in format_report(report)
    assert check_cv_report(tmp_path / "report.json", report, summaries, {}) == []

TINY_CONFIG = {
    "data": {"task": "word_problems", "valid_fraction": 0.2},
    "model": {"name": "transformer", "d_model": 32, "n_heads": 2, "d_ff": 64, "n_encoder_layers": 1,
              "n_decoder_layers": 1},
    "optim": {"warmup_steps": 20},
    "train": {"max_epochs": 2, "patience": 0, "batch_size": 16, "progress": False, "num_threads": 1},
}


def test_cv_command_trains_every_fold_then_reuses_and_resumes(tmp_path, capsys, one_thread, lock_held_elsewhere):
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(yaml.safe_dump(TINY_CONFIG))
    data = tmp_path / "problems.jsonl"
    write_jsonl(generate(40, random.Random(3)), data)
    out = tmp_path / "cv"
    command = ["cv", "--config", str(config_path), "--data", str(data), "--k", "2", "--seed", "1", "--out", str(out)]
    assert main(command + ["--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert "fold 1/2: training transformer" in captured.err and "fold 2/2: value accuracy" in captured.err
    assert report == json.loads((out / "report.json").read_text())
    assert report["k"] == 2 and [row["fold"] for row in report["folds"]] == ["fold0", "fold1"]
    for measure in ("value_accuracy", "equation_accuracy"):
        values = [row[measure] for row in report["folds"]]
        mean = sum(values) / 2
        std = abs(values[0] - values[1]) / math.sqrt(2)  # the sample deviation of two values
        assert report[measure] == pytest.approx({"mean": mean, "std": std})
    for row in report["folds"]:
        fold = out / row["fold"]
        summary = json.loads((fold / "summary.json").read_text())
        assert row["test_examples"] == summary["test"]["n"] == 20
        assert row["value_accuracy"] == summary["test"]["value_accuracy"]
        assert row["equation_accuracy"] == summary["test"]["equation_accuracy"]
        assert row["train_examples"] + row["valid_examples"] == 20 and row["valid_examples"] == 4  # carved from train
        assert row["epochs"] == 2 and row["best_val_value_accuracy"] == summary["best_val_value_accuracy"]
        # the test fold's tokens the fold's source vocabulary lacks, counted here from the run's own files
        vocab = Vocabulary.load(fold / "source_vocab.json")
        test = read_jsonl(out / "folds" / row["fold"] / "test.jsonl")
        tokens = [word_tokens(example.masked_text) for example in test]
        unknown = sum(vocab.count_unknown(words) for words in tokens)
        assert unknown > 0 and row["unknown_token_rate"] == pytest.approx(unknown / sum(map(len, tokens)))
        assert summary["test"]["unknown_tokens"] == unknown
        # the test fold's predictions, one record per test problem in the file's order, as the fold scored them
        records = [json.loads(line) for line in (fold / "predictions.jsonl").read_text().splitlines()]
        assert [record["id"] for record in records] == [example.id for example in test]
        assert sum(record["correct"] for record in records) == summary["test"]["value_correct"]
        assert sum(record["equation_correct"] for record in records) == summary["test"]["equation_correct"]
        assert row["bleu"] == summary["test"]["bleu"] == pytest.approx(equation_bleu(records))
        saved = load_config(fold / "config.yaml")
        assert saved.data.valid is None and saved.data.train.endswith(f"folds/{row['fold']}/train.jsonl")
        assert saved.data.test.endswith(f"folds/{row['fold']}/test.jsonl") and saved.data.format == "jsonl"

    assert main(command) == 0  # everything is reused
    captured = capsys.readouterr()
    assert captured.err.count("reused") == 2 and "| mean ± std |" in captured.out

    (out / "fold1" / "summary.json").unlink()  # as if interrupted after training, before the test fold was scored
    assert main(command + ["--json"]) == 0
    captured = capsys.readouterr()
    assert "fold 1/2: reused" in captured.err and "fold 2/2: resuming the interrupted training" in captured.err
    resumed = json.loads(captured.out)
    assert [row["reused"] for row in resumed["folds"]] == [True, False]
    assert resumed["folds"][1]["value_accuracy"] == report["folds"][1]["value_accuracy"]
    summary = json.loads((out / "fold1" / "summary.json").read_text())
    assert summary["steps"] == 2 and (out / "fold1" / "logs" / "session1").is_dir()  # a second session, no new steps

    assert main(["cv", "--config", str(config_path), "--data", str(data), "--k", "41",
                 "--out", str(tmp_path / "x")]) == 1
    assert main(["cv", "--config", str(config_path), "--folds", str(tmp_path), "--data", str(data),
                 "--out", str(tmp_path / "x")]) == 1
    assert "either --folds" in capsys.readouterr().err

    # a finished fold is reused only under the very same settings: more epochs would be another experiment
    assert main(command + ["--set", "train.max_epochs=3"]) == 1
    assert (f"{out / 'fold0'} was finished with another config (train.max_epochs: 2 -> 3); choose another --out"
            in capsys.readouterr().err)
    # and one cv writes a folder at a time
    holder = lock_held_elsewhere(out)
    assert main(command) == 1
    assert f"{out} is being written by process {holder} on host" in capsys.readouterr().err


def test_cv_refit_trains_the_whole_fold_for_the_chosen_epochs_and_tests_its_last_weights(tmp_path, capsys, one_thread):
    config = {**TINY_CONFIG, "train": {**TINY_CONFIG["train"], "max_epochs": 4}}
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(yaml.safe_dump(config))
    data = tmp_path / "problems.jsonl"
    write_jsonl(generate(40, random.Random(3)), data)
    out = tmp_path / "cv"
    command = ["cv", "--config", str(config_path), "--data", str(data), "--k", "2", "--seed", "1", "--out", str(out),
               "--refit"]
    assert main(command + ["--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["refit"] is True and "refitting on the whole training fold" in captured.err
    for row in report["folds"]:
        fold = out / row["fold"]
        selection = json.loads((fold / "summary.json").read_text())
        refit = json.loads((fold / "refit" / "summary.json").read_text())
        chosen = read_checkpoint(fold / "checkpoints" / "best.ckpt")["epoch"] + 1  # the epochs of the best weights
        assert 1 <= chosen <= 4 and refit["epochs"] == row["refit_epochs"] == chosen
        # the whole training fold trains (nothing carved out), nothing validates
        assert refit["train_examples"] == row["train_examples"] == 20 and refit["valid_examples"] == 0
        assert refit["best_val_value_accuracy"] is None and refit["best_checkpoint"].endswith("last.ckpt")
        assert not (fold / "refit" / "checkpoints" / "best.ckpt").exists()
        saved = load_config(fold / "refit" / "config.yaml")
        assert not saved.train.validate and saved.train.max_epochs == chosen and saved.train.patience == 0
        # the refit's last weights are what model.pt keeps and what scored the test fold
        last = read_checkpoint(fold / "refit" / "checkpoints" / "last.ckpt")
        assert last["epoch"] == chosen - 1  # Lightning counts epochs from 0
        weights = torch.load(fold / "refit" / "model.pt", weights_only=True)
        for key, value in last["state_dict"].items():
            assert torch.equal(weights[key.removeprefix("model.")], value)
        assert row["value_accuracy"] == refit["test"]["value_accuracy"]
        assert row["selection_value_accuracy"] == selection["test"]["value_accuracy"]
        assert row["best_val_value_accuracy"] == selection["best_val_value_accuracy"]
        records = [json.loads(line) for line in (fold / "refit" / "predictions.jsonl").read_text().splitlines()]
        assert sum(record["correct"] for record in records) == refit["test"]["value_correct"]
    markdown = (out / "report.md").read_text()
    assert "Refit: each fold chose its epochs" in markdown

    assert main(command) == 0  # both runs of every fold are reused
    assert capsys.readouterr().err.count("reused") == 2 and not (out / "fold0" / "refit" / "logs" / "session1").exists()
    retrieval = tmp_path / "jaccard.yaml"
    retrieval.write_text(yaml.safe_dump({"data": {"task": "word_problems"}, "model": {"name": "jaccard"}}))
    assert main(["cv", "--config", str(retrieval), "--data", str(data), "--k", "2", "--seed", "1",
                 "--out", str(tmp_path / "jaccard"), "--refit"]) == 1
    assert "the retrieval baseline jaccard trains nothing" in capsys.readouterr().err


def test_cv_seeds_trains_each_seed_and_votes_their_answers(tmp_path, capsys, one_thread):
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(yaml.safe_dump({**TINY_CONFIG, "train": {**TINY_CONFIG["train"], "seed": 4}}))
    data = tmp_path / "problems.jsonl"
    write_jsonl(generate(40, random.Random(3)), data)
    out = tmp_path / "cv"
    command = ["cv", "--config", str(config_path), "--data", str(data), "--k", "2", "--seed", "1", "--out", str(out),
               "--seeds", "2"]
    assert main(command + ["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [seed["seed"] for seed in report["seeds"]] == [4, 5]
    for seed in (4, 5):  # each seed is a whole cross-validation of its own, trained with that seed
        seed_report = json.loads((out / f"seed{seed}" / "report.json").read_text())
        assert seed_report["k"] == 2 and load_config(out / f"seed{seed}" / "fold0" / "config.yaml").train.seed == seed
    for index, row in enumerate(report["folds"]):
        first, second = ([json.loads(line) for line in (out / f"seed{seed}" / row["fold"] / "predictions.jsonl")
                          .read_text().splitlines()] for seed in (4, 5))
        voted = [json.loads(line) for line in (out / row["fold"] / "predictions.jsonl").read_text().splitlines()]
        # two seeds: every disagreement is a tie, which the lower seed wins unless it has no value
        expected = [b if a["predicted_value"] is None and b["predicted_value"] is not None else a
                    for a, b in zip(first, second)]
        assert [record["id"] for record in voted] == [record["id"] for record in first]
        assert [record["predicted_tokens"] for record in voted] == [record["predicted_tokens"] for record in expected]
        assert row["value_accuracy"] == sum(record["correct"] for record in expected) / len(expected)
        assert row["any_correct"] == sum(a["correct"] or b["correct"] for a, b in zip(first, second)) / len(first)
        assert row["seed_value_accuracy"] == [sum(r["correct"] for r in run) / len(run) for run in (first, second)]
        assert row["value_accuracy"] <= row["any_correct"]
        assert load_config(out / row["fold"] / "config.yaml").data.test == row["test_file"]
    markdown = (out / "report.md").read_text()
    assert "majority vote of 2 training seeds" in markdown and "| 4 |" in markdown and "| 5 |" in markdown

    assert main(command) == 0  # every fold of both seeds is reused
    assert capsys.readouterr().err.count("reused") == 4
    assert main(["compare", str(out / "seed4"), str(out), "--json"]) == 0  # the vote pairs like any cv
    compared = json.loads(capsys.readouterr().out)
    assert compared["n"] == 40 and compared["b"]["correct"] == round(40 * sum(
        row["value_accuracy"] * row["test_examples"] / 40 for row in report["folds"]))
    # a plain cv into the vote's folder, and a vote into a plain cv's folder, would write over the other's folds
    plain = ["cv", "--config", str(config_path), "--data", str(data), "--k", "2", "--seed", "1"]
    assert main(plain + ["--out", str(out)]) == 1
    assert "holds the vote of a cv --seeds" in capsys.readouterr().err
    assert main(plain + ["--out", str(out / "seed4"), "--seeds", "2"]) == 1
    assert "holds a fold run of a cross-validation without --seeds" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(command[:-1] + ["1"])
    assert "argument --seeds: must be an integer from 2 to 100, got 1" in capsys.readouterr().err
    retrieval = tmp_path / "jaccard.yaml"
    retrieval.write_text(yaml.safe_dump({"data": {"task": "word_problems"}, "model": {"name": "jaccard"}}))
    assert main(["cv", "--config", str(retrieval), "--data", str(data), "--k", "2", "--out", str(tmp_path / "j"),
                 "--seeds", "2"]) == 1
    assert "the retrieval baseline jaccard trains nothing" in capsys.readouterr().err


def test_a_run_without_validation_needs_a_budget_and_reads_no_validation_file(tmp_path):
    with pytest.raises(ConfigError, match="train.validate false needs train.max_epochs or train.max_steps"):
        load_config(None, ["data.task=word_problems", "model.name=transformer", "train.validate=false",
                           "train.max_epochs=-1"])
    with pytest.raises(ConfigError, match="train.validate does not apply to the tree_lstm model"):
        load_config(None, ["data.task=identities", "model.name=tree_lstm", "train.validate=false"], strict=True)
    data = tmp_path / "problems.jsonl"
    write_jsonl(generate(10, random.Random(3)), data)
    config = load_config(None, [f"data.train={data}", f"data.valid={data}", "data.task=word_problems",
                                "model.name=transformer", "train.validate=false", "train.max_epochs=1"])
    with pytest.raises(ConfigError, match="train.validate is false: a run without validation reads no validation"):
        train_run(config, tmp_path / "run")
    streamed = load_config(None, [f"data.train={data}", "data.task=symbolic", "model.name=transformer",
                                  "train.validate=false", "train.max_epochs=1", "data.streaming=true"], strict=True)
    with pytest.raises(ConfigError, match="a streamed corpus .data.streaming. holds its validation records out"):
        train_run(streamed, tmp_path / "streamed")


def test_cv_jobs_trains_folds_at_once_and_each_fold_is_the_sequential_run(tmp_path, capfd, one_thread):
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(yaml.safe_dump(TINY_CONFIG))
    data = tmp_path / "problems.jsonl"
    write_jsonl(generate(45, random.Random(4)), data)
    reports = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        assert main(["cv", "--config", str(config_path), "--data", str(data), "--k", "3", "--seed", "2",
                     "--out", str(out), "--jobs", str(jobs), "--json"]) == 0
        captured = capfd.readouterr()
        reports[jobs] = json.loads(captured.out)
        assert ("3 folds to train, 2 at a time" in captured.err) == (jobs == 2)
        assert "fold 3/3: training transformer" in captured.err  # the worker processes' lines reach the terminal
        # a fold a worker trained is not trained again (resumed from its last checkpoint) by the main process
        assert "resuming" not in captured.err
        assert all(len(list((out / f"fold{k}" / "logs").iterdir())) == 1 for k in range(3))
    sequential, parallel = reports[1], reports[2]
    assert [row["reused"] for row in parallel["folds"]] == [False] * 3
    for row_a, row_b in zip(sequential["folds"], parallel["folds"]):
        for key in ("value_accuracy", "equation_accuracy", "best_val_value_accuracy", "epochs", "bleu"):
            assert row_a[key] == row_b[key], key
        fold = row_a["fold"]
        predictions = [(tmp_path / f"jobs{jobs}" / fold / "predictions.jsonl").read_text() for jobs in (1, 2)]
        assert predictions[0] == predictions[1]
    assert parallel["value_accuracy"] == sequential["value_accuracy"]

    # run again: every fold is reused, nothing is started
    assert main(["cv", "--config", str(config_path), "--data", str(data), "--k", "3", "--seed", "2",
                 "--out", str(tmp_path / "jobs2"), "--jobs", "2"]) == 0
    captured = capfd.readouterr()
    assert captured.err.count("reused") == 3 and "at a time" not in captured.err


def test_cv_jobs_reports_a_folds_failure_and_keeps_the_other_folds(tmp_path, capfd, one_thread):
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(yaml.safe_dump(TINY_CONFIG))
    folds = write_random_folds(generate(30, random.Random(5)), 2, seed=0, out_dir=tmp_path / "folds")
    broken = folds[1][1]
    broken.write_text(broken.read_text() + "{not json\n")
    out = tmp_path / "cv"
    assert main(["cv", "--config", str(config_path), "--folds", str(tmp_path / "folds"), "--out", str(out),
                 "--jobs", "2", "--set", "data.format=jsonl"]) == 1
    captured = capfd.readouterr()
    assert f"{broken}:" in captured.err and "fold1 failed" in captured.err
    assert (out / "fold0" / "summary.json").exists() and not (out / "fold1" / "summary.json").exists()


def test_a_data_format_error_crosses_processes_whole():
    import pickle

    error = DataFormatError("folds/fold1/train.jsonl", 16, "invalid JSON")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is DataFormatError and str(again) == str(error) == "folds/fold1/train.jsonl:16: invalid JSON"
    assert (again.path, again.line, again.reason) == ("folds/fold1/train.jsonl", 16, "invalid JSON")


def test_a_fold_trained_with_extra_problems_under_the_data_root_is_reused(tmp_path, capsys, one_thread, monkeypatch):
    """The fold saves data.train_extra as the run found it under the data root; the cv that made it must compare
    equal to it, in the same invocation and the next."""
    root = tmp_path / "root"
    (root / "other").mkdir(parents=True)
    write_jsonl(generate(30, random.Random(8)), root / "other" / "extra.jsonl")
    monkeypatch.setenv("NEUROMATH_DATA", str(root))
    monkeypatch.chdir(tmp_path)
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(yaml.safe_dump(TINY_CONFIG))
    data = tmp_path / "problems.jsonl"
    write_jsonl(generate(40, random.Random(3)), data)
    command = ["cv", "--config", str(config_path), "--data", str(data), "--k", "2", "--out", str(tmp_path / "cv"),
               "--set", "data.train_extra=other/extra.jsonl", "--json"]
    assert main(command) == 0
    first = json.loads(capsys.readouterr().out)
    saved = load_config(tmp_path / "cv" / "fold0" / "config.yaml")
    assert saved.data.train_extra == str(root / "other" / "extra.jsonl")
    assert json.loads((tmp_path / "cv" / "fold0" / "data.json").read_text())["train"]["extra"]["read"] == 30
    assert main(command) == 0  # reused, not refused as another config
    again = json.loads(capsys.readouterr().out)
    assert [row["value_accuracy"] for row in again["folds"]] == [row["value_accuracy"] for row in first["folds"]]
