"""Evaluate trained runs on a data file or folder, side by side: each run's task names how (``task.evaluation``, a
procedure registered in ``neuromath.registry.EVALUATION``):

- ``sequence``: value (or the task's) accuracy and equation accuracy, corpus BLEU of the predicted equations (word
  problems), predictions per run;
- ``modules``: the same, plus the per-module report of the Mathematics Dataset (Table 1 summary, CSV, PNG);
- ``symbolic``: exact match and verified accuracy at several beam widths, full and deduplicated test sets;
- ``verification``: accuracy, precision and recall by depth of equation classifiers beside the numeric checker.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from neuromath.api import decode_options, load, load_classifier, run_task
from neuromath.config import load_config
from neuromath.errors import NeuromathError
from neuromath.evaluation.bleu import bleu_definition_of, bleu_label
from neuromath.evaluation.modules_report import build_report, to_markdown, write_report
from neuromath.evaluation.robustness import robustness_report, write_robustness
from neuromath.evaluation.robustness import to_markdown as robustness_markdown
from neuromath.evaluation.scoring import (
    PREDICTIONS_FILE,
    evaluate_examples,
    percent,
    run_names,
    unknown_split_summary,
    unknown_summary,
    write_predictions,
)
from neuromath.evaluation.symbolic import format_report, score_beams, write_symbolic_report
from neuromath.evaluation.verification import (
    depth_table,
    numeric_checker,
    verification_metrics,
    write_verification_report,
)
from neuromath.registry import EVALUATION
from neuromath.safe_read import SUMMARY_LIMIT, read_json_file
from neuromath.tasks.identities import read_equations
from neuromath.tasks.symbolic import read_pairs

EVALUATIONS_DIR = "evaluations"  # evaluate's prediction files inside a run folder (evaluation_file)


@dataclass(frozen=True)
class EvaluateRequest:
    """What ``neuromath evaluate`` was asked: the data, how to read it, where to write, and the decoding settings
    given on the command line (``decode``: some of ``neuromath.api.DECODE_OPTIONS``; the run's config has the rest)."""

    data: str
    format: str | None = None
    lenient: bool = False
    json: bool = False
    predictions: str | None = None
    report: str | None = None
    modules: str | None = None  # Mathematics Dataset: module globs, splits and questions per module to read
    splits: str | None = None
    per_module: int | None = None
    beams: str | None = None  # symbolic: beam widths, and the training file of the deduplicated test set
    train: str | None = None
    # run folder -> the folder that takes its evaluations/ instead (a model from the hub lives in a read-only cache)
    output_dirs: dict[str, str] = field(default_factory=dict)
    robustness: bool = False  # word problems: the robustness report (neuromath.evaluation.robustness)
    seed: int = 0  # the seed of its variations
    decode: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.per_module is not None and self.per_module < 0:  # the command line refuses it already
            raise NeuromathError(f"--per-module must be >= 0 (0: every question), got {self.per_module}")


def evaluate_runs(run_dirs: Sequence[str], request: EvaluateRequest) -> int:
    """Evaluate ``run_dirs`` with the procedure their tasks name (all runs must share it); returns the exit code."""
    tasks = {str(run_dir): run_task(run_dir) for run_dir in run_dirs}
    if request.robustness:
        for run_dir, task in tasks.items():
            if not task.name.startswith("word_problems"):
                raise NeuromathError(f"--robustness applies to word-problem runs; {run_dir} is a {task.name} run")
    kinds = {run_dir: task.evaluation for run_dir, task in tasks.items()}
    if len(set(kinds.values())) > 1:
        listed = ", ".join(f"{run_dir} ({kind})" for run_dir, kind in kinds.items())
        raise NeuromathError(f"runs evaluated together must be evaluated the same way: {listed}")
    return EVALUATION.get(next(iter(kinds.values())))(list(run_dirs), request)


# ---------------------------------------------------------------------------------------------- sequence tasks


def evaluate_sequence_runs(run_dirs: list[str], request: EvaluateRequest, modules_report: bool = False) -> int:
    for option in ("beams", "train"):
        if getattr(request, option) is not None:
            raise NeuromathError(f"--{option} applies to symbolic runs only")
    if request.predictions and len(run_dirs) > 1:
        raise NeuromathError(f"--predictions names one file; with several runs each writes "
                             f"RUN_DIR/{EVALUATIONS_DIR}/<data>.jsonl")
    if request.predictions and Path(request.predictions).resolve() == (Path(run_dirs[0]) / PREDICTIONS_FILE).resolve():
        raise NeuromathError(f"--predictions {request.predictions}: that file holds the test predictions train wrote, "
                             "the run's evidence; name another file")
    names = run_names(run_dirs)
    results, records_by_run = {}, {}
    read_cache: dict[str, tuple[list, list]] = {}  # runs with the same task and data settings read the data once
    for run_dir, name in zip(run_dirs, names):
        solver = load(run_dir, **decode_options(request.decode))
        task = solver.task
        skipped: list = []  # malformed rows (with --lenient)
        options = task.read_options(solver.config.data, "test")
        for key in ("modules", "splits", "per_module"):
            value = getattr(request, key)
            if value is not None:
                if key not in options:
                    raise NeuromathError(f"--{key.replace('_', '-')} does not apply to the {task.name} task")
                options[key] = value
        cache_key = json.dumps([task.name, options], sort_keys=True)
        if cache_key not in read_cache:
            examples = task.read(request.data, request.format, lenient=request.lenient, skipped=skipped, **options)
            read_cache[cache_key] = examples, skipped
        examples, skipped = read_cache[cache_key]
        if not examples:
            raise NeuromathError(f"{request.data}: no examples to evaluate")
        metrics, records = evaluate_examples(solver, examples)
        home = request.output_dirs.get(str(run_dir), run_dir)  # a hub model's evaluations: not in the cache
        predictions = Path(request.predictions) if request.predictions else evaluation_file(home, request.data)
        write_predictions(records, predictions)
        metrics.update({"run": str(run_dir), "data": str(request.data), "skipped": len(skipped),
                        "predictions": str(predictions)})
        results[name], records_by_run[name] = metrics, records
        if not request.json:
            print_metrics(name if len(names) > 1 else None, metrics, task, solver, skipped)
        if request.robustness:
            metrics["robustness"] = robustness_of(run_dir, solver, examples, request, len(run_dirs))

    report = None
    if modules_report:
        meta = {name: run_meta(run_dir) for run_dir, name in zip(run_dirs, names)}
        report = build_report(records_by_run, meta)
        out = Path(request.report) if request.report else Path(run_dirs[0]) / "report"
        paths = write_report(report, out)
        if not request.json:
            print()
            print(to_markdown(report))
            print(f"report written to {', '.join(str(p) for p in paths.values())}")
    if request.json:
        if len(names) == 1:
            output = dict(results[names[0]])
            if report is not None:
                output["report"] = report
        else:
            output = {"runs": results, "report": report}
        print(json.dumps(output))
    return 0


def evaluation_file(run_dir: str | Path, data: str | Path) -> Path:
    """Where ``evaluate`` writes a run's predictions on ``data`` unless told: ``RUN_DIR/evaluations/`` under a name
    made of the data path's last parts (``mawps-cv/fold0/dev.csv`` -> ``mawps-cv.fold0.dev.jsonl``). Never the
    run's own ``predictions.jsonl``: that holds the test predictions train wrote, which ``compare``, seed votes and
    ``results`` read as the run's evidence; evaluations of different files sit side by side."""
    parts = [part for part in Path(data).parts if part not in ("/", ".", "..")][-3:] or ["data"]
    name = ".".join([*parts[:-1], Path(parts[-1]).stem or parts[-1]])
    return Path(run_dir) / EVALUATIONS_DIR / f"{name}.jsonl"


def robustness_of(run_dir: str, solver, examples: list, request: EvaluateRequest, runs: int) -> dict:
    """The robustness report of one run (``neuromath.evaluation.robustness``), printed and written to --report (or,
    with several runs, RUN_DIR/robustness of each); returns it without its records."""
    report = robustness_report(solver, examples, seed=request.seed)
    out = Path(request.report) if request.report and runs == 1 else Path(run_dir) / "robustness"
    path = write_robustness(report, out)
    if not request.json:
        print()
        print(robustness_markdown(report))
        print(f"robustness report written to {path}")
    return {key: value for key, value in report.items() if key != "records"}


def evaluate_module_runs(run_dirs: list[str], request: EvaluateRequest) -> int:
    return evaluate_sequence_runs(run_dirs, request, modules_report=True)


def run_meta(run_dir: str) -> dict:
    """Parameters and steps of a run (from summary.json), shown beside its accuracies."""
    try:
        summary = read_json_file(Path(run_dir) / "summary.json", SUMMARY_LIMIT, "summary")
    except (OSError, ValueError, NeuromathError):
        return {}
    return {key: summary[key] for key in ("parameters", "steps") if key in summary}


def print_metrics(name, metrics: dict, task, solver, skipped: list) -> None:
    if name:
        print(f"== {name}")
    for error in skipped:
        print(f"skipped: {error}", file=sys.stderr)
    label_width = 18
    print(f"{task.accuracy_label:<{label_width}}{percent(metrics['value_accuracy'])} "
          f"({metrics['value_correct']}/{metrics['n']})")
    if task.equation_label:
        print(f"{task.equation_label:<{label_width}}{percent(metrics['equation_accuracy'])} "
              f"({metrics['equation_correct']}/{metrics['n']})")
    if "bleu" in metrics:
        print(f"{'BLEU':<{label_width}}{metrics['bleu']:.1f} ({bleu_label(bleu_definition_of(metrics))}, of the "
              "predicted against the gold equations)")
    if "nbest_value_accuracy" in metrics:
        print(f"{task.accuracy_label} of the {solver.decode.nbest}-best lists (any right) "
              f"{percent(metrics['nbest_value_accuracy'])}")
    if metrics.get("unknown_tokens"):
        print(f"unknown input tokens: {unknown_summary(metrics)} (not in the run's vocabulary)")
        print(f"{task.accuracy_label}: {unknown_split_summary(metrics)}")
    if skipped:
        print(f"skipped {len(skipped)} malformed rows (listed above)")
    print(f"predictions written to {metrics['predictions']}")


# ---------------------------------------------------------------------------------------------- symbolic


def parse_beams(text: str) -> list[int]:
    try:
        beams = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise NeuromathError(f"--beams takes a comma list of widths such as 1,10,50, not {text!r}") from None
    if not beams or min(beams) < 1:
        raise NeuromathError(f"--beams: widths must be at least 1, not {text!r}")
    return beams


def evaluate_symbolic(
    run_dir: str | Path,
    examples: Sequence,
    beams: Sequence[int] = (1, 10, 50),
    train: Sequence | None = None,
    length_penalty: float | None = None,
    constrained: bool | None = None,
    progress: bool = False,
) -> tuple[dict, list[dict]]:
    """Decode ``examples`` at every beam width in ``beams`` (keeping all k hypotheses, each verified) and score them
    (``neuromath.evaluation.symbolic.score_beams``); returns (report, one record per example)."""
    beams = sorted(set(int(k) for k in beams))
    if not beams or beams[0] < 1:
        raise ValueError(f"beam widths must be at least 1: {beams}")
    options = {}
    if length_penalty is not None:
        options["length_penalty"] = length_penalty
    if constrained is not None:
        options["constrained"] = constrained
    nbest_by_beam = {}
    for k in beams:
        if progress:
            print(f"decoding {len(examples)} examples with beam {k} and verifying the hypotheses ...", file=sys.stderr,
                  flush=True)
        nbest_by_beam[k] = load(run_dir, beam=k, nbest=k, **options).predict_nbest(examples)
    return score_beams(run_dir, examples, nbest_by_beam, train)


def evaluate_symbolic_runs(run_dirs: list[str], request: EvaluateRequest) -> int:
    """Exact match and verified accuracy at each beam width, on the full and the deduplicated test set."""
    given = {**{key: getattr(request, key) for key in ("modules", "splits", "per_module")}, **request.decode}
    for option in ("modules", "splits", "per_module", "beam", "nbest", "verify"):
        if given.get(option) is not None:
            raise NeuromathError(f"--{option.replace('_', '-')} does not apply to the symbolic task "
                                 "(it decodes with every width of --beams and verifies every hypothesis)")
    beams = parse_beams(request.beams or "1,10,50")
    skipped: list = []
    examples = read_pairs(request.data, request.format, lenient=request.lenient, skipped=skipped)
    for error in skipped:
        print(f"skipped: {error}", file=sys.stderr)
    if not examples:
        raise NeuromathError(f"{request.data}: no examples to evaluate")
    outputs = {}
    for run_dir, name in zip(run_dirs, run_names(run_dirs)):
        train_path = request.train or load_config(Path(run_dir) / "config.yaml").data.train
        train = read_pairs(train_path, lenient=request.lenient) if train_path else None
        report, records = evaluate_symbolic(
            run_dir, examples, beams, train=train, length_penalty=request.decode.get("length_penalty"),
            constrained=request.decode.get("constrained"), progress=not request.json,
        )
        report.update({"data": str(request.data), "train": train_path, "skipped": len(skipped)})
        if request.report and len(run_dirs) > 1:
            out = Path(request.report) / name
        else:
            out = Path(request.report or Path(run_dir) / "report")
        paths = write_symbolic_report(report, records, out)
        outputs[name] = report
        if not request.json:
            if len(run_dirs) > 1:
                print(f"== {name}")
            if train is None:
                print("no training file known (the run generated its data; give --train FILE): full test set only")
            print(format_report(report), end="")
            print(f"report written to {paths['markdown']}, {paths['json']}, {paths['predictions']}")
    if request.json:
        print(json.dumps(outputs[run_names(run_dirs)[0]] if len(outputs) == 1 else {"runs": outputs}))
    return 0


# ---------------------------------------------------------------------------------------------- verification


def evaluate_verification_runs(run_dirs: list[str], request: EvaluateRequest) -> int:
    """Verification accuracy, precision and recall by depth of each run and of the numeric checker."""
    skipped: list = []
    examples = read_equations(request.data, lenient=request.lenient, skipped=skipped)
    for error in skipped:
        print(f"skipped: {error}", file=sys.stderr)
    if not examples or any(e.label is None for e in examples):
        raise NeuromathError(f"{request.data}: evaluation needs equations labelled 1 or 0")
    rows = {}
    for run_dir, name in zip(run_dirs, run_names(run_dirs)):
        classifier = load_classifier(run_dir)
        rows[name] = verification_metrics(examples, (classifier.logits(examples) > 0).tolist())
    predictions, undecided = numeric_checker(examples)
    rows["numeric checker"] = verification_metrics(examples, predictions)
    rows["numeric checker"]["undecided"] = undecided
    out = Path(request.report) if request.report else Path(run_dirs[0]) / "report"
    write_verification_report(rows, out)
    if request.json:
        print(json.dumps({"data": str(request.data), "skipped": len(skipped), "runs": rows}))
        return 0
    for measure in ("accuracy", "precision", "recall"):
        print(f"{measure} (%) by depth on {request.data}\n{depth_table(rows, measure)}")
    print(f"the numeric checker left {undecided} equations undecided (counted as not identities)")
    print(f"report written to {out}/report.md, report.json, accuracy_by_depth.png")
    return 0


EVALUATION.add("sequence", evaluate_sequence_runs)
EVALUATION.add("modules", evaluate_module_runs)
EVALUATION.add("symbolic", evaluate_symbolic_runs)
EVALUATION.add("verification", evaluate_verification_runs)
