"""neuromath/tasks/identities/blanks.py and `neuromath generate blanks`: completion problems made from the true
equations of a verification file."""

import argparse
import random

import pytest

from neuromath.cli import main
from neuromath.cli.common import integer_set
from neuromath.evaluation.verification import completion_metrics, numeric_completion_score, true_class
from neuromath.tasks.identities import (
    Candidate,
    EquationExample,
    apply,
    number,
    read_equations,
    subtree_at,
    symbol,
    write_candidates,
    write_equations,
)
from neuromath.tasks.identities.blanks import candidate_classes, make_blanks, right_rank, summarise_ranks, token_key

X, Y = symbol("var_0"), symbol("var_1")
CANDIDATES = [
    Candidate(X, "x"),
    Candidate(number(2), "2"),
    Candidate(apply("sin", X), "sin x"),
    Candidate(apply("Add", X, number(0)), "x"),
]


def equation(left, right, label=True):
    return EquationExample(apply("Equality", left, right), label)


# sin(x) = sin(x + 0): depth 3; sin(2*y) = 2*sin(y)*cos(y): its only candidate node is 2
SHALLOW = equation(apply("sin", X), apply("sin", apply("Add", X, number(0))))
DOUBLE = equation(apply("sin", apply("Mul", number(2), Y)),
                  apply("Mul", apply("Mul", number(2), apply("sin", Y)), apply("cos", Y)))
FALSE = equation(apply("sin", X), apply("cos", X), label=False)
NONE_THERE = equation(apply("cos", Y), apply("cos", apply("Mul", number(-1), Y)))  # no node is a candidate


def test_blanks_sit_on_candidate_nodes_of_true_equations_only():
    blanks, report = make_blanks([SHALLOW, DOUBLE, FALSE, NONE_THERE], CANDIDATES, 10, random.Random(0))
    assert [b.tree for b in blanks] == [SHALLOW.tree, DOUBLE.tree]  # the file's order; all eligible taken
    for blank in blanks:
        assert blank.label is True and blank.blank != 0  # never the Equality root
        assert token_key(subtree_at(blank.tree, blank.blank)) in {token_key(c.tree) for c in CANDIDATES}
        assert true_class(blank, CANDIDATES) is not None
    assert subtree_at(blanks[1].tree, blanks[1].blank) == number(2)  # DOUBLE's only candidate node
    assert (report.read, report.not_true, report.no_candidate_node, report.eligible) == (4, 1, 1, 2)
    assert sum(report.kinds.values()) == 2 and report.kinds["number"] == 1
    assert "2 blanks" in report.summary() and "1 not labelled true" in report.summary()


def test_candidate_classes_map_each_written_form_to_the_first_class_given():
    classes = candidate_classes(CANDIDATES + [Candidate(X, "late")])
    assert classes[token_key(X)] == "x" and classes[token_key(apply("Add", X, number(0)))] == "x"
    assert len(classes) == 4


def test_every_candidate_node_is_drawn_and_the_seed_decides():
    drawn = {make_blanks([SHALLOW], CANDIDATES, 1, random.Random(seed))[0][0].blank for seed in range(60)}
    # sin(x) = sin(x + 0) in pre-order: 0 Equality, 1 sin, 2 x, 3 sin, 4 Add, 5 x, 6 0
    assert drawn == {1, 2, 4, 5}
    first = make_blanks([SHALLOW, DOUBLE], CANDIDATES, 1, random.Random(7))[0]
    assert make_blanks([SHALLOW, DOUBLE], CANDIDATES, 1, random.Random(7))[0] == first


def test_depths_filter_and_nothing_eligible_is_refused():
    blanks, report = make_blanks([SHALLOW, DOUBLE], CANDIDATES, 5, random.Random(0), depths={DOUBLE.depth})
    assert [b.tree for b in blanks] == [DOUBLE.tree] and report.other_depth == 1
    with pytest.raises(ValueError, match="no true equation.*depths \\[9\\]"):
        make_blanks([SHALLOW, DOUBLE], CANDIDATES, 5, random.Random(0), depths={9})
    with pytest.raises(ValueError, match="no true equation"):
        make_blanks([FALSE, NONE_THERE], CANDIDATES, 5, random.Random(0))


def test_integer_set_reads_single_values_ranges_and_lists():
    parse = integer_set(1, 13)
    assert parse("8") == {8} and parse("8-10") == {8, 9, 10} and parse("2, 8-9") == {2, 8, 9}
    for bad in ("0", "8-14", "10-8", "x", "8-", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="from 1 to 13"):
            parse(bad)


def test_cli_writes_a_blank_file_that_the_numeric_checker_completes(tmp_path, capsys):
    source, candidates, out = tmp_path / "eq.test.json", tmp_path / "candidates.json", tmp_path / "blanks.json"
    write_equations([SHALLOW, DOUBLE, FALSE, NONE_THERE], source)
    write_candidates(CANDIDATES, candidates)
    assert main(["generate", "blanks", "--from", str(source), "--candidates", str(candidates), "--n", "5",
                 "--out", str(out)]) == 0
    assert "wrote 2 equations with a blank" in capsys.readouterr().out
    blanks = read_equations(out)
    assert len(blanks) == 2 and all(true_class(b, CANDIDATES) is not None for b in blanks)
    metrics = completion_metrics(blanks, CANDIDATES, numeric_completion_score(CANDIDATES))
    assert metrics["n"] == 2 and metrics["no_class"] == 0 and metrics["top1"] == 1.0  # the checker finds each
    # a blank file is not a verification file
    assert main(["generate", "blanks", "--from", str(out), "--candidates", str(candidates), "--n", "5",
                 "--out", str(tmp_path / "again.json")]) == 1
    assert "already holds blanks" in capsys.readouterr().err
    assert not (tmp_path / "again.json").exists()


def test_right_rank_orders_by_score_and_ties_keep_the_candidates_order():
    candidates = [Candidate(number(i), cls) for i, cls in enumerate(["a", "b", "a", "c"])]
    assert right_rank([0.1, 0.9, 0.5, 0.2], candidates, "a") == 2  # b first, then the better a
    assert right_rank([0.5, 0.5, 0.5, 0.5], candidates, "b") == 2  # a tie: the file's order
    assert right_rank([0.5, 0.5, 0.5, 0.5], candidates, "c") == 4
    assert summarise_ranks([1, 2, 10]) == {"n": 3, "top1": 1 / 3, "top5": 2 / 3, "mrr": (1 + 0.5 + 0.1) / 3}
    assert summarise_ranks([]) == {"n": 0, "top1": None, "top5": None, "mrr": None}
