"""neuromath/experiments/slices.py and `neuromath analyze slices`: hand-made gold problems and prediction records,
with each slice's membership, accuracy and pairing computed by hand; cv folders pooled over folds, seeds over seeds,
test files a recipe generated read from --work, and runs that scored other problems refused."""

import gzip
import json

import pytest

from neuromath.cli import main
from neuromath.config import load_config, save_config
from neuromath.errors import NeuromathError
from neuromath.evaluation.scoring import write_predictions
from neuromath.experiments.slices import slice_table
from neuromath.tasks.word_problems import Example, write_jsonl

# (numbers, prefix equation): which slices each problem is in is written beside it
GOLD = [
    (("3", "4"), ("+", "n0", "n1")),  # every number used, 2 numbers, 1 operator
    (("3", "4", "5"), ("+", "n0", "n1")),  # n2 left unused, 3 numbers, 1 operator
    (("3", "4", "5"), ("-", "+", "n0", "n1", "n2")),  # every number used, 3 numbers, 2 operators
    (("1", "2", "3", "4"), ("*", "n0", "n1")),  # two left unused, 4 numbers, 1 operator
]


def gold_file(path, offset=0):
    examples = [Example(f"p{offset + index}", "text", " ".join(f"n{k}" for k in range(len(numbers))), numbers,
                        equation, 1.0) for index, (numbers, equation) in enumerate(GOLD)]
    write_jsonl(examples, path)
    return examples


def run_folder(folder, test, correct, offset=0, gz=False):
    folder.mkdir(parents=True)
    config = load_config("word_problems/transformer", [f"data.test={test}", "data.format=jsonl"], strict=True)
    save_config(config, folder / "config.yaml")
    records = [{"id": f"p{offset + index}", "correct": right} for index, right in enumerate(correct)]
    if gz:
        with gzip.open(folder / "predictions.jsonl.gz", "wt", encoding="utf-8") as stream:
            stream.writelines(json.dumps(record) + "\n" for record in records)
    else:
        write_predictions(records, folder / "predictions.jsonl")
    return folder


def by_slice(table):
    return {row["slice"]: row for row in table["slices"]}


def test_slices_of_two_runs_are_counted_and_paired_by_hand(tmp_path, capsys):
    gold_file(tmp_path / "test.jsonl")
    a = run_folder(tmp_path / "a", tmp_path / "test.jsonl", [True, False, True, False])
    b = run_folder(tmp_path / "b", tmp_path / "test.jsonl", [True, True, False, False], gz=True)
    rows = by_slice(slice_table([a, b], samples=200))
    assert [(name, rows[name]["n"]) for name in rows] == [
        ("all", 4), ("a number left unused", 2), ("every number used", 2), ("2 numbers or fewer", 1),
        ("3 numbers", 2), ("4 numbers or more", 1), ("1 operator", 3), ("2 operators", 1)]  # no 3-operator problem
    unused = rows["a number left unused"]["runs"]
    assert (unused[0]["correct"], unused[1]["correct"]) == (0, 1) and unused[0]["paired"] is None
    assert unused[1]["paired"]["difference"] == pytest.approx(0.5)
    assert unused[1]["paired"]["mcnemar"]["only_b"] == 1 and unused[1]["paired"]["mcnemar"]["only_a"] == 0
    two_operators = rows["2 operators"]["runs"]
    assert (two_operators[0]["accuracy"], two_operators[1]["accuracy"]) == (1.0, 0.0)
    assert rows["all"]["runs"][1]["paired"]["difference"] == 0

    assert main(["analyze", "slices", str(a), str(b), "--samples", "200"]) == 0
    out = capsys.readouterr().out
    assert "| a number left unused | 2 | 0.0 | 50.0 (+50.0 [" in out
    assert "| 2 operators | 1 | 100.0 | 0.0 (-100.0" in out


def test_a_cv_folder_is_pooled_over_its_folds_and_seeds_over_their_seeds(tmp_path):
    for k in range(2):
        gold_file(tmp_path / f"test{k}.jsonl", offset=10 * k)
    cv = tmp_path / "cv"
    for k, correct in enumerate(([True, True, True, True], [False, False, False, True])):
        run_folder(cv / f"fold{k}", tmp_path / f"test{k}.jsonl", correct, offset=10 * k)
    (cv / "report.json").write_text(json.dumps({"task": "word_problems", "folds": [{"fold": "fold0"},
                                                                                    {"fold": "fold1"}]}))
    seeds = tmp_path / "seeds"
    for k, correct in enumerate(([True, False, False, False], [True, False, False, False])):
        run_folder(seeds / f"seed{k}", tmp_path / "test0.jsonl", correct)
    rows = by_slice(slice_table([cv]))
    assert rows["all"]["n"] == 8 and rows["all"]["runs"][0]["correct"] == 5
    assert rows["4 numbers or more"]["n"] == 2 and rows["4 numbers or more"]["runs"][0]["correct"] == 2
    rows = by_slice(slice_table([seeds]))
    assert rows["all"]["n"] == 8 and rows["2 numbers or fewer"]["runs"][0]["correct"] == 2
    with pytest.raises(NeuromathError, match="scored different test problems"):
        slice_table([cv, seeds])


def test_a_generated_test_file_is_read_from_the_work_folder_and_other_tasks_are_refused(tmp_path, capsys):
    (tmp_path / "work").mkdir()
    gold_file(tmp_path / "work" / "unseen.jsonl")
    run = run_folder(tmp_path / "run", "{work}/unseen.jsonl", [True, True, False, True])
    with pytest.raises(NeuromathError, match=r"generated by a results recipe's setup; give the work folder"):
        slice_table([run])
    assert by_slice(slice_table([run], work=tmp_path / "work"))["all"]["runs"][0]["correct"] == 3

    other = tmp_path / "identities"
    other.mkdir()
    save_config(load_config("identities/tree_lstm", [], strict=True), other / "config.yaml")
    assert main(["analyze", "slices", str(other)]) == 1
    assert "a identities run; slices are defined on word problems" in capsys.readouterr().err
