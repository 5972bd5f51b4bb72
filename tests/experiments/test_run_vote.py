"""neuromath/experiments/run_vote.py and `neuromath analyze vote`: hand-made gold problems and prediction records
whose vote is worked out by hand: answers compared by value (equivalent equations are one answer), an equation with
no value does not vote, ties go to the earliest run; cv folders voted fold by fold; bad records and runs over other
problems refused."""

import json

import pytest

from neuromath.cli import main
from neuromath.config import load_config, save_config
from neuromath.errors import DataFormatError, NeuromathError
from neuromath.evaluation.scoring import write_predictions
from neuromath.experiments.run_vote import vote_table
from neuromath.tasks.word_problems import Example, write_jsonl

# every problem's numbers are 3 and 4; the answers: 7, 12, -1, 7
ANSWERS = [7.0, 12.0, -1.0, 7.0]
ADD, ADD_SWAPPED, TIMES, MINUS, OUT_OF_RANGE = ("+", "n0", "n1"), ("+", "n1", "n0"), ("*", "n0", "n1"), \
    ("-", "n0", "n1"), ("+", "n0", "n5")


def gold_file(path, offset=0):
    examples = [Example(f"p{offset + index}", "3 and 4", "n0 and n1", ("3", "4"), ADD, answer)
                for index, answer in enumerate(ANSWERS)]
    write_jsonl(examples, path)


def run_folder(folder, test, equations, offset=0):
    folder.mkdir(parents=True)
    save_config(load_config("word_problems/transformer", [f"data.test={test}", "data.format=jsonl"], strict=True),
                folder / "config.yaml")
    write_predictions([{"id": f"p{offset + index}", "predicted_tokens": list(tokens), "correct": False}
                       for index, tokens in enumerate(equations)], folder / "predictions.jsonl")
    return folder


def test_a_vote_of_three_runs_worked_out_by_hand(tmp_path, capsys):
    gold_file(tmp_path / "test.jsonl")
    # p0 (7): a says 12, b says 7, c says 7 written the other way round: 7 wins by value (three different
    #         equations, which a vote by tokens would give to a), right
    # p1 (12): a says 7, b says 12, c has no value: a tie of one vote each goes to a, wrong
    # p2 (-1): a says 12, b and c say -1: right though the first run is wrong
    # p3 (7): a says 7, b and c say 12: 12 wins, wrong though the first run is right
    a = run_folder(tmp_path / "a", tmp_path / "test.jsonl", [TIMES, ADD, TIMES, ADD])
    b = run_folder(tmp_path / "b", tmp_path / "test.jsonl", [ADD, TIMES, MINUS, TIMES])
    c = run_folder(tmp_path / "c", tmp_path / "test.jsonl", [ADD_SWAPPED, OUT_OF_RANGE, MINUS, TIMES])
    table = vote_table([a, b, c], samples=200)
    assert [row["accuracy"] for row in table["runs"]] == [0.25, 0.75, 0.5]  # recomputed, not the records' "correct"
    assert table["vote"]["accuracy"] == 0.5
    assert table["vote"]["paired"]["mcnemar"]["only_a"] == 1 and table["vote"]["paired"]["mcnemar"]["only_b"] == 2
    assert table["any_correct"] == 1.0  # every problem has some run right
    assert table["unanimous"] == 0.0  # p0: 12, 7 and 7; nowhere do all three agree
    assert table["vote"]["by_unit"]["units"] == [0.5]

    assert main(["analyze", "vote", str(a), str(b), str(c), "--samples", "200"]) == 0
    out = capsys.readouterr().out
    assert "| the vote | 50.0 | - |" in out and "Some run right: 100.0%" in out


def test_a_cv_folder_votes_fold_by_fold_and_other_problems_are_refused(tmp_path):
    for k in range(2):
        gold_file(tmp_path / f"test{k}.jsonl", offset=10 * k)
    folders = []
    for name, folds in (("x", ([ADD, TIMES, MINUS, ADD], [ADD] * 4)), ("y", ([ADD] * 4, [TIMES] * 4)),
                        ("z", ([ADD, TIMES, MINUS, TIMES], [TIMES] * 4))):
        cv = tmp_path / name
        for k, equations in enumerate(folds):
            run_folder(cv / f"fold{k}", tmp_path / f"test{k}.jsonl", equations, offset=10 * k)
        (cv / "report.json").write_text(json.dumps({"task": "word_problems",
                                                    "folds": [{"fold": "fold0"}, {"fold": "fold1"}]}))
        folders.append(cv)
    table = vote_table(folders, samples=200)
    # fold 0: x right on all four; y on p0, p3; z on p0..p2: the vote is right on all four.
    # fold 1: x right on p0, p3; y and z say 12 everywhere: right on p1 only
    assert table["vote"]["by_unit"]["units"] == [1.0, 0.25]
    assert table["vote"]["accuracy"] == pytest.approx(5 / 8)
    assert table["runs"][0]["by_unit"]["mean"] == pytest.approx(0.75)
    assert table["units"] == ["fold0", "fold1"]

    single = run_folder(tmp_path / "single", tmp_path / "test0.jsonl", [ADD] * 4)
    with pytest.raises(NeuromathError, match="scored different test problems"):
        vote_table([folders[0], single])
    with pytest.raises(NeuromathError, match="at least two runs"):
        vote_table([single])


def test_a_record_without_a_list_of_tokens_is_an_error_naming_its_line(tmp_path):
    gold_file(tmp_path / "test.jsonl")
    a = run_folder(tmp_path / "a", tmp_path / "test.jsonl", [ADD] * 4)
    b = run_folder(tmp_path / "b", tmp_path / "test.jsonl", [ADD] * 4)
    lines = (b / "predictions.jsonl").read_text().splitlines()
    lines[2] = json.dumps({"id": "p2", "predicted_tokens": "+ n0 n1", "correct": True})
    (b / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFormatError, match=r"predictions.jsonl:3: predicted_tokens must be a list of strings"):
        vote_table([a, b])
