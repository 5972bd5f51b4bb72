"""``neuromath analyze seeds``: runs' recorded scores combined by group (neuromath/experiments/fit_then_test.py)."""

import json
import statistics

import pytest

from neuromath.cli import main
from neuromath.errors import NeuromathError
from neuromath.experiments.fit_then_test import combine_runs, combined_runs_table, group_runs


def classifier_summary(epochs: int, valid: float, depth_accuracy: dict[int, float]) -> dict:
    by_depth = {str(d): {"n": 10, "accuracy": a, "precision": a, "recall": a, "true_share": 0.5}
                for d, a in depth_accuracy.items()}
    overall = statistics.fmean(depth_accuracy.values())
    return {"epochs": epochs, "best_val_accuracy": valid,
            "test": {"n": 10 * len(depth_accuracy), "accuracy": overall, "precision": overall, "recall": overall,
                     "true_share": 0.5, "by_depth": by_depth}}


def write_run(path, summary: dict):
    path.mkdir(parents=True)
    (path / "summary.json").write_text(json.dumps(summary))
    return path


def test_group_runs_puts_seed_folders_under_their_parent_and_keeps_other_folders_apart(tmp_path):
    runs = [tmp_path / "a" / "seed0", tmp_path / "b", tmp_path / "a" / "seed12", tmp_path / "c" / "seedling"]
    assert group_runs(runs) == {str(tmp_path / "a"): [runs[0], runs[2]], str(tmp_path / "b"): [runs[1]],
                                str(tmp_path / "c" / "seedling"): [runs[3]]}
    # `analyze seeds a/seed0 a/seed*` names seed0 twice: refused, or it would count as two seeds
    with pytest.raises(NeuromathError, match="seed0: named twice"):
        group_runs([tmp_path / "a" / "seed0", tmp_path / "a" / "seed1", tmp_path / "a" / ".." / "a" / "seed0"])


def test_classifier_seeds_are_averaged_overall_and_by_depth(tmp_path, capsys):
    a0 = write_run(tmp_path / "a" / "seed0", classifier_summary(40, 0.80, {8: 0.70, 9: 0.60}))
    a1 = write_run(tmp_path / "a" / "seed1", classifier_summary(60, 0.90, {8: 0.80, 9: 0.60}))
    b = write_run(tmp_path / "b", classifier_summary(10, 0.5, {8: 0.5, 9: 0.5}))
    combined = combine_runs([a0, b, a1])
    assert list(combined) == [str(tmp_path / "a"), str(tmp_path / "b")]
    row = combined[str(tmp_path / "a")]
    assert row["epochs"]["mean"] == 50 and row["best_val_accuracy"]["mean"] == pytest.approx(0.85)
    assert row["best_val_accuracy"]["std"] == pytest.approx(0.0707107, abs=1e-6)  # sample std of 0.8, 0.9
    assert row["test"]["accuracy"]["mean"] == pytest.approx(0.675)  # (0.65 + 0.70) / 2
    assert row["test"]["by_depth"][8]["accuracy"]["mean"] == pytest.approx(0.75)
    assert row["test"]["by_depth"][9]["accuracy"]["std"] == 0.0
    table = combined_runs_table(combined)
    assert f"| {tmp_path / 'a'} | 2 | 50 | 85.0 ± 7.1 | 67.5 ± 3.5 | 75.0 ± 7.1 | 60.0 ± 0.0 |" in table
    # a group of one run has no measured spread: its cells show the value alone (two seeds that agree show ± 0.0)
    assert f"| {tmp_path / 'b'} | 1 | 10 | 50.0 | 50.0 | 50.0 | 50.0 |" in table

    out = tmp_path / "combined.json"
    assert main(["analyze", "seeds", str(a0), str(a1), "--out", str(out)]) == 0
    assert "| depth 8 | depth 9 |" in capsys.readouterr().out
    assert json.loads(out.read_text())[str(tmp_path / "a")]["test"]["accuracy"]["mean"] == pytest.approx(0.675)


def test_sequence_runs_are_averaged_by_value_accuracy(tmp_path):
    runs = [write_run(tmp_path / "s" / f"seed{i}", {"epochs": 5, "best_val_value_accuracy": v,
                                                   "test": {"value_accuracy": t, "n": 100}})
            for i, (v, t) in enumerate([(0.7, 0.6), (0.8, 0.7)])]
    row = combine_runs(runs)[str(tmp_path / "s")]
    assert row["kind"] == "sequence" and row["test"]["value_accuracy"]["mean"] == pytest.approx(0.65)
    assert "| 2 | 5 | 75.0 ± 7.1 | 65.0 ± 7.1 |" in combined_runs_table({"s": row})


def test_runs_without_test_scores_or_summary_or_of_two_kinds_are_errors(tmp_path, capsys):
    with pytest.raises(NeuromathError, match="no summary.json"):
        combine_runs([tmp_path / "missing"])
    untested = write_run(tmp_path / "untested", {"epochs": 3, "best_val_accuracy": 0.5})
    with pytest.raises(NeuromathError, match="untested.*no test scores"):
        combine_runs([untested])
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "summary.json").write_text('{"epochs": 3,\n oops}')
    with pytest.raises(NeuromathError, match="broken.*line 2"):
        combine_runs([tmp_path / "broken"])
    tree = write_run(tmp_path / "m" / "seed0", classifier_summary(4, 0.5, {8: 0.5}))
    seq = write_run(tmp_path / "m" / "seed1", {"epochs": 5, "best_val_value_accuracy": 0.5,
                                              "test": {"value_accuracy": 0.5, "n": 1}})
    with pytest.raises(NeuromathError, match="mix"):
        combine_runs([tree, seq])
    assert main(["analyze", "seeds", str(untested)]) == 1
    assert "no test scores" in capsys.readouterr().err


def test_runs_a_limit_ended_are_marked_not_converged(tmp_path):
    converged = write_run(tmp_path / "a" / "seed0", {**classifier_summary(40, 0.8, {8: 0.7}),
                                                     "stopped_by": "early_stopping"})
    cut = write_run(tmp_path / "a" / "seed1", {**classifier_summary(300, 0.8, {8: 0.7}), "stopped_by": "max_epochs"})
    older = write_run(tmp_path / "b" / "seed0", classifier_summary(40, 0.8, {8: 0.7}))  # written before stopped_by
    combined = combine_runs([converged, cut, older])
    assert combined[str(tmp_path / "a")]["cut_by_limit"] == [str(cut)]
    assert combined[str(tmp_path / "b")]["cut_by_limit"] == []
    table = combined_runs_table(combined)
    assert f"| {tmp_path / 'a'} | 2 | 170 * |" in table and f"| {tmp_path / 'b'} | 1 | 40 |" in table
    assert table.rstrip().endswith(f"ended 1 run: {cut}; not at convergence")
    assert "not at convergence" not in combined_runs_table(combine_runs([converged, older]))
