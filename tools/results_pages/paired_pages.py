"""The ``{{ paired EXPERIMENT.RUN EXPERIMENT.RUN }}`` directive of the results pages: two runs' evidence paired problem
by problem, as ``neuromath compare`` pairs them (difference with a paired bootstrap interval, McNemar's exact test),
read from the predictions their folds or seeds kept (``predictions.jsonl.gz``), so that a technique is reported against
its baseline on the same test problems without the runs' weights; and ``{{ robustness DIR }}``, the robustness reports
kept beside an experiment's evidence."""

from __future__ import annotations

import re

from neuromath.errors import NeuromathError
from neuromath.evaluation.significance import compare_paired
from neuromath.results.beam_evidence import BEAM_RECORDS_GZ, parse_beam_metric
from neuromath.results.evidence import PREDICTIONS_GZ, Evidence, read_gzip_lines
from neuromath.safe_read import load_json, read_data_text


def unit_correct(evidence: Evidence, unit: str, where: str) -> list[tuple[str, bool]]:
    """Each test problem's name and verdict in a fold's or seed's predictions. Records without an id (the identities
    task keeps depth, label and prediction, in the test file's order) are named by position, depth and label, so
    two runs pair only when their test files line up."""
    path = evidence.folders[unit] / PREDICTIONS_GZ
    if not path.is_file():
        raise NeuromathError(f"{where}: {path} is missing: the evidence keeps no predictions to pair")
    return [(str(record["id"]) if "id" in record else f"{position}:{record.get('depth')}:{record.get('label')}",
             bool(record["correct"])) for position, record in enumerate(read_gzip_lines(path))]


def beam_correct(evidence: Evidence, metric: str, where: str) -> list[tuple[str, bool]]:
    """Each test pair's verdict under a beam metric (``dedup verified@10``, ...) of a run scored by ``evaluate
    --beams``, from the records its evidence keeps; the deduplicated metrics keep the deduplicated pairs only."""
    parsed = parse_beam_metric(metric)
    if parsed is None:
        raise NeuromathError(f"{where}: {metric!r} is not a beam metric (verified@K, exact@K, dedup verified@K, ...)")
    subset, kind, width = parsed
    path = evidence.folder / BEAM_RECORDS_GZ
    if not path.is_file():
        raise NeuromathError(f"{where}: {path} is missing: the evidence keeps no beam records to pair")
    pairs = []
    for record in read_gzip_lines(path):
        if subset == "full" or record.get("in_dedup"):
            entry = (record.get("beams") or {}).get(width)
            if entry is None:
                raise NeuromathError(f"{where}: {path} has no beam {width} (metric {metric!r})")
            pairs.append((str(record["id"]), bool(entry.get(kind))))
    return pairs


def paired_line(baseline: Evidence, candidate: Evidence, where: str, metric: str | None = None) -> str:
    """One sentence: candidate − baseline in points over the test problems both scored, its 95% interval and p. With
    ``metric`` (a beam metric) the runs are paired on their ``evaluate --beams`` records instead of their units'
    predictions."""
    if set(baseline.units) != set(candidate.units):
        raise NeuromathError(f"{where}: the two runs have different folds or seeds ({sorted(baseline.units)} and "
                             f"{sorted(candidate.units)})")
    if metric is not None:  # the run's own beam records, read once
        scored = [("evaluation", beam_correct(baseline, metric, where), beam_correct(candidate, metric, where))]
    else:
        scored = [(unit, unit_correct(baseline, unit, where), unit_correct(candidate, unit, where))
                  for unit in sorted(baseline.units)]
    a_correct, b_correct = [], []
    # the seeds of a training (not the folds of a cross-validation) score one test file again: say so, since the
    # pairs are then not independent
    repeated = baseline.subcommand == "train" and len(scored) > 1
    for unit, a_records, b_records in scored:
        if [name for name, _ in a_records] != [name for name, _ in b_records]:
            raise NeuromathError(f"{where}: {unit} of the two runs did not score the same test problems in the same "
                                 "order: they cannot be paired")
        a_correct += [right for _, right in a_records]
        b_correct += [right for _, right in b_records]
    result = compare_paired(a_correct, b_correct)
    interval, mcnemar = result["interval"], result["mcnemar"]
    over = (f"the same {len(scored[0][1])} test problems, scored by each of {len(scored)} seeds ({result['n']} pairs, "
            "resampled as if independent)" if repeated else f"the same {result['n']} test problems")
    return (f"{100 * result['difference']:+.1f} points over {over} "
            f"({100 * result['a']['accuracy']:.1f} % → {100 * result['b']['accuracy']:.1f} %), "
            f"95 % interval [{100 * interval['low']:+.1f}, {100 * interval['high']:+.1f}] (paired bootstrap, "
            f"{interval['samples']:,} resamples, seed {interval['seed']}); McNemar's exact test p = "
            f"{mcnemar['p_value']:.3g} ({mcnemar['only_a']} right only before, {mcnemar['only_b']} only after)")


def _variation_cell(rows: dict, name: str) -> str:
    """One variation's cell: its accuracy against the plain one on the same problems; "-" where no problem had the
    variation, or for the question changed in a report older than it (any other variation missing is an error)."""
    row = rows.get(name, {}) if name == "question_changed" else rows[name]
    if "accuracy" not in row:
        return "-"
    return f"{100 * row['accuracy']:.1f} against {100 * row['plain_accuracy']:.1f} (n {row['n']})"


VARIATIONS = ("question_removed", "irrelevant_sentence", "sentences_reordered", "numbers_resampled", "question_changed")


def render_robustness(folder, where: str, pooled_only: bool = False) -> str:
    """``{{ robustness DIR }}``: the ``neuromath evaluate --robustness`` reports (``robustness.json``) kept in ``DIR``
    under ``results/``, one per fold (``ROW-fold<k>.json``). First one line per row, its folds pooled (each
    accuracy over all the folds' problems; the cue ratio pooled, with its range over the folds), then the table fold
    by fold: each variation's accuracy beside the plain accuracy on the same problems, and for the question removed
    the cue ratio (its accuracy over the plain one: lower is better); for the question changed (in reports made since
    it exists; "-" in older ones) the share of unchanged answers. ``pooled_only`` (``{{ robustness DIR pooled }}``):
    only the pooled lines, as two tables of five columns."""
    files = sorted(folder.glob("*.json"))
    if not files:
        raise NeuromathError(f"{where}: {folder} holds no robustness reports (*.json)")
    header = ["| report | plain | " + " | ".join(name.replace("_", " ") for name in VARIATIONS)
              + " | cue ratio | unchanged answer |", "| --- |" + " ---: |" * (len(VARIATIONS) + 3)]
    folds, groups = list(header), {}
    for path in files:
        try:
            rows = {row["variation"]: row for row in load_json(read_data_text(path), path)["rows"]}
            cells = [f"{100 * rows['plain']['accuracy']:.1f} (n {rows['plain']['n']})"]
            cells += [_variation_cell(rows, name) for name in VARIATIONS]
            cells.append(f"{rows['question_removed']['cue_ratio']:.2f}")
            unchanged = rows.get("question_changed", {}).get("unchanged_answer")
            cells.append("-" if unchanged is None else f"{100 * unchanged:.1f}%")
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise NeuromathError(f"{where}: cannot read the robustness report {path}: {error}") from error
        folds.append(f"| `{path.stem}` | " + " | ".join(cells) + " |")
        groups.setdefault(re.sub(r"-fold\d+$", "", path.stem), []).append(rows)
    if pooled_only:  # two tables of five columns: the question's variations, then the story's
        lines = []
        for title, picks in (("| row (folds) | plain | question removed | cue ratio | question changed |",
                              (0, 1, 6, 5)),
                             ("| row (folds) | irrelevant sentence | sentences reordered | numbers resampled | "
                              "unchanged answer |", (2, 3, 4, 7))):
            lines += ["" if lines else None, title, "| --- |" + " ---: |" * 4]
            for name, reports in groups.items():
                cells = _pooled_cells(reports)
                lines.append(f"| `{name}` ({len(reports)}) | " + " | ".join(cells[i] for i in picks) + " |")
        return "\n".join(line for line in lines if line is not None)
    pooled = list(header)
    pooled[0] = pooled[0].replace("| report |", "| row (folds) |")
    for name, reports in groups.items():
        pooled.append(f"| `{name}` ({len(reports)}) | " + " | ".join(_pooled_cells(reports)) + " |")
    return "\n".join([*pooled, "", "Fold by fold:", "", *folds])


def _pooled_cells(reports: list[dict]) -> list[str]:
    """The cells of one row's pooled line (``render_robustness``): accuracies over the problems of all its folds
    (each report already read and checked by ``render_robustness``)."""
    def pool(name: str) -> tuple[float, float, int]:
        """(right answers, right answers of the plain forms, problems) of one variation over the folds."""
        rows = [report[name] for report in reports if "accuracy" in report.get(name, {})]
        return (sum(row["accuracy"] * row["n"] for row in rows), sum(row["plain_accuracy"] * row["n"] for row in rows),
                sum(row["n"] for row in rows))

    right, _, n = pool("plain")
    cells = [f"{100 * right / n:.1f} (n {n})"]
    pooled = {name: pool(name) for name in VARIATIONS}
    for right, plain_right, n in pooled.values():
        cells.append(f"{100 * right / n:.1f} against {100 * plain_right / n:.1f} (n {n})" if n else "-")
    removed, plain_right, _ = pooled["question_removed"]
    ratios = [report["question_removed"]["cue_ratio"] for report in reports]
    cells.append(f"{removed / plain_right:.2f} ({min(ratios):.2f}-{max(ratios):.2f})" if plain_right else "-")
    changed = [report["question_changed"] for report in reports
               if report.get("question_changed", {}).get("unchanged_answer") is not None]
    total = sum(row["n"] for row in changed)
    cells.append(f"{100 * sum(row['unchanged_answer'] * row['n'] for row in changed) / total:.1f}%" if total else "-")
    return cells
