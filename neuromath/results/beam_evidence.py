"""The evidence of a run that ``neuromath evaluate --beams`` scored (symbolic integration and ODEs), and its
verification.

Such a run trains without a test split: its recipe's ``then`` step decodes the test file at several beam widths and
verifies every hypothesis, writing ``evaluation/report.json`` (accuracies on the full and the deduplicated test set)
and ``evaluation/predictions.jsonl`` (one record per test pair). The evidence keeps the report and the records,
slimmed to what scores them: per beam width the best hypothesis, whether it is the target (exact), whether a
hypothesis verified and which one. ``verify_beams`` recounts every accuracy of the report from the records and, where
the test and training files are at hand, checks each record's exact verdict against the target and its
deduplicated flag against the training file. It does not run SymPy again: a verified verdict is taken as recorded
(``neuromath evaluate`` recomputes it from the kept hypothesis).

Table metrics (``beam_metric``): ``verified@K`` and ``exact@K`` on the full test set, ``dedup verified@K`` and
``dedup exact@K`` on its deduplicated part."""

from __future__ import annotations

import re
from pathlib import Path

from neuromath.errors import NeuromathError
from neuromath.evaluation.symbolic import dedup_mask
from neuromath.results.evidence_io import read_gzip_lines, read_json, write_gzip_lines
from neuromath.safe_read import load_json, open_data
from neuromath.tasks.symbolic import read_pairs

EVALUATION = "evaluation"  # the folder ``evaluate --report {out}/evaluation`` writes, in the run and its evidence
BEAM_REPORT = f"{EVALUATION}/report.json"
BEAM_RECORDS = f"{EVALUATION}/predictions.jsonl"
BEAM_RECORDS_GZ = f"{EVALUATION}/predictions.jsonl.gz"
BEAM_FIELDS = ("best", "exact", "verified", "first_verified_rank", "verified_hypothesis")
METRIC = re.compile(r"(?:(full|dedup) )?(verified|exact)@(\d+)")


def slim_beam_record(record: dict) -> dict:
    """One test pair's record as the evidence keeps it: its id, whether it is in the deduplicated set, and per beam
    width what scores it (the input and target are in the pinned test file)."""
    slim = {"id": record.get("id")}
    if "in_dedup" in record:
        slim["in_dedup"] = record["in_dedup"]
    slim["beams"] = {width: {key: entry.get(key) for key in BEAM_FIELDS}
                     for width, entry in (record.get("beams") or {}).items()}
    return slim


def parse_beam_metric(metric: str) -> tuple[str, str, str] | None:
    """``dedup verified@10`` -> ("dedup", "verified", "10"); ``exact@1`` -> ("full", "exact", "1"); None when the
    name is not a beam metric."""
    match = METRIC.fullmatch(metric)
    return None if match is None else (match.group(1) or "full", match.group(2), match.group(3))


def beam_metric(report: dict | None, metric: str) -> float | None:
    """A metric of an ``evaluate --beams`` report (``verified@10``, ``dedup exact@1``, ...), or None when the name is
    not one or the report lacks it."""
    parsed = parse_beam_metric(metric)
    if report is None or parsed is None:
        return None
    subset, measure, width = parsed
    entry = (((report.get("subsets") or {}).get(subset) or {}).get("overall") or {}).get(width)
    value = entry.get(measure) if isinstance(entry, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def recount(records: list[dict], widths: list[str]) -> dict:
    """The report's overall counts (n, and per width verified and exact counts) of the full and deduplicated sets."""
    subsets = {"full": records, "dedup": [r for r in records if r.get("in_dedup")]}
    counts = {}
    for name, members in subsets.items():
        counts[name] = {"n": len(members)}
        for width in widths:
            entries = [(r.get("beams") or {}).get(width) or {} for r in members]
            counts[name][width] = {"verified_count": sum(bool(e.get("verified")) for e in entries),
                                   "exact_count": sum(bool(e.get("exact")) for e in entries)}
    return counts


def width_order(width: str) -> tuple[int, str]:
    """Beam widths (strings of digits) in numeric order; any other text after them."""
    return (len(width), width) if width.isdigit() else (10**9, width)


def verify_beams(label: str, folder: Path, test: Path | None, train: Path | None) -> tuple[list[str], bool]:
    """The differences between a run's beam report and its kept records, and, where ``test`` (and ``train``) are given,
    between the records and the gold pairs; and whether the gold pairs were read."""
    report_path, records_path = folder / BEAM_REPORT, folder / BEAM_RECORDS_GZ
    if not report_path.is_file():
        return [f"{label}: no {BEAM_REPORT}: the run's beam evaluation is not in its evidence"], False
    if not records_path.is_file():
        return [f"{label}: no {BEAM_RECORDS_GZ}: the beam report cannot be recomputed"], False
    report, records = read_json(report_path), read_gzip_lines(records_path)
    widths = [str(width) for width in report.get("beams") or []]
    problems = []
    counts = recount(records, widths)
    recorded = sorted({width for record in records for width in (record.get("beams") or {})}, key=width_order)
    if sorted(widths, key=width_order) != recorded:  # a width left out of "beams" would be left out of the recount
        problems.append(f"{label}: {BEAM_REPORT} lists beam widths {widths}, the records hold {recorded}")
    for subset, reported in (report.get("subsets") or {}).items():
        overall = reported.get("overall") or {}
        stated = sorted((key for key in overall if key != "n"), key=width_order)
        if stated != sorted(widths, key=width_order):
            problems.append(f"{label}: {BEAM_REPORT} states {subset} scores at beam widths {stated}, its list of "
                            f"widths is {widths}")
        if subset not in counts:
            problems.append(f"{label}: {BEAM_REPORT} has a subset {subset!r} that no record belongs to")
            continue
        n = counts[subset]["n"]
        if overall.get("n") != n:
            problems.append(f"{label}: {BEAM_REPORT} says {subset} n = {overall.get('n')}, the records hold {n}")
        for width in widths:
            for measure in ("verified", "exact"):
                count = counts[subset][width][f"{measure}_count"]
                entry = overall.get(width) or {}
                accuracy = count / n if n else 0.0
                stated_accuracy = entry.get(measure)
                if (entry.get(f"{measure}_count") != count or not isinstance(stated_accuracy, (int, float))
                        or abs(stated_accuracy - accuracy) > 1e-9):
                    problems.append(f"{label}: {BEAM_REPORT} says {subset} beam {width} {measure} "
                                    f"{entry.get(f'{measure}_count')} ({stated_accuracy}), the records give {count} "
                                    f"({accuracy})")
    for index, record in enumerate(records):
        for width in widths:
            entry = (record.get("beams") or {}).get(width) or {}
            if entry.get("verified") != (entry.get("first_verified_rank") is not None):
                problems.append(f"{label}: record {index + 1}, beam {width}: 'verified' does not follow from its "
                                "first verified rank")
                break
    if test is None:
        return problems, False
    return problems + check_gold(label, records, widths, test, train), True


def check_gold(label: str, records: list[dict], widths: list[str], test: Path, train: Path | None) -> list[str]:
    """Each record against the gold test pair at its place: exact verdicts from the best hypothesis and the target,
    the deduplicated flag from the training file."""
    examples = read_pairs(test)
    if len(examples) != len(records):
        return [f"{label}: the test file {test.name} holds {len(examples)} pairs, the records {len(records)}"]
    keep = dedup_mask(examples, read_pairs(train)) if train is not None else None
    for index, (record, example) in enumerate(zip(records, examples)):
        if str(record.get("id")).rsplit(":", 1)[-1] != example.id.rsplit(":", 1)[-1]:
            return [f"{label}: record {index + 1} is for {record.get('id')!r}, the test file's pair {index + 1} is "
                    f"line {example.id.rsplit(':', 1)[-1]}"]
        for width in widths:
            entry = (record.get("beams") or {}).get(width) or {}
            best = tuple(str(entry.get("best") or "").split())
            if bool(entry.get("exact")) != (best == example.target):
                return [f"{label}: record {index + 1}, beam {width}: the recorded exact verdict {entry.get('exact')} "
                        "is not what its best hypothesis and the target give"]
        if keep is not None and bool(record.get("in_dedup")) != keep[index]:
            return [f"{label}: record {index + 1}: in_dedup {record.get('in_dedup')}, the training file says "
                    f"{keep[index]}"]
    return []


def keep_beam_evidence(out: Path, staging: Path, relative) -> None:
    """Copy the beam records of the run folder ``out`` (if it has them) into ``staging``, slimmed, their ids made
    machine-free by ``relative`` (a text -> text function)."""
    source = out / BEAM_RECORDS
    if not source.is_file():
        return
    records = []
    with open_data(source, encoding="utf-8") as stream:  # a FIFO: refused
        for number, line in enumerate(stream, start=1):
            try:
                records.append(slim_beam_record(load_json(relative(line), source, number)))
            except ValueError:
                raise NeuromathError(f"{source}: line {number}: not valid JSON") from None
    write_gzip_lines(records, staging / BEAM_RECORDS_GZ)
