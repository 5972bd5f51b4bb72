"""Training equation classifiers end to end (neuromath/training/classifier_training.py and the CLI): a tree model and a
sequence model learn a small verification set; evaluate writes the by-depth report; complete ranks candidates;
--seeds averages runs."""

import csv
import json
import random

import pytest
import torch

from neuromath.api import load_classifier
from neuromath.cli import main
from neuromath.config import load_config
from neuromath.config.rules import parse_depths
from neuromath.experiments.fit_then_test import train_classifier, train_seeds
from neuromath.tasks.identities import (
    PI,
    Candidate,
    EquationExample,
    apply,
    is_correct,
    number,
    read_equations,
    symbol,
    write_candidates,
    write_equations,
)
from neuromath.training.classifier_training import predict_accuracy
from neuromath.training.run_folder import epoch_curves

SYMBOLS = [symbol(f"var_{i}") for i in range(3)]
LEAVES = SYMBOLS + [number(2), number(3), number("1/2"), PI]
UNARY = ["sin", "cos", "exp", "tan"]


def random_expression(rng: random.Random, depth: int):
    if depth == 0:
        return rng.choice(LEAVES)
    if rng.random() < 0.4:
        return apply(rng.choice(UNARY), random_expression(rng, depth - 1))
    children = [random_expression(rng, depth - 1), random_expression(rng, rng.randrange(depth))]
    rng.shuffle(children)
    return apply(rng.choice(["Add", "Mul"]), *children)


def sameness_set(n: int, seed: int, depths=(1, 2, 3)) -> list[EquationExample]:
    """e = e (true) against e = f with a different random f (false): learnable only by comparing both sides."""
    rng = random.Random(seed)
    examples = []
    while len(examples) < n:
        left = random_expression(rng, rng.choice(depths) - 1 if rng.random() < 0.5 else rng.choice(depths))
        if rng.random() < 0.5:
            examples.append(EquationExample(apply("Equality", left, left), True))
        else:
            right = random_expression(rng, rng.choice(depths))
            if right != left:
                examples.append(EquationExample(apply("Equality", left, right), False))
    return examples


def config_for(tmp_path, model: str, train_file, **overrides):
    sets = [
        "data.task=identities", f"data.train={train_file}", "data.train_depths=1-3", "data.test_depths=4-5",
        f"model.name={model}",  # the majority has no size and no optimiser
        *(["model.d_model=24", "optim.schedule=plateau", "optim.lr=0.01", "optim.weight_decay=2e-5"]
          if model != "majority" else []),
        "train.batch_size=50", "train.max_epochs=12", "train.patience=0", "train.progress=false", "train.num_threads=1",
    ] + [f"{key}={value}" for key, value in overrides.items()]
    return load_config(None, sets)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("identities") / "sameness.json"
    write_equations(sameness_set(2000, 0, depths=(1, 2, 3, 4)), path)
    return path


def test_parse_depths():
    assert parse_depths("1-3,6") == {1, 2, 3, 6}
    from neuromath.errors import ConfigError

    with pytest.raises(ConfigError, match="depth ranges"):
        parse_depths("3-1")


@pytest.mark.parametrize("model", ["tree_lstm", "lstm"])
def test_a_classifier_learns_to_compare_sides(tmp_path, data_file, model):
    summary = train_classifier(config_for(tmp_path, model, data_file), tmp_path / model)
    assert summary["best_val_accuracy"] > 0.85, summary
    test = summary["test"]  # depths 4-5 of the file: deeper than anything trained on
    assert test["n"] > 50 and set(test["by_depth"]) <= {4, 5}
    assert test["accuracy"] > 0.7, test
    loaded = load_classifier(tmp_path / model)
    held_out = sameness_set(200, 99)
    assert predict_accuracy(loaded.model, held_out, loaded.vocab, is_correct) > 0.7  # chance: 0.5
    header = (tmp_path / model / "metrics.csv").read_text().splitlines()[0].split(",")
    assert "val_accuracy" in header and "train_loss_epoch" in header
    with open(tmp_path / model / "metrics.csv", newline="") as stream:
        curves = epoch_curves(list(csv.DictReader(stream)))
    epochs = [epoch for epoch, _ in curves["val_accuracy"]]
    assert epochs == sorted(epochs) and len(epochs) >= 2 and len(curves["train_loss_epoch"]) == len(epochs)
    assert max(value for _, value in curves["val_accuracy"]) == pytest.approx(summary["best_val_accuracy"])
    assert curves["train_loss_epoch"][-1][1] < curves["train_loss_epoch"][0][1]  # it learned
    assert (tmp_path / model / "learning_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_majority_and_data_errors(tmp_path, data_file):
    summary = train_classifier(config_for(tmp_path, "majority", data_file), tmp_path / "majority")
    assert summary["parameters"] == 0 and 0.35 < summary["best_val_accuracy"] < 0.65
    import neuromath
    from neuromath.api import LoadedClassifier
    from neuromath.errors import ConfigError, NeuromathError

    assert isinstance(neuromath.load(tmp_path / "majority"), LoadedClassifier)  # the run's config.yaml says its task
    with pytest.raises(ConfigError, match="do not apply to an equation classifier"):
        neuromath.load(tmp_path / "majority", beam=5)

    with pytest.raises(NeuromathError, match="no training or validation equations"):
        train_classifier(
            config_for(tmp_path, "majority", data_file, **{"data.train_depths": "9-10"}), tmp_path / "none"
        )


def test_cli_train_evaluate_complete_and_seeds(tmp_path, data_file, capsys):
    run = tmp_path / "run"
    sets = ["data.task=identities", f"data.train={data_file}", "data.train_depths=1-3", "data.test_depths=4-5",
            "model.name=tree_rnn", "model.d_model=16", "optim.schedule=plateau", "optim.lr=0.01",
            "train.max_epochs=3", "train.patience=0", "train.progress=false", "train.num_threads=1"]
    config = tmp_path / "config.yaml"
    from neuromath.config import save_config

    save_config(load_config(None, sets), config)
    assert main(["train", "--config", str(config), "--out", str(run), "--seeds", "2"]) == 0
    out = capsys.readouterr().out
    assert "| tree_rnn | 2 |" in out and (run / "seeds.md").exists()
    seeds = json.loads((run / "seeds.json").read_text())
    assert seeds["seeds"] == 2 and seeds["runs"] == [str(run / "seed0"), str(run / "seed1")]
    # the same two seeds, combined afterwards as if trained apart: the numbers --seeds wrote
    assert main(["analyze", "seeds", str(run / "seed0"), str(run / "seed1"), "--json"]) == 0
    apart = json.loads(capsys.readouterr().out)[str(run)]
    assert apart["runs"] == seeds["runs"] and apart["test"]["seeds"] == 2
    assert apart["test"]["accuracy"] == pytest.approx(seeds["accuracy"])
    assert set(apart["test"]["by_depth"]) == set(seeds["by_depth"]) == {"4", "5"}
    for depth, scores in seeds["by_depth"].items():
        assert apart["test"]["by_depth"][depth]["accuracy"] == pytest.approx(scores["accuracy"])

    test_file = tmp_path / "test.json"
    write_equations(sameness_set(120, 5, depths=(2, 3, 4)), test_file)
    assert main(["evaluate", str(run / "seed0"), str(run / "seed1"), "--data", str(test_file),
                 "--report", str(tmp_path / "report")]) == 0
    out = capsys.readouterr().out
    assert "| numeric checker | 100.0 |" in out  # e = e is always true, e = f (almost) never
    assert (tmp_path / "report" / "accuracy_by_depth.png").exists()
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert set(report) == {"seed0", "seed1", "numeric checker"}

    x = symbol("var_0")
    blanks = tmp_path / "blanks.json"
    write_equations([EquationExample(apply("Equality", apply("sin", x), apply("sin", x)), True, blank=4)], blanks)
    candidates = tmp_path / "candidates.json"
    write_candidates([Candidate(x, "0"), Candidate(PI, "1"), Candidate(number(2), "2")], candidates)
    assert main(["complete", str(run / "seed0"), "--blanks", str(blanks), "--candidates", str(candidates),
                 "--numeric", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["runs"]["numeric checker"]["top1"] == 1.0
    assert result["runs"]["seed0"]["n"] == 1 and result["runs"]["seed0"]["top5"] == 1.0  # 3 candidates
    threads = torch.get_num_threads()
    try:  # --threads sets torch's CPU threads and changes no number
        torch.set_num_threads(2)
        assert main(["complete", str(run / "seed0"), "--blanks", str(blanks), "--candidates", str(candidates),
                     "--numeric", "--json", "--threads", "1"]) == 0
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
    one_thread = json.loads(capsys.readouterr().out)["runs"]
    for row in ("seed0", "numeric checker"):
        assert {k: v for k, v in one_thread[row].items() if k != "seconds"} == \
            {k: v for k, v in result["runs"][row].items() if k != "seconds"}
    assert main(["complete", str(run / "seed0"), "--blanks", str(blanks), "--candidates", str(candidates),
                 "--numeric"]) == 0
    printed = capsys.readouterr().out  # the table by what the blank hides: here one blank hiding a symbol
    assert "By what the blank hides" in printed and "| numeric checker | 100.0 / 100.0 / 1.000 |" in printed

    # the ensemble row ranks by the mean logit of the runs: here, candidates scored by hand through the two runs
    assert main(["complete", str(run / "seed0"), str(run / "seed1"), "--blanks", str(blanks), "--candidates",
                 str(candidates), "--ensemble", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["runs"]
    assert set(rows) == {"seed0", "seed1", "mean of 2 runs"}
    filled = [EquationExample(apply("Equality", apply("sin", c), apply("sin", x)), True) for c in (x, PI, number(2))]
    mean = (load_classifier(run / "seed0").logits(filled) + load_classifier(run / "seed1").logits(filled)) / 2
    assert rows["mean of 2 runs"]["mrr"] == pytest.approx(1 / (1 + int((mean[1:] > mean[0]).sum())))
    assert main(["complete", str(run / "seed0"), "--blanks", str(blanks), "--candidates", str(candidates),
                 "--ensemble"]) == 1
    assert "at least two" in capsys.readouterr().err


def test_numbers_as_evidence_learn_unseen_evaluations_that_tokens_alone_cannot(tmp_path):
    """sin(a) = b with two-place arguments and four-place results: every test decimal is new, so only a model
    that reads the values (model.number_encoder) can tell right from wrong; without it the decimals are tokens,
    mostly unknown ones (it still finds cues, such as which known tokens a wrong right side tends to be)."""
    from neuromath.tasks.identities.evaluations import EvaluationSettings, generate_evaluations

    settings = EvaluationSettings(constant_share=0.0)
    write_equations(generate_evaluations(1500, random.Random(0), settings, ("sin",)), tmp_path / "train.json")
    write_equations(generate_evaluations(400, random.Random(1), settings, ("sin",)), tmp_path / "test.json")
    accuracy = {}
    for numbers in (True, False):
        config = config_for(tmp_path, "tree_lstm", tmp_path / "train.json", **{
            "data.test": tmp_path / "test.json", "data.train_depths": "1-7", "model.number_encoder": numbers})
        accuracy[numbers] = train_classifier(config, tmp_path / str(numbers))["test"]["accuracy"]
    assert accuracy[True] > 0.9 and accuracy[True] > accuracy[False] + 0.1, accuracy
    loaded = load_classifier(tmp_path / "True")
    assert loaded.model.reads_numbers and "<float>" in loaded.vocab.index
    assert predict_accuracy(loaded.model, read_equations(tmp_path / "test.json"), loaded.vocab, is_correct) > 0.85


def test_train_extra_joins_the_training_set_only(tmp_path, data_file):
    from neuromath.errors import NeuromathError
    from neuromath.tasks.identities.evaluations import generate_evaluations
    from neuromath.training.classifier_training import prepare_identity_data

    write_equations(generate_evaluations(120, random.Random(0)), tmp_path / "ev.json")
    base = prepare_identity_data(config_for(tmp_path, "tree_lstm", data_file))
    config = config_for(tmp_path, "tree_lstm", data_file, **{"data.train_extra": f"{tmp_path / 'ev.json'}, "})
    joined = prepare_identity_data(config)
    assert len(joined.train) == len(base.train) + 120
    assert [str(e.tree) for e in joined.valid] == [str(e.tree) for e in base.valid]  # validation is unchanged
    assert joined.report["train_extra"] == [{"file": str(tmp_path / "ev.json"), "read": 120, "skipped": []}]
    missing = config_for(tmp_path, "tree_lstm", data_file, **{"data.train_extra": str(tmp_path / "nope.json")})
    with pytest.raises(NeuromathError, match="nope.json"):
        prepare_identity_data(missing)
    from neuromath.errors import ConfigError

    with pytest.raises(ConfigError, match="model.number_encoder does not apply to the lstm model"):
        load_config(None, ["data.task=identities", "model.name=lstm", "model.number_encoder=true"], strict=True)


def test_resuming_seeds_keeps_finished_ones_and_starts_the_rest(tmp_path, data_file, capsys):
    """``train --seeds N --resume`` (what ``results run`` passes a started run): a seed tested before is read back, a
    seed not started yet trains afresh (it has no checkpoint to resume), and seeds.json covers all of them."""
    config = config_for(tmp_path, "tree_lstm", data_file, **{"train.max_epochs": 2})
    out = tmp_path / "seeds"
    (out / "seed0").mkdir(parents=True)
    train_classifier(config, out / "seed0")  # seed 0 finished; the runner was stopped before seed 1 started
    weights = (out / "seed0" / "model.pt").stat().st_mtime_ns
    capsys.readouterr()
    summaries = train_seeds(config, out, 2, resume=True)
    printed = capsys.readouterr().out
    assert "finished before" in printed and (out / "seed0" / "model.pt").stat().st_mtime_ns == weights
    assert [summary["run_dir"] for summary in summaries] == [str(out / "seed0"), str(out / "seed1")]
    assert (out / "seed1" / "summary.json").exists()
    assert json.loads((out / "seeds.json").read_text())["runs"] == [str(out / "seed0"), str(out / "seed1")]
