"""neuromath data vary: one robustness variation of a word-problem file, or of every fold of a folder, written as
JSON lines that training, cross-validation (find_folds reads train.jsonl / test.jsonl folds) and evaluation read."""

import json
import random

import pytest

from neuromath.cli import main
from neuromath.experiments.folds import find_folds
from neuromath.tasks.word_problems import read_jsonl, write_jsonl
from neuromath.tasks.word_problems.templates import generate
from neuromath.tasks.word_problems.variations import question_removed


@pytest.fixture()
def folds(tmp_path):
    problems = generate(60, random.Random(5))
    for k in range(2):
        folder = tmp_path / "folds" / f"fold{k}"
        folder.mkdir(parents=True)
        write_jsonl(problems[30 * k:30 * k + 20], folder / "train.csv")  # JSON lines under the SVAMP file names
        write_jsonl(problems[30 * k + 20:30 * k + 30], folder / "dev.csv")
    return tmp_path / "folds", problems


def test_a_file_gets_its_variation_and_the_problems_without_it_are_counted(folds, tmp_path, capsys):
    folder, problems = folds
    out = tmp_path / "removed.jsonl"
    assert main(["data", "vary", str(folder / "fold0" / "dev.csv"), "--variation", "question_removed", "--out",
                 str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["files"][0]
    written = read_jsonl(str(out))
    expected = [question_removed(problem) for problem in problems[20:30]]
    assert [example.masked_text for example in written] == [e.masked_text for e in expected if e is not None]
    assert report["varied"] == len(written) and report["varied"] + report["without_it"] == 10
    assert all(example.id.endswith("#question_removed") and "?" not in example.masked_text for example in written)


def test_every_fold_is_varied_into_a_folder_that_cross_validation_reads(folds, tmp_path, capsys):
    folder, _ = folds
    out = tmp_path / "no-question"
    assert main(["data", "vary", str(folder), "--folds", "--variation", "question_removed", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("written to") == 4 and "left out" in printed
    found = find_folds(out)
    assert [(name, train.name, test.name) for name, train, test in found] == [
        ("fold0", "train.jsonl", "test.jsonl"), ("fold1", "train.jsonl", "test.jsonl")]
    assert len(read_jsonl(str(found[1][1]))) <= 20 and len(read_jsonl(str(found[1][2]))) <= 10
    assert find_folds(folder)[0][1].name == "train.csv"  # a folder with train.csv keeps the SVAMP layout


def test_an_output_that_is_an_input_is_refused(folds, capsys):
    folder, _ = folds
    before = (folder / "fold0" / "dev.csv").read_bytes()
    assert main(["data", "vary", str(folder / "fold0" / "dev.csv"), "--variation", "sentences_reordered", "--out",
                 str(folder / "fold0" / "dev.csv")]) != 0
    assert "is the same file as" in capsys.readouterr().err
    assert (folder / "fold0" / "dev.csv").read_bytes() == before  # the input is never overwritten
