"""`neuromath compare`: two tiny word-problem runs on one data file, and two cross-validations over the same folds;
the printed table and the JSON object agree with the runs' own predictions (evaluate's, cv's predictions.jsonl),
a cv fold without predictions is decoded to the same result, and mismatched inputs are clear errors. Identities
classifiers are scored by their verdicts against the labels, symbolic runs by the verifier."""

import dataclasses
import gzip
import json
import math
import random
import re
import shutil

import pytest
import sympy
import torch
import yaml
from hand_folds import write_jaccard_folds

from neuromath.api import Candidate, Solver
from neuromath.cli import main
from neuromath.config import load_config, save_config
from neuromath.evaluation.significance import paired_bootstrap_interval
from neuromath.experiments.cross_validation import run_cross_validation
from neuromath.experiments.fit_then_test import train_classifier
from neuromath.experiments.folds import find_folds
from neuromath.expr.sympy_bridge import sympy_to_prefix
from neuromath.models import build_task_model
from neuromath.tasks import get_task
from neuromath.tasks.identities import EquationExample, apply, symbol, write_equations
from neuromath.tasks.symbolic import SymbolicExample, write_pairs
from neuromath.tasks.word_problems import generate, read_jsonl, write_jsonl
from neuromath.text import Vocabulary

TINY = [
    "--set", "model.d_model=32", "--set", "model.n_heads=2", "--set", "model.d_ff=64", "--set", "train.progress=false",
    "--set", "train.max_epochs=6", "--set", "train.patience=0", "--set", "train.num_threads=1",
    "--set", "train.batch_size=8", "--set", "optim.warmup_steps=10",
]


def two_sided_exact(b, c):
    """McNemar's exact p from binomial coefficients: 2 * P(X <= min(b, c)), X ~ Binomial(b + c, 1/2), at most 1."""
    n = b + c
    return 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2 ** n)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Run A trained only on `n0 * n1` problems, run B only on `n0 - n1` problems (each learns to answer with its
    one equation), and a test file of both kinds, some `n0 / n1` problems, and one problem whose numbers (1, 0.5)
    make n0 * n1 = n0 - n1: so every cell of the 2×2 table is filled."""
    folder = tmp_path_factory.mktemp("compare")
    problems = generate(1500, random.Random(0))
    by_equation = {equation: [e for e in problems if e.equation == equation]
                   for equation in (("*", "n0", "n1"), ("-", "n0", "n1"), ("/", "n0", "n1"))}
    times, minus, divide = by_equation.values()
    both = dataclasses.replace(minus[70], id="both", numbers=("1", "0.5"), answer=0.5)
    test = times[60:66] + minus[60:64] + divide[:3] + [both]
    random.Random(1).shuffle(test)
    write_jsonl(test, folder / "test.jsonl")
    runs = {}
    for name, train in (("times", times[:60]), ("minus", minus[:60])):
        write_jsonl(train, folder / f"{name}.jsonl")
        runs[name] = folder / name
        assert main(["train", "--config", "word_problems/transformer",
                     "--set", f"data.train={folder / f'{name}.jsonl'}", *TINY, "--out", str(runs[name])]) == 0
    return runs["times"], runs["minus"], folder / "test.jsonl"


def evaluated(run_dir, data, out, capsys):
    """The run's per-example records as `neuromath evaluate` writes them."""
    assert main(["evaluate", str(run_dir), "--data", str(data), "--predictions", str(out), "--json"]) == 0
    capsys.readouterr()
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_compare_two_runs_agrees_with_their_predictions(two_runs, tmp_path, capsys):
    run_a, run_b, data = two_runs
    assert main(["compare", str(run_a), str(run_b), "--data", str(data), "--json", "--samples", "2000",
                 "--seed", "7"]) == 0
    result = json.loads(capsys.readouterr().out)
    a = evaluated(run_a, data, tmp_path / "a.jsonl", capsys)
    b = evaluated(run_b, data, tmp_path / "b.jsonl", capsys)
    assert [r["id"] for r in a] == [r["id"] for r in b] == [e.id for e in read_jsonl(data)]
    right_a, right_b = [r["correct"] for r in a], [r["correct"] for r in b]
    pairs = list(zip(right_a, right_b))
    table = {"both_right": pairs.count((True, True)), "only_a": pairs.count((True, False)),
             "only_b": pairs.count((False, True)), "both_wrong": pairs.count((False, False))}
    assert result["table"] == table
    # each run learned its one equation: A is right on the products, B on the differences, both on the problem
    # where the two agree, neither on the quotients
    expected = {(record["gold_equation"][0] == "*" or record["id"] == "both",
                 record["gold_equation"][0] == "-" or record["id"] == "both") for record in a}
    assert set(pairs) == expected and table == {"both_right": 1, "only_a": 6, "only_b": 4, "both_wrong": 3}

    n = len(a)
    assert result["n"] == n and result["measure"] == "value accuracy" and result["data"] == str(data)
    assert result["a"]["correct"] == sum(right_a) and result["a"]["accuracy"] == pytest.approx(sum(right_a) / n)
    assert result["b"]["correct"] == sum(right_b) and result["b"]["accuracy"] == pytest.approx(sum(right_b) / n)
    assert (result["a"]["path"], result["b"]["path"]) == (str(run_a), str(run_b))
    assert result["a"]["model"] == result["b"]["model"] == "transformer"
    assert result["difference"] == pytest.approx((sum(right_b) - sum(right_a)) / n)
    assert result["mcnemar"] == {"only_a": 6, "only_b": 4, "p_value": pytest.approx(two_sided_exact(6, 4))}
    interval = result["interval"]
    assert (interval["samples"], interval["seed"], interval["confidence"]) == (2000, 7, 0.95)
    assert (interval["low"], interval["high"]) == pytest.approx(
        paired_bootstrap_interval([float(x) for x in right_a], [float(x) for x in right_b], samples=2000, seed=7))
    assert interval["low"] <= result["difference"] <= interval["high"]

    # the printed report says the same
    assert main(["compare", str(run_a), str(run_b), "--data", str(data), "--samples", "2000", "--seed", "7"]) == 0
    text = capsys.readouterr().out
    assert f"value accuracy: A {100 * sum(right_a) / n:.1f}% ({sum(right_a)}/{n}), " \
           f"B {100 * sum(right_b) / n:.1f}% ({sum(right_b)}/{n})" in text
    assert f"difference B − A: {100 * result['difference']:+.1f} points, 95% confidence interval " \
           f"[{100 * interval['low']:+.1f}, {100 * interval['high']:+.1f}]" in text
    assert f"the 10 examples only one run gets right (only A 6, only B 4): two-sided p = {two_sided_exact(6, 4):.3g}" \
        in text
    assert re.search(r"A right\s+1\s+6\s+\(both right, only A\)", text)
    assert re.search(r"A wrong\s+4\s+3\s+\(only B, both wrong\)", text)


def test_a_run_against_itself_differs_by_nothing(two_runs, capsys):
    run_a, _, data = two_runs
    assert main(["compare", str(run_a), str(run_a), "--data", str(data), "--json", "--beam", "2"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["difference"] == 0.0 and (result["interval"]["low"], result["interval"]["high"]) == (0.0, 0.0)
    assert result["mcnemar"] == {"only_a": 0, "only_b": 0, "p_value": 1.0}
    assert result["table"]["only_a"] == result["table"]["only_b"] == 0


def test_compare_refuses_what_cannot_be_paired(two_runs, tmp_path, capsys):
    run_a, run_b, data = two_runs
    other = tmp_path / "symbolic_run"
    other.mkdir()
    save_config(load_config(None, ["data.task=symbolic"]), other / "config.yaml")
    assert main(["compare", str(run_a), str(other), "--data", str(data)]) == 1
    assert "of the word_problems task and" in capsys.readouterr().err and "compare runs of one task"
    assert main(["compare", str(run_a), str(run_b)]) == 1
    assert "comparing two runs needs --data FILE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare", str(run_a), str(run_b), "--data", str(data), "--confidence", "1"])
    assert "--confidence: must be a number between 0 and 1" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- other tasks


def equality(left, right):
    return apply("Equality", left, right)


def test_compare_two_identities_classifiers_scores_verdicts_against_labels(tmp_path, capsys):
    """Two majority-class runs, one trained where most equations are true (it calls every equation an identity), one
    where most are false: on a labelled test file A is right exactly on the true equations, B on the false ones."""
    x, y = symbol("var_0"), symbol("var_1")
    true = [equality(apply(f, leaf), apply(f, leaf)) for f in ("sin", "cos", "exp", "tan") for leaf in (x, y)]
    false = [equality(apply(f, x), apply(g, y)) for f in ("sin", "cos", "exp") for g in ("tan", "sin")]
    runs = {}
    for name, (n_true, n_false) in (("mostly_true", (8, 2)), ("mostly_false", (2, 6))):
        train_file = tmp_path / f"{name}.json"
        write_equations([EquationExample(tree, True) for tree in true[:n_true]]
                        + [EquationExample(tree, False) for tree in false[:n_false]], train_file)
        config = load_config(None, ["data.task=identities", f"data.train={train_file}", "data.train_depths=1-3",
                                    "data.valid_fraction=0.2", "model.name=majority", "train.progress=false"])
        runs[name] = tmp_path / name
        train_classifier(config, runs[name])
    test = tmp_path / "test.json"
    labels = [True, False, False, True, True, False, True]
    trees = iter(true), iter(false)
    write_equations([EquationExample(next(trees[0] if label else trees[1]), label) for label in labels], test)
    assert main(["compare", str(runs["mostly_true"]), str(runs["mostly_false"]), "--data", str(test), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["measure"] == "accuracy" and result["n"] == 7
    assert result["table"] == {"both_right": 0, "only_a": 4, "only_b": 3, "both_wrong": 0}
    assert result["mcnemar"]["p_value"] == pytest.approx(two_sided_exact(4, 3)) == 1.0
    assert main(["compare", str(runs["mostly_true"]), str(runs["mostly_false"]), "--data", str(test),
                 "--beam", "2"]) == 1
    assert "--beam does not apply to equation classifiers" in capsys.readouterr().err


def write_symbolic_run(run_dir, tokens):
    """A symbolic run folder with one shared vocabulary and untrained weights (its decoder is stood in for)."""
    run_dir.mkdir(parents=True)
    config = load_config(None, ["data.task=symbolic", "model.d_model=16", "model.n_heads=2", "model.d_ff=32",
                                "model.n_encoder_layers=1", "model.n_decoder_layers=1"])
    vocab = Vocabulary(tokens)
    save_config(config, run_dir / "config.yaml")
    vocab.save(run_dir / "source_vocab.json")
    vocab.save(run_dir / "target_vocab.json")
    torch.save(build_task_model(config.model, get_task("symbolic"), vocab, vocab).state_dict(), run_dir / "model.pt")
    return run_dir


def test_compare_two_symbolic_runs_by_what_the_verifier_accepts(tmp_path, monkeypatch, capsys):
    """The decoders answer with the reference antiderivative on some examples (run A on even positions, run B on
    multiples of 3) and with `x` (whose derivative 1 is none of the integrands) elsewhere; the verifier decides."""
    x = sympy.Symbol("x")
    integrands = [sympy.cos(x), x * sympy.cos(x), sympy.exp(x), 2 * x, sympy.sin(x), 3 * x ** 2]
    examples = [SymbolicExample(tuple(sympy_to_prefix(f)), tuple(sympy_to_prefix(sympy.integrate(f, x))),
                                method="backward") for f in integrands]
    data = tmp_path / "test.txt"
    write_pairs(examples, data)
    tokens = sorted({token for e in examples for token in e.source + e.target} | {"x"})
    runs = {name: write_symbolic_run(tmp_path / name, tokens) for name in ("a", "b")}
    answers = {"a": lambda i: i % 2 == 0, "b": lambda i: i % 3 == 0}

    def predict_nbest(self, batch, batch_size=None):
        assert self.decode.beam == 1  # compare's default width for symbolic runs
        right = answers[self.run_dir.name]
        by_source = {e.source: i for i, e in enumerate(examples)}
        candidates = [[Candidate(examples[by_source[e.source]].target if right(by_source[e.source]) else ("x",),
                                 0.0, None)] for e in batch]
        return self.verify_candidates(candidates, batch)

    monkeypatch.setattr(Solver, "predict_nbest", predict_nbest)
    assert main(["compare", str(runs["a"]), str(runs["b"]), "--data", str(data), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["measure"] == "verified accuracy at beam 1" and result["n"] == 6
    # A right on examples 0, 2, 4 and B on 0, 3: both right on 0, only A on 2 and 4, only B on 3, neither on 1 and 5
    assert result["table"] == {"both_right": 1, "only_a": 2, "only_b": 1, "both_wrong": 2}
    assert result["a"]["correct"] == 3 and result["b"]["correct"] == 2


# ---------------------------------------------------------------------------------------------- cross-validations


def fold_records(cv_dir):
    return {fold.name: [json.loads(line) for line in (fold / "predictions.jsonl").read_text().splitlines()]
            for fold in sorted(cv_dir.iterdir()) if re.fullmatch(r"fold\d+", fold.name)}


def test_compare_two_retrieval_cross_validations_pairs_every_test_problem(tmp_path, capsys):
    folds_dir = tmp_path / "folds"
    write_jaccard_folds(folds_dir)
    for model in ("jaccard", "cosine"):
        run_cross_validation(load_config(None, [f"model.name={model}"]), find_folds(folds_dir), tmp_path / model,
                             progress=False)
    assert main(["compare", str(tmp_path / "jaccard"), str(tmp_path / "cosine"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    jaccard, cosine = fold_records(tmp_path / "jaccard"), fold_records(tmp_path / "cosine")
    assert [r["correct"] for name in ("fold0", "fold1") for r in jaccard[name]] == [True, True, False, True, False]
    assert result["folds"] == [
        {"fold": name, "n": len(jaccard[name]), "a_correct": sum(r["correct"] for r in jaccard[name]),
         "b_correct": sum(r["correct"] for r in cosine[name]), "a_from": "predictions.jsonl",
         "b_from": "predictions.jsonl"} for name in ("fold0", "fold1")]
    pairs = [(ra["correct"], rb["correct"])
             for name in ("fold0", "fold1") for ra, rb in zip(jaccard[name], cosine[name])]
    assert result["n"] == 5 and result["a"]["correct"] == 3
    assert result["table"] == {"both_right": pairs.count((True, True)), "only_a": pairs.count((True, False)),
                               "only_b": pairs.count((False, True)), "both_wrong": pairs.count((False, False))}
    assert result["a"]["model"] == "jaccard" and result["b"]["model"] == "cosine" and result["data"] is None

    # the evidence under results/ keeps each fold's predictions gzipped, and names its test file relative to the data
    # root: compare reads both, and pairs the same problems
    for name in ("fold0", "fold1"):
        plain = tmp_path / "cosine" / name / "predictions.jsonl"
        with gzip.open(plain.with_name("predictions.jsonl.gz"), "wt", encoding="utf-8") as packed:
            packed.write(plain.read_text())
        plain.unlink()
    assert main(["compare", str(tmp_path / "jaccard"), str(tmp_path / "cosine"), "--json"]) == 0
    packed_result = json.loads(capsys.readouterr().out)
    assert [fold["b_from"] for fold in packed_result["folds"]] == ["predictions.jsonl.gz"] * 2
    assert packed_result["table"] == result["table"] and packed_result["b"] == result["b"]
    for name in ("fold0", "fold1"):  # back as they were for the checks below
        packed = tmp_path / "cosine" / name / "predictions.jsonl.gz"
        with gzip.open(packed, "rt", encoding="utf-8") as stream:
            packed.with_name("predictions.jsonl").write_text(stream.read())
        packed.unlink()

    # cv folders take no --data, and a run is not compared with a cv folder
    assert main(["compare", str(tmp_path / "jaccard"), str(tmp_path / "cosine"), "--data", "x.csv"]) == 1
    assert "--data does not apply to cross-validation folders" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "jaccard"), str(tmp_path / "cosine"), "--lenient"]) == 1
    assert "--lenient does not apply to cross-validation folders" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "jaccard"), str(tmp_path / "cosine" / "fold0"), "--data", "x.csv"]) == 1
    assert "is a cross-validation folder and" in capsys.readouterr().err

    # a predictions.jsonl that does not hold the fold's test problems is refused, not paired by accident
    predictions = tmp_path / "cosine" / "fold1" / "predictions.jsonl"
    predictions.write_text(predictions.read_text().splitlines()[0] + "\n")
    assert main(["compare", str(tmp_path / "jaccard"), str(tmp_path / "cosine")]) == 1
    assert "1 records for the 2 problems of the fold's test file" in capsys.readouterr().err


TINY_CV = {
    "data": {"task": "word_problems", "valid_fraction": 0.2},
    "model": {"name": "transformer", "d_model": 32, "n_heads": 2, "d_ff": 64, "n_encoder_layers": 1,
              "n_decoder_layers": 1},
    "optim": {"warmup_steps": 10},
    "train": {"max_epochs": 6, "patience": 0, "batch_size": 8, "progress": False, "num_threads": 1},
}


def test_compare_a_trained_cross_validation_reads_its_predictions_or_decodes_its_folds(tmp_path, capsys, one_thread):
    config, retrieval = tmp_path / "tiny.yaml", tmp_path / "jaccard.yaml"
    config.write_text(yaml.safe_dump(TINY_CV))
    retrieval.write_text(yaml.safe_dump({"data": {"task": "word_problems"}, "model": {"name": "jaccard"}}))
    # mostly products: the tiny model learns to answer `n0 * n1` and gets those right, the differences wrong
    problems = generate(800, random.Random(3))
    mixed = [e for e in problems if e.equation == ("*", "n0", "n1")][:28] + \
        [e for e in problems if e.equation == ("-", "n0", "n1")][:12]
    random.Random(4).shuffle(mixed)
    data = tmp_path / "problems.jsonl"
    write_jsonl(mixed, data)
    split = ["--data", str(data), "--k", "2", "--seed", "1"]
    assert main(["cv", "--config", str(config), *split, "--out", str(tmp_path / "trained"), "--no-progress"]) == 0
    assert main(["cv", "--config", str(retrieval), *split, "--out", str(tmp_path / "jaccard"), "--no-progress"]) == 0
    capsys.readouterr()
    # two cv folders with their own copies of the same split: the test files are the same bytes at other paths
    assert main(["compare", str(tmp_path / "trained"), str(tmp_path / "jaccard"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    trained, jaccard = fold_records(tmp_path / "trained"), fold_records(tmp_path / "jaccard")
    for fold in result["folds"]:
        summary = json.loads((tmp_path / "trained" / fold["fold"] / "summary.json").read_text())
        assert fold["a_from"] == fold["b_from"] == "predictions.jsonl"
        assert fold["n"] == 20 and fold["a_correct"] == summary["test"]["value_correct"] > 0
        assert fold["b_correct"] == sum(r["correct"] for r in jaccard[fold["fold"]])
    pairs = [(ra["correct"], rb["correct"])
             for name in ("fold0", "fold1") for ra, rb in zip(trained[name], jaccard[name])]
    assert result["n"] == 40 and result["table"]["only_b"] == pairs.count((False, True))
    assert result["table"]["both_right"] + result["table"]["only_a"] == sum(a for a, _ in pairs)

    # a fold without predictions.jsonl (one run before cv wrote them) is decoded to the same answers
    shutil.copytree(tmp_path / "trained", tmp_path / "old")
    for fold in ("fold0", "fold1"):
        (tmp_path / "old" / fold / "predictions.jsonl").unlink()
    assert main(["compare", str(tmp_path / "old"), str(tmp_path / "jaccard"), "--json"]) == 0
    captured = capsys.readouterr()
    decoded = json.loads(captured.out)
    assert [fold["a_from"] for fold in decoded["folds"]] == ["decoded", "decoded"]
    assert "no predictions.jsonl; decoding the fold's run" in captured.err and "note:" not in captured.err
    for key in ("n", "difference", "interval", "mcnemar", "table"):
        assert decoded[key] == result[key]
    assert decoded["a"] == {**result["a"], "path": str(tmp_path / "old")} and decoded["b"] == result["b"]
    assert [fold["a_correct"] for fold in decoded["folds"]] == [fold["a_correct"] for fold in result["folds"]]

    # the same folds refit on the whole training fold (cv --refit into the same folder reuses the selection runs;
    # a copy keeps the report without refits): compare pairs the refits' predictions
    shutil.copytree(tmp_path / "trained", tmp_path / "selection")
    assert main(["cv", "--config", str(config), *split, "--out", str(tmp_path / "trained"), "--no-progress",
                 "--refit"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "selection"), str(tmp_path / "trained"), "--json"]) == 0
    refit = json.loads(capsys.readouterr().out)
    for fold in refit["folds"]:
        summary = json.loads((tmp_path / "trained" / fold["fold"] / "refit" / "summary.json").read_text())
        assert fold["b_correct"] == summary["test"]["value_correct"] and fold["b_from"] == "predictions.jsonl"
        assert fold["a_correct"] == next(f["a_correct"] for f in result["folds"] if f["fold"] == fold["fold"])
    assert refit["n"] == 40

    # another split of the same file: other test files, refused before anything is decoded
    assert main(["cv", "--config", str(retrieval), "--data", str(data), "--k", "2", "--seed", "2",
                 "--out", str(tmp_path / "other"), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "trained"), str(tmp_path / "other")]) == 1
    assert "fold0: the test files differ" in capsys.readouterr().err
