"""Run folders written by an earlier release still load and predict exactly as they did.

tests/fixtures/run_folders/ holds two tiny trained runs in the format of November 2026 (config.yaml with the keys that
applied to the run, model.pt, the vocabularies, summary.json and data.json; no checkpoints): a word-problem Transformer
and an identities Tree-LSTM. expected.json is what ``neuromath.load(...).solve`` answered for them when they were
written. A change to the config classes, the model builders or the weight loading that breaks an old run fails here.
"""

import json
import math
from pathlib import Path

import pytest
import yaml

import neuromath
from neuromath.config import config_to_dict, load_config

FOLDERS = Path(__file__).resolve().parent / "fixtures" / "run_folders"
EXPECTED = json.loads((FOLDERS / "expected.json").read_text(encoding="utf-8"))
WORD_PROBLEMS = ["Tom has 3 apples and buys 5 more. How many apples does he have?",
                 "A box holds 12 pens. 4 are taken. How many pens are left?"]
EQUATIONS = ["x + 0 = x", "x * 1 = x + 1", "sin(x)^2 + cos(x)^2 = 1"]
ADDED_SINCE = {"verdict_detail"}  # answer keys newer than the fixtures: the verifier's own verdict, None off symbolic


def without_added(answer):
    """``answer`` with the keys of ``ADDED_SINCE`` taken out, after checking they hold None (no verifier ran)."""
    if isinstance(answer, list):
        return [without_added(item) for item in answer]
    if isinstance(answer, dict):
        assert all(answer.get(key) is None for key in ADDED_SINCE), answer
        return {key: without_added(value) for key, value in answer.items() if key not in ADDED_SINCE}
    return answer


def as_then(answer: dict) -> dict:
    """A word-problem answer in the form of the fixtures' time, after checking the two changes since: an n-best entry
    says ``well_formed`` and holds ``equation`` null when it is not (it held ''), and the top-level ``verified`` is
    the verdict of the answer shown (it was None for word problems)."""
    for entry in answer["nbest"]:
        assert entry.pop("well_formed") == (entry["equation"] is not None), entry
        entry["equation"] = "" if entry["equation"] is None else entry["equation"]
    shown = next((entry for entry in answer["nbest"] if answer["equation"] and entry["equation"] == answer["equation"]),
                 None)
    assert answer["verified"] == (shown["verified"] if shown else False), answer
    return {**answer, "verified": None}


def same(left, right, path="answer"):
    """Equal JSON values, floats to 1e-5 (the scores of a CPU forward pass)."""
    if isinstance(left, float) or isinstance(right, float):
        assert left is not None and right is not None and math.isclose(left, right, rel_tol=1e-5, abs_tol=1e-6), path
    elif isinstance(left, dict):
        assert sorted(left) == sorted(right), path
        for key in left:
            same(left[key], right[key], f"{path}.{key}")
    elif isinstance(left, list):
        assert len(left) == len(right), path
        for index, (a, b) in enumerate(zip(left, right)):
            same(a, b, f"{path}[{index}]")
    else:
        assert left == right, path


@pytest.mark.parametrize("folder", ["word_problems_transformer", "identities_tree_lstm"])
def test_an_old_run_config_loads_strictly_with_every_value_it_names(folder):
    path = FOLDERS / folder / "config.yaml"
    config = load_config(path, strict=True)  # it names only keys that apply to its task and model
    saved, loaded = yaml.safe_load(path.read_text(encoding="utf-8")), config_to_dict(config, applicable_only=True)
    for section, keys in saved.items():  # keys added since keep their defaults, so the run computes as it did
        assert {key: loaded[section][key] for key in keys} == keys, section


def test_an_old_word_problem_run_solves_as_it_did():
    solver = neuromath.load(FOLDERS / "word_problems_transformer", beam=3, nbest=3)
    same(without_added([as_then(solver.solve(text).to_json()) for text in WORD_PROBLEMS]), EXPECTED["wp"])


def test_an_old_identities_run_classifies_as_it_did():
    classifier = neuromath.load(FOLDERS / "identities_tree_lstm")
    answers = [classifier.solve(text).to_json() for text in EQUATIONS]
    same(answers, EXPECTED["tl"])
    assert len({answer["probability"] for answer in answers}) == len(EQUATIONS)  # the weights tell them apart
