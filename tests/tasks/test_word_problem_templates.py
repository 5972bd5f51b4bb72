import random
import re
from fractions import Fraction

import pytest

from neuromath.errors import ConfigError
from neuromath.expr import parse_number
from neuromath.tasks.word_problems import equation_value
from neuromath.tasks.word_problems.templates import (
    FEMALE_NAMES,
    ITEMS,
    MALE_NAMES,
    PEOPLE,
    TEMPLATES,
    generate,
)

OPERATORS = {"+", "-", "*", "/"}


def operation_count(equation):
    return sum(token in OPERATORS for token in equation)


def test_registry_has_at_least_30_templates_covering_every_kind_of_problem():
    assert len(TEMPLATES) >= 30
    assert {template.category for template in TEMPLATES.values()} == {
        "change", "combine", "compare", "rate", "cost", "sharing", "percent", "multi_step",
    }
    assert {template.operation_count for template in TEMPLATES.values()} == {1, 2, 3}
    assert all(name == template.name for name, template in TEMPLATES.items())


def test_story_vocabulary_is_large_and_has_no_duplicates():
    assert len(PEOPLE) >= 40 and len(MALE_NAMES) >= 20 and len(FEMALE_NAMES) >= 20
    assert len({person.name for person in PEOPLE}) == len(PEOPLE)
    assert len(ITEMS) >= 30
    assert len({item.plural for item in ITEMS}) == len(ITEMS)


def test_same_seed_gives_identical_examples_and_different_seeds_differ():
    first = generate(60, random.Random(7))
    assert first == generate(60, random.Random(7))
    assert first != generate(60, random.Random(8))
    assert [example.id for example in first[:3]] == ["gen-000000", "gen-000001", "gen-000002"]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_yields_exact_consistent_masked_examples(name):
    template = TEMPLATES[name]
    for example in generate(8, random.Random(name), templates=[name]):
        value = equation_value(example.equation, example.numbers)
        assert value == example.answer, example.text
        assert value >= 0 and value.denominator == 1, example.text
        masked_tokens = set(example.masked_text.split())
        used = {token for token in example.equation if re.fullmatch(r"n\d+", token)}
        assert used <= masked_tokens, example.text
        distractors = 1 if name.endswith("_with_distractor") else 0
        assert len(example.numbers) == len(used) + distractors, example.text
        assert len({parse_number(number) for number in example.numbers}) == len(example.numbers)
        assert operation_count(example.equation) == template.operation_count


def test_some_templates_carry_an_irrelevant_distractor_number():
    assert len([name for name in TEMPLATES if name.endswith("_with_distractor")]) >= 3


def test_take_away_reads_like_a_natural_change_problem_with_matching_pronoun():
    pattern = re.compile(
        r"(\w+) had (\d+) ([a-z ]+)\. (\w+) took (\d+) \3 from (him|her)\. How many \3 does \1 have left\?"
    )
    matches = []
    for example in generate(60, random.Random(0), templates=["change_take_away"]):
        match = pattern.fullmatch(example.text)
        if match:
            matches.append(match)
            assert example.equation == ("-", "n0", "n1")
            assert example.answer == int(match[2]) - int(match[5])
    assert len(matches) >= 5
    for match in matches:
        assert (match[6] == "her") == (match[1] in FEMALE_NAMES)
        assert match[1] != match[4]


def test_operation_counts_respect_min_and_max_ops():
    for ops in (1, 2, 3):
        examples = generate(60, random.Random(ops), min_ops=ops, max_ops=ops)
        assert {operation_count(example.equation) for example in examples} == {ops}
    examples = generate(100, random.Random(5), min_ops=2)
    assert {operation_count(example.equation) for example in examples} == {2, 3}


def test_names_and_objects_vary_over_many_samples():
    texts = [example.text for example in generate(500, random.Random(11))]
    words = {word for text in texts for word in re.findall(r"[A-Za-z]+", text)}
    assert len(words & {person.name for person in PEOPLE}) >= 35
    joined = " ".join(texts)
    assert sum(f" {item.plural} " in joined or f" {item.plural}." in joined for item in ITEMS) >= 25
    assert {"him", "her"} <= words
    assert len({text for text in texts}) == len(texts)


def test_share_including_self_keeps_the_unwritten_one_as_a_constant():
    (example,) = generate(1, random.Random(2), templates=["share_including_self"])
    assert "1" in example.equation
    assert all(parse_number(number) != 1 for number in example.numbers)


def test_percent_templates_mask_the_percentage_as_a_number():
    names = [name for name, template in TEMPLATES.items() if template.category == "percent"]
    for example in generate(20, random.Random(4), templates=names):
        assert any(number.endswith("%") for number in example.numbers)
        assert parse_number(next(n for n in example.numbers if n.endswith("%"))) in {
            Fraction(1, 10), Fraction(1, 5), Fraction(1, 4), Fraction(1, 2),
        }


def test_bad_requests_raise_config_errors():
    with pytest.raises(ConfigError, match="unknown word-problem templates"):
        generate(1, random.Random(0), templates=["no_such_template"])
    with pytest.raises(ConfigError, match="between 3 and 1"):
        generate(1, random.Random(0), min_ops=3, max_ops=1)
    with pytest.raises(ConfigError, match="non-negative"):
        generate(-1, random.Random(0))
    assert generate(0, random.Random(0)) == []
