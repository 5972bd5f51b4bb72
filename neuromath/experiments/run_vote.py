"""``neuromath analyze vote``: what a majority vote of finished word-problem runs would score, read from their kept
test prediction records and the gold test files their configs name. Nothing is trained or decoded.

``cv --seeds`` votes seeds of one configuration as it trains them; this votes any runs that scored the same test
problems (seeds, or different configurations, cross-validations included), so one can ask of the evidence under
``results/`` how far a vote of its rows reaches before paying for one. Each record's predicted value is computed
again from its predicted equation and the gold problem's numbers (the kept records hold the equation, not the
value), and the runs vote as ``neuromath.evaluation.vote`` does: per problem, the answer most runs gave, ties to
the earliest run in the order given. Also reported: the share of problems some run got right (the ceiling of any
vote of these runs) and the share on which every run gave one answer.

A vote chosen by looking at these test scores is not a result: the members of a vote that is reported as one must
be fixed before their test scores are seen (``cv --seeds`` fixes them by seed)."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from neuromath.errors import DataFormatError, NeuromathError
from neuromath.evaluation.scoring import read_predictions
from neuromath.evaluation.significance import compare_paired
from neuromath.evaluation.vote import vote
from neuromath.experiments.paired_compare import predictions_path
from neuromath.experiments.slices import gold_problems, scored_units
from neuromath.tasks.word_problems.answer_scoring import VALUE_REL_TOL, equation_value


@dataclass
class UnitRecords:
    name: str  # fold0, seed2, "" for one run
    examples: list
    records: list[dict]  # one per example, with predicted_value (None where the equation has no value)


def predicted_value(tokens: Sequence[str], numbers: Sequence[str]) -> float | None:
    """The value of a predicted prefix equation over the problem's numbers; None when it has none."""
    try:
        value = float(equation_value(list(tokens), numbers))
    except (NeuromathError, OverflowError, RecursionError, ZeroDivisionError, ValueError):
        return None
    return value if math.isfinite(value) else None


def read_run(path: Path, work: str | Path | None) -> list[UnitRecords]:
    """A run's scored units (a cv's folds, a training's seeds or the run), each with its gold test problems and its
    prediction records, the predicted values computed again."""
    if not path.is_dir():
        raise NeuromathError(f"{path}: no such run folder")
    units = []
    for unit in scored_units(path):
        gold = gold_problems(unit, work, "a vote is")
        kept = predictions_path(unit)
        if kept is None:
            raise NeuromathError(f"{unit}: no predictions.jsonl (nor its gzip copy), so its answers cannot be voted")
        records = read_predictions(kept, needs=("id", "predicted_tokens"))
        if len(records) != len(gold):
            raise DataFormatError(kept, None, f"{len(records)} records for the {len(gold)} problems of the test file")
        voting = []
        for number, (record, example) in enumerate(zip(records, gold), start=1):
            if str(record["id"]) != str(example.id):
                raise DataFormatError(kept, number, f"id {record['id']!r} where the test file has {example.id!r}")
            tokens = record["predicted_tokens"]
            if not isinstance(tokens, list) or not all(isinstance(token, str) for token in tokens):
                raise DataFormatError(kept, number, "predicted_tokens must be a list of strings")
            value = predicted_value(tokens, example.numbers)
            correct = value is not None and math.isclose(value, example.answer, rel_tol=VALUE_REL_TOL)
            voting.append({"id": record["id"], "predicted_value": value, "correct": correct})
        units.append(UnitRecords(unit.relative_to(path).parts[0] if unit != path else "", gold, voting))
    return units


def spread(values: Sequence[float]) -> dict:
    return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "units": list(values)}


def vote_table(paths: Sequence[str | Path], samples: int = 10_000, seed: int = 0,
               work: str | Path | None = None) -> dict:
    """``{"runs": [{"path", "accuracy", "by_unit"}], "vote": {"accuracy", "by_unit", "paired"}, "any_correct",
    "unanimous", "n", "units"}``: accuracies pooled over every problem, ``by_unit`` their mean ± sample std over
    the folds (or seeds), ``paired`` the vote against the first run (``compare_paired``)."""
    if len(paths) < 2:
        raise NeuromathError("a vote needs at least two runs")
    runs = [read_run(Path(path), work) for path in paths]
    names = [unit.name for unit in runs[0]]
    for path, run in zip(paths[1:], runs[1:]):
        if [unit.name for unit in run] != names or any(
                [e.id for e in a.examples] != [e.id for e in b.examples] for a, b in zip(run, runs[0])):
            raise NeuromathError(f"{path} and {paths[0]} scored different test problems (or in another order): a "
                                 "vote needs runs over the same test files")
    member_correct = [[r["correct"] for unit in run for r in unit.records] for run in runs]
    voted, unit_votes, unanimous, any_right = [], [], 0, 0
    for position, name in enumerate(names):
        right = []
        for records in zip(*(run[position].records for run in runs)):
            chosen = vote(records)
            right.append(bool(chosen["correct"]))
            unanimous += chosen["voters"] == len(records) and chosen["votes"] == len(records)
            any_right += any(record["correct"] for record in records)
        voted += right
        unit_votes.append(sum(right) / len(right))
    n = len(voted)
    rows = [{"path": str(path), "accuracy": sum(correct) / n,
             "by_unit": spread([sum(r["correct"] for r in unit.records) / len(unit.records) for unit in run])}
            for path, run, correct in zip(paths, runs, member_correct)]
    return {"runs": rows, "n": n, "units": names,
            "vote": {"accuracy": sum(voted) / n, "by_unit": spread(unit_votes),
                     "paired": compare_paired(member_correct[0], voted, samples, seed)},
            "any_correct": any_right / n, "unanimous": unanimous / n}


def format_vote_table(table: dict) -> str:
    def cell(accuracy: float, by_unit: dict) -> str:
        return (f"{100 * accuracy:.1f} | {100 * by_unit['mean']:.1f} ± {100 * by_unit['std']:.1f}"
                if len(by_unit["units"]) > 1 else f"{100 * accuracy:.1f} | -")
    lines = ["| run | pooled | mean ± std over units |", "| --- | ---: | ---: |"]
    lines += [f"| `{row['path']}` | {cell(row['accuracy'], row['by_unit'])} |" for row in table["runs"]]
    vote_row = table["vote"]
    lines.append(f"| the vote | {cell(vote_row['accuracy'], vote_row['by_unit'])} |")
    paired = vote_row["paired"]
    interval = paired["interval"]
    return ("\n".join(lines) + "\n\n"
            f"value accuracy % on {table['n']} test problems ({len(table['units'])} units: "
            f"{', '.join(table['units']) or 'one run'}). The vote against the first run: "
            f"{100 * paired['difference']:+.1f} points, 95% paired bootstrap [{100 * interval['low']:+.1f}, "
            f"{100 * interval['high']:+.1f}], McNemar p {paired['mcnemar']['p_value']:.3g} "
            f"({paired['mcnemar']['only_a']} right only in the first run, {paired['mcnemar']['only_b']} only in the "
            f"vote). Some run right: {100 * table['any_correct']:.1f}% (the ceiling of any vote of these runs); "
            f"every run one answer: {100 * table['unanimous']:.1f}%.\n")


def vote_command(paths: Sequence[str], as_json: bool = False, samples: int = 10_000, seed: int = 0,
                 work: str | None = None) -> int:
    table = vote_table(paths, samples, seed, work=work)
    print(json.dumps(table) if as_json else format_vote_table(table), end="\n" if as_json else "")
    return 0
