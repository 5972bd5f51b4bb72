"""Evaluation of the symbolic task (Lample & Charton 2020, section 4.1 and table 3): exact match and verified
accuracy at several beam widths, on the full test set and on the test set deduplicated against the training data,
by generator and by expression size.

A test example is solved at beam k when any of the k hypotheses the beam returns verifies (the derivative of the
hypothesis equals the integrand, or the hypothesis satisfies the ODE); exact match compares the best hypothesis with
the reference tokens. The deduplicated subset keeps the first example of every canonical input and drops those
whose input occurs in the training data (``neuromath.tasks.symbolic.deduplicate``): a model that remembers training
pairs scores on the full set what it may not on the deduplicated one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

from neuromath.fileio import write_text_atomic
from neuromath.tasks.symbolic import SymbolicExample, canonical

SIZE_BUCKETS = ((1, 5), (6, 10), (11, 15), (16, 20), (21, 30), (31, 10**9))


def size_bucket(size: int) -> str:
    for low, high in SIZE_BUCKETS:
        if low <= size <= high:
            return f"{low}+" if high >= 10**9 else f"{low}-{high}"
    return "0"


def dedup_mask(examples: Sequence[SymbolicExample], train: Sequence[SymbolicExample] | None) -> list[bool]:
    """For each test example: does it stay in the deduplicated test set (first of its canonical input, and that
    input not in ``train``)?"""
    seen = {canonical(example.source) for example in train or ()}
    keep = []
    for example in examples:
        key = canonical(example.source)
        keep.append(key not in seen)
        seen.add(key)
    return keep


def score_beams(
    run_dir: str | Path,
    examples: Sequence[SymbolicExample],
    nbest_by_beam: Mapping[int, Sequence[Sequence]],
    train: Sequence[SymbolicExample] | None = None,
) -> tuple[dict, list[dict]]:
    """Score the n-best lists that each beam width produced (``nbest_by_beam[k][i]``: candidates of example i, best
    first, each with ``tokens`` and ``verified``); returns (report, one record per example). With ``train`` the
    report has a ``dedup`` subset beside ``full``."""
    beams = sorted(nbest_by_beam)
    timeouts_by_beam: dict[int, int] = {}
    records = [
        {"id": e.id, "method": e.method, "size": e.size, "input": " ".join(e.source), "target": " ".join(e.target),
         "beams": {}}
        for e in examples
    ]
    for k in beams:
        for record, candidates, example in zip(records, nbest_by_beam[k], examples):
            first_verified = next((rank for rank, c in enumerate(candidates) if c.verified), None)
            timeouts = sum(getattr(c, "verdict_detail", None) == "timeout" for c in candidates)
            timeouts_by_beam[k] = timeouts_by_beam.get(k, 0) + timeouts
            record["beams"][str(k)] = {
                "best": " ".join(candidates[0].tokens),
                "exact": tuple(candidates[0].tokens) == example.target,
                "verified": first_verified is not None,
                "verdict": "verified" if first_verified is not None else "not verified",
                "timeouts": timeouts,  # hypotheses whose check ran past the verifier's time limit: not verified
                "first_verified_rank": first_verified,
                "verified_hypothesis": None if first_verified is None else " ".join(candidates[first_verified].tokens),
            }
    keep = dedup_mask(examples, train) if train is not None else None
    for record, kept in zip(records, keep or [None] * len(records)):
        if kept is not None:
            record["in_dedup"] = kept
    subsets = {"full": list(range(len(examples)))}
    if keep is not None:
        subsets["dedup"] = [i for i, kept in enumerate(keep) if kept]
    report = {
        "run": str(run_dir),
        "beams": beams,
        "subsets": {name: summarise([records[i] for i in indices], beams) for name, indices in subsets.items()},
        # per beam width, the hypotheses whose check the time limit ended; each counts as not verified
        "timeouts": {str(k): timeouts_by_beam.get(k, 0) for k in beams},
    }
    return report, records


def accuracies(records: Sequence[dict], beams: Sequence[int]) -> dict:
    n = len(records)
    out: dict = {"n": n}
    for k in beams:
        verified = sum(r["beams"][str(k)]["verified"] for r in records)
        exact = sum(r["beams"][str(k)]["exact"] for r in records)
        out[str(k)] = {"verified": verified / n if n else 0.0, "exact": exact / n if n else 0.0,
                       "verified_count": verified, "exact_count": exact}
    return out


def summarise(records: Sequence[dict], beams: Sequence[int]) -> dict:
    """Overall, by generator and by input size (operators)."""
    by_method: dict[str, list] = {}
    by_size: dict[str, list] = {}
    for record in records:
        by_method.setdefault(record["method"] or "unknown", []).append(record)
        by_size.setdefault(size_bucket(record["size"]), []).append(record)
    order = {f"{low}+" if high >= 10**9 else f"{low}-{high}": i for i, (low, high) in enumerate(SIZE_BUCKETS)}
    return {
        "overall": accuracies(records, beams),
        "by_method": {name: accuracies(group, beams) for name, group in sorted(by_method.items())},
        "by_size": {name: accuracies(by_size[name], beams) for name in sorted(by_size, key=lambda b: order.get(b, -1))},
    }


def _cell(block: dict, k: int, measure: str) -> str:
    return f"{100 * block[str(k)][measure]:.1f}" if block["n"] else "-"


def format_report(report: dict) -> str:
    """Markdown: verified accuracy and exact match per beam width, full and deduplicated side by side; then the same
    by generator and by size."""
    beams, subsets = report["beams"], report["subsets"]
    names = list(subsets)
    lines = []
    header = "| beam | " + " | ".join(
        f"{measure} {name} (n={subsets[name]['overall']['n']})"
        for measure in ("verified %", "exact %")
        for name in names
    ) + " |"
    lines += [header, "| ---: | " + " | ".join("---:" for _ in range(2 * len(names))) + " |"]
    for k in beams:
        cells = [_cell(subsets[name]["overall"], k, measure) for measure in ("verified", "exact") for name in names]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    for group, title in (("by_method", "generator"), ("by_size", "input operators")):
        lines += ["", f"verified % by {title} (" + ", ".join(names) + ")", ""]
        keys = []
        for name in names:
            keys += [key for key in subsets[name][group] if key not in keys]
        lines.append(f"| {title} | " + " | ".join(f"{name} n" for name in names) + " | "
                     + " | ".join(f"beam {k} {name}" for k in beams for name in names) + " |")
        lines.append("| --- | " + " | ".join("---:" for _ in range(len(names) * (1 + len(beams)))) + " |")
        for key in keys:
            blocks = [subsets[name][group].get(key, {"n": 0}) for name in names]
            counts = [str(block["n"]) for block in blocks]
            cells = [_cell(block, k, "verified") if block["n"] else "-" for k in beams for block in blocks]
            lines.append(f"| {key} | " + " | ".join(counts) + " | " + " | ".join(cells) + " |")
    if any((report.get("timeouts") or {}).values()):
        lines += ["", "hypotheses whose check ran past the verifier's time limit (counted as not verified): "
                  + ", ".join(f"beam {k}: {report['timeouts'].get(str(k), 0)}" for k in beams)]
    return "\n".join(lines) + "\n"


def write_symbolic_report(report: dict, records: list[dict], out: str | Path) -> dict[str, Path]:
    out = Path(out)
    paths = {"markdown": out / "report.md", "json": out / "report.json", "predictions": out / "predictions.jsonl"}
    write_text_atomic(paths["markdown"], f"# {report['run']}\n\n{format_report(report)}")
    write_text_atomic(paths["json"], json.dumps(report, indent=2))
    write_text_atomic(paths["predictions"], "".join(json.dumps(r) + "\n" for r in records))
    return paths
