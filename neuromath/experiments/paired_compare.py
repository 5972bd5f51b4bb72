"""``neuromath compare``: is run B better than run A on the same examples? Both runs score every example right or
wrong, paired by position; ``neuromath.evaluation.significance`` gives both accuracies, the paired difference
(B - A) with a paired bootstrap confidence interval, McNemar's exact test and the 2×2 table.

Two things can be compared:

- two **runs** of one task on a data file (``--data``): each run reads the file as its task and data settings say
  (the two must read the same examples) and scores each example the way its task is evaluated, through the
  per-example scorer registered in ``neuromath.registry.PAIRED_SCORING`` under the name of the task's evaluation
  procedure (``task.evaluation``): sequence tasks by their ``is_correct`` on the decoded answer (``evaluate``'s
  records: word problems' value accuracy, the Mathematics Dataset's exact match), symbolic runs by whether any
  hypothesis of beam ``--beam`` (default 1) verifies, equation classifiers by their verdict against the label;
- two **cross-validations** (``neuromath cv`` output folders): paired over every test problem of every fold, in fold
  order. Both must have the same folds with the same test files (the same path or the same bytes). A fold's
  correctness comes from its ``predictions.jsonl`` (what ``cv`` writes when it scores the test fold, checked to
  hold the fold's test problems in order), and where a fold has none (one run before ``cv`` wrote them) from
  decoding the fold's run on its test file with the run's own decoding settings, as ``cv`` scored it. The run of a
  fold is its refit (``OUT/fold<k>/refit``) when the report says the cross-validation was run with ``--refit``.
"""

from __future__ import annotations

import filecmp
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from neuromath.api import decode_options, load, load_classifier, run_task
from neuromath.config import load_config
from neuromath.dataroot import data_root, find_data
from neuromath.errors import DataFormatError, NeuromathError
from neuromath.evaluation.scoring import PREDICTIONS_FILE, evaluate_examples, percent, read_predictions, scored_fold
from neuromath.evaluation.significance import compare_paired
from neuromath.experiments.evaluate_runs import evaluate_symbolic
from neuromath.registry import PAIRED_SCORING
from neuromath.safe_read import SUMMARY_LIMIT, load_json, read_data_text, read_json_file
from neuromath.tasks import get_task

CV_REPORT = "report.json"  # what tells a cross-validation folder from a run folder (which has config.yaml)


@dataclass(frozen=True)
class CompareRequest:
    """What ``neuromath compare`` was asked: the data file of two runs (None for two cross-validations), how to
    read it, the beam width (None: each run's own decoding; symbolic: 1), and the bootstrap's settings."""

    data: str | None = None
    format: str | None = None
    lenient: bool = False
    beam: int | None = None
    samples: int = 10_000
    seed: int = 0
    confidence: float = 0.95
    json: bool = False


@dataclass(frozen=True)
class Scored:
    """One run's per-example correctness on a data file: ``ids[i]`` names example i (to check that two runs read
    the same examples), ``correct[i]`` says whether the run got it right, ``measure`` what "right" means."""

    measure: str
    ids: list[str]
    correct: list[bool]
    skipped: int = 0  # malformed rows skipped (--lenient)


# ---------------------------------------------------------------------------------------------- per-example scorers
# scorer(run_dir, data, format=None, lenient=False, beam=None) -> Scored, registered under the evaluation procedure's
# name (``task.evaluation``)


def read_for_run(task, data: str, format: str | None, lenient: bool, options: dict) -> tuple[list, int]:
    skipped: list = []
    examples = task.read(str(data), format, lenient=lenient, skipped=skipped, **options)
    if not examples:
        raise NeuromathError(f"{data}: no examples to compare on")
    return examples, len(skipped)


def score_sequence_examples(run_dir, data: str, format: str | None = None, lenient: bool = False,
                            beam: int | None = None) -> Scored:
    """Decode with the run's decoding settings (``beam``: that width instead, one hypothesis) and score each example
    with the task's ``is_correct`` (the ``correct`` of ``evaluate``'s records)."""
    solver = load(run_dir, **decode_options({"beam": beam}))
    task = solver.task
    examples, skipped = read_for_run(task, data, format, lenient, task.read_options(solver.config.data, "test"))
    _, records = evaluate_examples(solver, examples)
    return Scored(task.accuracy_label, [str(example.id) for example in examples],
                  [bool(record["correct"]) for record in records], skipped)


def score_symbolic_examples(run_dir, data: str, format: str | None = None, lenient: bool = False,
                            beam: int | None = None) -> Scored:
    """Right when any hypothesis of a beam of width ``beam`` (default 1) verifies (``evaluate_symbolic``)."""
    width = 1 if beam is None else beam
    examples, skipped = read_for_run(run_task(run_dir), data, format, lenient, {})
    _, records = evaluate_symbolic(run_dir, examples, beams=[width])
    return Scored(f"verified accuracy at beam {width}", [str(example.id) for example in examples],
                  [bool(record["beams"][str(width)]["verified"]) for record in records], skipped)


def score_verification_examples(run_dir, data: str, format: str | None = None, lenient: bool = False,
                                beam: int | None = None) -> Scored:
    """The classifier's verdict (logit > 0: an identity) against each equation's label (the task's ``is_correct``)."""
    for option, value in (("beam", beam), ("format", format)):
        if value is not None:
            raise NeuromathError(f"--{option} does not apply to equation classifiers")
    task = run_task(run_dir)
    skipped: list = []
    examples = task.read(str(data), lenient=lenient, skipped=skipped)
    if not examples or any(example.label is None for example in examples):
        raise NeuromathError(f"{data}: comparing classifiers needs equations labelled 1 or 0")
    predictions = (load_classifier(run_dir).logits(examples) > 0).tolist()
    return Scored(task.accuracy_label, [example.source for example in examples],
                  [bool(task.is_correct(prediction, example)) for prediction, example in zip(predictions, examples)],
                  len(skipped))


PAIRED_SCORING.add("sequence", score_sequence_examples)
PAIRED_SCORING.add("modules", score_sequence_examples)
PAIRED_SCORING.add("symbolic", score_symbolic_examples)
PAIRED_SCORING.add("verification", score_verification_examples)


# ---------------------------------------------------------------------------------------------- two runs


def is_cross_validation(path: str | Path) -> bool:
    """A ``neuromath cv`` output folder: a report.json and no config.yaml of its own."""
    path = Path(path)
    return (path / CV_REPORT).is_file() and not (path / "config.yaml").exists()


def check_same_examples(ids_a: list[str], ids_b: list[str], what_a: str, what_b: str, data: str) -> None:
    if len(ids_a) != len(ids_b):
        raise NeuromathError(f"{what_a} read {len(ids_a)} examples from {data} and {what_b} {len(ids_b)}: a paired "
                             "comparison needs the same examples (are the runs' data settings different?)")
    for position, (id_a, id_b) in enumerate(zip(ids_a, ids_b), start=1):
        if id_a != id_b:
            raise NeuromathError(f"{what_a} and {what_b} read {data} differently: example {position} is {id_a!r} "
                                 f"for one and {id_b!r} for the other")


def compare_runs(run_a: str, run_b: str, request: CompareRequest) -> dict:
    task_a, task_b = run_task(run_a), run_task(run_b)
    if task_a.name != task_b.name:
        raise NeuromathError(f"{run_a} is a run of the {task_a.name} task and {run_b} of the {task_b.name} task: "
                             "compare runs of one task")
    scorer = PAIRED_SCORING.get(task_a.evaluation)
    sides = {}
    for side, run_dir in (("a", run_a), ("b", run_b)):
        if not request.json:
            print(f"scoring {run_dir} on {request.data} ...", file=sys.stderr, flush=True)
        sides[side] = scorer(run_dir, request.data, format=request.format, lenient=request.lenient,
                             beam=request.beam)
    if sides["a"].skipped:
        print(f"skipped {sides['a'].skipped} malformed rows of {request.data} (--lenient)", file=sys.stderr)
    check_same_examples(sides["a"].ids, sides["b"].ids, run_a, run_b, request.data)
    result = compare_paired(sides["a"].correct, sides["b"].correct, request.samples, request.seed,
                            request.confidence)
    for side, run_dir in (("a", run_a), ("b", run_b)):
        result[side] = {"path": str(run_dir), "model": load_config(Path(run_dir) / "config.yaml").model.name,
                        "task": task_a.name, **result[side]}
    return {"measure": sides["a"].measure, "data": str(request.data), **result}


# ---------------------------------------------------------------------------------------------- two cross-validations


def read_cv_report(path: str | Path) -> dict:
    report_path = Path(path) / CV_REPORT
    try:
        report = load_json(read_data_text(report_path), report_path)  # a FIFO or too deep: refused
    except ValueError:
        raise DataFormatError(report_path, None, "not valid JSON") from None
    if not isinstance(report, dict) or not isinstance(report.get("folds"), list) or not report["folds"]:
        raise DataFormatError(report_path, None, "not a neuromath cv report (no folds)")
    return report


def same_file(path_a: Path, path_b: Path) -> bool:
    return path_a.resolve() == path_b.resolve() or filecmp.cmp(path_a, path_b, shallow=False)


def predictions_path(fold_dir: Path) -> Path | None:
    """A fold's ``predictions.jsonl``, or the gzip copy of the fold's evidence under ``results/``; None when neither
    is there."""
    for name in (PREDICTIONS_FILE, PREDICTIONS_FILE + ".gz"):
        if (fold_dir / name).exists():
            return fold_dir / name
    return None


def fold_predictions(fold_dir: Path, examples: list) -> list[bool]:
    """The ``correct`` of each record of the fold's predictions (``predictions_path``), checked to be one record per
    test problem in the test file's order (the same count and ids)."""
    path = predictions_path(fold_dir)
    records = read_predictions(path)
    hint = "it does not hold this fold's test predictions (delete it to have compare decode the fold's run instead)"
    if len(records) != len(examples):
        raise DataFormatError(path, None, f"{len(records)} records for the {len(examples)} problems of the fold's "
                                          f"test file: {hint}")
    for number, (record, example) in enumerate(zip(records, examples), start=1):
        if str(record["id"]) != str(example.id):
            raise DataFormatError(path, number, f"id {record['id']!r} where the test file has {example.id!r}: {hint}")
    return [bool(record["correct"]) for record in records]


def fold_test_file(fold_dir: Path) -> Path:
    """The test file a cross-validation fold's run was scored on (its config's ``data.test``), found as a run finds
    its data (``dataroot.find_data``: the evidence under ``results/`` names it relative to the data root)."""
    data = load_config(fold_dir / "config.yaml").data
    if not data.test:
        raise NeuromathError(f"{fold_dir}: the fold's config.yaml names no test file (data.test)")
    return find_data(data.test, data_root(data.root))


def score_fold(fold_dir: Path) -> tuple[Scored, str]:
    """One fold's per-problem correctness on its test file, and where it came from (``predictions.jsonl`` or
    ``decoded``)."""
    config = load_config(fold_dir / "config.yaml")
    test = str(fold_test_file(fold_dir))
    task = get_task(config.data.task).configured(config.data)
    kept = predictions_path(fold_dir)
    if kept is not None:
        examples, _ = read_for_run(task, test, config.data.format, config.data.lenient,
                                   task.read_options(config.data, "test"))
        correct = fold_predictions(fold_dir, examples)
        return Scored(task.accuracy_label, [str(example.id) for example in examples], correct), kept.name
    if not (fold_dir / "model.pt").exists():
        raise NeuromathError(f"{fold_dir}: no {PREDICTIONS_FILE} to read and no trained model (model.pt) to decode")
    print(f"{fold_dir}: no {PREDICTIONS_FILE}; decoding the fold's run on {test} ...", file=sys.stderr, flush=True)
    scored = PAIRED_SCORING.get(task.evaluation)(fold_dir, test, format=config.data.format,
                                                 lenient=config.data.lenient)
    try:  # the cross-validation's own count of right answers, when it kept one
        summary = read_json_file(fold_dir / "summary.json", SUMMARY_LIMIT, "summary")
        expected = summary["test"]["value_correct"]
    except (OSError, ValueError, KeyError, TypeError, NeuromathError):
        expected = None
    if expected is not None and expected != sum(scored.correct):
        print(f"note: {fold_dir}: decoding got {sum(scored.correct)} of {len(scored.correct)} right where the fold's "
              f"summary.json says {expected}", file=sys.stderr, flush=True)
    return scored, "decoded"


def compare_cross_validations(cv_a: str, cv_b: str, request: CompareRequest) -> dict:
    given = (("data", request.data), ("format", request.format), ("beam", request.beam),
             ("lenient", request.lenient or None))
    for option, value in given:
        if value is not None:
            raise NeuromathError(f"--{option} does not apply to cross-validation folders: they are compared on "
                                 "their folds' test files, scored as the cross-validation scored them")
    reports = {"a": read_cv_report(cv_a), "b": read_cv_report(cv_b)}
    if reports["a"].get("task") != reports["b"].get("task"):
        raise NeuromathError(f"{cv_a} cross-validates the {reports['a'].get('task')} task and {cv_b} the "
                             f"{reports['b'].get('task')} task: compare cross-validations of one task")
    names = {side: [row.get("fold") for row in report["folds"]] for side, report in reports.items()}
    if names["a"] != names["b"]:
        raise NeuromathError(f"{cv_a} has folds {', '.join(map(str, names['a']))} and {cv_b} has "
                             f"{', '.join(map(str, names['b']))}: compare cross-validations over the same folds")
    folders = {"a": Path(cv_a), "b": Path(cv_b)}

    def run_of(side: str, name: str) -> Path:
        return scored_fold(folders[side], name, reports[side])

    for name in names["a"]:  # every fold checked before any is decoded
        tests = {side: fold_test_file(run_of(side, name)) for side in folders}
        if not same_file(tests["a"], tests["b"]):
            raise NeuromathError(f"{name}: the test files differ ({tests['a']} and {tests['b']}): compare "
                                 "cross-validations over the same folds")
    correct: dict[str, list[bool]] = {"a": [], "b": []}
    folds, measure = [], None
    for name in names["a"]:
        scored, sources = {}, {}
        for side in folders:
            scored[side], sources[side] = score_fold(run_of(side, name))
            correct[side] += scored[side].correct
        check_same_examples(scored["a"].ids, scored["b"].ids, str(run_of("a", name)), str(run_of("b", name)),
                            f"the {name} test file")
        measure = scored["a"].measure
        folds.append({"fold": name, "n": len(scored["a"].ids), "a_correct": sum(scored["a"].correct),
                      "b_correct": sum(scored["b"].correct), "a_from": sources["a"], "b_from": sources["b"]})
    result = compare_paired(correct["a"], correct["b"], request.samples, request.seed, request.confidence)
    for side, folder in folders.items():
        result[side] = {"path": str(folder), "model": reports[side].get("model"), "task": reports[side].get("task"),
                        **result[side]}
    return {"measure": measure, "data": None, "folds": folds, **result}


# ---------------------------------------------------------------------------------------------- the command


def compare(path_a: str, path_b: str, request: CompareRequest) -> dict:
    """Compare two runs on ``request.data`` or two cross-validation folders; returns what ``compare_paired``
    returns with ``measure``, ``data``, each side's ``path``, ``model`` and ``task``, and for cross-validations
    ``folds`` (per fold: ``n``, ``a_correct``, ``b_correct`` and where each side's scores came from)."""
    kinds = {path: is_cross_validation(path) for path in (path_a, path_b)}
    if kinds[path_a] != kinds[path_b]:
        cv, run = (path_a, path_b) if kinds[path_a] else (path_b, path_a)
        raise NeuromathError(f"{cv} is a cross-validation folder and {run} is not: compare two runs (with --data) "
                             "or two cross-validation folders")
    if kinds[path_a]:
        return compare_cross_validations(path_a, path_b, request)
    if request.data is None:
        raise NeuromathError("comparing two runs needs --data FILE (the examples both are scored on); without it "
                             "compare takes two cross-validation folders (neuromath cv --out)")
    return compare_runs(path_a, path_b, request)


def points(fraction: float) -> str:
    """A difference of two accuracies in percentage points, signed: ``0.023`` -> ``"+2.3"``."""
    return f"{100 * fraction:+.1f}"


def format_comparison(result: dict) -> str:
    """The comparison as text: the two sides, per fold (cross-validations), both accuracies, the difference with
    its interval, McNemar's test and the 2×2 table."""
    measure, n, a, b = result["measure"], result["n"], result["a"], result["b"]
    interval, mcnemar, table = result["interval"], result["mcnemar"], result["table"]
    lines = [f"A: {a['path']} ({a['model']}, {a['task']})", f"B: {b['path']} ({b['model']}, {b['task']})"]
    if result.get("folds") is not None:
        folds = result["folds"]
        lines += [f"paired over the {n} test problems of {len(folds)} folds", "",
                  f"| fold | problems | A {measure} % | B {measure} % | B − A | A from | B from |",
                  "| --- | ---: | ---: | ---: | ---: | --- | --- |"]
        for fold in folds:
            a_share, b_share = fold["a_correct"] / fold["n"], fold["b_correct"] / fold["n"]
            lines.append(f"| {fold['fold']} | {fold['n']} | {100 * a_share:.1f} | {100 * b_share:.1f} | "
                         f"{points(b_share - a_share)} | {fold['a_from']} | {fold['b_from']} |")
    else:
        lines.append(f"paired over the {n} examples of {result['data']}")
    width = max(9, max(len(str(count)) for count in table.values()) + 2)  # of the table's count columns
    lines += [
        "",
        f"{measure}: A {percent(a['accuracy'])} ({a['correct']}/{n}), B {percent(b['accuracy'])} ({b['correct']}/{n})",
        f"difference B − A: {points(result['difference'])} points, {100 * interval['confidence']:g}% confidence "
        f"interval [{points(interval['low'])}, {points(interval['high'])}] (paired bootstrap: {interval['samples']} "
        f"resamples of the {n} examples, seed {interval['seed']}, percentile interval)",
        f"McNemar's exact test on the {mcnemar['only_a'] + mcnemar['only_b']} examples only one run gets right "
        f"(only A {mcnemar['only_a']}, only B {mcnemar['only_b']}): two-sided p = {mcnemar['p_value']:.3g}",
        "",
        f"{'':<9}{'B right':>{width}}{'B wrong':>{width}}",
        f"{'A right':<9}{table['both_right']:>{width}}{table['only_a']:>{width}}   (both right, only A)",
        f"{'A wrong':<9}{table['only_b']:>{width}}{table['both_wrong']:>{width}}   (only B, both wrong)",
    ]
    return "\n".join(lines) + "\n"


def compare_command(path_a: str, path_b: str, request: CompareRequest) -> int:
    result = compare(path_a, path_b, request)
    if request.json:
        print(json.dumps(result))
    else:
        print(format_comparison(result), end="")
    return 0
