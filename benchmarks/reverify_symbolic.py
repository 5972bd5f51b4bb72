"""Re-verify the stored hypotheses of a symbolic experiment's evidence with the exact verifier.

Usage: ``python benchmarks/reverify_symbolic.py results/symbolic-integration --work DIR [--workers N]
[--time-limit S] [--json FILE] [--apply]``

``DIR`` holds the files the recipe's setup generated (``results run --work``; the test file is checked against the
recipe's sha256, and the setup command that makes it is printed when it is missing). The evidence of each run keeps,
per beam width and test pair, the best hypothesis (rank 1) and, when one verified, the first hypothesis that
verified (``evaluation/predictions.jsonl.gz``). Every such stored hypothesis is checked again by
``neuromath.tasks.symbolic.verify.verdicts`` (numbers may reject; only a proof accepts; a timeout is not verified),
each distinct (problem, hypothesis) once.

Printed: how many stored hypotheses were checked, how many verdicts changed (each named: run, test line, width,
before and after), and each run's verified counts per width on the full and deduplicated test sets as recorded and
as the re-verified records give them. What cannot be re-verified: the hypotheses of other ranks are not stored (nor
the weights that made them), so a pair whose stored verified hypothesis no longer verifies counts as not solved,
although a later hypothesis of its beam might have verified; such a count is a lower bound, and only a new
``neuromath evaluate`` of the run gives the exact number. ``--apply`` writes the re-verified verdicts into each
run's kept records, rebuilds its ``evaluation/report.json`` from them (overall, by generator and by size, as
``neuromath evaluate --beams`` builds it) and keeps the summary as ``reverified.json`` beside the recipe, so the
results pages and ``results verify`` use the re-verified numbers. A script, not a test: exit status 0 when no verdict
changed, 1 when some did, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from neuromath.errors import NeuromathError
from neuromath.evaluation.symbolic import summarise
from neuromath.fileio import write_text_atomic
from neuromath.results.beam_evidence import BEAM_RECORDS_GZ, BEAM_REPORT, width_order
from neuromath.results.evidence_io import read_gzip_lines, read_json, write_gzip_lines
from neuromath.results.recipes import load_recipe, pinned_file
from neuromath.tasks.symbolic import read_pairs
from neuromath.tasks.symbolic import verify as symbolic_verify


def test_file(recipe, work: Path) -> Path:
    """The ``--data`` file of the runs' evaluate step, checked against the recipe's sha256."""
    names = set()
    for run in recipe.runs.values():
        for argv in run.then:
            if "--data" in argv:
                names.add(argv[argv.index("--data") + 1])
    if len(names) != 1:
        raise NeuromathError(f"{recipe.path}: expected one test file in the runs' evaluate steps, found "
                             f"{sorted(names)}")
    return pinned_file(recipe, names.pop(), Path("."), work)


def line_of(identifier) -> str:
    return str(identifier).rsplit(":", 1)[-1]


def counts(records: list[dict], widths: list[str], solved) -> dict:
    """Verified counts per width, full and deduplicated: ``solved(index, width) -> bool`` of record ``index``."""
    subsets = {"full": range(len(records)), "dedup": [i for i, r in enumerate(records) if r.get("in_dedup")]}
    return {name: {"n": len(members), **{width: sum(bool(solved(i, width)) for i in members) for width in widths}}
            for name, members in subsets.items()}


def write_reverified(recipe, runs: dict[str, list[dict]], examples: dict, now: dict) -> None:
    """Each run's kept records with the re-verified verdicts, and its beam report rebuilt from them. A record that
    lost its verified hypothesis counts as not solved (its later hypotheses are not kept); one whose best hypothesis
    now verifies is solved at rank 0. The rebuilt report of the records as they were must equal the kept report, so a
    rebuild changes nothing but the verdicts."""
    for name, records in runs.items():
        folder = recipe.evidence_dir(name)
        kept = read_json(folder / BEAM_REPORT)
        if rebuilt_report(kept, records, examples) != kept:
            raise NeuromathError(f"{folder / BEAM_REPORT}: rebuilding it from its records does not give it back; "
                                 "nothing written")
        for index, record in enumerate(records):
            for width, entry in (record.get("beams") or {}).items():
                if now[(name, index, width)] and not entry.get("verified"):
                    entry.update(verified=True, first_verified_rank=0, verified_hypothesis=entry.get("best"))
                elif not now[(name, index, width)] and entry.get("verified"):
                    entry.update(verified=False, first_verified_rank=None, verified_hypothesis=None)
        write_gzip_lines(records, folder / BEAM_RECORDS_GZ)
        write_text_atomic(folder / BEAM_REPORT, json.dumps(rebuilt_report(kept, records, examples), indent=2) + "\n")


def rebuilt_report(kept: dict, records: list[dict], examples: dict) -> dict:
    """``kept`` with its subsets recounted from ``records`` (each given its pair's generator and size)."""
    beams = list(kept.get("beams") or [])
    full = [{**record, "method": examples[line_of(record.get("id"))].method,
             "size": examples[line_of(record.get("id"))].size} for record in records]
    subsets = {"full": full}
    if any("in_dedup" in record for record in records):
        subsets["dedup"] = [record for record in full if record.get("in_dedup")]
    return {**kept, "subsets": {subset: summarise(members, beams) for subset, members in subsets.items()}}


def reverify(folder: Path, work: Path, workers: int, time_limit: float, apply: bool = False) -> dict:
    recipe = load_recipe(folder / "recipe.yaml")
    examples = {line_of(example.id): example for example in read_pairs(test_file(recipe, work))}
    runs = {}
    pairs, places = [], []  # (hypothesis tokens, example); (run, record index, width, role)
    for name in recipe.runs:
        records = read_gzip_lines(recipe.evidence_dir(name) / BEAM_RECORDS_GZ)
        runs[name] = records
        for index, record in enumerate(records):
            example = examples.get(line_of(record.get("id")))
            if example is None:
                raise NeuromathError(f"{name}: record {index + 1} ({record.get('id')}) has no pair in the test file")
            for width, entry in (record.get("beams") or {}).items():
                if entry.get("verified"):
                    pairs.append((str(entry.get("verified_hypothesis") or "").split(), example))
                    places.append((name, index, width, "verified"))
                else:
                    pairs.append((str(entry.get("best") or "").split(), example))
                    places.append((name, index, width, "best"))
    distinct = len({(tuple(tokens), example.source) for tokens, example in pairs})
    print(f"checking {len(pairs)} stored hypotheses ({distinct} distinct) of {len(runs)} runs with {workers} "
          f"worker(s), {time_limit:g} s each ...", file=sys.stderr, flush=True)
    verdicts = symbolic_verify.verdicts(pairs, workers=workers, time_limit=time_limit)
    now: dict[tuple[str, int, str], bool] = {}
    changes, tally = [], Counter()
    for (name, index, width, role), verdict, (tokens, example) in zip(places, verdicts, pairs):
        tally[(role, verdict)] += 1
        before = role == "verified"
        after = verdict == "correct"  # of an unverified record's best hypothesis: it could only add a solve
        now[(name, index, width)] = after
        if after != before:
            changes.append({"run": name, "test_line": line_of(runs[name][index].get("id")), "width": width,
                            "role": role, "before": "verified" if before else "not verified",
                            "after": symbolic_verify.user_verdict(verdict), "verdict": verdict,
                            "hypothesis": " ".join(tokens)})
    summary = {"checked": len(pairs), "distinct": distinct, "changed": len(changes), "changes": changes,
               "verdicts": {f"{role} {verdict}": count for (role, verdict), count in sorted(tally.items())},
               "runs": {}}
    for name, records in runs.items():
        widths = sorted({w for r in records for w in (r.get("beams") or {})}, key=width_order)
        summary["runs"][name] = {
            "recorded": counts(records, widths, lambda i, w, records=records:
                               (records[i]["beams"].get(w) or {}).get("verified")),
            "reverified": counts(records, widths, lambda i, w, name=name: now[(name, i, w)]),
        }
    if apply:  # after the counts as recorded were taken
        write_reverified(recipe, runs, examples, now)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment", help="a results/<experiment> folder of symbolic beam evidence")
    parser.add_argument("--work", required=True, help="the folder that holds the files the recipe's setup generated")
    parser.add_argument("--workers", type=int, default=1, choices=range(1, 9), metavar="N",
                        help="verifier worker processes (1-8, default 1)")
    parser.add_argument("--time-limit", type=float, default=symbolic_verify.DEFAULT_TIME_LIMIT,
                        help="seconds per hypothesis (default: the verifier's, as evaluate uses)")
    parser.add_argument("--json", metavar="FILE", help="also write the summary as JSON")
    parser.add_argument("--apply", action="store_true",
                        help="write the re-verified verdicts into the evidence and keep the summary as reverified.json")
    args = parser.parse_args(argv)
    if not 0 < args.time_limit <= 600:
        parser.error("--time-limit must be in (0, 600]")
    try:
        summary = reverify(Path(args.experiment), Path(args.work), args.workers, args.time_limit, args.apply)
    except NeuromathError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        symbolic_verify.close_pools()
    print(f"checked {summary['checked']} stored hypotheses ({summary['distinct']} distinct): "
          f"{summary['changed']} verdicts changed")
    for key, count in summary["verdicts"].items():
        print(f"  {key}: {count}")
    for change in summary["changes"]:
        print(f"  {change['run']}, test line {change['test_line']}, beam {change['width']}: {change['before']} -> "
              f"{change['after']} ({change['verdict']}): {change['hypothesis']}")
    for name, run in summary["runs"].items():
        for subset in ("full", "dedup"):
            recorded, again = run["recorded"][subset], run["reverified"][subset]
            widths = [key for key in recorded if key != "n"]
            cells = ", ".join(f"beam {w} {recorded[w]} -> {again[w]}" for w in widths)
            print(f"{name} {subset} (n={recorded['n']}): verified {cells}")
    if args.json:
        write_text_atomic(Path(args.json), json.dumps(summary, indent=2) + "\n")
    if args.apply:
        write_text_atomic(Path(args.experiment) / "reverified.json", json.dumps(summary, indent=2) + "\n")
    return 1 if summary["changed"] else 0


if __name__ == "__main__":
    sys.exit(main())
