"""neuromath/tasks/identities/evaluations.py: function-evaluation equations (numbers as evidence)."""

import math
import random
from collections import Counter

import pytest

from neuromath.cli import main
from neuromath.tasks.identities import EquationNode, evaluate, read_equations
from neuromath.tasks.identities.evaluations import (
    CONSTANTS,
    EVALUATED_FUNCTIONS,
    EvaluationSettings,
    decimal_leaf,
    evaluation_equation,
    generate_evaluations,
)


def test_right_sides_are_the_rounded_value_and_wrong_ones_are_moved_well_away():
    examples = generate_evaluations(1700, random.Random(0))
    assert {e.depth for e in examples} == {2}
    for example in examples:
        left, right = example.tree.children
        assert right.func == "Float" and right.is_leaf
        value = evaluate(left, {})
        gap = abs(float(right.value) - value)
        if example.label:
            assert gap <= 0.5e-4 + 1e-12, example.tree
        else:
            assert gap >= 0.1 * max(1.0, abs(value)) - 1e-4, example.tree
    kinds = Counter(leaf.func for e in examples for leaf in e.tree.children[0].children)
    assert kinds["Float"] > 0 and sum(kinds[k] for k in kinds if k != "Float") > 0  # decimals and constants


def test_functions_and_labels_are_balanced_and_the_seed_decides_everything():
    examples = generate_evaluations(1001, random.Random(5))
    per_function = Counter(e.tree.children[0].func for e in examples)
    assert set(per_function) == set(EVALUATED_FUNCTIONS)
    assert max(per_function.values()) - min(per_function.values()) <= 1
    right = Counter(e.tree.children[0].func for e in examples if e.label)
    assert all(abs(2 * right[f] - per_function[f]) <= 1 for f in per_function)
    assert abs(2 * sum(right.values()) - len(examples)) <= 1
    again = generate_evaluations(1001, random.Random(5))
    assert [str(e.tree) for e in again] == [str(e.tree) for e in examples]
    assert [str(e.tree) for e in generate_evaluations(50, random.Random(6))] != [str(e.tree) for e in examples[:50]]


def test_constant_share_one_uses_only_the_identities_constants():
    settings = EvaluationSettings(constant_share=1.0)
    examples = generate_evaluations(200, random.Random(1), settings, functions=("cos", "Add"))
    allowed = {str(c) for c in CONSTANTS}
    assert all(str(arg) in allowed for e in examples for arg in e.tree.children[0].children)


def test_decimal_leaves_and_settings():
    assert decimal_leaf(-0.00001, 4) == EquationNode("Float", "0.0")
    assert decimal_leaf(math.pi, 2).value == "3.14"
    example = evaluation_equation("log", True, random.Random(2))
    assert float(example.tree.children[0].children[0].value) > 0
    for bad in ({"places": 0}, {"constant_share": 1.5}, {"max_abs": 0}):
        with pytest.raises(ValueError):
            EvaluationSettings(**bad)
    with pytest.raises(ValueError, match="functions must be among"):
        generate_evaluations(10, random.Random(0), functions=("sqrt",))


def test_generate_evaluations_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "ev.json"
    assert main(["generate", "evaluations", "--n", "34", "--seed", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| all | 34 | 50.0 |" in printed and "data.train_extra=" in printed
    examples = read_equations(out)
    assert len(examples) == 34 and sum(e.label for e in examples) == 17
    with pytest.raises(SystemExit):
        main(["generate", "evaluations", "--n", "4", "--places", "9", "--out", str(tmp_path / "x.json")])
    assert "--places" in capsys.readouterr().err
