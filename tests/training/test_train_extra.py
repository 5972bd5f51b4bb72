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
from neuromath.tasks.word_problems.overlap import story_key
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
    fresh = [e for e in generate(300, random.Random(13))
             if not any(story_key(e) in held for held in keys.values())]
    assert len(fresh) > 20  # the generator tells most stories apart by their names and objects
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
    assert report["read"] == report["in_held_out"] + report["in_train"] + report["repeated"] + report["kept"]
    assert [f["read"] for f in report["files"]] == [18, len(extra) - 18]


def test_a_missing_extra_file_is_named_before_anything_is_read(files):
    tmp_path, _, _ = files
    config = load_config(None, [f"data.train={tmp_path / 'train.jsonl'}",
                                f"data.train_extra={tmp_path / 'train.jsonl'},nowhere/other.csv"], strict=True)
    with pytest.raises(DataNotFoundError, match="nowhere/other.csv"):
        resolve_data_paths(config)
