"""``neuromath check``: the verdict and its reason (``--json``: one object), exit 0 only when verified, 1 when not
verified or unknown, 2 for input it cannot read; ordinary notation read without ``eval``."""

import json

import pytest

from neuromath.api.sequence_solver import Candidate, verdict_mark
from neuromath.cli import build_parser, main
from neuromath.evaluation.symbolic import format_report, score_beams
from neuromath.tasks.symbolic import SymbolicExample
from neuromath.tasks.symbolic.verify import user_verdict


def checked(capsys, *argv) -> tuple[int, dict]:
    status = main(["check", *argv, "--json"])
    out = capsys.readouterr().out
    return status, json.loads(out)


@pytest.mark.parametrize("argv", [
    ("integral", "x", "x^2/2 + x/10^9"),
    ("integral", "x*cos(x)", "x*sin(x) + cos(x) + x/10^12"),
    ("integral", "x", "x^2/2 + exp(-10^6*x^2)"),
    ("integral", "x", "x^2/2 + exp(-(x-100)^2)"),
    ("ode", "Y' - Y = 0", "c*exp(x) + 10^-10"),
])
def test_a_wrong_answer_is_not_verified_and_exits_1(capsys, argv):
    status, answer = checked(capsys, *argv)
    assert (status, answer["verdict"]) == (1, "not verified"), answer
    assert set(answer) == {"verdict", "reason"} and answer["reason"]


@pytest.mark.parametrize("argv", [
    ("integral", "x", "x^2/2"),
    ("integral", "x*cos(x)", "x*sin(x) + cos(x) + 5"),
    ("ode", "Y' - Y = 0", "c*exp(x)"),
    ("ode", "Y' - Y", "c*exp(x)"),  # an equation written without "= 0"
])
def test_a_right_answer_is_verified_and_exits_0(capsys, argv):
    status, answer = checked(capsys, *argv)
    assert (status, answer["verdict"]) == (0, "verified"), answer
    assert answer["reason"].startswith("proven")


def test_plain_output_is_the_verdict_and_the_reason(capsys):
    assert main(["check", "integral", "x", "x^2/2 + x/10^9"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "not verified", "reason: the derivative minus the integrand is the constant 1/1000000000, not 0"]


def test_a_check_ended_by_its_time_limit_is_not_verified(capsys):
    # right, but SymPy needs far longer than 0.5 s to expand and cancel the two polynomials of degree 600
    slow = "x^2/2 + (x+1)^300*(x-1)^300 - (x^2-1)^300"
    status, answer = checked(capsys, "integral", "x", slow, "--time-limit", "0.5")
    assert (status, answer["verdict"]) == (1, "not verified"), answer
    assert answer["reason"] == "not proven within the time limit of 0.5 s"


@pytest.mark.parametrize("argv, message", [
    (("integral", "x", "x^^2"), "the antiderivative: cannot read 'x^^2' at position 2"),
    (("integral", "Y'", "x"), "the integrand: cannot read \"Y'\" at position 0: unknown name \"Y'\""),
    (("integral", "x", "__import__('os')"), "the antiderivative: cannot read"),
    (("ode", "x^2 = 1", "x"), "does not use Y, Y' or Y''"),
    (("integral", "x", "9^9^9*x"), "the antiderivative: a power of 9 has more than"),
])
def test_unreadable_input_is_one_error_line_and_exit_2(capsys, argv, message):
    assert main(["check", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ") and message in captured.err, captured.err
    assert len(captured.err.splitlines()) == 1


@pytest.mark.parametrize("limit", ["0", "-1", "inf", "nan", "601"])
def test_the_time_limit_is_finite_and_bounded(limit):
    with pytest.raises(SystemExit) as raised:
        build_parser().parse_args(["check", "integral", "x", "x", "--time-limit", limit])
    assert raised.value.code == 2


def test_an_identity_is_checked_by_the_identities_exact_check(capsys):
    status, answer = checked(capsys, "identity", "sin(x)^2 + cos(x)^2 = 1")
    assert (status, answer["verdict"]) == (0, "verified"), answer
    status, answer = checked(capsys, "identity", "x + 10^(-9) = x")
    assert (status, answer["verdict"]) == (1, "not verified"), answer  # a point shows the sides differ


def test_solve_the_server_and_evaluate_use_the_same_verdict_words():
    def candidate(tokens, detail):
        return Candidate(tuple(tokens.split()), -0.1, detail == "correct", verdict=user_verdict(detail),
                         verdict_detail=detail)

    timed_out, wrong, right = candidate("x", "timeout"), candidate("x", "wrong"), candidate("pow x INT+ 2", "correct")
    assert [verdict_mark(c) for c in (timed_out, wrong, right)] == [
        "  [not verified: timeout]", "  [not verified]", "  [verified]"]
    assert timed_out.to_json()["verdict"] == "not verified" and timed_out.to_json()["verdict_detail"] == "timeout"
    example = SymbolicExample(("mul", "INT+", "2", "x"), ("pow", "x", "INT+", "2"))
    report, records = score_beams("RUN", [example], {1: [[timed_out]], 2: [[wrong, right]]})
    assert [records[0]["beams"][k]["verdict"] for k in ("1", "2")] == ["not verified", "verified"]
    assert report["timeouts"] == {"1": 1, "2": 0}
    assert report["subsets"]["full"]["overall"]["1"]["verified_count"] == 0  # a timeout counts as not verified
    assert "time limit (counted as not verified): beam 1: 1, beam 2: 0" in format_report(report)
