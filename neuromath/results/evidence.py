"""The evidence of a run in ``results/<experiment>/runs/<run>/``, and its verification.

Collected from a finished run folder (``collect_evidence``), the evidence keeps what a number needs and nothing that
could run code or weigh megabytes:

- ``evidence.json``: the command, and the commit, package versions, CPU/GPU, threads and wall time of the runner
  (each run folder's own ``environment.json``, written by ``train``, is kept beside its summary);
- a cross-validation (``cv``): ``report.json`` and per fold ``summary.json``, ``config.yaml``, ``metrics.csv``,
  ``data.json`` and ``predictions.jsonl.gz``; after ``cv --refit`` the fold's scored run is its refit
  (``fold<k>/refit/``, these files), and the fold's selection run keeps all but its predictions (``fold<k>/``);
- a training (``train``): the same files of the run folder (of each ``seed<S>`` folder with ``--seeds``, plus
  ``seeds.json``).

Predictions are slimmed to what scores them (a word problem's predicted tokens and verdicts, a Mathematics Dataset
answer's characters; an equation's depth, label and predicted label): the problems themselves are in the data files,
which the recipe names with their sha256 (a generated folder: every file in it). Paths are written relative to the
data root and the run folder, so evidence reads the same on every machine.

``verify_run`` recomputes every reported score from the predictions (and every mean and spread of ``report.json`` and
``seeds.json`` from the units: ``evidence_checks``) and, where the data root holds the gold files, from the gold data:
a number its records do not give fails, naming the file, the number stated and the number recomputed."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from neuromath.config import config_from_dict
from neuromath.environment import describe
from neuromath.errors import NeuromathError
from neuromath.evaluation.scoring import REFIT_DIR, scored_fold
from neuromath.evaluation.verification import blank_positions, completion_metrics
from neuromath.fileio import write_text_atomic
from neuromath.results.beam_evidence import BEAM_REPORT, beam_metric, keep_beam_evidence, verify_beams
from neuromath.results.evidence_checks import (
    check_beam_groups,
    check_classifier_scores,
    check_cv_report,
    check_modules_report,
    check_protocol,
    check_seeds,
    check_sequence_scores,
    check_training_log,
    same,
)
from neuromath.results.evidence_io import read_gzip_lines, read_json, write_gzip_lines
from neuromath.results.recipe_configs import command_config, config_differences
from neuromath.results.recipes import Recipe, Run, sha256_of
from neuromath.safe_read import SUMMARY_LIMIT, load_json, read_data_text, read_run_file
from neuromath.tasks import get_task
from neuromath.tasks.identities import read_candidates, read_equations

ENVIRONMENT_FILE = "evidence.json"  # the command, wall time and environment of the collecting runner
PREDICTIONS = "predictions.jsonl"
PREDICTIONS_GZ = "predictions.jsonl.gz"
KEPT = ("summary.json", "config.yaml", "metrics.csv", "data.json", "environment.json")
SEQUENCE_FIELDS = ("id", "predicted_tokens", "correct", "equation_correct")
CLASSIFIER_FIELDS = ("depth", "label", "predicted", "correct")
COMPLETION = "completion.json"  # complete --out: top-1, top-5 and MRR of each run
SCORES, SCORES_GZ = "scores.jsonl", "scores.jsonl.gz"  # complete --scores: each blank's candidate scores
COMPLETION_METRICS = ("top1", "top5", "mrr", "seconds")
WORK_PREFIX = "{work}/"  # a file a recipe's setup generated, under the work folder of results run


def relative_text(text: str, out: Path, work: Path, root: Path) -> str:
    """Machine paths out of a text: the run folder becomes ``.``, the work folder ``{work}``, the data root nothing."""
    for prefix, replacement in ((f"{out}/", ""), (str(out), "."), (f"{work}/", "{work}/"), (f"{root}/", "")):
        text = text.replace(prefix, replacement)
    return text


def map_strings(value, change):
    """``value`` (parsed YAML or JSON) with ``change`` applied to every string in it."""
    if isinstance(value, dict):
        return {key: map_strings(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [map_strings(item, change) for item in value]
    return change(value) if isinstance(value, str) else value


def scrub_run_dirs(value, unit: str):
    """``run_dir`` and ``out`` of a summary or report as their place in the evidence (a fold row: its fold)."""
    if isinstance(value, dict):
        fixed = {key: scrub_run_dirs(item, unit) for key, item in value.items()}
        if "run_dir" in fixed:
            fixed["run_dir"] = fixed["fold"] if isinstance(fixed.get("fold"), str) else unit
        if "out" in fixed and isinstance(fixed["out"], str):
            fixed["out"] = unit
        return fixed
    if isinstance(value, list):
        return [scrub_run_dirs(item, unit) for item in value]
    return value


def slim_record(record: dict) -> dict:
    fields = CLASSIFIER_FIELDS if "label" in record and "predicted" in record else SEQUENCE_FIELDS
    if "predicted_tokens" not in record and "prediction" in record:  # a character-level answer (Mathematics Dataset)
        fields = (*fields, "prediction")
    return {key: record[key] for key in fields if key in record}


def predicted_tokens(record: dict) -> list[str] | None:
    """What a sequence model's kept prediction record predicted: its tokens, or the characters of its answer."""
    if "predicted_tokens" in record:
        return record["predicted_tokens"]
    return list(record["prediction"]) if isinstance(record.get("prediction"), str) else None


def scored_units(folder: Path, subcommand: str) -> list[Path]:
    """The folders of a run that each scored a test set: a cv's folds (their refits after ``cv --refit``), a
    training's seeds, or the run itself."""
    if subcommand == "cv":
        report = read_json(folder / "report.json") if (folder / "report.json").is_file() else {}
        folds = sorted(p for p in folder.iterdir() if p.is_dir() and p.name.startswith("fold"))
        return [scored_fold(folder, fold.name, report) for fold in folds]
    seeds = sorted((p for p in folder.iterdir() if p.is_dir() and p.name.startswith("seed") and p.name[4:].isdigit()),
                   key=lambda p: int(p.name[4:]))
    return seeds or [folder]


def unit_name(unit: Path, folder: Path) -> str:
    """A scored unit's name in the evidence: its fold (a refit's too) or seed, or ``.`` for the run itself."""
    if unit == folder:
        return "."
    return unit.parent.name if unit.name == REFIT_DIR else unit.name


def collect_evidence(recipe: Recipe, run: Run, out: Path, work: Path, root: Path, wall_seconds: float) -> Path:
    """Copy the compact evidence of the finished run folder ``out`` into the recipe's ``runs/<run>`` (replacing what
    was there, in one rename)."""
    target = recipe.evidence_dir(run.name)
    staging = target.with_name(f".{run.name}.collecting")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)

    def keep_text(source: Path, destination: Path) -> None:
        if source.is_file():
            destination.parent.mkdir(parents=True, exist_ok=True)
            raw = read_run_file(source, SUMMARY_LIMIT).decode("utf-8")
            if source.suffix == ".yaml":  # "{work}/..." must stay a quoted YAML string: map the values, not the text
                text = yaml.safe_dump(map_strings(yaml.safe_load(raw), lambda v: relative_text(v, out, work, root)),
                                      sort_keys=False, allow_unicode=True)
            else:
                text = relative_text(raw, out, work, root)
            if source.suffix == ".json":  # where the run was when it ran is no evidence: its place in the evidence is
                unit = source.parent.relative_to(out).as_posix()
                text = json.dumps(scrub_run_dirs(load_json(text, source), unit), indent=2, ensure_ascii=False) + "\n"
            destination.write_text(text, encoding="utf-8")

    for name in ("report.json", "seeds.json", BEAM_REPORT, COMPLETION):
        keep_text(out / name, staging / name)
    keep_beam_evidence(out, staging, lambda text: relative_text(text, out, work, root))
    if (out / SCORES).is_file():  # every blank's candidate scores (complete --scores): what completion is scored from
        lines = read_data_text(out / SCORES).splitlines()  # a FIFO: refused; too deep JSON: an error naming it
        write_gzip_lines([load_json(line, out / SCORES, n) for n, line in enumerate(lines, 1)], staging / SCORES_GZ)
    units = scored_units(out, run.subcommand)
    if not units or not any((unit / "summary.json").is_file() for unit in units):
        raise NeuromathError(f"{out}: no finished run (no summary.json) to collect evidence from")
    threads = None
    for unit in units:
        relative = unit.relative_to(out)
        if unit.name == REFIT_DIR:  # the selection run that chose the refit's epochs: its record, no predictions
            for name in KEPT:
                keep_text(unit.parent / name, staging / relative.parent / name)
        for name in KEPT:
            keep_text(unit / name, staging / relative / name)
        if (unit / PREDICTIONS).is_file():
            lines = read_data_text(unit / PREDICTIONS).splitlines()
            write_gzip_lines([slim_record(load_json(line, unit / PREDICTIONS, n)) for n, line in enumerate(lines, 1)],
                             staging / relative / PREDICTIONS_GZ)
        if threads is None and (unit / "config.yaml").is_file():
            threads = (yaml.safe_load((unit / "config.yaml").read_text(encoding="utf-8")).get("train") or {}).get(
                "num_threads") or None
    environment = describe(threads)
    environment.update({"run": run.name, "command": run.command, "wall_seconds": round(wall_seconds, 1)})
    write_text_atomic(staging / ENVIRONMENT_FILE, json.dumps(environment, indent=2) + "\n")
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return target


# -- reading evidence -------------------------------------------------------------------------------------------------


@dataclass
class Evidence:
    """What one run's evidence says: its scored units' test summaries, and the run's mean ± std."""

    folder: Path
    subcommand: str  # the neuromath command that made it: train, cv or import
    environment: dict
    units: dict[str, dict] = field(default_factory=dict)  # unit name -> summary.json
    folders: dict[str, Path] = field(default_factory=dict)  # unit name -> its folder (a fold's refit after --refit)
    selections: dict[str, dict] = field(default_factory=dict)  # cv --refit: fold -> its selection run's summary.json
    report: dict | None = None  # cv: report.json; train with seeds: seeds.json
    completion: dict | None = None  # complete --out: run name -> top1, top5, mrr, seconds, ...
    evaluation: dict | None = None  # evaluate --beams --report {out}/evaluation: its report.json

    @property
    def wall_seconds(self) -> float | None:
        """The compute the run took: the sum of its folds' or seeds' training times where they say it (a reused fold
        keeps its first time; after ``cv --refit`` a fold's selection run and refit), else the runner's wall time."""
        times = [unit.get("wall_seconds") for unit in [*self.units.values(), *self.selections.values()]]
        if times and all(isinstance(t, (int, float)) for t in times):
            return float(sum(times))
        seconds = self.environment.get("wall_seconds")
        return seconds or None  # 0: the runner found the run finished before and trained nothing; not recorded


def read_evidence(recipe: Recipe, run: Run) -> Evidence | None:
    """The evidence of a run, or None when the run has none (a recipe-only run)."""
    folder = recipe.evidence_dir(run.name)
    if not (folder / ENVIRONMENT_FILE).is_file():
        return None
    evidence = Evidence(folder, run.subcommand, read_json(folder / ENVIRONMENT_FILE))
    for unit in scored_units(folder, run.subcommand):
        if (unit / "summary.json").is_file():
            name = unit_name(unit, folder)
            evidence.units[name] = read_json(unit / "summary.json")
            evidence.folders[name] = unit
            if unit.name == REFIT_DIR and (unit.parent / "summary.json").is_file():
                evidence.selections[name] = read_json(unit.parent / "summary.json")
    for name in ("report.json", "seeds.json"):
        if (folder / name).is_file():
            evidence.report = read_json(folder / name)
    if (folder / COMPLETION).is_file():
        evidence.completion = read_json(folder / COMPLETION)
    if (folder / BEAM_REPORT).is_file():
        evidence.evaluation = read_json(folder / BEAM_REPORT)
    return evidence


def test_metric(summary: dict, metric: str) -> float | None:
    """A test score of one summary: ``value_accuracy`` (word problems), ``accuracy`` or ``depth<D>`` (identities);
    or what the summary says of the training: ``epochs``, ``steps``, the best validation score, ``wall_seconds``."""
    test = summary.get("test") or {}
    if metric.startswith("depth") and metric[5:].isdigit():
        entry = (test.get("by_depth") or {}).get(metric[5:])
        return entry.get("accuracy") if isinstance(entry, dict) else entry
    if metric in ("epochs", "steps", "best_val_accuracy", "best_val_value_accuracy", "wall_seconds"):
        return summary.get(metric)
    value = test.get(metric)
    return value if isinstance(value, (int, float)) else None


def metric_values(evidence: Evidence, metric: str) -> list[float]:
    if metric in COMPLETION_METRICS:  # completion: one row per run that complete ranked with
        rows = (evidence.completion or {}).values()
        return [float(row[metric]) for row in rows if isinstance(row.get(metric), (int, float))]
    beam = beam_metric(evidence.evaluation, metric)  # a run scored by evaluate --beams: one value
    if beam is not None:
        return [beam]
    values = [test_metric(summary, metric) for summary in evidence.units.values()]
    return [float(v) for v in values if v is not None]


# -- verification -----------------------------------------------------------------------------------------------------


def pinned(used: str, data: dict) -> bool:
    """Whether a run's data path is one of the recipe's pinned files, or a folder (a generated Mathematics Dataset)
    whose files the recipe pins."""
    folder = used.rstrip("/") + "/"
    return used in data or any(name.startswith(folder) for name in data)


def gold_examples(config: dict, locate):
    """The gold test examples of a unit, read as its config says, or None when the data root lacks the file."""
    path = (config.get("data") or {}).get("test")
    if not path or locate(path) is None or not locate(path).exists():
        return None, None, path
    loaded = config_from_dict(config)
    task = get_task(loaded.data.task)
    if not hasattr(task, "configured"):  # an equation task (identities): the released JSON format only
        return task, task.read(str(locate(path)), lenient=loaded.data.lenient, skipped=[]), path
    task = task.configured(loaded.data)
    examples = task.read(str(locate(path)), loaded.data.format, lenient=loaded.data.lenient, skipped=[],
                         **task.read_options(loaded.data, "test"))
    return task, examples, path


def verify_unit(name: str, unit: Path, summary: dict, locate, with_gold: bool) -> tuple[list[str], bool]:
    """The differences between one unit's reported test scores and its predictions (and gold data); and whether the
    gold data was read."""
    problems = []
    test = summary.get("test")
    if not isinstance(test, dict):
        return [f"{name}: summary.json has no test scores"], False
    path = unit / PREDICTIONS_GZ
    if not path.is_file():
        return [f"{name}: no {PREDICTIONS_GZ}: the reported scores cannot be recomputed"], False
    records = read_gzip_lines(path)
    n = len(records)
    if not all(isinstance(record, dict) for record in records):
        return [f"{path}: a line that is not a JSON object: the scores cannot be recomputed"], False
    classifier = bool(records) and "label" in records[0]
    check = check_classifier_scores if classifier else check_sequence_scores
    problems += check(unit / "summary.json", test, records)
    read_gold = False
    if with_gold and (unit / "config.yaml").is_file():
        config = yaml.safe_load((unit / "config.yaml").read_text(encoding="utf-8"))
        task, examples, gold_path = gold_examples(config, locate)
        if examples is not None:
            read_gold = True
            if len(examples) != n:
                problems.append(f"{name}: the gold file {gold_path} holds {len(examples)} examples, the predictions "
                                f"{n}")
            for index, (record, example) in enumerate(zip(records, examples)):
                if classifier:
                    if record.get("label") != example.label or record.get("depth") != example.depth:
                        problems.append(f"{name}: prediction {index + 1}: label {record.get('label')} at depth "
                                        f"{record.get('depth')}, the gold file says {example.label} at depth "
                                        f"{example.depth}")
                        break
                    continue
                if str(record.get("id")) != str(example.id):
                    problems.append(f"{name}: prediction {index + 1} is for problem {record.get('id')!r}, the gold "
                                    f"file's problem {index + 1} is {example.id!r}")
                    break
                tokens = predicted_tokens(record)
                if tokens is None:
                    problems.append(f"{name}: prediction {index + 1} keeps no prediction to score against the gold "
                                    "answer")
                    break
                if bool(task.is_correct(tokens, example)) != bool(record["correct"]):
                    problems.append(f"{name}: problem {example.id!r}: the recorded verdict {record['correct']} is "
                                    f"not what scoring {tokens} against the gold answer gives")
                    break
    return problems, read_gold


def option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def verify_completion(label: str, evidence: Evidence, run: Run, locate, with_gold: bool) -> tuple[list[str], bool]:
    """The completion scores of a run (top-1, top-5, MRR of completion.json) recomputed from every blank's candidate
    scores and the gold blank and candidate files named by its ``complete`` command."""
    scores_path = evidence.folder / SCORES_GZ
    if not scores_path.is_file():
        return [f"{label}: {COMPLETION} but no {SCORES_GZ}: completion cannot be recomputed"], False
    command = next((argv for argv in run.then if argv[0] == "complete"), None)
    blanks, candidates = (option(command, "--blanks"), option(command, "--candidates")) if command else (None, None)
    if not with_gold or not blanks or not candidates:
        return [], False
    blanks_path, candidates_path = locate(blanks), locate(candidates)
    if blanks_path is None or candidates_path is None or not blanks_path.is_file() or not candidates_path.is_file():
        return [], False
    examples = read_equations(blanks_path)
    positions = {id(e): p for p, e in zip(blank_positions(examples), examples)}
    examples = [e for e in examples if e.blank is not None]
    by_place = {(r["depth"], r["index"]): r["scores"] for r in read_gzip_lines(scores_path)}
    by_tree = {id(e.tree): by_place.get(tuple(positions[id(e)])) for e in examples}
    if any(scores is None for scores in by_tree.values()):
        return [f"{label}: {SCORES_GZ} lacks the scores of some blanks of {blanks}"], True
    recomputed = completion_metrics(examples, read_candidates(candidates_path), lambda tree, path: by_tree[id(tree)])
    problems = []
    for name, row in evidence.completion.items():
        for metric in ("top1", "top5", "mrr"):
            if not same(row.get(metric), recomputed[metric]):
                problems.append(f"{label}: {COMPLETION} says {name} {metric} {row.get(metric)}, its scores and the "
                                f"gold classes give {recomputed[metric]}")
    return problems, True


def beam_files(evidence: Evidence, command: list[str], locate) -> tuple[Path | None, Path | None]:
    """The test file an ``evaluate --beams`` command scored and the training file it deduplicated against (its
    ``--train``, else the run's ``data.train``), where both are at hand."""
    name = option(command, "--data")
    test = locate(name) if name else None
    if test is None or not test.is_file():
        return None, None
    config_path = evidence.folder / "config.yaml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8")) if config_path.is_file() else {}
    name = option(command, "--train") or ((config or {}).get("data") or {}).get("train")
    train = locate(name) if name else None
    return test, train if train is not None and train.is_file() else None


def verify_run(recipe: Recipe, run: Run, locate, with_gold: bool = True) -> tuple[list[str], str]:
    """Every difference between a run's evidence, its recipe and its predictions; and a line on what was checked.
    An empty list: the evidence holds."""
    evidence = read_evidence(recipe, run)
    if evidence is None:
        return [], "recipe only: no evidence"
    label = f"{recipe.name}/{run.name}"
    problems = []
    if evidence.environment.get("command") != run.evidence_command:
        problems.append(f"{label}: the evidence was made by `{evidence.environment.get('command')}`, the recipe "
                        f"says `{run.evidence_command}`")
    today = command_config(run)  # the recipe's command with today's presets, compared with each unit's config
    gold_units = 0
    if evidence.completion is not None:
        completion_problems, read_gold = verify_completion(label, evidence, run, locate, with_gold)
        problems += completion_problems
        gold_units += read_gold
    beams = next((argv for argv in run.then if argv[0] == "evaluate" and "--beams" in argv), None)
    if beams is not None:
        test, train = beam_files(evidence, beams, locate) if with_gold else (None, None)
        beam_problems, read_gold = verify_beams(label, evidence.folder, test, train)
        problems += beam_problems
        if isinstance(evidence.evaluation, dict):
            problems += check_beam_groups(evidence.folder / BEAM_REPORT, evidence.evaluation)
        gold_units += read_gold
    for name, summary in evidence.units.items():
        unit = evidence.folders[name]
        problems += check_training_log(unit, summary)
        problems += check_protocol(f"{label}/{name}", summary, run.protocol)
        if name in evidence.selections:  # cv --refit: the selection run that chose the refit's epochs
            problems += check_training_log(unit.parent, evidence.selections[name])
        config_path = unit / "config.yaml"
        if config_path.is_file():
            config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
            if today is not None:  # a refit trains the epochs its selection run chose: that run had the recipe's
                trained = config if unit.name != REFIT_DIR else yaml.safe_load(  # config
                    (unit.parent / "config.yaml").read_text(encoding="utf-8")) or {}
                problems += config_differences(f"{label}/{name}", today, trained)
            data = config.get("data") or {}
            for key in ("train", "valid", "test"):
                used = data.get(key)
                if used and not pinned(used, recipe.data):
                    problems.append(f"{label}/{name}: data.{key} {used} is not among the recipe's data files")
            if (config.get("model") or {}).get("name") != run.model.split(" ")[0]:
                problems.append(f"{label}/{name}: model {config.get('model', {}).get('name')!r}, the recipe says "
                                f"{run.model!r}")
        if run.subcommand == "import":  # an imported model is scored by complete, not by a test split
            continue
        if beams is not None and "test" not in summary:  # trained without a test split: scored by evaluate --beams
            continue
        unit_problems, read_gold = verify_unit(f"{label}/{name}", unit, summary, locate, with_gold)
        problems += unit_problems
        gold_units += read_gold
    problems += verify_combined(evidence, run)
    gold = f"gold data for {gold_units} of {len(evidence.units)}" if with_gold else "gold data not read"
    return problems, f"{len(evidence.units)} scored sets, {gold}"


def verify_combined(evidence: Evidence, run: Run) -> list[str]:
    """The numbers of a run's evidence that combine its units or records: ``report.json`` of a cross-validation,
    ``seeds.json`` of a training with seeds, and a per-module report (``evaluation/report.json`` of a Mathematics
    Dataset run)."""
    problems = []
    folder = evidence.folder
    if evidence.report is not None and not isinstance(evidence.report, dict):
        return [f"{folder}: report.json or seeds.json is not a JSON object"]
    if run.subcommand == "cv":
        if evidence.report is None:
            problems.append(f"{folder / 'report.json'}: missing: the folds' mean and spread cannot be checked")
        else:
            problems += check_cv_report(folder / "report.json", evidence.report, evidence.units, evidence.selections)
            problems += check_protocol(str(folder / "report.json"), evidence.report, run.protocol)
    elif any(name.startswith("seed") for name in evidence.units):
        if evidence.report is None:
            problems.append(f"{folder / 'seeds.json'}: missing: the seeds' mean and spread cannot be checked")
        else:
            problems += check_seeds(folder / "seeds.json", evidence.report, evidence.units)
    if isinstance(evidence.evaluation, dict) and "modules" in evidence.evaluation:
        units = [evidence.folders[name] / PREDICTIONS_GZ for name in evidence.units]
        if len(units) != 1 or not units[0].is_file():
            problems.append(f"{folder / BEAM_REPORT}: a per-module report, but not one scored set with predictions "
                            "to recompute it from")
        else:
            problems += check_modules_report(folder / BEAM_REPORT, evidence.evaluation, read_gzip_lines(units[0]))
    return problems


def verify_recipe(recipe: Recipe, root: Path, with_gold: bool = True,
                  work: str | Path | None = None) -> tuple[list[str], list[str]]:
    """(problems, lines) of every run of a recipe. The gold data is read only where its sha256 matches the recipe:
    files under the data root ``root``, and the files its setup generated (``{work}/...``) when ``work`` names the
    folder ``results run`` used (``WORK/<experiment>/``)."""
    folder = Path(work) / recipe.name if work is not None else None

    def locate(name: str) -> Path | None:  # None: a generated file, and no work folder to find it in
        if name.startswith(WORK_PREFIX):
            return folder / name[len(WORK_PREFIX):] if folder is not None else None
        return root / name

    problems, lines = [], []
    if with_gold:
        for name, digest in recipe.data.items():
            path = locate(name)
            if path is not None and path.is_file() and sha256_of(path) != digest:
                problems.append(f"{recipe.name}: {path} differs from the recipe's sha256; gold data not read")
                with_gold = False
    for run in recipe.runs.values():
        run_problems, line = verify_run(recipe, run, locate, with_gold)
        problems += run_problems
        lines.append(f"{recipe.name}/{run.name}: {'FAILED' if run_problems else 'ok'} ({line})")
    return problems, lines


__all__ = ["ENVIRONMENT_FILE", "Evidence", "collect_evidence", "metric_values", "read_evidence",
           "verify_recipe", "verify_run"]
