"""neuromath/evaluation/verification.py: verification metrics by depth, the numeric checker, completion ranking,
tables and the plot, checked against hand-computed values."""

import pytest

from neuromath.evaluation.verification import (
    blank_kind,
    completion_kind_table,
    completion_metrics,
    completion_table,
    depth_table,
    fill_and_score,
    mean_and_std,
    mean_std_table,
    numeric_checker,
    numeric_completion_score,
    plot_accuracy_by_depth,
    true_class,
    verification_metrics,
    write_verification_report,
)
from neuromath.tasks.identities import PI, Candidate, EquationExample, apply, number, symbol

X, Y = symbol("var_0"), symbol("var_1")


def equation(left, right, label, blank=None):
    return EquationExample(apply("Equality", left, right), label, blank)


# depth 1: x = x (true), x = y (false); depth 2: sin(x) = sin(x) (true), sin(x) = cos(x) (false), cos(x) = cos(x) (true)
EXAMPLES = [
    equation(X, X, True),
    equation(X, Y, False),
    equation(apply("sin", X), apply("sin", X), True),
    equation(apply("sin", X), apply("cos", X), False),
    equation(apply("cos", X), apply("cos", X), True),
]


def test_verification_metrics_by_depth_by_hand():
    predictions = [True, True, True, False, False]
    metrics = verification_metrics(EXAMPLES, predictions)
    # overall: right on 0, 2, 3 -> 3/5; predicted positive 0, 1, 2 -> 2 true positives -> precision 2/3;
    # positives 0, 2, 4 -> recall 2/3
    assert metrics["accuracy"] == pytest.approx(3 / 5)
    assert metrics["precision"] == pytest.approx(2 / 3)
    assert metrics["recall"] == pytest.approx(2 / 3)
    assert metrics["by_depth"][1] == {"n": 2, "accuracy": 0.5, "precision": 0.5, "recall": 1.0, "true_share": 0.5}
    depth2 = metrics["by_depth"][2]
    assert depth2["accuracy"] == pytest.approx(2 / 3) and depth2["precision"] == 1.0 and depth2["recall"] == 0.5
    none_predicted = verification_metrics(EXAMPLES[:2], [False, False])
    assert none_predicted["precision"] is None and none_predicted["recall"] == 0.0
    with pytest.raises(ValueError):
        verification_metrics(EXAMPLES, [True])


def test_numeric_checker_row():
    predictions, undecided = numeric_checker(EXAMPLES + [equation(apply("asin", number(3)), X, False)])
    assert predictions == [True, False, True, False, True, False]
    assert undecided == 1  # asin(3) has no real value anywhere


def test_tables_and_report(tmp_path):
    rows = {
        "model": verification_metrics(EXAMPLES, [True, True, True, False, False]),
        "checker": verification_metrics(EXAMPLES, [True, False, True, False, True]),
    }
    table = depth_table(rows)
    lines = table.splitlines()
    assert lines[0] == "| model | overall | depth 1 | depth 2 |"
    assert lines[2] == "| model | 60.0 | 50.0 | 66.7 |"
    assert lines[3] == "| checker | 100.0 | 100.0 | 100.0 |"
    assert lines[4] == "| equations | 5 | 2 | 3 |"
    write_verification_report(rows, tmp_path / "report")
    assert (tmp_path / "report" / "accuracy_by_depth.png").read_bytes()[:4] == b"\x89PNG"
    assert "## Recall (%) by depth" in (tmp_path / "report" / "report.md").read_text()
    plot_accuracy_by_depth(rows, tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 1000


def test_mean_and_std_over_seeds():
    runs = [verification_metrics(EXAMPLES, p) for p in ([True] * 5, [True, False, True, False, True])]
    combined = mean_and_std(runs)
    assert combined["accuracy"]["mean"] == pytest.approx((3 / 5 + 1) / 2)
    assert combined["accuracy"]["std"] == pytest.approx(0.2828427, rel=1e-5)  # stdev of (0.6, 1.0)
    assert combined["by_depth"][1]["accuracy"]["mean"] == pytest.approx(0.75)
    assert combined["seeds"] == 2
    assert "| m | 2 | 80.0 ± 28.3 | 75.0 ± 35.4 | 83.3 ± 23.6 |" in mean_std_table({"m": combined})
    assert "| one | 1 | 60.0 | 50.0 | 66.7 |" in mean_std_table({"one": mean_and_std(runs[:1])})  # no spread of one


CANDIDATES = [
    Candidate(X, "x"),
    Candidate(Y, "y"),
    Candidate(number(2), "two"),
    Candidate(apply("Add", number(1), number(1)), "two"),
    Candidate(PI, "pi"),
]


def test_completion_ranks_and_classes_by_hand():
    # x + 2 = x + (1 + 1) with the 2 blanked (node 3) and sin(x) = sin(x) with the second x blanked (node 4)
    first = equation(apply("Add", X, number(2)), apply("Add", X, apply("Add", number(1), number(1))), True, blank=3)
    second = equation(apply("sin", X), apply("sin", X), True, blank=4)
    assert true_class(first, CANDIDATES) == "two" and true_class(second, CANDIDATES) == "x"

    def score(filled):  # a fake scorer: prefers pi, then 1 + 1, then y, then x, then 2 (by the blank's filler)
        preference = {"pi": 5, "Add": 4, "var_1": 3, "var_0": 2, "2": 1}
        return [preference[
            (
                e.tree.children[0].children[1] if e.tree.children[0].func == "Add" else e.tree.children[1].children[0]
            ).token
        ] for e in filled]

    metrics = completion_metrics([first, second], CANDIDATES, fill_and_score(CANDIDATES, score))
    # first: order pi, 1+1 (class two: rank 2); second: order pi, 1+1, y, x (rank 4)
    assert metrics["top1"] == 0.0 and metrics["top5"] == 1.0
    assert metrics["mrr"] == pytest.approx((1 / 2 + 1 / 4) / 2)
    assert metrics["by_depth"][3] == {"n": 1, "top1": 0.0, "top5": 1.0, "mrr": 0.5}  # the first equation
    assert metrics["by_depth"][2]["mrr"] == 0.25 and metrics["no_class"] == 0
    assert completion_metrics([first], [Candidate(PI, "pi")], fill_and_score(CANDIDATES, score))["no_class"] == 1
    with pytest.raises(ValueError, match="5 scores for 1 candidates"):  # a scorer that does not match the list
        completion_metrics([first], [Candidate(number(2), "two")], fill_and_score(CANDIDATES, score))
    assert "| fake | 2 | 0.0 | 100.0 | 0.375 |" in completion_table({"fake": metrics})
    # by what the blank hides: the first hides a number (rank 2), the second a symbol (rank 4)
    assert metrics["by_blank"] == {"symbol": {"n": 1, "top1": 0.0, "top5": 1.0, "mrr": 0.25},
                                   "number": {"n": 1, "top1": 0.0, "top5": 1.0, "mrr": 0.5}}
    table = completion_kind_table({"fake": metrics})
    assert "symbol (1): top-1 / top-5 / MRR | number (1)" in table and "expression" not in table
    assert "| fake | 0.0 / 100.0 / 0.250 | 0.0 / 100.0 / 0.500 |" in table


def test_blank_kinds():
    assert [blank_kind(t) for t in (X, number(2), PI, apply("sin", X), apply("Add", X, Y))] == [
        "symbol", "number", "number", "expression", "expression"]


def test_numeric_completion_prefers_the_value_class():
    first = equation(apply("Add", X, number(2)), apply("Add", X, apply("Add", number(1), number(1))), True, blank=3)
    metrics = completion_metrics([first], CANDIDATES, numeric_completion_score(CANDIDATES))
    assert metrics["top1"] == 1.0  # 2 and 1 + 1 agree at every point, the others nowhere
    # sin(x) * 2 = 2 * sin(x) with sin's argument blanked (below a unary and a binary node): x agrees everywhere
    second = equation(apply("Mul", apply("sin", X), number(2)), apply("Mul", number(2), apply("sin", X)), True, blank=3)
    scores = numeric_completion_score(CANDIDATES)(second.tree, (0, 0, 0))
    assert scores[0] == 1.0 and max(scores[1:]) < 0.2  # y, 2, 1 + 1, pi agree at (almost) no random point


def test_numeric_completion_ignores_points_outside_the_domain():
    # log(x) = log(x), x blanked: log(-1) has no value anywhere, so -1 scores 0; x agrees on the points x > 0 only
    blank = equation(apply("log", X), apply("log", X), True, blank=2)
    candidates = [Candidate(number(-1), "minus one"), Candidate(X, "x")]
    assert numeric_completion_score(candidates)(blank.tree, (0, 0)) == [0.0, 1.0]
