"""data.train_extra for word problems: another collection's problems join the training set after the validation
carve-out, and none whose story is held out (validation, test) or already trained on."""

import dataclasses
import random

import pytest

from neuromath.config import load_config
from neuromath.dataroot import resolve_data_paths
from neuromath.errors import DataNotFoundError
from neuromath.tasks import get_task
from neuromath.tasks.word_problems import write_jsonl
from neuromath.tasks.word_problems.overlap import near_copy, story_key
from neuromath.tasks.word_problems.templates import generate
from neuromath.training.run import prepare_data


def renumbered(example, suffix):
    """The same story under another id with its first number changed: the kind of copy two corpora share."""
    numbers = (str(int(float(example.numbers[0])) + 7),) + example.numbers[1:] if example.numbers else ()
    return dataclasses.replace(example, id=f"{example.id}-{suffix}", numbers=numbers,
                               text=example.text + " ")


@pytest.fixture()
def files(tmp_path):
    train, test = generate(200, random.Random(11)), generate(60, random.Random(12))
    write_jsonl(train, tmp_path / "train.jsonl")
    write_jsonl(test, tmp_path / "test.jsonl")
    return tmp_path, train, test


def prepared(tmp_path, *extra):
    config = load_config(None, [f"data.train={tmp_path / 'train.jsonl'}", f"data.test={tmp_path / 'test.jsonl'}",
                                *extra], strict=True)
    return prepare_data(config, get_task("word_problems").configured(config.data))


def test_extra_problems_join_training_and_no_held_out_story_does(files):
    tmp_path, train, test = files
    plain = prepared(tmp_path)
    keys = {"valid": {story_key(e) for e in plain.valid}, "test": {story_key(e) for e in plain.test},
            "train": {story_key(e) for e in plain.train}}
    held_words = [frozenset(key.split()) for key in keys["valid"] | keys["test"]]
    fresh = [e for e in generate(600, random.Random(13)) if not any(story_key(e) in held for held in keys.values())
             and not near_copy(frozenset(story_key(e).split()), held_words, 0.8)]
    assert len(fresh) > 20  # the generator's templates make many near copies; some stories are new
    copies = ([renumbered(e, "t") for e in plain.test[:5]] + [renumbered(e, "v") for e in plain.valid[:5]]
              + [renumbered(e, "r") for e in plain.train[:5]])
    extra = fresh[:20] + copies + [renumbered(fresh[0], "again")]
    write_jsonl(extra[:18], tmp_path / "other-a.jsonl")
    write_jsonl(extra[18:], tmp_path / "other-b.jsonl")

    after = prepared(tmp_path, f"data.train_extra={tmp_path / 'other-a.jsonl'}, {tmp_path / 'other-b.jsonl'}")
    assert [e.id for e in after.valid] == [e.id for e in plain.valid]  # the carve-out is made before they join
    assert after.test == plain.test and after.train[:len(plain.train)] == plain.train
    added = after.train[len(plain.train):]
    unique_fresh = list({story_key(e): e for e in reversed(fresh[:20])}.values())[::-1]
    assert [e.id for e in added] == [e.id for e in unique_fresh]  # each new story once, in file order
    assert not {story_key(e) for e in added} & (keys["valid"] | keys["test"])
    report = after.report["train"]["extra"]
    assert report["in_held_out"] == 10 and report["in_train"] == 5
    assert report["kept"] == len(added) and report["read"] == len(extra)
    assert report["read"] == sum(report[key] for key in ("in_held_out", "near_held_out", "in_train", "repeated",
                                                          "kept"))
    assert [f["read"] for f in report["files"]] == [18, len(extra) - 18]


def edited(example, old, new):
    """``example`` with the word ``old`` of its story replaced by ``new``: a copy with a name changed."""
    assert f" {old} " in f" {example.masked_text} "
    return dataclasses.replace(example, id=f"{example.id}-edited",
                               masked_text=f" {example.masked_text} ".replace(f" {old} ", f" {new} ").strip(),
                               text=example.text.replace(old, new))


def test_a_held_out_story_with_a_word_changed_is_a_copy_unless_similarity_is_1(files):
    tmp_path, _, test = files
    long_one = max(test, key=lambda e: len(set(story_key(e).split())))
    word = next(w for w in long_one.masked_text.split() if w.isalpha() and len(w) > 3)
    copy = edited(long_one, word, "zyxwv")
    assert story_key(copy) != story_key(long_one)
    write_jsonl([copy], tmp_path / "other.jsonl")
    strict = prepared(tmp_path, f"data.train_extra={tmp_path / 'other.jsonl'}")
    assert strict.report["train"]["extra"]["near_held_out"] == 1 and strict.report["train"]["extra"]["kept"] == 0
    exact = prepared(tmp_path, f"data.train_extra={tmp_path / 'other.jsonl'}", "data.train_extra_similarity=1")
    assert exact.report["train"]["extra"]["kept"] == 1 and exact.train[-1].id == copy.id


def test_near_copy_agrees_with_the_plain_jaccard_share():
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(30)]
    for _ in range(2000):
        a = frozenset(rng.sample(vocabulary, rng.randint(1, 12)))
        others = [frozenset(rng.sample(vocabulary, rng.randint(1, 12))) for _ in range(3)]
        threshold = rng.choice([0.3, 0.5, 0.8, 1.0])
        expected = any(len(a & b) / len(a | b) >= threshold for b in others)
        assert near_copy(a, others, threshold) == expected


def test_a_missing_extra_file_is_named_before_anything_is_read(files):
    tmp_path, _, _ = files
    config = load_config(None, [f"data.train={tmp_path / 'train.jsonl'}",
                                f"data.train_extra={tmp_path / 'train.jsonl'},nowhere/other.csv"], strict=True)
    with pytest.raises(DataNotFoundError, match="nowhere/other.csv"):
        resolve_data_paths(config)
