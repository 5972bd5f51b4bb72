"""data.augment: variations of the training problems join the training set after the validation
carve-out, and nowhere else; data.valid_variations: variations of the validation problems join the validation set
(made from it alone); unknown variations are refused by the config."""

import json
import random
import subprocess
import sys

import pytest

from neuromath.config import load_config
from neuromath.errors import ConfigError
from neuromath.tasks import get_task
from neuromath.tasks.word_problems import equation_value, read_jsonl, write_jsonl
from neuromath.tasks.word_problems.normalisation import canonical_prefix
from neuromath.tasks.word_problems.templates import generate
from neuromath.training.run import prepare_data


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    path = tmp_path_factory.mktemp("augment") / "train.jsonl"
    write_jsonl(generate(200, random.Random(11)), path)
    return path


def test_variants_of_the_training_problems_join_the_training_set_only(problems):
    plain = load_config(None, [f"data.train={problems}", "data.generate_test=0"])
    task = get_task("word_problems").configured(plain.data)
    before = prepare_data(plain, task)
    config = load_config(None, [f"data.train={problems}", "data.generate_test=0",
                                "data.augment=numbers_resampled,sentences_reordered", "data.augment_copies=2"],
                         strict=True)
    after = prepare_data(config, task)
    assert [example.id for example in after.valid] == [example.id for example in before.valid]  # the same carve-out
    originals = {example.id for example in before.train}
    added = after.train[len(before.train):]
    assert after.train[:len(before.train)] == before.train and len(added) > len(before.train)
    assert all(example.id.split("#")[0] in originals for example in added)  # no variant of a validation problem
    report = after.report["train"]["augmented"]
    assert report["added"] == len(added) and report["copies"] == 2
    assert set(report["by_variation"]) == {"numbers_resampled", "sentences_reordered"}


def test_variants_of_the_validation_problems_join_the_validation_set_only(problems):
    plain = load_config(None, [f"data.train={problems}", "data.generate_test=0"])
    task = get_task("word_problems").configured(plain.data)
    before = prepare_data(plain, task)
    config = load_config(None, [f"data.train={problems}", "data.generate_test=0",
                                "data.valid_variations=irrelevant_sentence,numbers_resampled"], strict=True)
    after = prepare_data(config, task)
    assert after.train == before.train and after.valid[:len(before.valid)] == before.valid
    added = after.valid[len(before.valid):]
    kept = {example.id for example in before.valid}
    assert all(example.id.split("#")[0] in kept for example in added)  # made from the validation problems alone
    counts = after.report["valid"]["varied"]
    assert counts["irrelevant_sentence"] == len(before.valid)  # every problem of the carve-out takes one
    assert 0 < counts["numbers_resampled"] <= len(before.valid) and sum(counts.values()) == len(added)


def test_an_unknown_or_repeated_variation_is_refused():
    with pytest.raises(ConfigError, match="'question_removed' is not a variation it takes; the variations are: "
                                          "sentences_reordered, numbers_resampled, irrelevant_sentence, "
                                          "question_changed"):
        load_config(None, ["data.augment=question_removed"], strict=True)
    with pytest.raises(ConfigError, match="names a variation twice"):
        load_config(None, ["data.augment=numbers_resampled, numbers_resampled"], strict=True)
    with pytest.raises(ConfigError, match="data.valid_variations: 'question_removed' is not a variation it takes"):
        load_config(None, ["data.valid_variations=irrelevant_sentence,question_removed"], strict=True)
    with pytest.raises(ConfigError, match="data.augment does not apply to the identities task"):
        load_config(None, ["data.task=identities", "model.name=tree_lstm", "data.augment=numbers_resampled"],
                    strict=True)


def test_the_command_writes_the_variants_for_inspection(problems, tmp_path):
    out = tmp_path / "variants.jsonl"
    done = subprocess.run([sys.executable, "-m", "neuromath", "data", "augment", str(problems), "--out", str(out),
                           "--variations", "numbers_resampled,irrelevant_sentence", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    written = read_jsonl(str(out))
    assert result["added"] == len(written) == sum(result["by_variation"].values()) > 200
    assert all("#numbers_resampled0" in example.id or "#irrelevant_sentence0" in example.id for example in written)
    refused = subprocess.run([sys.executable, "-m", "neuromath", "data", "augment", str(problems), "--out",
                              str(problems)], capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0 and "same file" in refused.stderr  # the input is never overwritten


def test_canonical_targets_give_equivalent_equations_one_form_in_every_split(problems):
    as_written = load_config(None, [f"data.train={problems}", f"data.test={problems}"])
    canonical = load_config(None, [f"data.train={problems}", f"data.test={problems}", "data.targets=canonical"],
                            strict=True)
    task = get_task("word_problems").configured(as_written.data)
    before, after = prepare_data(as_written, task), prepare_data(canonical, task)
    changed = 0
    for split in ("train", "valid", "test"):
        for old, new in zip(getattr(before, split), getattr(after, split)):
            assert old.id == new.id and equation_value(new.equation, new.numbers) == equation_value(old.equation,
                                                                                                   old.numbers)
            assert new.equation == canonical_prefix(old.equation)
            changed += new.equation != old.equation
    assert changed > 20  # the generator writes "+ n1 n0" forms: they become "+ n0 n1"
    assert canonical_prefix(("+", "n1", "n0")) == ("+", "n0", "n1")
    assert canonical_prefix(("-", "n2", "+", "n1", "n0")) == canonical_prefix(("-", "-", "n2", "n0", "n1"))
