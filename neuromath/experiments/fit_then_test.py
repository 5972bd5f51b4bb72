"""Train, then test: a run trained by the procedure of its model's kind (``PROCEDURES``), its held-out test split
scored once with the best weights, and ``--seeds``: several seeds of one config with the mean and standard deviation
of their test scores.

A training procedure (registered in ``neuromath.registry.TRAINING``) is what ``training/`` fits, how the experiments
layer tests the fitted run through ``neuromath.api`` and ``neuromath.evaluation``, and how the outcome is printed.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from neuromath.api import load, load_classifier
from neuromath.config import Config
from neuromath.config.rules import PROCEDURES
from neuromath.dataroot import resolve_data_paths
from neuromath.errors import ConfigError, NeuromathError
from neuromath.evaluation.scoring import (
    PREDICTIONS_FILE,
    counted,
    evaluate_examples,
    percent,
    unknown_split_summary,
    unknown_summary,
    write_predictions,
)
from neuromath.evaluation.spread import mean_std, mean_std_cell
from neuromath.evaluation.verification import by_depth, mean_and_std, mean_std_table, verification_metrics
from neuromath.fileio import locked, write_text_atomic
from neuromath.nn.distributed import is_rank_zero
from neuromath.registry import TRAINING
from neuromath.safe_read import load_json, read_summary
from neuromath.sharing.card import training_command, write_card, write_environment
from neuromath.tasks import get_task
from neuromath.training.classifier_training import fit_classifier
from neuromath.training.run import STOP_REASONS, TrainResult, fit_sequence_model, limit_that_ended


@dataclass(frozen=True)
class TrainingProcedure:
    fit: Callable[[Config, Path, bool], TrainResult]  # train (or resume) a run folder; summary.json without test
    # score held-out examples with the run's best weights: (metrics, one JSON-ready record per example)
    test: Callable[[Path, list], tuple[dict, list[dict]]]
    outcome: Callable[[dict, object], list[str]]  # the lines printed after training (summary, task)
    combine_seeds: Callable[[Config, list[dict], Path], tuple[dict, str]]  # test scores of seeds -> (json, text)


def score_sequence_run(run_dir: Path, examples: list) -> tuple[dict, list[dict]]:
    return evaluate_examples(load(run_dir), examples)


def sequence_outcome(summary: dict, task) -> list[str]:
    lines = [f"trained {counted(summary['epochs'], 'epoch')} ({counted(summary['steps'], 'step')}); best validation "
             f"{task.accuracy_label} "
             f"{percent(summary['best_val_value_accuracy'])}; run saved in {summary['run_dir']}",
             *stop_lines(summary)]
    if "test" in summary:
        test = summary["test"]
        equation = f", {task.equation_label} {percent(test['equation_accuracy'])}" if task.equation_label else ""
        lines.append(f"test: {task.accuracy_label} {percent(test['value_accuracy'])}{equation} on {test['n']} examples")
        if "unknown_token_rate" in test:
            lines.append(f"test input unknown to the run's vocabulary: {unknown_summary(test)}")
        if test.get("examples_with_unknown") and "value_accuracy_with_unknown" in test:
            lines.append(f"test {task.accuracy_label}: {unknown_split_summary(test)}")
    return lines


def stop_lines(summary: dict) -> list[str]:
    """A warning line when a limit, not early stopping, ended the training (``summary['stopped_by']``; summaries
    written before it was recorded have none, and get no line)."""
    limit = limit_that_ended(summary)
    if limit is None:
        return []
    return [f"warning: training ended by {STOP_REASONS[limit]} before early stopping: validation may still "
            f"have been improving, so these are not the scores of a converged run"]


def combine_sequence_seeds(config: Config, tested: list[dict], out: Path) -> tuple[dict, str]:
    combined = {"value_accuracy": mean_std([t["value_accuracy"] for t in tested])}
    text = (f"test {percent(combined['value_accuracy']['mean'])} ± {100 * combined['value_accuracy']['std']:.1f} "
            f"over {len(tested)} seeds\n")
    return combined, text


def score_classifier_run(run_dir: Path, examples: list) -> tuple[dict, list[dict]]:
    predictions = (load_classifier(run_dir).logits(examples) > 0).tolist()
    records = [{"source": example.source, "depth": example.depth, "label": example.label, "predicted": prediction,
                "correct": prediction == example.label} for example, prediction in zip(examples, predictions)]
    return verification_metrics(examples, predictions), records


def classifier_outcome(summary: dict, task) -> list[str]:
    lines = [f"trained {summary['model']}: {counted(summary['epochs'], 'epoch')} "
             f"({counted(summary['steps'], 'step')}); best validation accuracy "
             f"{percent(summary['best_val_accuracy'])}; run saved in {summary['run_dir']}",
             *stop_lines(summary)]
    if "best_val_completion" in summary:  # a run trained and selected on completion (train.rank_weight)
        completion = summary["best_val_completion"]
        lines.append(f"selected on validation completion: top-1 {percent(completion['top1'])}, MRR "
                     f"{completion['mrr']:.3f} on {completion['n']} blanks from the validation equations")
    if "test" in summary:
        test = summary["test"]
        lines.append(f"test: accuracy {percent(test['accuracy'])}, precision {percent(test['precision'])}, "
                     f"recall {percent(test['recall'])} on {test['n']} equations")
    return lines


def combine_classifier_seeds(config: Config, tested: list[dict], out: Path) -> tuple[dict, str]:
    """Mean ± standard deviation overall and by depth; the table is also written to OUT/seeds.md."""
    combined = mean_and_std(tested)
    table = mean_std_table({config.model.name: combined})
    title = f"# {config.model.name}: test over {len(tested)} seeds (mean ± std, %)"
    write_text_atomic(out / "seeds.md", f"{title}\n\n{table}")
    return combined, table


TRAINING.add("sequence", TrainingProcedure(fit_sequence_model, score_sequence_run, sequence_outcome,
                                           combine_sequence_seeds))
TRAINING.add("classifier", TrainingProcedure(fit_classifier, score_classifier_run, classifier_outcome,
                                             combine_classifier_seeds))


def procedure(config: Config) -> TrainingProcedure:
    """How the run trains and is tested: the procedure of its model's kind (``neuromath.config.rules.PROCEDURES``)."""
    name = PROCEDURES.get(config.model.kind)
    if name is None:
        raise ConfigError(f"model {config.model.name!r} trains nothing: run it with neuromath cv")
    return TRAINING.get(name)


def train(
    config: Config, run_dir: str | Path, resume: bool = False, predictions: str | Path | None = None
) -> TrainResult:
    """Train (or resume) a run of the config's task in ``run_dir``, holding its lock; when the data has a held-out
    test split, score it once with the best weights and add it to the summary (``summary["test"]``, also in
    summary.json), and with ``predictions`` write the test split's records there (JSON Lines, one per example in
    the order of the test split; sequence tasks: the records of ``neuromath.evaluation.scoring.evaluate_examples``,
    as ``neuromath evaluate`` writes them). summary.json also gets ``wall_seconds``: how long this call trained and
    tested, plus for a resumed run the seconds its earlier sessions trained up to the checkpoint it resumed from
    (``resumed_seconds``, kept by ``neuromath.training.run_folder.TrainingClock``). Relative data paths are found in
    the working directory or under the data root (``neuromath.dataroot``) first, so a missing file stops the run
    before anything trains, and the run's config.yaml names the files it read. Last, the run gets ``environment.json``
    (the software and machine) and ``README.md``, its model card (``neuromath.sharing.card``)."""
    started = time.perf_counter()
    run_dir = Path(run_dir)
    config = resolve_data_paths(config)
    chosen = procedure(config)
    if not is_rank_zero():  # another process of a multi-process run: it trains beside rank zero, which writes
        return chosen.fit(config, run_dir, resume)
    with locked(run_dir):  # a second train into the same folder is refused while this one writes it
        result = chosen.fit(config, run_dir, resume)
        if result.data.test:
            result.summary["test"], records = chosen.test(run_dir, result.data.test)
            if predictions is not None:
                write_predictions(records, predictions)
        earlier = result.summary.get("resumed_seconds", 0.0)
        result.summary["wall_seconds"] = round(time.perf_counter() - started + earlier, 1)
        write_text_atomic(run_dir / "summary.json", json.dumps(result.summary, indent=2))
        # the summary is final: the software and machine, and the model card that reports the summary's scores
        environment = write_environment(run_dir)
        write_card(run_dir, config, result.summary, environment, training_command())
    return result


def train_classifier(config: Config, run_dir: str | Path, resume: bool = False) -> dict:
    """``train`` for an equation classifier (identities task); returns the summary."""
    return train(config, run_dir, resume).summary


def train_and_report(config: Config, out: str | Path, resume: bool = False) -> dict:
    """Train one run and print its outcome; returns its summary. The test split's prediction records go to
    ``OUT/predictions.jsonl`` (what ``neuromath results verify`` recomputes the test scores from)."""
    summary = train(config, out, resume, predictions=Path(out) / PREDICTIONS_FILE).summary
    if is_rank_zero():  # the other processes of a multi-process run have no summary
        for line in procedure(config).outcome(summary, get_task(config.data.task)):
            print(line)
    return summary


def train_seeds(config: Config, out: str | Path, seeds: int, resume: bool = False) -> list[dict]:
    """N seeds: OUT/seed<S> for S = train.seed .. train.seed + N - 1, then the mean and standard deviation of their
    test scores, printed and written to OUT/seeds.json."""
    if seeds < 1:
        raise NeuromathError(f"--seeds must be at least 1, not {seeds}")
    if seeds == 1:
        return [train_and_report(config, out, resume)]
    summaries = []
    for offset in range(seeds):
        seed = config.train.seed + offset
        if is_rank_zero():
            print(f"== seed {seed}")
        seeded = dataclasses.replace(config, train=dataclasses.replace(config.train, seed=seed))
        seed_dir = Path(out) / f"seed{seed}"
        finished = finished_summary(seed_dir) if resume else None
        if finished is not None:  # resuming: a seed tested before is read back, not trained again
            if is_rank_zero():
                print(f"{seed_dir}: finished before (summary.json has its test scores)")
            summaries.append(finished)
            continue
        # resuming: a seed that had started continues from its last checkpoint, one not started yet starts afresh
        started = (seed_dir / "checkpoints" / "last.ckpt").exists()
        summaries.append(train_and_report(seeded, seed_dir, resume and started))
    summarise_seeds(config, summaries, Path(out))
    return summaries


def finished_summary(run_dir: Path) -> dict | None:
    """The summary of a run an earlier invocation trained and tested (summary.json with test scores), else None:
    what ``train --seeds --resume`` and ``cv`` read back instead of training again."""
    path = run_dir / "summary.json"
    if not path.exists():
        return None
    try:
        summary = load_json(read_summary(path), path)  # a FIFO, a huge or too deep file: an error naming it
    except ValueError:
        return None  # half a file cannot be: summaries are written atomically; treat a foreign one as absent
    return summary if isinstance(summary, dict) and "test" in summary else None


def summarise_seeds(config: Config, summaries: Sequence[dict], out: Path) -> None:
    if not is_rank_zero():
        return
    tested = [s["test"] for s in summaries if "test" in s]
    if not tested:
        print("no test set: nothing to average over seeds")
        return
    combined, text = procedure(config).combine_seeds(config, tested, out)
    print(text, end="")
    combined["runs"] = [s["run_dir"] for s in summaries]
    write_text_atomic(out / "seeds.json", json.dumps(combined, indent=2))
    print(f"written to {out / 'seeds.json'}")


def group_runs(run_dirs: Sequence[str | Path]) -> dict[str, list[Path]]:
    """Runs grouped as ``--seeds`` writes them: a folder named ``seed<S>`` belongs to its parent's group, any other
    folder is a group of its own; groups keep the order in which they first appear. A run named twice (``seed0
    seed*``) is an error: it would count as two seeds."""
    groups: dict[str, list[Path]] = {}
    seen: set[Path] = set()
    for run_dir in map(Path, run_dirs):
        resolved = run_dir.resolve()
        if resolved in seen:
            raise NeuromathError(f"{run_dir}: named twice; each run may be counted once")
        seen.add(resolved)
        name = run_dir.name
        key = str(run_dir.parent) if name.startswith("seed") and name[4:].isdigit() else str(run_dir)
        groups.setdefault(key, []).append(run_dir)
    return groups


def read_tested_summary(run_dir: Path) -> dict:
    path = run_dir / "summary.json"
    if not path.exists():  # one that is there but no regular file (a FIFO, a folder): read_summary names it
        raise NeuromathError(f"{run_dir}: no summary.json (not a run folder, or its training has not finished)")
    try:
        summary = load_json(read_summary(path), path)
    except json.JSONDecodeError as error:
        raise NeuromathError(f"{path}: not valid JSON (line {error.lineno}: {error.msg})") from None
    if "test" not in summary:
        raise NeuromathError(f"{path}: no test scores (the run was trained without a test set; score it with "
                             "neuromath evaluate)")
    return summary


def combine_runs(run_dirs: Sequence[str | Path]) -> dict[str, dict]:
    """The mean and standard deviation over each group's runs (``group_runs``) of what their summary.json holds:
    epochs, best validation accuracy and the held-out test scores (equation classifiers: accuracy, precision and
    recall overall and by depth, ``mean_and_std``; sequence models: value accuracy). Runs trained apart, such as
    seeds run in parallel as separate processes, are combined as ``--seeds`` would have combined them."""
    combined = {}
    for group, runs in group_runs(run_dirs).items():
        summaries = [read_tested_summary(run) for run in runs]
        kinds = {"classifier" if "accuracy" in s["test"] else "sequence" for s in summaries}
        if len(kinds) > 1:
            raise NeuromathError(f"{group}: its runs mix equation classifiers and sequence models")
        row = {"kind": kinds.pop(), "runs": [str(run) for run in runs],
               "epochs": mean_std([s["epochs"] for s in summaries]),
               # runs a limit ended before early stopping (summary.json stopped_by): not at convergence
               "cut_by_limit": [str(run) for run, s in zip(runs, summaries) if limit_that_ended(s)]}
        if row["kind"] == "classifier":
            row["best_val_accuracy"] = mean_std([s["best_val_accuracy"] for s in summaries])
            row["test"] = mean_and_std([s["test"] for s in summaries])
        else:
            row["best_val_accuracy"] = mean_std([s["best_val_value_accuracy"] for s in summaries])
            row["test"] = {"value_accuracy": mean_std([s["test"]["value_accuracy"] for s in summaries]),
                           "seeds": len(summaries)}
        combined[group] = row
    return combined


def combined_runs_table(combined: dict[str, dict]) -> str:
    """Markdown: one row per group, ``mean ± std`` in percent (the mean alone for a group of one run); classifier
    rows add a column per test depth. A group with runs that a limit ended before early stopping marks its epochs
    with ``*`` and a note under the table names them."""
    depths = sorted({d for row in combined.values() if row["kind"] == "classifier" for d in by_depth(row["test"])})
    head = ["runs", "seeds", "epochs", "valid", "test"] + [f"depth {d}" for d in depths]
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for group, row in combined.items():
        test = row["test"]
        overall = test["accuracy"] if row["kind"] == "classifier" else test["value_accuracy"]
        per_depth = by_depth(test) if row["kind"] == "classifier" else {}
        runs = len(row["runs"])
        cut = row.get("cut_by_limit", [])
        cells = [group, str(runs), f"{row['epochs']['mean']:.0f}{' *' if cut else ''}",
                 mean_std_cell(row["best_val_accuracy"], runs),
                 mean_std_cell(overall, runs)] + [mean_std_cell(per_depth.get(d, {}).get("accuracy"), runs)
                                                  for d in depths]
        lines.append("| " + " | ".join(cells) + " |")
    cut = [run for row in combined.values() for run in row.get("cut_by_limit", [])]
    if cut:
        lines += ["", f"\\* a limit (epochs, steps or time), not early stopping, ended {len(cut)} run"
                      f"{'s' if len(cut) > 1 else ''}: {', '.join(cut)}; not at convergence"]
    return "\n".join(lines) + "\n"
