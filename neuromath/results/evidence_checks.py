"""What ``neuromath results verify`` recomputes from the records below a number, without the gold data.

Each check takes what a file of the evidence states and what its records give, and returns one line per difference,
naming the file, the number and both values (``evidence`` calls them for every run):

- ``check_sequence_scores``, ``check_classifier_scores``: a unit's test scores (counts, accuracies, and an equation
  classifier's precision, recall and every per-depth score) from its kept predictions;
- ``check_training_log``: a summary's best validation score, epochs and steps from its ``metrics.csv``;
- ``check_cv_report``: ``report.json`` of a cross-validation, each fold row from the fold's summary and every mean and
  standard deviation from the rows;
- ``check_seeds``: ``seeds.json`` of ``train --seeds``, every mean and standard deviation from the seeds' summaries;
- ``check_modules_report``: a Mathematics Dataset per-module report from the run's predictions;
- ``check_beam_groups``: the by-generator and by-size rows of an ``evaluate --beams`` report against its overall
  counts.

Means and standard deviations are recomputed with ``neuromath.evaluation.spread.mean_std`` (sample standard
deviation), the function that wrote them; a number matches when it is within ``TOLERANCE``, float rounding."""

from __future__ import annotations

import csv
import io
import numbers
from collections import namedtuple
from pathlib import Path

from neuromath.evaluation.bleu import common_definition
from neuromath.evaluation.modules_report import build_report
from neuromath.evaluation.spread import mean_std
from neuromath.evaluation.verification import mean_and_std, verification_metrics
from neuromath.safe_read import SUMMARY_LIMIT, read_run_file

TOLERANCE = 1e-9
CLASSIFIER_SCORES = ("n", "accuracy", "precision", "recall", "true_share")
VALIDATION_COLUMNS = {"best_val_accuracy": "val_accuracy", "best_val_value_accuracy": "val_value_accuracy"}
Scored = namedtuple("Scored", "depth label")  # what verification_metrics reads of an example
REPORT_MEANS = ("value_accuracy", "equation_accuracy", "bleu", "unknown_token_rate", "any_correct", "unanimous")


def is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def same(stated, expected) -> bool:
    """Whether a stated number (or None) is the recomputed one, within float rounding."""
    if expected is None or stated is None:
        return expected is None and stated is None
    return is_number(stated) and is_number(expected) and abs(stated - expected) <= TOLERANCE


def compare(problems: list[str], path: Path, name: str, stated, expected, source: str) -> None:
    """Add a line to ``problems`` when the number ``name`` that ``path`` states is not what ``source`` gives."""
    if not same(stated, expected):
        problems.append(f"{path}: {name} is {stated!r}; recomputed from {source}: {expected!r}")


def compare_spread(problems: list[str], path: Path, name: str, stated, expected: dict | None, source: str) -> None:
    """A ``{"mean", "std"}`` pair (or None) that ``path`` states against the one recomputed."""
    if expected is None or not isinstance(stated, dict):
        if not (expected is None and stated is None):
            problems.append(f"{path}: {name} is {stated!r}; recomputed from {source}: {expected!r}")
        return
    for key in ("mean", "std"):
        compare(problems, path, f"{name}.{key}", stated.get(key), expected[key], source)


# -- one unit's test scores -------------------------------------------------------------------------------------------


def check_sequence_scores(path: Path, test: dict, records: list[dict]) -> list[str]:
    """A sequence unit's counts and accuracies (``test`` of ``path``) from its prediction records."""
    problems: list[str] = []
    n = len(records)
    value = sum(bool(record.get("correct")) for record in records)
    equation = sum(bool(record.get("equation_correct")) for record in records)
    source = f"its {n} predictions"
    if test.get("n") != n:
        problems.append(f"{path}: test.n is {test.get('n')!r}, the predictions hold {n} records")
    for name, count in (("value_correct", value), ("equation_correct", equation)):
        if test.get(name) != count:
            problems.append(f"{path}: test.{name} is {test.get(name)!r}; recomputed from {source}: {count}")
    for name, count in (("value_accuracy", value), ("equation_accuracy", equation)):
        if name in test or name == "value_accuracy":
            compare(problems, path, f"test.{name}", test.get(name), count / n if n else 0.0, source)
    return problems


def check_classifier_scores(path: Path, test: dict, records: list[dict]) -> list[str]:
    """An equation classifier's accuracy, precision, recall and share of true equations, overall and at every depth,
    from its records' depth, label and predicted label (the scorer that wrote them, ``verification_metrics``)."""
    problems: list[str] = []
    for index, record in enumerate(records):
        if record.get("correct") != (record.get("predicted") == record.get("label")):
            problems.append(f"{path.parent}: prediction {index + 1}: 'correct' does not follow from label and "
                            "predicted")
            break
    examples = [Scored(record.get("depth"), record.get("label")) for record in records]
    scores = verification_metrics(examples, [record.get("predicted") for record in records])
    source = f"its {len(records)} predictions"
    for key in CLASSIFIER_SCORES:
        if key in test or key in ("n", "accuracy"):
            compare(problems, path, f"test.{key}", test.get(key), scores[key], source)
    expected = {str(depth): values for depth, values in scores["by_depth"].items()}
    stated = test.get("by_depth")
    if stated is None:
        return problems
    if not isinstance(stated, dict) or set(stated) != set(expected):
        problems.append(f"{path}: test.by_depth holds depths {sorted(stated) if isinstance(stated, dict) else stated}"
                        f", {source} hold depths {sorted(expected, key=int)}")
        return problems
    for depth, values in expected.items():
        entry = stated[depth] if isinstance(stated[depth], dict) else {"accuracy": stated[depth]}
        for key in CLASSIFIER_SCORES:
            if key in entry or key == "accuracy":
                compare(problems, path, f"test.by_depth.{depth}.{key}", entry.get(key), values[key],
                        f"the {values['n']} predictions at depth {depth}")
    return problems


def check_training_log(folder: Path, summary: dict) -> list[str]:
    """A summary's best validation score (the highest value of its column: the kept checkpoint is the best one),
    epochs and steps (one past the last logged) from the ``metrics.csv`` beside it; nothing where there is none."""
    path = folder / "metrics.csv"
    if not path.is_file():
        return []
    text = read_run_file(path, SUMMARY_LIMIT, "metrics log").decode("utf-8", errors="replace")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    try:
        epochs = [int(float(row["epoch"])) for row in rows if row.get("epoch") not in (None, "")]
        steps = [int(float(row["step"])) for row in rows if row.get("step") not in (None, "")]
        validation = {column: [float(row[column]) for row in rows if row.get(column) not in (None, "")]
                      for column in VALIDATION_COLUMNS.values()}
    except (ValueError, OverflowError) as error:
        return [f"{path}: a value that is not a number ({error})"]
    problems: list[str] = []
    source = f"{path.name}"
    for name, logged in (("epochs", epochs), ("steps", steps)):
        if logged and is_number(summary.get(name)) and summary[name] != max(logged) + 1:
            problems.append(f"{folder / 'summary.json'}: {name} is {summary[name]!r}; recomputed from {source} "
                            f"(its last {name[:-1]} + 1): {max(logged) + 1}")
    if "best_val_completion" in summary:  # selected on completion, not on the validation column
        return problems
    for name, column in VALIDATION_COLUMNS.items():
        values = validation[column]
        if values and summary.get(name) is not None:
            compare(problems, folder / "summary.json", name, summary.get(name), max(values),
                    f"the highest {column} of {source}")
    return problems


# -- reports over units -----------------------------------------------------------------------------------------------


def expected_row(summary: dict, selection: dict | None) -> dict:
    """What a fold row of ``report.json`` copies from its fold's summary (a refit's: and its selection run's)."""
    test = summary.get("test") or {}
    row = {"value_accuracy": test.get("value_accuracy"), "equation_accuracy": test.get("equation_accuracy"),
           "test_examples": test.get("n"), "bleu": test.get("bleu")}
    if "vote_of_seeds" not in summary:  # a vote's unknown rates come from its seeds' reports
        row.update(unknown_token_rate=test.get("unknown_token_rate"),
                   unknown_example_rate=test.get("unknown_example_rate"))
    chosen_by = selection if selection is not None else summary
    if "vote_of_seeds" not in summary:
        row.update(best_val_value_accuracy=chosen_by.get("best_val_value_accuracy"), epochs=chosen_by.get("epochs"))
    if selection is not None:
        row.update(selection_value_accuracy=(selection.get("test") or {}).get("value_accuracy"),
                   refit_epochs=summary.get("epochs"))
    return row


def check_cv_report(path: Path, report: dict, units: dict[str, dict], selections: dict[str, dict]) -> list[str]:
    """``report.json`` of a cross-validation: one row per fold, each equal to its fold's summary, and every mean and
    standard deviation over the rows as ``cv`` computes it."""
    rows = report.get("folds")
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        return [f"{path}: no list of fold rows ('folds')"]
    problems: list[str] = []
    names = [row.get("fold") for row in rows]
    if sorted(names, key=str) != sorted(units):
        problems.append(f"{path}: rows for folds {names}, the evidence holds folds {sorted(units)}")
    for row in rows:
        name = row.get("fold")
        if name not in units:
            continue
        expected = expected_row(units[name], selections.get(name))
        for key, value in expected.items():
            if key in row or key in ("value_accuracy", "equation_accuracy", "test_examples"):
                compare(problems, path, f"{name}.{key}", row.get(key), value, f"{name}'s summary.json")
    compare(problems, path, "k", report.get("k"), len(rows), "its fold rows")
    compare(problems, path, "test_examples", report.get("test_examples"),
            sum(row.get("test_examples") for row in rows if is_number(row.get("test_examples"))), "its fold rows")
    for measure in REPORT_MEANS:
        if measure not in report and measure not in ("value_accuracy", "equation_accuracy"):
            continue
        values = [row.get(measure) for row in rows]
        if not all(value is None or is_number(value) for value in values):
            problems.append(f"{path}: a fold row's {measure} is not a number")
            continue
        expected = None if not values or None in values else mean_std(values)
        if measure == "bleu" and common_definition(rows) is None:  # BLEUs of several definitions: no mean
            expected = None
        compare_spread(problems, path, measure, report.get(measure), expected, f"its {len(rows)} fold rows")
    return problems


def check_protocol(label: str, stated: dict, protocol: str) -> list[str]:
    """A summary's or a report's ``protocol`` (absent: ``clean``, the only one before it was recorded) is the
    recipe run's ``protocol``: a number chosen on its test split is never shown as a clean one, nor the reverse."""
    made = stated.get("protocol", "clean")
    if made == protocol:
        return []
    fix = ("add --protocol literature to its command, so that every page labels its numbers"
           if made == "literature" else "its command says --protocol literature")
    return [f"{label}: chosen under the {made} protocol, but the recipe's run is {protocol}: {fix}"]


def check_seeds(path: Path, stated: dict, units: dict[str, dict]) -> list[str]:
    """``seeds.json`` of ``train --seeds``: the mean and standard deviation of each test score over the seeds'
    summaries, as the training procedure combined them (a sequence task: value accuracy; an equation classifier:
    accuracy, precision and recall, overall and at every depth)."""
    tested = [summary.get("test") for summary in units.values()]
    if not tested or not all(isinstance(test, dict) for test in tested):
        return [f"{path}: a seed of {sorted(units)} has no test scores to combine"]
    problems: list[str] = []
    source = f"the {len(tested)} seeds' summary.json"
    if "runs" in stated and stated["runs"] != list(units):
        problems.append(f"{path}: runs is {stated['runs']!r}, the evidence holds {list(units)}")
    try:
        if all("value_accuracy" in test for test in tested):
            compare_spread(problems, path, "value_accuracy", stated.get("value_accuracy"),
                           mean_std([test["value_accuracy"] for test in tested]), source)
            return problems
        expected = mean_and_std(tested)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        return problems + [f"{path}: the seeds' test scores cannot be combined ({type(error).__name__}: {error})"]
    for key in ("n", "seeds"):
        compare(problems, path, key, stated.get(key), expected[key], source)
    for key in ("accuracy", "precision", "recall"):
        compare_spread(problems, path, key, stated.get(key), expected[key], source)
    depths = stated.get("by_depth") if isinstance(stated.get("by_depth"), dict) else {}
    if set(depths) != {str(depth) for depth in expected["by_depth"]}:
        problems.append(f"{path}: by_depth holds depths {sorted(depths)}, {source} hold depths "
                        f"{sorted(expected['by_depth'])}")
        return problems
    for depth, values in expected["by_depth"].items():
        entry = depths[str(depth)] if isinstance(depths[str(depth)], dict) else {}
        for key, spread in values.items():
            compare_spread(problems, path, f"by_depth.{depth}.{key}", entry.get(key), spread, source)
    return problems


def module_of(record: dict) -> tuple[str, str] | None:
    """(split, module) of a Mathematics Dataset prediction record, from its id ``<split>/<module>:<line>``."""
    place = str(record.get("id", "")).rsplit(":", 1)[0]
    split, _, module = place.partition("/")
    return (split, module) if split and module else None


def check_modules_report(path: Path, report: dict, records: list[dict]) -> list[str]:
    """A per-module report (``evaluate`` of a Mathematics Dataset run: ``build_report``'s dict) against the run's
    predictions: every module's questions, right answers and accuracy, and each split's summary."""
    runs = report.get("runs")
    if not isinstance(runs, list) or len(runs) != 1:
        return [f"{path}: names the runs {runs!r}; the evidence holds the predictions of one run"]
    name = runs[0]
    tagged = []
    for index, record in enumerate(records):
        place = module_of(record)
        if place is None:
            return [f"{path}: prediction {index + 1} ({record.get('id')!r}) names no split/module"]
        tagged.append({"split": place[0], "module": place[1], "correct": bool(record.get("correct"))})
    expected = build_report({name: tagged})
    problems: list[str] = []
    source = f"the {len(records)} predictions"
    stated_rows = {(row.get("split"), row.get("module")): row for row in report.get("modules") or []
                   if isinstance(row, dict)}
    expected_rows = {(row["split"], row["module"]): row for row in expected["modules"]}
    if set(stated_rows) != set(expected_rows):
        problems.append(f"{path}: modules {sorted(stated_rows)}, {source} hold {sorted(expected_rows)}")
    for place, row in expected_rows.items():
        stated = stated_rows.get(place)
        if stated is None:
            continue
        for key in ("n", "correct", "accuracy"):
            compare(problems, path, f"{place[0]}/{place[1]} {key}", (stated.get(key) or {}).get(name),
                    row[key][name], f"{source} of that module")
    stated_summary = (report.get("summary") or {}).get(name) or {}
    for split, facts in expected["summary"][name].items():
        if split == "meta":
            continue
        for key, value in facts.items():
            compare(problems, path, f"summary {split} {key}", (stated_summary.get(split) or {}).get(key), value,
                    source)
    return problems


def check_beam_groups(path: Path, report: dict) -> list[str]:
    """The by-generator and by-size rows of an ``evaluate --beams`` report: each row's accuracies from its counts,
    and the rows of each grouping adding up to the overall counts (which ``verify_beams`` recounts from the
    records)."""
    problems: list[str] = []
    widths = [str(width) for width in report.get("beams") or []]
    for subset, reported in (report.get("subsets") or {}).items():
        overall = reported.get("overall") or {}
        for grouping in ("by_method", "by_size"):
            groups = reported.get(grouping)
            if not isinstance(groups, dict) or not groups:
                continue
            total = sum(group.get("n") or 0 for group in groups.values())
            compare(problems, path, f"{subset} {grouping}: the sum of n", total, overall.get("n"),
                    "the overall n")
            for width in widths:
                for measure in ("verified", "exact"):
                    counts = []
                    for label, group in groups.items():
                        entry, n = group.get(width) or {}, group.get("n") or 0
                        counts.append(entry.get(f"{measure}_count") or 0)
                        compare(problems, path, f"{subset} {grouping} {label} beam {width} {measure}",
                                entry.get(measure), counts[-1] / n if n else 0.0, "its count")
                    compare(problems, path, f"{subset} {grouping}: the sum of beam {width} {measure}_count",
                            sum(counts), (overall.get(width) or {}).get(f"{measure}_count"), "the overall count")
    return problems


__all__ = ["TOLERANCE", "check_beam_groups", "check_classifier_scores", "check_cv_report", "check_modules_report",
           "check_seeds", "check_sequence_scores", "check_training_log", "compare", "same"]
