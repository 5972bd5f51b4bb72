"""The robustness report of a word-problem solver (``neuromath evaluate RUN --data FILE --robustness``): its value
accuracy on the test file as it is, and on each rule-made variation of it (``neuromath.tasks.word_problems.
variations``: the question removed, an irrelevant sentence added, the sentences reordered, the numbers drawn again).

A variation exists for some problems only (a story of one sentence cannot be reordered), so each row also gives the
plain accuracy on the same problems: the difference between the two is what the variation costs. With the question
removed the gold answer is still scored, and lower is better: a solver that still answers reads cues in the story
(Patel et al. 2021). ``cue_ratio`` is that accuracy over the plain one on the same problems.

The question changed (``question_changed``: a total asked as a difference, a comparison asked as a total) measures
the other side of the same habit, question sensitivity (SVAMP's term, Patel et al. 2021): the story is the same, the
answer is not, and the new answer is scored. ``unchanged_answer`` is the share of those problems whose answer did not
move when the question changed (lower is better: a solver that reads only the story keeps its old answer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from neuromath.evaluation.scoring import evaluate_examples, percent
from neuromath.fileio import write_text_atomic
from neuromath.tasks.word_problems.variations import LABEL_CHANGING, LOWER_IS_BETTER, RULE_VARIATIONS, vary


def robustness_report(solver, examples: Sequence, seed: int = 0) -> dict:
    """Score ``solver`` on ``examples`` and on each variation of them; returns the report (``rows``, one per
    variation after the plain one) and each variation's records (``records``: variation -> records)."""
    plain, plain_records = evaluate_examples(solver, examples)
    right = [bool(record["correct"]) for record in plain_records]
    rows = [{"variation": "plain", "n": len(examples), "accuracy": plain["value_accuracy"],
             "plain_accuracy": plain["value_accuracy"], "lower_is_better": False}]
    records = {"plain": plain_records}
    for name in RULE_VARIATIONS:
        varied = vary(examples, name, seed)
        row = {"variation": name, "n": len(varied), "lower_is_better": name in LOWER_IS_BETTER}
        if varied:
            metrics, varied_records = evaluate_examples(solver, [example for _, example in varied])
            for (position, _), record in zip(varied, varied_records):
                record["original"] = position
            records[name] = varied_records
            row["accuracy"] = metrics["value_accuracy"]
            row["plain_accuracy"] = sum(right[position] for position, _ in varied) / len(varied)
            if name in LOWER_IS_BETTER:
                row["cue_ratio"] = row["accuracy"] / row["plain_accuracy"] if row["plain_accuracy"] else None
            if name in LABEL_CHANGING:
                row["unchanged_answer"] = unchanged_share(plain_records, varied_records)
        rows.append(row)
    return {"seed": seed, "problems": len(examples), "rows": rows, "records": records}


def unchanged_share(plain_records: Sequence[dict], varied_records: Sequence[dict]) -> float:
    """The share of varied problems (each record's ``original`` names its plain problem) whose predicted answer is the
    one predicted for the plain problem; a prediction without a value (ill-formed, division by zero) never counts."""
    same = sum(record["predicted_answer_text"] is not None
               and record["predicted_answer_text"] == plain_records[record["original"]]["predicted_answer_text"]
               for record in varied_records)
    return same / len(varied_records) if varied_records else 0.0


def to_markdown(report: dict) -> str:
    """The report as a Markdown table."""
    lines = ["| variation | problems | accuracy | plain accuracy, same problems | difference |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for row in report["rows"]:
        if "accuracy" not in row:
            lines.append(f"| {row['variation']} | 0 | - | - | - |")
            continue
        difference = 100 * (row["accuracy"] - row["plain_accuracy"])
        name = row["variation"] + (" (lower is better)" if row["lower_is_better"] else "")
        lines.append(f"| {name} | {row['n']} | {percent(row['accuracy'])} | {percent(row['plain_accuracy'])} | "
                     f"{difference:+.1f} |")
    ratio = next((row.get("cue_ratio") for row in report["rows"] if "cue_ratio" in row), None)
    if ratio is not None:
        lines.append("")
        lines.append(f"Answered without the question: {ratio:.2f} of the plain accuracy on the same problems "
                     "(a solver that reads the question scores near 0).")
    unchanged = next((row["unchanged_answer"] for row in report["rows"] if "unchanged_answer" in row), None)
    if unchanged is not None:
        lines.append("")
        lines.append(f"Question changed: the answer stayed the same on {100 * unchanged:.1f}% of those problems "
                     "(a solver that reads the question changes it on every one).")
    return "\n".join(lines)


def write_robustness(report: dict, out: str | Path) -> Path:
    """Write the report (without the records) as JSON, and each variation's records beside it as JSON lines."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {key: value for key, value in report.items() if key != "records"}
    write_text_atomic(out / "robustness.json", json.dumps(summary, indent=2) + "\n")
    for name, records in report["records"].items():
        write_text_atomic(out / f"robustness.{name}.jsonl", "".join(json.dumps(record) + "\n" for record in records))
    return out / "robustness.json"
