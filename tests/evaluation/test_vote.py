"""neuromath/evaluation/vote.py: the majority vote of several runs' word-problem predictions."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuromath.errors import NeuromathError
from neuromath.evaluation.vote import vote, vote_runs


def record(value, correct=False, problem="1", equation=None):
    return {"id": problem, "predicted_value": value, "correct": correct, "predicted_equation": equation}


def test_the_answer_most_runs_gave_wins_and_its_earliest_record_is_kept():
    voted = vote([record(3.0, equation="a"), record(5.0, True, equation="b"), record(5.0, True, equation="c")])
    assert voted["predicted_value"] == 5.0 and voted["correct"] is True
    assert voted["predicted_equation"] == "b" and voted["member"] == 1  # the first run that gave 5
    assert voted["votes"] == 2 and voted["voters"] == 3


def test_values_within_the_value_tolerance_are_one_answer():
    # 1/3 written two ways agrees within 1e-4 relative; 0.3334 does not
    voted = vote([record(0.3334), record(1 / 3, True), record(0.33333333, True)])
    assert voted["votes"] == 2 and voted["member"] == 1 and voted["correct"] is True
    assert vote([record(100.0), record(100.005), record(7.0)])["votes"] == 2


def test_a_tie_goes_to_the_earliest_run_among_the_tied():
    voted = vote([record(1.0), record(2.0, True)])
    assert voted["member"] == 0 and voted["predicted_value"] == 1.0 and voted["votes"] == 1
    # 2 and 3 are tied with two votes each: 3 appears first (run 1), 1 has one vote and loses though it is run 0's
    voted = vote([record(1.0), record(3.0), record(2.0), record(2.0), record(3.0)])
    assert voted["predicted_value"] == 3.0 and voted["member"] == 1 and voted["votes"] == 2


def test_a_run_without_a_value_does_not_vote():
    voted = vote([record(None), record(float("nan")), record(4.0, True), record(float("inf"))])
    assert voted["member"] == 2 and voted["votes"] == 1 and voted["voters"] == 1
    nobody = vote([record(None, equation="x"), record(None, equation="y")])
    assert nobody["member"] == 0 and nobody["predicted_equation"] == "x" and nobody["votes"] == nobody["voters"] == 0
    with pytest.raises(NeuromathError, match="at least one"):
        vote([])


def test_runs_are_voted_problem_by_problem_and_must_hold_the_same_problems():
    runs = [[record(1.0, problem="a"), record(2.0, True, problem="b")],
            [record(1.0, problem="a"), record(9.0, problem="b")],
            [record(7.0, True, problem="a"), record(2.0, True, problem="b")]]
    voted = vote_runs(runs, ["r0", "r1", "r2"])
    assert [(item["id"], item["predicted_value"], item["votes"]) for item in voted] == [("a", 1.0, 2), ("b", 2.0, 2)]
    with pytest.raises(NeuromathError, match=r"record 2 is not the same problem in every run of the vote \(r0: 'b', "
                                             r"r1: 'c'\)"):
        vote_runs([runs[0], [record(1.0, problem="a"), record(2.0, problem="c")]], ["r0", "r1"])
    with pytest.raises(NeuromathError, match="they hold r0: 2, r1: 1 records"):
        vote_runs([runs[0], runs[1][:1]], ["r0", "r1"])
    with pytest.raises(NeuromathError, match="at least two runs"):
        vote_runs(runs[:1], ["r0"])


VALUES = st.one_of(st.none(), st.sampled_from([1.0, 2.0, 3.0, 2.5]))


@given(st.lists(VALUES, min_size=1, max_size=7))
def test_the_vote_is_a_plurality_answer_and_a_majority_always_wins(values):
    voted = vote([record(value, correct=value == 2.0) for value in values])
    counts = {value: values.count(value) for value in values if value is not None}
    if not counts:
        assert voted["votes"] == 0 and voted["member"] == 0
        return
    assert voted["predicted_value"] == values[voted["member"]]
    assert voted["votes"] == counts[voted["predicted_value"]] == max(counts.values())
    assert voted["member"] == values.index(voted["predicted_value"])  # the earliest run that gave it
    assert voted["correct"] == (voted["predicted_value"] == 2.0)
    majority = [value for value, count in counts.items() if 2 * count > len(values)]
    if majority:
        assert voted["predicted_value"] == majority[0]
