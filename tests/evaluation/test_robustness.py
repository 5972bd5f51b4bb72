"""The robustness report (neuromath/evaluation/robustness.py, ``neuromath evaluate --robustness``): each variation is
scored against its own gold, beside the plain accuracy on the same problems, and the question-removed row tells a
solver that reads the question from one that reads cues, as does the question-changed row's unchanged answers."""

import json
import random
import subprocess
import sys

import pytest

from neuromath.api import Candidate
from neuromath.config import DecodeConfig
from neuromath.evaluation.robustness import robustness_report, to_markdown, write_robustness
from neuromath.tasks import get_task
from neuromath.tasks.word_problems import write_jsonl
from neuromath.tasks.word_problems.templates import generate
from neuromath.tasks.word_problems.variations import RULE_VARIATIONS, vary
from neuromath.text import Vocabulary
from tests.support.run_folders import write_classifier_run, write_sequence_run

PROBLEMS = generate(120, random.Random(3))


ORIGINALS = {example.id: example for example in PROBLEMS}


class ScriptedSolver:
    """A solver that answers each problem's gold equation, or ``- n0 n0`` (never right: the problems' answers are not
    0) when ``needs_question`` and the problem has no question: one reads the question, the other reads cues. The
    cue reader answers a changed question with the original problem's equation (the story's old answer)."""

    def __init__(self, needs_question: bool):
        self.needs_question = needs_question
        self.task = get_task("word_problems")
        self.decode = DecodeConfig()
        self.source_vocab = Vocabulary(["n0", "n1"])

    def predict_nbest(self, examples):
        answers = []
        for example in examples:
            asked = not example.id.endswith("#question_removed")
            tokens = example.equation if asked or not self.needs_question else ("-", "n0", "n0")
            if example.id.endswith("#question_changed") and not self.needs_question:
                tokens = ORIGINALS[example.id.split("#")[0]].equation
            answers.append([Candidate(tuple(tokens), 0.0, None)])
        return answers

    def choose(self, candidates):
        return candidates[0]


def test_each_row_is_scored_on_its_own_gold_beside_the_plain_accuracy_of_the_same_problems():
    report = robustness_report(ScriptedSolver(needs_question=True), PROBLEMS, seed=2)
    rows = {row["variation"]: row for row in report["rows"]}
    assert list(rows) == ["plain", *RULE_VARIATIONS]
    assert rows["plain"]["n"] == len(PROBLEMS) and rows["plain"]["accuracy"] == 1.0
    for name in RULE_VARIATIONS:
        assert rows[name]["n"] == len(vary(PROBLEMS, name, seed=2)) > 0
        assert rows[name]["plain_accuracy"] == 1.0
    # the reordered and renumbered problems are right against their own renumbered equations
    assert rows["sentences_reordered"]["accuracy"] == rows["irrelevant_sentence"]["accuracy"] == 1.0
    assert rows["numbers_resampled"]["accuracy"] == 1.0  # the new answers, computed from the new numbers
    assert rows["question_removed"]["accuracy"] == 0.0 and rows["question_removed"]["cue_ratio"] == 0.0
    # a changed question is answered with its own new equation: the answer moved on every problem
    assert rows["question_changed"]["accuracy"] == 1.0 and rows["question_changed"]["unchanged_answer"] == 0.0
    assert "cue_ratio" not in rows["question_changed"]
    assert len(report["records"]["question_removed"]) == rows["question_removed"]["n"]
    assert all("original" in record for record in report["records"]["numbers_resampled"])


def test_a_solver_that_answers_without_the_question_has_a_cue_ratio_of_one(tmp_path):
    report = robustness_report(ScriptedSolver(needs_question=False), PROBLEMS)
    removed = next(row for row in report["rows"] if row["variation"] == "question_removed")
    assert removed["accuracy"] == 1.0 and removed["cue_ratio"] == 1.0
    changed = next(row for row in report["rows"] if row["variation"] == "question_changed")
    assert changed["n"] > 0 and changed["accuracy"] == 0.0 and changed["unchanged_answer"] == 1.0
    table = to_markdown(report)
    assert "| question_removed (lower is better) |" in table and "1.00 of the plain accuracy" in table
    assert "the answer stayed the same on 100.0% of those problems" in table
    path = write_robustness(report, tmp_path / "out")
    saved = json.loads(path.read_text())
    assert "records" not in saved and [row["variation"] for row in saved["rows"]][0] == "plain"
    lines = (tmp_path / "out" / "robustness.question_removed.jsonl").read_text().splitlines()
    assert len(lines) == removed["n"]


def test_the_command_writes_the_report_of_a_word_problem_run_and_refuses_other_tasks(tmp_path):
    run = write_sequence_run(tmp_path / "run")
    data = tmp_path / "test.jsonl"
    write_jsonl(PROBLEMS[:30], data)
    done = subprocess.run([sys.executable, "-m", "neuromath", "evaluate", str(run), "--data", str(data),
                           "--robustness", "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    output = json.loads(done.stdout)
    rows = output["robustness"]["rows"]
    assert [row["variation"] for row in rows] == ["plain", *RULE_VARIATIONS] and rows[0]["n"] == 30
    assert (run / "robustness" / "robustness.json").is_file()
    classifier = write_classifier_run(tmp_path / "classifier")
    refused = subprocess.run([sys.executable, "-m", "neuromath", "evaluate", str(classifier), "--data", str(data),
                              "--robustness"], capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0 and "--robustness" in refused.stderr


@pytest.mark.parametrize("seed", [0, 5])
def test_the_report_is_the_same_for_the_same_seed(seed):
    solver = ScriptedSolver(needs_question=True)
    first, second = robustness_report(solver, PROBLEMS, seed), robustness_report(solver, PROBLEMS, seed)
    assert first["rows"] == second["rows"]
