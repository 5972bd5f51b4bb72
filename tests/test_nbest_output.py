"""The n-best list of ``solve`` never shows an empty equation: a candidate that is not a well-formed equation says so
(``well_formed`` false, ``equation`` null, its tokens kept; the command line prints it labelled), and the top-level
``verified`` is the verdict of the answer shown, the chosen candidate's."""

import json
import re

import pytest
from support.tiny_cli_run import JERRY, train_tiny

import neuromath
from neuromath.api import Candidate
from neuromath.cli import main
from neuromath.cli.solve import shown_candidate


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return train_tiny(tmp_path_factory.mktemp("nbest") / "run")


def chosen_of(solution):
    return next(c for c in solution.nbest if list(c.tokens) == list(solution.masked_equation))


def test_no_nbest_entry_has_an_empty_equation(run_dir):
    solution = neuromath.load(run_dir, beam=5, nbest=5).solve(JERRY)
    assert len(solution.nbest) == 5
    for candidate in solution.nbest:
        assert candidate.equation != ""
        assert candidate.well_formed is (candidate.equation is not None)
        if candidate.well_formed:
            assert candidate.answer_text or not candidate.verified  # a value, or the verifier says why not
    assert chosen_of(solution).verified is solution.verified is not None


def test_json_and_printed_list_label_what_is_not_well_formed(run_dir, capsys):
    assert main(["solve", str(run_dir), JERRY, "--beam", "5", "--nbest", "5", "--json"]) in (0, 1)
    answer = json.loads(capsys.readouterr().out)
    for entry in answer["nbest"]:
        assert entry["equation"] != "" and entry["well_formed"] is (entry["equation"] is not None)
    chosen = next(e for e in answer["nbest"] if e["tokens"] == answer["masked_equation"])
    assert answer["verified"] is chosen["verified"]
    main(["solve", str(run_dir), JERRY, "--beam", "5", "--nbest", "5"])
    lines = capsys.readouterr().out.splitlines()[:5]
    for line, entry in zip(lines, answer["nbest"]):
        shown = re.fullmatch(r"\s+\d+\. (.*?)\s+score\s+\S+.*", line).group(1)
        assert shown.strip() and not shown.startswith("=")
        if not entry["well_formed"]:
            assert shown.startswith("(not a well-formed equation: ")


@pytest.fixture(scope="module")
def listing(run_dir):
    solver = neuromath.load(run_dir, beam=3, nbest=3)
    return solver, solver.task.prepare(JERRY)


def test_the_top_level_verdict_is_the_chosen_candidates(listing):
    solver, example = listing
    malformed = Candidate(("+", "n0"), -0.1, False)
    empty = Candidate((), -0.15, False)
    good = Candidate(("-", "n0", "n1"), -0.2, True)
    solution = solver.solution(JERRY, example, [malformed, empty, good])  # decode.verify: the first verified
    assert (solution.equation, solution.answer_text, solution.verified) == ("135 - 19", "116", True)
    assert solution.to_json()["verified"] is True
    assert [(c.equation, c.well_formed) for c in solution.nbest] == [(None, False), (None, False), ("135 - 19", True)]
    assert [shown_candidate(c) for c in solution.nbest] == [
        "(not a well-formed equation: + n0)", "(not a well-formed equation: no tokens)", "135 - 19 = 116"]
    assert str(solution) == "135 - 19 = 116"  # a word problem's verifier checks the form, which the equation shows
    unverified = solver.with_decode(verify=False).solution(JERRY, example, [malformed, good])
    assert unverified.verified is False and unverified.reason and unverified.masked_equation == ("+", "n0")
    assert unverified.to_json()["nbest"][0] | {"score": None} == {
        "tokens": ["+", "n0"], "equation": None, "well_formed": False, "answer_text": "", "score": None,
        "verified": False, "verdict": None, "verdict_detail": None}
