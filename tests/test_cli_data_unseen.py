"""neuromath data unseen (neuromath/tasks/word_problems/overlap.py): the test problems whose story is in no training
file, each story once, compared without numbers, punctuation or case."""

import json
from dataclasses import replace

import pytest

from neuromath.cli import main
from neuromath.tasks.word_problems import read_jsonl, write_jsonl
from neuromath.tasks.word_problems.equation_targets import example_from_equation as problem
from neuromath.tasks.word_problems.overlap import story_key, unseen

PROBLEMS = [
    problem("a", "Tom has 3 apples. He buys 5 more. How many apples does he have?", "x=3+5"),
    problem("b", "Ann read 12 pages on Monday and 7 on Tuesday. How many pages did she read?", "x=12+7"),
    problem("c", "A box holds 6 pens. How many pens are in 4 boxes?", "x=6*4"),
]


def test_a_story_is_the_same_whatever_its_numbers_case_and_punctuation():
    copied = problem("x", "tom has 30 apples ,he buys 2 more . how many apples does he have ?", "x=30+2")
    assert story_key(copied) == story_key(PROBLEMS[0]) == "tom has n apples he buys n more how many apples does he have"
    other = problem("y", "Tom has 3 pears. He buys 5 more. How many pears does he have?", "x=3+5")
    assert story_key(other) != story_key(PROBLEMS[0])  # one word differs: another story
    kept, counts = unseen([PROBLEMS[1], copied, PROBLEMS[2], replace(PROBLEMS[2], id="d")], [PROBLEMS[0]])
    assert [example.id for example in kept] == ["b", "c"]
    assert counts == {"read": 4, "in_train": 1, "near_train": 0, "repeated": 1, "kept": 2}


def test_a_story_with_a_name_changed_is_a_near_copy_only_below_similarity_1():
    renamed = problem("r", "Sam has 3 apples. He buys 5 more. How many apples does he have?", "x=3+5")
    assert story_key(renamed) != story_key(PROBLEMS[0])  # 10 of 12 words shared: Jaccard 10/12 = 0.83
    assert unseen([renamed], [PROBLEMS[0]])[1]["kept"] == 1
    kept, counts = unseen([renamed, PROBLEMS[1]], [PROBLEMS[0]], similarity=0.8)
    assert [example.id for example in kept] == ["b"] and counts["near_train"] == 1
    assert unseen([renamed], [PROBLEMS[0]], similarity=0.9)[1]["kept"] == 1


def test_the_command_writes_the_unseen_problems_of_several_files(tmp_path, capsys):
    train, first, second = tmp_path / "train.jsonl", tmp_path / "t1.jsonl", tmp_path / "t2.jsonl"
    write_jsonl(PROBLEMS[:1], train)
    write_jsonl(PROBLEMS[:2], first)
    write_jsonl([replace(PROBLEMS[2], id="b")], second)  # folds of one corpus reuse ids
    out = tmp_path / "unseen.jsonl"
    assert main(["data", "unseen", str(first), str(second), "--train", str(train), "--out", str(out), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [example.id for example in read_jsonl(str(out))] == ["0:b", "1:b"]  # the written file reads back
    assert result["read"] == 3 and result["in_train"] == 1 and result["kept"] == 2 and result["train"] == 1
    with pytest.raises(SystemExit):
        main(["data", "unseen", str(first), "--train", str(train), "--out", str(out), "--similarity", "1.5"])
    assert "must be a number from 0 to 1, got 1.5" in capsys.readouterr().err
    before = first.read_bytes()
    assert main(["data", "unseen", str(first), "--train", str(train), "--out", str(first)]) != 0
    assert "is the same file as" in capsys.readouterr().err and first.read_bytes() == before
