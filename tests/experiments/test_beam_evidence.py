"""neuromath/results/beam_evidence.py: the evidence of a run scored by `evaluate --beams` (symbolic
integration). Hand-made test and training pairs and beam outputs, scored by the evaluator's own `score_beams`; the
evidence recounts to its report, and each kind of tampering (a report count, a record's verdict, a record's
deduplicated flag) is caught and named."""

import gzip
import json
from types import SimpleNamespace

import pytest

from neuromath.errors import NeuromathError
from neuromath.evaluation.symbolic import score_beams
from neuromath.results.beam_evidence import (
    BEAM_RECORDS,
    BEAM_RECORDS_GZ,
    BEAM_REPORT,
    beam_metric,
    keep_beam_evidence,
    verify_beams,
)
from neuromath.results.evidence import Evidence
from neuromath.tasks.symbolic import read_pairs
from tools.results_pages.paired_pages import beam_correct

TEST = [("mul INT+ 2 x", "pow x INT+ 2"), ("cos x", "sin x"), ("exp x", "exp x"), ("mul INT+ 3 x", "pow x INT+ 3")]
TRAIN = [("cos x", "sin x"), ("add x INT+ 1", "x")]  # "cos x" is also a test input: not in the deduplicated set


def write_pairs(path, pairs):
    path.write_text("".join(f"1|{source}\t{target}\n" for source, target in pairs), encoding="utf-8")
    return path


def hypothesis(text, verified):
    return SimpleNamespace(tokens=tuple(text.split()), verified=verified)


@pytest.fixture
def run(tmp_path):
    """A run folder with an `evaluate --beams 1,2` report and records, its evidence folder, and the gold files."""
    test, train = write_pairs(tmp_path / "test.txt", TEST), write_pairs(tmp_path / "train.txt", TRAIN)
    examples = read_pairs(test)
    beam1 = [[hypothesis("pow x INT+ 2", True)], [hypothesis("cos x", False)], [hypothesis("exp x", True)],
             [hypothesis("x", False)]]
    beam2 = [[hypothesis("pow x INT+ 2", True), hypothesis("x", False)],
             [hypothesis("cos x", False), hypothesis("sin x", True)],  # verified at rank 1, not exact
             [hypothesis("exp x", True), hypothesis("x", False)],
             [hypothesis("x", False), hypothesis("mul x x", False)]]
    report, records = score_beams("RUN", examples, {1: beam1, 2: beam2}, read_pairs(train))
    out, evidence = tmp_path / "run", tmp_path / "evidence"
    (out / "evaluation").mkdir(parents=True)
    (evidence / "evaluation").mkdir(parents=True)
    (out / BEAM_RECORDS).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (evidence / BEAM_REPORT).write_text(json.dumps(report), encoding="utf-8")
    keep_beam_evidence(out, evidence, lambda text: text.replace(str(tmp_path), "{work}"))
    return SimpleNamespace(evidence=evidence, test=test, train=train, report=report)


def records_of(run):
    with gzip.open(run.evidence / BEAM_RECORDS_GZ, "rt", encoding="utf-8") as stream:
        return [json.loads(line) for line in stream]


def rewrite_records(run, records):
    with gzip.open(run.evidence / BEAM_RECORDS_GZ, "wt", encoding="utf-8") as stream:
        stream.write("".join(json.dumps(r) + "\n" for r in records))


def test_kept_records_are_slim_and_machine_free_and_recount_to_the_report(run):
    records = records_of(run)
    assert [r["id"] for r in records] == [f"{{work}}/test.txt:{line}" for line in range(1, 5)]
    assert [r["in_dedup"] for r in records] == [True, False, True, True]
    assert set(records[1]["beams"]["2"]) == {"best", "exact", "verified", "first_verified_rank", "verified_hypothesis"}
    assert "input" not in records[0] and "target" not in records[0]
    assert verify_beams("exp/run", run.evidence, run.test, run.train) == ([], True)
    assert verify_beams("exp/run", run.evidence, None, None) == ([], False)


def test_table_metrics_read_the_full_and_deduplicated_report(run):
    assert beam_metric(run.report, "verified@1") == pytest.approx(2 / 4)
    assert beam_metric(run.report, "verified@2") == pytest.approx(3 / 4)
    assert beam_metric(run.report, "exact@2") == pytest.approx(2 / 4)
    assert beam_metric(run.report, "dedup verified@1") == pytest.approx(2 / 3)  # "cos x" is in the training file
    assert beam_metric(run.report, "dedup verified@10") is None  # no such width
    assert beam_metric(run.report, "value_accuracy") is None
    assert beam_metric(None, "verified@1") is None


def test_a_report_count_that_its_records_do_not_give_fails(run):
    report = json.loads((run.evidence / BEAM_REPORT).read_text())
    report["subsets"]["dedup"]["overall"]["2"]["verified_count"] += 1
    (run.evidence / BEAM_REPORT).write_text(json.dumps(report))
    problems, _ = verify_beams("exp/run", run.evidence, None, None)
    assert len(problems) == 1 and "dedup beam 2 verified" in problems[0] and "exp/run" in problems[0]


def test_a_recorded_exact_verdict_the_target_does_not_give_fails_against_the_gold_file(run):
    records = records_of(run)
    records[3]["beams"]["1"]["exact"] = True  # "x" is not the target "pow x INT+ 3"
    report = json.loads((run.evidence / BEAM_REPORT).read_text())
    for subset in ("full", "dedup"):  # the report made to agree, so only the gold file can tell
        overall = report["subsets"][subset]["overall"]
        overall["1"]["exact_count"] += 1
        overall["1"]["exact"] = overall["1"]["exact_count"] / overall["n"]
    (run.evidence / BEAM_REPORT).write_text(json.dumps(report))
    rewrite_records(run, records)
    assert verify_beams("exp/run", run.evidence, None, None) == ([], False)
    problems, read_gold = verify_beams("exp/run", run.evidence, run.test, run.train)
    assert read_gold and len(problems) == 1 and "record 4, beam 1" in problems[0]


def test_a_deduplicated_flag_the_training_file_does_not_give_fails(run):
    records = records_of(run)
    records[1]["in_dedup"] = True
    rewrite_records(run, records)
    problems, _ = verify_beams("exp/run", run.evidence, run.test, run.train)
    assert any("dedup n = 3, the records hold 4" in p for p in problems)
    assert any("record 2: in_dedup True" in p for p in problems)


def test_a_verified_flag_without_a_verified_rank_fails(run):
    records = records_of(run)
    records[0]["beams"]["1"]["first_verified_rank"] = None
    rewrite_records(run, records)
    problems, _ = verify_beams("exp/run", run.evidence, None, None)
    assert problems == ["exp/run: record 1, beam 1: 'verified' does not follow from its first verified rank"]


def test_evidence_without_its_records_says_what_is_missing(run):
    (run.evidence / BEAM_RECORDS_GZ).unlink()
    problems, _ = verify_beams("exp/run", run.evidence, run.test, run.train)
    assert problems == [f"exp/run: no {BEAM_RECORDS_GZ}: the beam report cannot be recomputed"]


def test_paired_pages_pair_beam_runs_on_the_metric_subset_and_refuse_other_names(run):
    evidence = Evidence(run.evidence, "train", {})
    verdicts = beam_correct(evidence, "dedup verified@2", "page.md")
    assert verdicts == [("{work}/test.txt:1", True), ("{work}/test.txt:3", True), ("{work}/test.txt:4", False)]
    assert [right for _, right in beam_correct(evidence, "exact@2", "page.md")] == [True, False, True, False]
    with pytest.raises(NeuromathError, match="not a beam metric"):
        beam_correct(evidence, "value_accuracy", "page.md")
    with pytest.raises(NeuromathError, match="no beam 10"):
        beam_correct(evidence, "verified@10", "page.md")
