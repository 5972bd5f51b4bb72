"""Time to a result: the CPU seconds a headline row's training takes to reach the row's accuracy.

Usage: ``python benchmarks/time_to_result.py [--rows RECIPE:RUN ...] [--fold K] [--threads N] [--short]
[--work DIR] [--setup DIR] [--json FILE]``

A row is a run of a recipe under ``results/``: a cross-validation (``word-problems-cv:graph2tree-mawps``, whose
``report.json`` gives its value accuracy over folds) or a training over seeds (``identities-40k:tree_lstm-paper``,
whose ``seeds.json`` gives its test accuracy over seeds). Its command gives the preset, the folds or seeds and the
``--set`` values. The script trains fold ``--fold`` of the row (for a row over seeds: its ``--fold``-th seed) as its
command does, at ``--threads`` threads (1, as the rows were made), and after every epoch's validation it records:

- the process's CPU seconds so far, without the time this script spends measuring;
- the validation score that early stopping reads and the same measure on the test file (measured here only; nothing
  is chosen on it): value accuracy, decoded greedily, for a word-problem row (``val_value_accuracy``,
  ``test_value_accuracy``), accuracy for an identities row (``val_accuracy``, ``test_accuracy``);
- the minor page faults per training step (``neuromath.training.allocator`` is about them).

The test scoring runs with the random state saved and restored, so the run trains as the row's own run did. A
command that names the recipe's setup files (``{work}/pap40.train.json``) needs ``--setup DIR``, the folder where
``neuromath results run`` made them (``WORK/<recipe>``).

From the recorded epochs it also works out what a shorter ``train.patience`` (3, 5, 8, 10, up to the row's own)
would have done: where training stops, the epoch it keeps and that epoch's test accuracy, and the CPU seconds.

It prints, per row: the CPU seconds to the first epoch whose test accuracy is within one standard deviation of the
row's mean (mean - std or better), the CPU seconds to the epoch early stopping keeps and to the end of the run, the
accuracy at the end (the kept epoch's test accuracy, greedy), and the seconds per epoch. ``--json`` writes all of
it, epoch by epoch, for ``results/benchmarks/``.

``--short`` is the smoke run CI makes: each row's preset on a few hundred generated problems, small widths, three
epochs; it checks that the script works, not how fast anything is. A full row takes as long as one fold of it plus
the test scoring (Graph2Tree on MAWPS fold 0: 55 epochs, about 28 CPU minutes of training on one thread).
"""

from __future__ import annotations

import argparse
import json
import resource
import shlex
import sys
import tempfile
import time
from pathlib import Path

import torch
import yaml
from lightning.pytorch.callbacks import Callback

from neuromath.config import load_config
from neuromath.config.rules import PROCEDURES
from neuromath.dataroot import resolve_data_paths
from neuromath.decoding.greedy import greedy_decode
from neuromath.fileio import write_text_atomic
from neuromath.models.batching import EncodedExamples, make_loader, move_batch
from neuromath.tasks import get_task
from neuromath.text import Vocabulary
from neuromath.training.classifier_training import fit_classifier, predict_accuracy, prepare_identity_data
from neuromath.training.run import fit_sequence_model, prepare_data

PATIENCES = (3, 5, 8, 10, 15)
RESULTS = Path(__file__).resolve().parent.parent / "results"
# the presets as shipped
DEFAULT_ROWS = ("word-problems-cv:graph2tree-mawps-decay-levels", "word-problems-cv:gts-mawps-levels")
SHORT = ("data.train=null", "data.test=null", "data.valid=null", "data.generate_train=240", "data.generate_valid=40",
         "data.generate_test=40", "model.d_model=32", "model.encoder_hidden=32", "train.max_epochs=3",
         "train.min_epochs=1", "train.batch_size=32", "decode.beam=1")
SHORT_CLASSIFIER = ("data.train=null", "data.test=null", "data.valid=null", "data.generate_train=400",
                    "model.d_model=16", "train.max_epochs=3", "train.min_epochs=1", "train.batch_size=32")


def usage() -> tuple[float, int]:
    """CPU seconds (user + system) and minor page faults of this process so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime, own.ru_minflt


def row_plan(row: str, fold: int, setup: Path | None = None) -> dict:
    """The preset, ``--set`` values and data files of ``fold`` of a recipe run (of its ``fold``-th seed, for a run over
    seeds), and its reported accuracy. ``setup``: the folder of the recipe's setup files, ``{work}`` in its command."""
    recipe, _, run = row.partition(":")
    folder = RESULTS / recipe
    runs = yaml.safe_load((folder / "recipe.yaml").read_text(encoding="utf-8"))["runs"]
    if run not in runs:
        raise SystemExit(f"{folder / 'recipe.yaml'}: no run {run!r} (runs: {', '.join(runs)})")
    command = runs[run]["command"]
    if "{work}" in command:
        if setup is None:
            raise SystemExit(f"{row}: its command reads the recipe's setup files ({{work}}/...): name their folder "
                             "with --setup DIR (WORK/<recipe> of 'neuromath results run')")
        command = command.replace("{work}", str(setup))
    words = shlex.split(command)
    if words[:2] not in (["neuromath", "cv"], ["neuromath", "train"]):
        raise SystemExit(f"{row}: its command is not 'neuromath cv' or 'neuromath train': {runs[run]['command']}")
    preset, folds, seeds, sets = None, None, 1, []
    for flag, value in zip(words, words[1:]):
        if flag == "--config":
            preset = value
        elif flag == "--folds":
            folds = value
        elif flag == "--seeds":
            seeds = int(value)
        elif flag == "--protocol":
            sets.append(f"train.protocol={value}")
        elif flag == "--set":
            sets.append(value)
    evidence = folder / "runs" / run
    if words[1] == "cv":
        if folds:
            sets += [f"data.train={folds}/fold{fold}/train.csv", f"data.test={folds}/fold{fold}/dev.csv"]
        report_file = evidence / "report.json"
        report = json.loads(report_file.read_text(encoding="utf-8")) if report_file.exists() else {}
        accuracy = report.get("value_accuracy", {})
        reported = next((f for f in report.get("folds", []) if f.get("fold") == f"fold{fold}"), {})
        reported = {key: reported.get(key) for key in ("value_accuracy", "epochs", "wall_seconds")}
    else:  # a training over seeds train.seed, train.seed + 1, ...: the fold-th of them
        if not 0 <= fold < seeds:
            raise SystemExit(f"{row}: --fold {fold} is not one of its {seeds} seeds (0 to {seeds - 1})")
        base = load_config(preset, sets).train.seed
        sets.append(f"train.seed={base + fold}")
        seeds_file = evidence / "seeds.json"
        combined = json.loads(seeds_file.read_text(encoding="utf-8")) if seeds_file.exists() else {}
        accuracy = combined.get("accuracy", {})
        summary_file = evidence / f"seed{base + fold}" / "summary.json"
        summary = json.loads(summary_file.read_text(encoding="utf-8")) if summary_file.exists() else {}
        reported = {"accuracy": summary.get("test", {}).get("accuracy"), "epochs": summary.get("epochs")}
    return {"row": row, "preset": preset, "sets": sets, "mean": accuracy.get("mean"), "std": accuracy.get("std"),
            "reported_fold": reported}


def is_classifier(config) -> bool:
    """Whether the run trains an equation classifier (identities) rather than a sequence model."""
    return PROCEDURES.get(config.model.kind) == "classifier"


class EpochCosts(Callback):
    """After each validation: CPU seconds of training so far, the validation score and the same measure on the test
    file, faults per step. The seconds spent here (scoring the test file) are subtracted from the count, and the
    random state is restored after it, so the training goes on as it would have without it."""

    def __init__(self, config, run_dir: Path):
        self.config, self.run_dir = config, run_dir
        self.metric = "accuracy" if is_classifier(config) else "value_accuracy"
        self.rows: list[dict] = []
        self.measuring = 0.0  # CPU seconds spent in this callback
        self.test = None
        self.start = usage()
        self.faults_at, self.steps_at = self.start[1], 0

    def test_accuracy(self, module) -> float | None:
        with torch.random.fork_rng(devices=[]):  # scoring draws from the global generator: the masks would change
            if is_classifier(self.config):
                return self.classifier_accuracy(module)
            return self.sequence_accuracy(module)

    def classifier_accuracy(self, module) -> float | None:
        if self.test is None:  # the test equations as training reads them, and the run's node vocabulary
            task = get_task(self.config.data.task)
            self.test = (task, prepare_identity_data(self.config).test,
                         Vocabulary.load(self.run_dir / "node_vocab.json"))
        task, examples, vocab = self.test
        return predict_accuracy(module.model, examples, vocab, task.is_correct) if examples else None

    def sequence_accuracy(self, module) -> float | None:
        if self.test is None:  # the test split as training reads it (a file, or generated with the run's seed)
            task = get_task(self.config.data.task).configured(self.config.data)
            examples = prepare_data(self.config, task).test
            source = Vocabulary.load(self.run_dir / "source_vocab.json")
            target = Vocabulary.load(self.run_dir / "target_vocab.json")
            encoded = EncodedExamples(examples, task, source, target)
            self.test = (task, encoded, target, make_loader(encoded, self.config.decode.batch_size))
        task, encoded, target, loader = self.test
        if not len(encoded):
            return None
        right = 0
        model = module.model
        was_training = model.training
        model.eval()
        with torch.no_grad():
            for batch in loader:
                batch = move_batch(batch, module.device)
                for index, ids in zip(batch["index"].tolist(), greedy_decode(model, batch, self.config.decode.max_len)):
                    right += bool(task.is_correct(target.decode(ids), encoded.examples[index]))
        model.train(was_training)
        return right / len(encoded)

    def on_validation_end(self, trainer, module) -> None:
        entered, faults = usage()
        steps = trainer.global_step - self.steps_at
        row = {
            "epoch": trainer.current_epoch + 1,
            "cpu_seconds": entered - self.start[0] - self.measuring,
            f"val_{self.metric}": float(trainer.callback_metrics.get(f"val_{self.metric}", float("nan"))),
            "faults_per_step": (faults - self.faults_at) / steps if steps else None,
        }
        row[f"test_{self.metric}"] = self.test_accuracy(module)
        self.rows.append(row)
        left, self.faults_at = usage()
        self.measuring += left - entered
        self.steps_at = trainer.global_step


def with_patience(epochs: list[dict], patience: int, min_epochs: int = 1, metric: str = "value_accuracy") -> dict:
    """What early stopping after ``patience`` validations without a better validation accuracy (0: none), not before
    epoch ``min_epochs`` (``train.min_epochs``), would have done on this run's recorded epochs: the epoch it stops
    at and the CPU seconds to it, the epoch it keeps (the first with the best validation accuracy so far) with that
    epoch's CPU seconds and test score (``test_<metric>``). Exact for a patience up to the run's own: the epochs
    before the stop are the same epochs."""
    best, kept, stop = None, None, epochs[-1]
    for row in epochs:
        if best is None or row[f"val_{metric}"] > best:
            best, kept = row[f"val_{metric}"], row
        elif patience > 0 and row["epoch"] - kept["epoch"] >= patience and row["epoch"] >= min_epochs:
            stop = row
            break
    return {"stops_at": stop["epoch"], "cpu_seconds": stop["cpu_seconds"], "kept_epoch": kept["epoch"],
            "kept_cpu_seconds": kept["cpu_seconds"], f"test_{metric}": kept[f"test_{metric}"]}


def measure(plan: dict, work: Path, threads: int, short: bool) -> dict:
    overrides = [*plan["sets"], f"train.num_threads={threads}", "train.progress=false"]
    classifier = is_classifier(load_config(plan["preset"], overrides))
    if short:
        overrides += list(SHORT_CLASSIFIER if classifier else SHORT)
    config = resolve_data_paths(load_config(plan["preset"], overrides))  # under the data root
    run_dir = work / plan["row"].replace(":", "-")
    costs = EpochCosts(config, run_dir)
    metric = costs.metric
    wall = time.perf_counter()
    fit = fit_classifier if classifier else fit_sequence_model
    summary = fit(config, run_dir, callbacks=[costs]).summary
    wall = time.perf_counter() - wall
    epochs = costs.rows
    # the run's own early stopping on its own curve: the epoch it kept (the first with the best validation accuracy)
    patience = lambda epochs_left: with_patience(epochs, epochs_left, config.train.min_epochs, metric)  # noqa: E731
    kept = patience(config.train.patience) if epochs else None
    goal = plan["mean"] - plan["std"] if plan["mean"] is not None and plan["std"] is not None else None
    reached = next((row for row in epochs if goal is not None and (row[f"test_{metric}"] or 0) >= goal), None)
    return {
        **plan, "short": short, "threads": threads, "metric": metric, "goal": goal, "epochs": epochs,
        "cpu_seconds_to_goal": reached["cpu_seconds"] if reached else None,
        "epoch_of_goal": reached["epoch"] if reached else None,
        "cpu_seconds_to_kept_epoch": kept["kept_cpu_seconds"] if kept else None,
        "kept_epoch": kept["kept_epoch"] if kept else None,
        "cpu_seconds_total": epochs[-1]["cpu_seconds"] if epochs else None,
        f"end_test_{metric}": kept[f"test_{metric}"] if kept else None,
        "cpu_seconds_per_epoch": epochs[-1]["cpu_seconds"] / len(epochs) if epochs else None,
        "stopped_by": summary.get("stopped_by"), "wall_seconds": wall,
        # shorter patience on the same curve (exact: the run itself used config.train.patience, at least as long)
        "patience": {shorter: patience(shorter) for shorter in PATIENCES
                     if epochs and shorter <= config.train.patience},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", nargs="+", default=list(DEFAULT_ROWS), help="RECIPE:RUN of results/")
    parser.add_argument("--fold", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--short", action="store_true", help="a smoke run on generated problems (CI)")
    parser.add_argument("--work", type=Path, default=None, help="where the runs go (default: a temporary folder)")
    parser.add_argument("--setup", type=Path, default=None,
                        help="the folder of the recipe's setup files, {work} in a row's command")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    plans = [row_plan(row, args.fold, args.setup) for row in args.rows]
    results = []
    with tempfile.TemporaryDirectory(prefix="time-to-result-") as scratch:
        work = args.work or Path(scratch)
        for plan in plans:
            result = measure(plan, work, args.threads, args.short)
            results.append(result)
            show = lambda value, form: "-" if value is None else format(value, form)  # noqa: E731
            print(f"{plan['row']} fold {args.fold}{' (short)' if args.short else ''}: goal "
                  f"{show(result['goal'], '.3f')} reached at epoch {show(result['epoch_of_goal'], 'd')} after "
                  f"{show(result['cpu_seconds_to_goal'], '.0f')} CPU s; kept epoch {show(result['kept_epoch'], 'd')} "
                  f"at {show(result['cpu_seconds_to_kept_epoch'], '.0f')} s, "
                  f"end {show(result['cpu_seconds_total'], '.0f')} "
                  f"s ({show(result['cpu_seconds_per_epoch'], '.1f')} s/epoch); test {result['metric']} at the "
                  f"end {show(result['end_test_' + result['metric']], '.3f')}", flush=True)
    if args.json:
        report = {"torch": torch.__version__, "threads": args.threads, "fold": args.fold, "short": args.short,
                  "rows": results}
        write_text_atomic(args.json, json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
