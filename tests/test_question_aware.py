"""The question-aware objective (data.contrast, optim.contrast_weight): each training problem varied so that its
own equation no longer answers it (the question removed, or another question asked) joins training paired with that
equation, and the loss pushes its probability down; a model so trained stops answering stories without questions."""

from __future__ import annotations

import math
from dataclasses import asdict, replace

import pytest
import torch

from neuromath.api import load
from neuromath.config import load_config
from neuromath.errors import ConfigError
from neuromath.evaluation.robustness import robustness_report
from neuromath.experiments.fit_then_test import train
from neuromath.models.batching import EncodedExamples, collate
from neuromath.tasks import get_task
from neuromath.tasks.word_problems.contrast import UnlikelyExample, contrasts
from neuromath.tasks.word_problems.normalisation import with_canonical_equation
from neuromath.tasks.word_problems.records import Example
from neuromath.text import Vocabulary
from neuromath.training.module import SequenceModule, unlikelihood_terms
from neuromath.training.run import prepare_data

NAMED = Example("7", "Tom has 5 apples . Ann has 3 apples . How many apples do Tom and Ann have in all ?",
                "Tom has n0 apples . Ann has n1 apples . How many apples do Tom and Ann have in all ?",
                ("5", "3"), ("+", "n0", "n1"), 8.0)
# the question holds a number: it cannot be cut off, and it is no total or comparison of two
ASKED_WITH_A_NUMBER = Example("9", "Ann has 12 pens . How many pens has she after she buys 4 more ?",
                              "Ann has n0 pens . How many pens has she after she buys n1 more ?",
                              ("12", "4"), ("+", "n0", "n1"), 16.0)


def test_each_contrast_problem_carries_the_equation_that_no_longer_answers_it():
    made, counts = contrasts([NAMED, ASKED_WITH_A_NUMBER], ["question_removed", "question_changed"])
    assert counts == {"question_removed": 1, "question_changed": 1}
    removed, changed = made
    assert all(isinstance(example, UnlikelyExample) and example.unlikely for example in made)
    assert removed.masked_text == "Tom has n0 apples . Ann has n1 apples ."
    assert (removed.equation, removed.answer) == (NAMED.equation, NAMED.answer)
    # the changed question asks for the difference (- n0 n1, 2); its contrast keeps the old total (+ n0 n1, 8)
    assert changed.masked_text.endswith("How many more apples does Tom have than Ann ?")
    assert (changed.equation, changed.answer, changed.numbers) == (("+", "n0", "n1"), 8.0, ("5", "3"))
    assert {removed.id, changed.id} == {"7#question_removed#contrast", "7#question_changed#contrast"}
    # written and rewritten as any example: the same fields, and the mark survives data.targets canonical
    assert asdict(removed).keys() == asdict(NAMED).keys()
    assert isinstance(with_canonical_equation(changed), UnlikelyExample)
    assert not getattr(replace(NAMED), "unlikely", False)


@pytest.mark.parametrize("config, overrides, message", [
    ("word_problems/gts", ["data.contrast=question_reordered"], r"'question_reordered' is not a variation it takes"),
    ("word_problems/gts", ["data.contrast=question_removed,question_removed"], "names a variation twice"),
    ("word_problems/jaccard", ["data.contrast=question_removed"], r"'jaccard' \(retrieval\) has none"),
    ("word_problems/gts", ["optim.contrast_weight=-1"], "contrast_weight"),
])
def test_the_contrast_keys_are_checked_when_the_config_is_built(config, overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(config, overrides, strict=True)


def tiny_config(extra=()):
    return load_config("word_problems/gts", [
        "data.train=null", "data.test=null", "data.generate_train=400", "data.generate_valid=60",
        "data.generate_test=100", "model.encoder_hidden=32", "model.d_model=32", "model.dropout=0.0",
        "optim.lr=0.003", "train.batch_size=32", "train.max_epochs=20", "train.patience=0", "train.num_threads=1",
        "train.progress=false", "decode.beam=1", *extra], strict=True)


def test_contrast_problems_join_training_only_and_their_batches_say_so():
    task = get_task("word_problems")
    plain = prepare_data(tiny_config(), task)
    data = prepare_data(tiny_config(["data.contrast=question_removed,question_changed"]), task)
    made = [example for example in data.train if isinstance(example, UnlikelyExample)]
    counts = data.report["train"]["contrast"]
    assert len(made) == counts["added"] == sum(counts["by_variation"].values()) > 100
    assert data.train[:len(plain.train)] == plain.train and len(data.train) == len(plain.train) + len(made)
    assert (data.valid, data.test) == (plain.valid, plain.test)
    source = Vocabulary.build([task.source_tokens(example) for example in data.train])
    target = Vocabulary.build([task.target_tokens(example) for example in data.train])
    encoded = EncodedExamples(data.train, task, source, target)
    rows = [len(plain.train) - 1, len(plain.train), len(plain.train) + 1]
    batch = collate([encoded[row] for row in rows])
    assert batch["unlikely"].tolist() == [False, True, True]
    assert collate([encoded[0], encoded[1]])["unlikely"].tolist() == [False, False]  # every batch of such a set
    assert "unlikely" not in collate([EncodedExamples(plain.train, task, source, target)[0]])


def test_the_unlikelihood_term_is_minus_log_one_minus_the_sequence_probability():
    # two target tokens (ids 1, 2), then padding: p = p(1) * p(2)
    logits = torch.log(torch.tensor([[[0.1, 0.6, 0.3], [0.1, 0.2, 0.7], [1 / 3, 1 / 3, 1 / 3]]]))
    target = torch.tensor([[1, 2, 0]])
    assert unlikelihood_terms(logits, target).item() == pytest.approx(-math.log(1 - 0.6 * 0.7), rel=1e-5)
    # a near-certain wrong answer: a large, finite term whose gradient lowers that answer's logits
    certain = torch.tensor([[[0.0, 12.0, 0.0], [0.0, 0.0, 12.0]]], requires_grad=True)  # p = 0.99998
    term = unlikelihood_terms(certain, target[:, :2])
    term.sum().backward()
    assert 8 < term.item() < 14 and torch.isfinite(certain.grad).all()
    assert certain.grad[0, 0, 1] > 0 and certain.grad[0, 1, 2] > 0  # descent lowers them


def test_contrast_rows_leave_the_cross_entropy_and_add_their_weighted_term():
    config = tiny_config(["data.contrast=question_removed", "optim.contrast_weight=0.5"])
    module = SequenceModule(config, torch.nn.Identity())
    torch.manual_seed(0)
    logits = torch.randn(3, 4, 6)
    target = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0], [2, 2, 2, 2]])
    unlikely = torch.tensor([False, True, False])
    plain = torch.nn.functional.cross_entropy(logits[[0, 2]].flatten(0, 1), target[[0, 2]].flatten(),
                                              ignore_index=0)
    expected = plain + 0.5 * unlikelihood_terms(logits[[1]], target[[1]]).mean()
    assert module.contrast_loss(logits, target, unlikely, "mean").item() == pytest.approx(expected.item(), rel=1e-5)
    tokens = 7  # the other rows' target tokens
    assert module.contrast_loss(logits, target, unlikely, "sum").item() == pytest.approx(tokens * expected.item(),
                                                                                          rel=1e-5)
    none = torch.zeros(3, dtype=torch.bool)  # a batch of such a set without contrast rows: the plain loss
    assert module.contrast_loss(logits, target, none, "mean").item() == pytest.approx(
        torch.nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten(), ignore_index=0).item(), rel=1e-5)


def test_a_model_trained_against_the_story_alone_reads_the_question(tmp_path):
    """Trained with question_removed contrasts, GTS still solves the tiny task but no longer answers the stories
    without their questions, which the same model trained without them mostly does."""
    answered = {}
    for name, extra in (("plain", []), ("contrast", ["data.contrast=question_removed"])):
        config = tiny_config(extra)
        train(config, tmp_path / name)
        test = prepare_data(config, get_task("word_problems")).test
        report = robustness_report(load(tmp_path / name), test)
        answered[name] = {row["variation"]: row.get("accuracy") for row in report["rows"]}
    assert answered["plain"]["plain"] >= 0.6 and answered["contrast"]["plain"] >= 0.6, answered
    assert answered["plain"]["question_removed"] >= 0.4, answered  # the story alone gives most answers away
    assert answered["contrast"]["question_removed"] <= 0.15, answered
