"""Re-verify the stored labels of the identities evidence with the exact check.

Usage: ``python benchmarks/reverify_identities.py results/identities-40k --work DIR [--time-limit S]
[--records FILE.jsonl] [--limit N] [--every N] [--blanks FILE]``

What the identities evidence stores: each run of ``identities-40k`` keeps, per test equation and in the test file's
order, its depth, its label, the prediction and whether it was right (``seedK/predictions.jsonl.gz``), not the
equation; the labels are those of the generated test file, which the recipe's setup makes again byte for byte
(``DIR`` holds it; it is checked against the recipe's sha256, and the command that makes it is printed when it is
missing). Every test equation of that file is checked by ``exact_check.check_identity_tree`` (a true label must be
proven: exact arithmetic or SymPy within ``--time-limit`` seconds; a false one must show a point where the sides
differ, confirmed to 60 digits), one SymPy worker process, one equation at a time.

Printed: how many labels were checked; how many the check contradicts (a true label with a point where the sides
differ, a false label that is proven), each named (index, depth, label, verdict, reason); how many it can neither
prove nor refute, by label and depth; and, for each run and seed, accuracy overall and per depth as recorded and
with the contradicted labels turned over (the numbers that would move; on a sample, ``--every N``, only the
checked equations can move). ``--records`` keeps one JSON line per checked equation, and a second call with the same
file resumes where it stopped (``--limit`` checks at most N more). ``--blanks FILE`` (read through the data root,
like ``identities/40k_test_blank_0.json``) also checks the released blank file's equations, all stated true; no
number of the completion evidence depends on that: it ranks candidates by value class. A script, not a test: exit
status 0 when no label is contradicted, 1 when some are, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from neuromath.dataroot import find_data
from neuromath.errors import NeuromathError
from neuromath.results.evidence_io import read_gzip_lines
from neuromath.results.recipes import load_recipe, pinned_file
from neuromath.tasks.identities import read_equations
from neuromath.tasks.identities.exact_check import NOT_VERIFIED, UNKNOWN, VERIFIED, check_identity_tree
from neuromath.tasks.identities.identity_labels import SympyJudge


def test_file(recipe, work: Path) -> Path:
    """The runs' ``data.test`` file, checked against the recipe's sha256."""
    names = set()
    for run in recipe.runs.values():
        for item in run.argv:
            if item.startswith("data.test="):
                names.add(item.split("=", 1)[1])
    if len(names) != 1:
        raise NeuromathError(f"{recipe.path}: expected one data.test file in the runs, found {sorted(names)}")
    return pinned_file(recipe, names.pop(), Path("."), work)


def contradicted(label: bool, verdict: str) -> bool:
    return (label and verdict == NOT_VERIFIED) or (not label and verdict == VERIFIED)


def check_all(examples, records_path: Path | None, limit: int | None, time_limit: float,
              every: int = 1) -> list[dict]:
    """One record per checked example (index, depth, label, verdict, reason): every ``every``-th one (all of them by
    default), resumed from ``records_path``."""
    done: list[dict] = []
    if records_path is not None and records_path.is_file():
        done = [json.loads(line) for line in records_path.read_text(encoding="utf-8").splitlines() if line]
    checked = {record["index"] for record in done}
    todo = [index for index in range(0, len(examples), every) if index not in checked]
    todo = todo[: limit if limit is not None else None]
    started = time.perf_counter()
    with SympyJudge(timeout=time_limit) as judge, (
            open(records_path, "a", encoding="utf-8") if records_path is not None else _Nowhere()) as out:
        judge.start()
        for count, index in enumerate(todo, start=1):
            example = examples[index]
            verdict, reason = check_identity_tree(example.tree, time_limit, judge=judge)
            record = {"index": index, "depth": example.depth, "label": bool(example.label), "verdict": verdict,
                      "reason": reason}
            done.append(record)
            out.write(json.dumps(record) + "\n")
            out.flush()
            if count % 500 == 0:
                print(f"  {len(done)} of {len(examples)} checked, {time.perf_counter() - started:.0f} s",
                      file=sys.stderr)
    return done


class _Nowhere:
    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        pass


def summary(records: list[dict]) -> dict:
    verdicts = Counter((record["label"], record["verdict"]) for record in records)
    unknown_by_depth: dict[str, Counter] = defaultdict(Counter)
    for record in records:
        if record["verdict"] == UNKNOWN:
            unknown_by_depth["true" if record["label"] else "false"][record["depth"]] += 1
    return {
        "checked": len(records),
        "verdicts": {f"{'true' if label else 'false'} label, {verdict}": count
                     for (label, verdict), count in sorted(verdicts.items())},
        "contradicted": [record for record in records if contradicted(record["label"], record["verdict"])],
        "unknown_by_depth": {label: dict(sorted(counts.items())) for label, counts in unknown_by_depth.items()},
    }


def accuracy(rows: list[tuple[int, bool]]) -> dict:
    """Accuracy overall and per depth of (depth, correct) rows."""
    by_depth: dict[int, list[bool]] = defaultdict(list)
    for depth, correct in rows:
        by_depth[depth].append(correct)
    result = {"overall": sum(correct for _, correct in rows) / len(rows)}
    result.update({f"depth{depth}": sum(hits) / len(hits) for depth, hits in sorted(by_depth.items())})
    return result


def moved_numbers(experiment: Path, records: list[dict], examples) -> list[dict]:
    """For every run and seed: accuracy as recorded and with the contradicted labels turned over."""
    flipped = {record["index"] for record in records if contradicted(record["label"], record["verdict"])}
    moves = []
    for predictions_path in sorted(experiment.glob("runs/*/seed*/predictions.jsonl.gz")):
        rows = read_gzip_lines(predictions_path)
        if len(rows) != len(examples):
            raise NeuromathError(f"{predictions_path}: {len(rows)} records, the test file has {len(examples)}")
        for index, (row, example) in enumerate(zip(rows, examples)):
            if row["depth"] != example.depth or row["label"] != bool(example.label):
                raise NeuromathError(f"{predictions_path}: record {index + 1} is depth {row['depth']} label "
                                     f"{row['label']}, the test file's equation is depth {example.depth} label "
                                     f"{example.label}")
        recorded = accuracy([(row["depth"], bool(row["correct"])) for row in rows])
        checked = [(row["depth"], bool(row["correct"]) != (index in flipped)) for index, row in enumerate(rows)]
        after = accuracy(checked)
        moves.append({"run": str(predictions_path.parent.relative_to(experiment)), "recorded": recorded,
                      "with_checked_labels": after,
                      "moved": None if after is None else {key: after[key] - recorded[key] for key in recorded
                                                           if abs(after[key] - recorded[key]) > 0}})
    return moves


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", help="results/identities-40k")
    parser.add_argument("--work", required=True, help="the folder the recipe's setup wrote its files to")
    parser.add_argument("--time-limit", type=float, default=2.0, help="seconds SymPy may take per equation")
    parser.add_argument("--records", help="one JSON line per checked equation; a second call resumes")
    parser.add_argument("--limit", type=int, help="check at most this many more equations")
    parser.add_argument("--every", type=int, default=1,
                        help="check every N-th equation of the test file only (a sample spread over all depths)")
    parser.add_argument("--blanks", help="also check the released blank file's equations (stated true)")
    args = parser.parse_args()
    try:
        experiment = Path(args.experiment)
        recipe = load_recipe(experiment / "recipe.yaml")
        path = test_file(recipe, Path(args.work))
        examples = read_equations(path)
        print(f"{path}: {len(examples)} test equations (sha256 as pinned in {recipe.path})")
        if args.every < 1:
            raise NeuromathError(f"--every must be at least 1, not {args.every}")
        records = check_all(examples, Path(args.records) if args.records else None, args.limit, args.time_limit,
                            args.every)
        report = summary(records)
        report["test_equations"] = len(examples)
        report["time_limit"] = args.time_limit
        report["runs"] = moved_numbers(experiment, records, examples)
        if args.blanks:
            blanks = read_equations(find_data(args.blanks))
            with SympyJudge(timeout=args.time_limit) as judge:
                found = Counter(check_identity_tree(example.tree, args.time_limit, judge=judge)[0]
                                for example in blanks)
            report["released_blanks"] = {"checked": len(blanks), "verdicts": dict(found)}
    except NeuromathError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2))
    return 1 if report["contradicted"] else 0


if __name__ == "__main__":
    sys.exit(main())
