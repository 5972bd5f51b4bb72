"""k-fold cross-validation of word-problem solvers: the 5-fold protocol that MAWPS and ASDiv-A are reported with
(Patel et al. 2021, "Are NLP Models really able to Solve Simple Math Word Problems?", Table 1, whose fold folders
``fold0/ .. fold4/`` hold ``train.csv`` and ``dev.csv``), or a seeded random k-fold split of one file.

Each fold trains one run in ``OUT/fold<k>`` on the fold's training file alone: ``neuromath.experiments.train``
carves the validation part out of that training file (``data.valid_fraction`` / ``data.valid_max``), so model
selection and early stopping never see the test fold, which is scored once with the best weights. The retrieval
baselines (models of kind ``retrieval``) take the same route without training: fit on the training file, answer
every test problem with its nearest training problem's template.

A fold whose ``OUT/fold<k>/summary.json`` already holds test scores is reused, so an interrupted cross-validation
continues where it stopped (a fold interrupted during training resumes from its last checkpoint). Every fold writes
its test problems' prediction records to ``OUT/fold<k>/predictions.jsonl`` when it scores them (what ``neuromath
compare`` pairs two cross-validations on). The report gives every fold and the mean ± sample standard deviation over
folds of value and equation accuracy, of the corpus BLEU of the predicted equations (``neuromath.evaluation.bleu``)
and of the share of test input tokens unknown to the fold's source vocabulary ("unk %"); it is written to
``OUT/report.md`` and ``OUT/report.json`` (the rows, report dicts and Markdown: ``neuromath.experiments.cv_reports``).

With ``jobs`` > 1 (``cv --jobs N``) up to N folds train at once, each in a process of its own (``spawn``: no torch
state is shared), before the report is assembled as usual; each fold's run is the one a sequential cross-validation
makes (same config, seed and threads), so only the wall time changes.

``run_seeded_cross_validation`` (``cv --seeds N``) runs N such cross-validations with consecutive training seeds in
``OUT/seed<S>`` and votes their answers problem by problem (``neuromath.evaluation.vote``) into ``OUT/fold<k>``.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import random
import sys
import time
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Sequence

from neuromath.config import Config, load_config, save_config
from neuromath.config.rules import RETRIEVAL
from neuromath.dataroot import resolve_data_paths
from neuromath.errors import ConfigError, DataFormatError, NeuromathError
from neuromath.evaluation.bleu import bleu_scores
from neuromath.evaluation.scoring import (
    PREDICTIONS_FILE,
    REFIT_DIR,
    percent,
    read_predictions,
    scored_fold,
    unknown_input,
    write_predictions,
)
from neuromath.evaluation.vote import vote_runs
from neuromath.experiments.cv_reports import (
    cross_validation_report,
    fold_row,
    format_report,
    refit_row,
    vote_report,
    vote_row,
    vote_summary,
)
from neuromath.experiments.fit_then_test import finished_summary, train
from neuromath.experiments.folds import RANDOM_FOLD_FILES, Fold
from neuromath.fileio import locked, write_text_atomic
from neuromath.registry import TASKS
from neuromath.safe_read import load_json, read_data_text
from neuromath.tasks import SequenceTask, get_task
from neuromath.tasks.word_problems import write_jsonl
from neuromath.training.run import build_vocabularies
from neuromath.training.run_folder import COSMETIC_CHANGES, RESUMABLE_CHANGES, config_differences, read_checkpoint

SPLIT_MANIFEST = "split.json"  # beside the random folds: k, seed and the test ids of each fold


def write_random_folds(examples: Sequence, k: int, seed: int, out_dir: str | Path) -> list[Fold]:
    """Shuffle ``examples`` with ``random.Random(seed)``, cut them into ``k`` folds whose sizes differ by at most
    one, and write ``out_dir/fold<i>/test.jsonl`` (fold i) and ``train.jsonl`` (every other fold), each in the
    examples' original order. ``out_dir/split.json`` records the split; a folder that already holds another split
    is an error rather than overwritten, since runs of the old folds would no longer match their files."""
    n = len(examples)
    if not 2 <= k <= n:
        raise ConfigError(f"--k must be at least 2 and at most the number of examples ({n}), not {k}")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    sizes = [n // k + (1 if fold < n % k else 0) for fold in range(k)]
    test_indices, start = [], 0
    for size in sizes:
        test_indices.append(sorted(order[start:start + size]))
        start += size

    out_dir = Path(out_dir)
    manifest = {"k": k, "seed": seed, "examples": n,
                "test_ids": [[examples[index].id for index in indices] for indices in test_indices]}
    manifest_path = out_dir / SPLIT_MANIFEST
    if manifest_path.exists():
        try:
            previous = load_json(read_data_text(manifest_path), manifest_path)  # a FIFO or too deep: refused
        except ValueError:
            raise DataFormatError(manifest_path, None, "not valid JSON") from None
        if previous != manifest:
            raise NeuromathError(
                f"{out_dir} holds another split (k {previous.get('k')}, seed {previous.get('seed')}, "
                f"{previous.get('examples')} examples); choose another --out"
            )
    folds = []
    train_name, test_name = RANDOM_FOLD_FILES
    for fold, indices in enumerate(test_indices):
        in_test = set(indices)
        folder = out_dir / f"fold{fold}"
        write_jsonl([examples[index] for index in range(n) if index not in in_test], folder / train_name)
        write_jsonl([examples[index] for index in indices], folder / test_name)
        folds.append((f"fold{fold}", folder / train_name, folder / test_name))
    write_text_atomic(manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False))
    return folds


def read_data_file(config: Config, path: str | Path) -> tuple[list, list]:
    """The word problems of one file to split into folds, read as the config's data section says (``format``,
    ``lenient``): ``(examples, skipped)``."""
    task = word_problem_task(config)
    skipped: list = []
    examples = task.read(str(path), config.data.format, lenient=config.data.lenient, skipped=skipped,
                         **task.read_options(config.data, "train"))  # data.strict refuses contradicting rows
    return examples, skipped


def word_problem_task(config: Config) -> SequenceTask:
    """The config's task, when cross-validation over fold files applies to it (the task says so: ``folds``)."""
    task = get_task(config.data.task)
    if not getattr(task, "folds", False):
        applies = ", ".join(name for name in TASKS if getattr(get_task(name), "folds", False))
        raise ConfigError(
            f"cross-validation is for the word-problem tasks ({applies}), not data.task {config.data.task!r}"
        )
    return task


def fold_config(config: Config, train_path: Path, test_path: Path) -> Config:
    """The fold's run config: train on the fold's training file (validation carved out of it), test on its test file;
    every other data path (``data.train_extra``) found under the data root as the run will find it, so that the
    config a finished fold saved compares equal to this one."""
    data = dataclasses.replace(config.data, train=str(Path(train_path).resolve()), valid=None,
                               test=str(Path(test_path).resolve()))
    return resolve_data_paths(dataclasses.replace(config, data=data))


def check_same_config(fold_dir: Path, config: Config, finished: bool) -> None:
    """A fold folder from an earlier invocation must have been run with this config, else its results are not this
    cross-validation's. A finished fold is reused only when every setting is the same (the progress display aside);
    an interrupted one may also be resumed with other limits on how long it trains (``RESUMABLE_CHANGES``)."""
    saved = fold_dir / "config.yaml"
    if not saved.exists():
        return
    differences = config_differences(load_config(saved), config, COSMETIC_CHANGES if finished else RESUMABLE_CHANGES)
    if differences:
        state = "finished" if finished else "started"
        raise ConfigError(f"{fold_dir} was {state} with another config ({'; '.join(differences)}); choose another "
                          "--out, or delete the fold folder to run it again")


def run_retrieval_fold(config: Config, train_path: Path, test_path: Path, fold_dir: Path) -> dict:
    """Fit the retrieval baseline ``config.model.name`` on the training file and answer the test file; writes
    ``fold_dir/predictions.jsonl``, ``config.yaml`` and returns the summary (not yet written). The test fold's
    unknown input is measured against the source vocabulary a trained model of the same data settings would have
    (``neuromath.training.run.build_vocabularies``): the baseline itself has none."""
    task = word_problem_task(config).configured(config.data)
    data_report, splits = {}, {}
    for split, path in (("train", train_path), ("test", test_path)):
        skipped: list = []
        splits[split] = task.read(str(path), config.data.format, lenient=config.data.lenient, skipped=skipped,
                                  **task.read_options(config.data, split))
        data_report[split] = {"source": str(path), "read": len(splits[split]), "skipped": [str(e) for e in skipped]}
    baseline = config.model.builder()(config.model).fit(splits["train"])
    # the nearest training problem's target in the task's own notation (prefix, or normalised postfix)
    records = [task.describe(task.target_tokens(baseline.nearest(example)), example) for example in splits["test"]]
    n = len(records)
    value_correct = sum(bool(record["correct"]) for record in records)
    equation_correct = sum(bool(record["equation_correct"]) for record in records)
    fold_dir.mkdir(parents=True, exist_ok=True)
    save_config(config, fold_dir / "config.yaml")
    write_predictions(records, fold_dir / PREDICTIONS_FILE)
    summary = {
        "run_dir": str(fold_dir),
        "model": config.model.name,
        "best_val_value_accuracy": None,
        "epochs": None,
        "train_examples": len(splits["train"]),
        "valid_examples": 0,
        "data": data_report,
    }
    if n:
        source_vocab, _ = build_vocabularies(task, splits["train"], config)
        summary["test"] = {"value_accuracy": value_correct / n, "equation_accuracy": equation_correct / n, "n": n,
                           "value_correct": value_correct, "equation_correct": equation_correct,
                           **unknown_input(source_vocab, task, splits["test"])}
        summary["test"].update(bleu_scores(records))
    return summary


def run_trained_fold(config: Config, fold_dir: Path, progress_prefix: str, progress: bool,
                     what: str | None = None) -> dict:
    """Train (or resume an interrupted) run of the fold in ``fold_dir``; returns its summary. The test problems'
    prediction records go to ``fold_dir/predictions.jsonl``. ``what`` names the run in the progress line (default:
    training the model)."""
    resume = (fold_dir / "checkpoints" / "last.ckpt").exists()
    if progress:
        doing = what or f"training {config.model.name}"
        print(f"{progress_prefix}: {'resuming the interrupted ' if resume else ''}{doing} ...", file=sys.stderr,
              flush=True)
    return train(config, fold_dir, resume=resume, predictions=fold_dir / PREDICTIONS_FILE).summary


def write_fold_summary(fold_dir: Path, summary: dict, started: float) -> dict:
    """Add the seconds since ``started`` to a finished run's summary and write it to ``fold_dir/summary.json``."""
    summary["wall_seconds"] = time.perf_counter() - started
    write_text_atomic(fold_dir / "summary.json", json.dumps(summary, indent=2))
    return summary


def best_epochs(fold_dir: Path) -> int:
    """How many epochs the selection run of ``fold_dir`` had trained when it reached its best validation score:
    the epoch stored in its best checkpoint (Lightning counts from 0), plus one."""
    path = fold_dir / "checkpoints" / "best.ckpt"
    if not path.exists():
        raise NeuromathError(f"{path}: missing; --refit retrains for the epochs of the fold's best checkpoint")
    return int(read_checkpoint(path)["epoch"]) + 1


def refit_config(run_config: Config, epochs: int) -> Config:
    """The refit of a fold: the same run on the whole training file (nothing carved out, no validation, no early
    stopping) for the ``epochs`` the selection run needed to reach its best validation score; its last weights are
    tested."""
    train_section = dataclasses.replace(run_config.train, validate=False, max_epochs=epochs, max_steps=-1,
                                        min_epochs=1, patience=0, max_time_minutes=0.0)
    return dataclasses.replace(run_config, train=train_section)


def run_refit(run_config: Config, fold_dir: Path, prefix: str, progress: bool) -> tuple[dict, bool]:
    """Refit the fold in ``fold_dir/refit`` (or reuse a finished refit); returns its summary and whether it was
    reused. Its test predictions go to ``fold_dir/refit/predictions.jsonl``."""
    refit_dir = fold_dir / REFIT_DIR
    config = refit_config(run_config, best_epochs(fold_dir))
    summary = finished_summary(refit_dir)
    check_same_config(refit_dir, config, finished=summary is not None)
    if summary is not None:
        return summary, True
    summary = run_trained_fold(config, refit_dir, prefix, progress,  # its summary.json has its wall_seconds
                               what=f"refitting on the whole training fold for {config.train.max_epochs} epochs")
    return summary, False


def run_cross_validation(config: Config, folds: Sequence[Fold], out_dir: str | Path, progress: bool = True,
                         refit: bool = False, jobs: int = 1) -> dict:
    """Run every fold (reusing finished ones) in ``out_dir/<fold name>`` and write ``out_dir/report.md`` and
    ``report.json``; returns the report: ``{"model", "task", "k", "out", "folds": [row, ...], "value_accuracy":
    {"mean", "std"}, "equation_accuracy": {"mean", "std"}, "bleu": {"mean", "std"}, "unknown_token_rate": {"mean",
    "std"} ("bleu" and "unknown_token_rate" None when a reused fold lacks them), "test_examples", "wall_seconds",
    "elapsed_seconds"}`` where a row holds the fold's sizes, test accuracies, BLEU (0-100), unknown input rates (of
    tokens and of examples), best validation value accuracy, epochs and seconds.

    ``refit``: after each fold's run has chosen its epoch on the carve-out, a second run trains on the whole
    training fold for that many epochs and its last weights score the test fold (``OUT/fold<k>/refit``); the rows
    then hold the refit's test scores, the selection run's best validation score and epochs (``epochs``) and the
    refit's epochs (``refit_epochs``). The test fold still chooses nothing.

    ``jobs``: how many folds may train at once, each in its own process (``train_folds_in_parallel``)."""
    word_problem_task(config)
    if jobs < 1:
        raise NeuromathError(f"jobs must be at least 1, got {jobs}")
    if not folds:
        raise NeuromathError("no folds to cross-validate")
    if refit and config.train.protocol == "literature":
        raise ConfigError("--refit retrains after a clean selection on the validation carve-out; under "
                          "--protocol literature the test fold chose the epoch, so there is nothing to refit")
    if refit and config.model.kind == RETRIEVAL:
        raise ConfigError(f"--refit retrains a model on the whole training fold; the retrieval baseline "
                          f"{config.model.name} trains nothing")
    with locked(out_dir):  # a second cv into the same folder is refused while this one writes it
        if holds_a_vote(Path(out_dir)):
            raise NeuromathError(f"{out_dir} holds the vote of a cv --seeds (its seeds' runs are in "
                                 f"{Path(out_dir) / 'seed<S>'}): give this cross-validation another --out")
        return run_folds(config, folds, Path(out_dir), progress, refit, jobs)


def holds_a_vote(out_dir: Path) -> bool:
    """Whether ``out_dir`` holds the report of a vote of seeds (``run_seeded_cross_validation``)."""
    try:
        report = load_json(read_data_text(out_dir / "report.json"), out_dir / "report.json")
    except (OSError, ValueError):
        return False
    return isinstance(report, dict) and "seeds" in report


def train_fold(run_config: Config, fold_dir: Path, prefix: str, progress: bool, refit: bool) -> dict:
    """One fold's training in a worker process of ``train_folds_in_parallel``: its selection run (unless finished)
    and, with ``refit``, its refit (unless finished). Returns what ``run_folds`` would have learnt doing it itself."""
    done: dict = {"summary": finished_summary(fold_dir), "refit": None}
    done["trained"] = done["summary"] is None
    if done["trained"]:
        done["summary"] = run_trained_fold(run_config, fold_dir, prefix, progress)
    if refit and "test" in done["summary"]:
        done["refit"] = run_refit(run_config, fold_dir, prefix, progress)
    return done


def train_folds_in_parallel(config: Config, folds: Sequence[Fold], out_dir: Path, progress: bool, refit: bool,
                            jobs: int) -> dict:
    """Train the folds that need it, up to ``jobs`` at once, each in a fresh process (``spawn``); returns
    ``{fold name: train_fold's result}``. Training progress bars are off (several would share one terminal); the
    line per fold stays. On the first failure no further fold starts, the running ones finish (they would resume
    anyway), and the failure is raised."""
    pending = []
    for number, (name, train_path, test_path) in enumerate(folds, start=1):
        fold_dir = out_dir / name
        run_config = fold_config(config, train_path, test_path)
        finished = finished_summary(fold_dir) is not None
        check_same_config(fold_dir, run_config, finished=finished)
        if not finished or (refit and finished_summary(fold_dir / REFIT_DIR) is None):
            quiet = dataclasses.replace(run_config, train=dataclasses.replace(run_config.train, progress=False))
            pending.append((name, quiet, fold_dir, f"fold {number}/{len(folds)}"))
    if len(pending) < 2 or jobs < 2:
        return {}
    workers = min(jobs, len(pending))
    if progress:
        print(f"cross-validation: {len(pending)} folds to train, {workers} at a time", file=sys.stderr, flush=True)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(train_fold, run_config, fold_dir, prefix, progress, refit): name
                   for name, run_config, fold_dir, prefix in pending}
        finished_futures, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [future for future in finished_futures if future.exception() is not None]
        if failed:
            for future in futures:
                future.cancel()
            if progress:
                print(f"cross-validation: {futures[failed[0]]} failed; waiting for the folds already training",
                      file=sys.stderr, flush=True)
            error = failed[0].exception()
            if isinstance(error, BrokenProcessPool):
                raise NeuromathError(f"a worker process of the cross-validation ({futures[failed[0]]}) stopped "
                                     "abruptly (killed, out of memory, or unable to start: its own traceback is "
                                     "above); unfinished folds resume when the command runs again") from error
            raise error
        return {name: future.result() for future, name in futures.items()}


def run_folds(config: Config, folds: Sequence[Fold], out_dir: Path, progress: bool, refit: bool = False,
              jobs: int = 1) -> dict:
    retrieval = config.model.kind == RETRIEVAL
    started = time.perf_counter()
    trained = {} if retrieval else train_folds_in_parallel(config, folds, out_dir, progress, refit, jobs)
    rows = []
    for number, (name, train_path, test_path) in enumerate(folds, start=1):
        prefix = f"fold {number}/{len(folds)}"
        fold_dir = out_dir / name
        run_config = fold_config(config, train_path, test_path)
        summary = finished_summary(fold_dir)
        check_same_config(fold_dir, run_config, finished=summary is not None)
        in_worker = trained.get(name, {})  # a fold trained by a worker process just now: its summary, not again
        reused = summary is not None and not in_worker.get("trained", False)
        if reused:
            print(f"{prefix}: reused {fold_dir / 'summary.json'}", file=sys.stderr, flush=True)
        elif in_worker.get("trained", False):
            summary = in_worker["summary"]
        else:
            fold_started = time.perf_counter()
            if retrieval:
                if progress:
                    print(f"{prefix}: fitting {config.model.name} retrieval ...", file=sys.stderr, flush=True)
                summary = run_retrieval_fold(run_config, train_path, test_path, fold_dir)
            else:  # training writes summary.json with its wall_seconds (neuromath.experiments.fit_then_test.train)
                summary = run_trained_fold(run_config, fold_dir, prefix, progress)
            if "test" not in summary:
                raise NeuromathError(f"{test_path}: no test examples in fold {name}")
            if retrieval:
                write_fold_summary(fold_dir, summary, fold_started)
        row = fold_row(name, train_path, test_path, summary, reused=reused)
        if refit:
            refit_summary, refit_reused = trained.get(name, {}).get("refit") or run_refit(run_config, fold_dir,
                                                                                         prefix, progress)
            row = refit_row(row, refit_summary, refit_reused)
        rows.append(row)
        if progress and not row["reused"]:
            bleu = "" if row["bleu"] is None else f", BLEU {row['bleu']:.1f}"
            print(f"{prefix}: value accuracy {percent(row['value_accuracy'])}, equation accuracy "
                  f"{percent(row['equation_accuracy'])}{bleu} on {row['test_examples']} test problems "
                  f"({row['wall_seconds']:.1f} s)", file=sys.stderr, flush=True)

    report = cross_validation_report(config, rows, out_dir, refit)
    report["elapsed_seconds"] = time.perf_counter() - started  # this invocation
    write_text_atomic(out_dir / "report.json", json.dumps(report, indent=2))
    write_text_atomic(out_dir / "report.md", format_report(report))
    if progress:
        print(f"cross-validation: {len(rows)} folds in {report['elapsed_seconds']:.1f} s "
              f"({report['wall_seconds']:.1f} s of fold runs)", file=sys.stderr, flush=True)
    return report


# ---------------------------------------------------------------------------------------------- seeds and their vote


def seeded(config: Config, seed: int) -> Config:
    return dataclasses.replace(config, train=dataclasses.replace(config.train, seed=seed))


def run_seeded_cross_validation(config: Config, folds: Sequence[Fold], out_dir: str | Path, seeds: int,
                                progress: bool = True, refit: bool = False, jobs: int = 1) -> dict:
    """``seeds`` cross-validations of one config, with the training seeds S = train.seed .. train.seed + N - 1, each
    in ``OUT/seed<S>`` (``run_cross_validation``: finished folds are reused, ``refit`` as there), then their majority
    vote on every test problem (``neuromath.evaluation.vote``; ties go to the lowest seed): ``OUT/fold<k>`` holds the
    voted ``predictions.jsonl`` and the fold's config (the lowest seed's), so ``neuromath compare`` pairs the vote
    with any cross-validation over the same folds; the vote's report is ``OUT/report.md`` and ``report.json``.
    Returns that report: ``run_cross_validation``'s keys (rows: the vote's accuracies, each seed's value accuracy
    ``seed_value_accuracy``, the share of problems some seed got right ``any_correct`` and the share on which every
    seed gave one answer ``unanimous``) with ``seeds``, one entry per seed (its seed, folder and mean ± std)."""
    if seeds < 2:
        raise NeuromathError(f"--seeds N votes N cross-validations of different training seeds: give at least 2, "
                             f"not {seeds} (one seed is a plain cv)")
    word_problem_task(config)
    if not folds:
        raise NeuromathError("no folds to cross-validate")
    if config.model.kind == RETRIEVAL:
        raise ConfigError(f"--seeds votes runs of different training seeds; the retrieval baseline "
                          f"{config.model.name} trains nothing")
    out_dir = Path(out_dir)
    started = time.perf_counter()
    with locked(out_dir):
        for name, _, _ in folds:  # the vote writes OUT/<fold>: never over a plain cross-validation's fold run
            if (out_dir / name / "checkpoints").exists() or holds_a_fold_run(out_dir / name):
                raise NeuromathError(f"{out_dir / name} holds a fold run of a cross-validation without --seeds, "
                                     "where the vote would write its predictions: give --seeds another --out")
        reports = []
        for offset in range(seeds):
            seed = config.train.seed + offset
            if progress:
                print(f"seed {seed} ({offset + 1} of {seeds}) in {out_dir / f'seed{seed}'}", file=sys.stderr,
                      flush=True)
            reports.append(run_cross_validation(seeded(config, seed), folds, out_dir / f"seed{seed}", progress,
                                                refit, jobs))
        report = vote_seeds(config, folds, out_dir, reports)
        report["elapsed_seconds"] = time.perf_counter() - started
        write_text_atomic(out_dir / "report.json", json.dumps(report, indent=2))
        write_text_atomic(out_dir / "report.md", format_report(report))
    return report


def holds_a_fold_run(fold_dir: Path) -> bool:
    """Whether ``fold_dir`` holds the summary.json of a fold run (a cross-validation without --seeds), not a vote's."""
    if not (fold_dir / "summary.json").exists():
        return False
    summary = finished_summary(fold_dir)
    return summary is None or "vote_of_seeds" not in summary


def vote_seeds(config: Config, folds: Sequence[Fold], out_dir: Path, reports: Sequence[dict]) -> dict:
    """Vote the seeds' test predictions fold by fold into ``out_dir/<fold>`` and return the vote's report."""
    seeds = [config.train.seed + offset for offset in range(len(reports))]
    rows = []
    for index, (name, train_path, test_path) in enumerate(folds):
        runs = [scored_fold(Path(report["out"]), name, report) for report in reports]
        for run in runs:
            if not (run / PREDICTIONS_FILE).exists():
                raise NeuromathError(f"{run / PREDICTIONS_FILE}: missing, so this seed's answers cannot be voted on "
                                     f"(a fold run before cv wrote its predictions: delete {run} to run it again)")
        members = [read_predictions(run / PREDICTIONS_FILE, ("id", "correct", "predicted_value")) for run in runs]
        voted = vote_runs(members, [str(run) for run in runs])
        fold_dir = out_dir / name
        fold_dir.mkdir(parents=True, exist_ok=True)
        save_config(fold_config(seeded(config, seeds[0]), train_path, test_path), fold_dir / "config.yaml")
        write_predictions(voted, fold_dir / PREDICTIONS_FILE)
        rows.append(vote_row(index, name, train_path, test_path, fold_dir, voted, members, reports))
        write_text_atomic(fold_dir / "summary.json", json.dumps(vote_summary(rows[-1], voted, seeds), indent=2))
    return vote_report(config, out_dir, rows, reports)
