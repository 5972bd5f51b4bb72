"""Train a sequence model: data, vocabularies, the Lightning trainer (``fit_and_keep_best``, shared with the
classifier training). Scoring the held-out test split with the best weights is the experiments layer's job
(``neuromath.experiments.train``).

A run directory holds ``config.yaml`` (the resolved config), ``source_vocab.json``,
``target_vocab.json``, ``checkpoints/`` (``best.ckpt``, ``last.ckpt``), ``metrics.csv`` (merged from
``logs/session*/``),
``data.json`` (where the data came from and what was skipped) and ``model.pt`` (the best weights); how its
checkpoints, logs, metrics and weights are written and read is ``neuromath.training.run_folder``'s.
"""

from __future__ import annotations

import json
import logging
import random
import warnings
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

import lightning.pytorch as pl
import torch
from lightning.pytorch.callbacks import EarlyStopping, EMAWeightAveraging, Timer
from lightning.pytorch.loggers import CSVLogger

from neuromath.config import Config, load_config, save_config
from neuromath.errors import ConfigError, NeuromathError
from neuromath.fileio import write_text_atomic
from neuromath.models import build_task_model
from neuromath.models.batching import EncodedExamples, make_loader
from neuromath.nn.compiling import compile_in_place
from neuromath.nn.distributed import is_rank_zero
from neuromath.nn.precision import resolve_precision
from neuromath.nn.pretrained import PRETRAINED_DIR
from neuromath.tasks import SequenceTask, Splits, get_task
from neuromath.text import SPECIALS, Vocabulary
from neuromath.training.allocator import keep_freed_memory
from neuromath.training.module import SequenceModule, progress_callbacks
from neuromath.training.run_folder import (
    RunCheckpoint,
    RunCheckpointIO,
    TrainingClock,
    check_resume_config,
    merge_metrics,
    new_session_folder,
    own_folder,
    plot_learning_curves,
    read_checkpoint,
    remove_stale_temporaries,
    save_weights,
)
from neuromath.training.stopping import PatienceEarlyStopping
from neuromath.training.streaming import open_stream, streaming_loader

# Streaming runs: how many records at the stream's head a model that fits its structure to the data reads.
STRUCTURE_SAMPLE = 20000


@dataclass
class PreparedData:
    train: list
    valid: list
    test: list
    report: dict = field(default_factory=dict)  # where each split came from, counts, skipped rows


def read_split(task: SequenceTask, path: str, config: Config, report: dict, split: str) -> list:
    skipped: list = []
    options = task.read_options(config.data, split)
    contradicting = None
    if "strict" in options:  # a reader that checks each row's answer against its equation (word problems)
        options["contradicting"] = contradicting = []
    examples = task.read(path, config.data.format, lenient=config.data.lenient, skipped=skipped, **options)
    report[split] = {"source": path, "read": len(examples), "skipped": [str(error) for error in skipped]}
    if skipped:
        logging.getLogger("neuromath").warning("%s: skipped %d malformed rows (see data.json)", path, len(skipped))
    if contradicting is not None:
        report[split]["contradicting"] = [str(error) for error in contradicting]
        if contradicting:
            logging.getLogger("neuromath").warning(
                "%s: %d rows whose answer contradicts their own equation, kept (see data.json; "
                "--set data.strict=true refuses them)", path, len(contradicting))
    return examples


def prepare_data(config: Config, task: SequenceTask) -> PreparedData:
    """Read the files the config names, or generate held-out splits with the task's generator."""
    data, report = config.data, {}
    seed = data.generate_seed
    if data.train:
        train = read_split(task, data.train, config, report, "train")
    else:
        train = task.generate(data.generate_train, random.Random(seed), **task.generate_options(data, "train"))
        report["train"] = {"source": f"generated (seed {seed})", "read": len(train)}
    train_texts = {example.text for example in train}

    def held_out(path: str | None, n: int, offset: int, split: str) -> list:
        if path:
            return read_split(task, path, config, report, split)
        if not data.train:
            generated = task.generate(n, random.Random(seed + offset), **task.generate_options(data, split))
            kept = [example for example in generated if example.text not in train_texts]
            report[split] = {"source": f"generated (seed {seed + offset})", "read": len(kept),
                             "dropped_as_in_train": len(generated) - len(kept)}
            return kept
        return []

    if not config.train.validate and data.valid:
        raise ConfigError(f"data.valid names {data.valid}, but train.validate is false: a run without validation "
                          "reads no validation file")
    # train.validate false (a refit): the whole training file trains, nothing is held out for validation
    literature = config.train.protocol == "literature"  # the epoch is chosen on the test split (config rule)
    valid = held_out(data.valid, data.generate_valid, 1, "valid") if config.train.validate and not literature else []
    test = held_out(data.test, data.generate_test, 2, "test")
    if literature and not test:
        raise ConfigError("train.protocol literature chooses the epoch on the test split, and this run has none: "
                          "name it in data.test")
    if not valid and config.train.validate and not literature:
        if len(train) < 2:
            raise NeuromathError("need at least two training examples to carve out a validation set")
        shuffled = train[:]
        random.Random(seed).shuffle(shuffled)
        cut = max(1, int(len(shuffled) * data.valid_fraction))
        source = f"{data.valid_fraction:.0%} of train (seed {seed})"
        if 0 < data.valid_max < cut:
            cut = data.valid_max
            source = (f"{data.valid_max} of train (seed {seed}; valid_fraction {data.valid_fraction:.0%} "
                      "capped by valid_max)")
        valid, train = shuffled[:cut], shuffled[cut:]
        report["valid"] = {"source": source, "read": len(valid)}
        report["train"]["after_valid_split"] = len(train)
    if not train:
        raise NeuromathError("the training set is empty")
    if task.prepare_splits is not None:  # after the carve-out: what the task adds, varies or rewrites
        splits = task.prepare_splits(data, Splits(train, valid, test, report),
                                     lambda path: read_training_file(task, path, config))
        train, valid, test, report = splits.train, splits.valid, splits.test, splits.report
    if literature:  # after prepare_splits: the test split as it is scored, nothing varied or added
        valid = list(test)
        report["valid"] = {"source": "the test split (train.protocol literature: the kept epoch is chosen on it)",
                           "read": len(valid)}
    return PreparedData(train, valid, test, report)


def read_training_file(task: SequenceTask, path: str, config: Config) -> tuple[list, dict]:
    """One more file read as ``data.train`` is, and its report entry (the ``read`` of a task's ``prepare_splits``)."""
    read: dict = {}
    examples = read_split(task, path, config, read, "train")
    return examples, read["train"]


@dataclass
class TrainResult:
    summary: dict  # also saved as summary.json
    data: PreparedData  # the splits used, including the held-out test split when one was generated


def quiet_lightning() -> None:
    for name in ("lightning", "lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.WARNING)  # no banners about GPUs, TPUs and tips


def run_precision(config: Config) -> str:
    """The precision a run trains in: ``train.precision`` resolved for ``train.accelerator`` (``auto`` decided, a
    GPU-only precision on the CPU refused)."""
    return resolve_precision(config.train.precision, config.train.accelerator)


def check_run_dir(run_dir: Path, config: Config, resume: bool) -> None:
    """A new run needs a folder without checkpoints; a resumed one its last checkpoint (one that loads as plain
    data) and the same config. The precision is checked against the accelerator here, before any data is read."""
    run_precision(config)
    checkpoints = run_dir / "checkpoints"
    if resume:
        if not (checkpoints / "last.ckpt").exists():
            raise NeuromathError(f"{run_dir}: nothing to resume (no checkpoints/last.ckpt)")
        check_resume_config(load_config(run_dir / "config.yaml"), config)
        read_checkpoint(checkpoints / "last.ckpt")
    elif is_rank_zero() and checkpoints.exists() and any(checkpoints.iterdir()):  # rank zero decides for a new run
        raise NeuromathError(f"{run_dir} already holds a run; pass --resume to continue it or choose another --out")


def fit_sequence_model(config: Config, run_dir: str | Path, resume: bool = False,
                       callbacks: list | None = None) -> TrainResult:
    """Train (or resume) a sequence run in ``run_dir``; summary.json holds everything but the test scores.
    ``callbacks``: more Lightning callbacks (``benchmarks/time_to_result.py`` records each epoch's cost with one)."""
    quiet_lightning()
    keep_freed_memory()
    run_dir = Path(run_dir)
    check_run_dir(run_dir, config, resume)

    task = get_task(config.data.task).configured(config.data)  # sources read as the data settings say
    if config.train.num_threads:
        torch.set_num_threads(config.train.num_threads)
    pl.seed_everything(config.train.seed, workers=True, verbose=False)
    stream = None
    streaming = task.streaming is not None and task.streaming.enabled(config.data)
    if streaming and not config.train.validate:
        raise ConfigError("train.validate false trains on the whole of an in-memory data.train; a streamed corpus "
                          "(data.streaming) holds its validation records out of the stream")
    if streaming:  # data.train is read lazily, batch by batch (neuromath.training.streaming)
        stream = open_stream(config, task)
        report = stream.report
        valid = read_split(task, config.data.valid, config, report, "valid") if config.data.valid else stream.valid
        test = read_split(task, config.data.test, config, report, "test") if config.data.test else []
        data = PreparedData([], valid, test, report)
    else:
        data = prepare_data(config, task)
        data.train, too_long = filter_length(task, data.train, config)
        data.report["train"]["dropped_too_long"] = too_long

    if resume:
        source_vocab = Vocabulary.load(run_dir / "source_vocab.json")
        target_vocab = Vocabulary.load(run_dir / "target_vocab.json")
    else:
        # every process builds the same tables from the same data; only rank zero writes the run folder
        source_vocab, target_vocab = build_vocabularies(task, stream.vocab_sample if stream else data.train, config)
        if is_rank_zero():
            run_dir.mkdir(parents=True, exist_ok=True)
            source_vocab.save(run_dir / "source_vocab.json")
            target_vocab.save(run_dir / "target_vocab.json")
    if is_rank_zero():
        save_config(config, run_dir / "config.yaml")
        write_text_atomic(run_dir / "data.json", json.dumps(data.report, indent=2, ensure_ascii=False))

    valid_set = EncodedExamples(data.valid, task, source_vocab, target_vocab)

    def scorer(indices: list[int], hypotheses: list[list[int]]) -> list[tuple[bool, bool]]:
        results = []
        for index, ids in zip(indices, hypotheses):
            example, tokens = valid_set.examples[index], target_vocab.decode(ids)
            results.append((bool(task.is_correct(tokens, example)), bool(task.equation_matches(tokens, example))))
        return results

    extra_callbacks = list(callbacks or [])
    if stream:
        train_loader, position = streaming_loader(stream, task, source_vocab, target_vocab, config)
        extra_callbacks.append(position)
        train_examples = stream.records - stream.held_out
    else:
        train_set = EncodedExamples(data.train, task, source_vocab, target_vocab)
        train_loader = make_loader(train_set, config.train.batch_size, shuffle_seed=config.train.seed,  # sharded
                                   length_multiple=config.train.length_multiple,
                                   length_grouping=config.train.length_grouping)
        train_examples = len(train_set)
    # a resumed run builds its pretrained encoder (if any) from the files it saved when it started
    model = build_task_model(config.model, task, source_vocab, target_vocab, run_dir if resume else None)
    if not resume and hasattr(model, "save_pretrained_files") and is_rank_zero():
        model.save_pretrained_files(Path(run_dir) / PRETRAINED_DIR)
    if not resume and model.learns_structure:  # tree-relation ids from the training data
        # streaming: the records at the stream's head stand in for the training set
        items = (EncodedExamples(list(islice(stream.vocab_sample, STRUCTURE_SAMPLE)), task, source_vocab,
                                 target_vocab) if stream else train_set).items
        model.fit_structure([source for source, _ in items], [target[:-1] for _, target in items])
    if config.train.compile:
        compile_in_place(model, config.train.accelerator, config.train.compile_mode)
    tokens_per_batch = None
    if config.optim.loss_denominator == "average":  # a stream: the records at its head stand in for the set
        items = (EncodedExamples(list(islice(stream.vocab_sample, STRUCTURE_SAMPLE)), task, source_vocab,
                                 target_vocab) if stream else train_set).items
        tokens_per_batch = config.train.batch_size * sum(len(target) - 1 for _, target in items) / max(1, len(items))
    module = SequenceModule(config, model, scorer, droppable_source=droppable_source(task, source_vocab, config),
                            word_dropout=task.vocabulary_options(config.data).word_dropout,
                            tokens_per_batch=tokens_per_batch)
    valid_loader = (make_loader(valid_set, config.decode.batch_size, shard=True,
                                length_multiple=config.train.length_multiple) if config.train.validate else None)
    fitted = fit_and_keep_best(config, run_dir, module, train_loader, valid_loader, monitor="val_value_accuracy",
                               resume=resume, callbacks=extra_callbacks)
    trainer, best, best_path = fitted.trainer, fitted.best, fitted.best_path
    if not fitted.writer:  # another process of a multi-process run: rank zero writes the summary and tests
        return TrainResult({}, PreparedData([], [], [], data.report))
    best_score = best.best_model_score if best is not None else None  # None: a run without validation
    summary = {
        "run_dir": str(run_dir),
        "best_checkpoint": best_path,
        "best_val_value_accuracy": float(best_score) if best_score is not None else None,
        "protocol": config.train.protocol,  # literature: that "validation" score is the test split's
        "epochs": trainer.current_epoch,
        "steps": trainer.global_step,
        "stopped_by": fitted.stopped_by,
        **resumed_summary(fitted),
        "train_examples": train_examples,
        "valid_examples": len(valid_set),
        "source_vocab_size": len(source_vocab),
        "target_vocab_size": len(target_vocab),
        "parameters": sum(p.numel() for p in module.model.parameters()),
        "precision": run_precision(config),
        **processes_summary(config, trainer),
    }
    write_text_atomic(run_dir / "summary.json", json.dumps(summary, indent=2))
    return TrainResult(summary, data)


def resumed_summary(fitted: FitResult) -> dict:
    """What summary.json says of a resumed run's earlier sessions (nothing for a run trained in one session)."""
    return {"resumed_seconds": fitted.resumed_seconds} if fitted.resumed_seconds > 0 else {}


def processes_summary(config: Config, trainer) -> dict:
    """What summary.json says of a multi-process run (nothing for one process): the processes and the batch of a
    step over all of them (``train.batch_size`` is per process)."""
    world = trainer.world_size
    return {"processes": world, "global_batch_size": world * config.train.batch_size} if world > 1 else {}


def build_vocabularies(task: SequenceTask, train: list, config: Config) -> tuple[Vocabulary, Vocabulary]:
    """The source and target vocabularies of a run on the training examples ``train`` (one shared table when the task
    says so). Source words seen fewer than ``data.min_count`` times are left out (read as <unk>); the task's
    reserved tokens (``SourceText.reserved_tokens``; word problems: the number slots n0, n1, ...) are in whatever
    their counts. ``task`` is the
    configured task (``SequenceTask.configured``), so its source tokens follow the data settings."""
    min_count = task.vocabulary_options(config.data).min_count
    reserved_source, reserved_target = task.source_text.reserved_tokens(train) if task.source_text else ([], [])
    if task.shared_vocab:  # one table for both sides, built from inputs and outputs
        shared = Vocabulary.build(
            (tokens for e in train for tokens in (task.source_tokens(e), task.target_tokens(e))),
            level=task.vocab_level, reserved=[*reserved_source, *reserved_target],
        )
        return shared, shared
    source_vocab = Vocabulary.build((task.source_tokens(e) for e in train), level=task.vocab_level,
                                    min_count=min_count, reserved=reserved_source)
    target_vocab = Vocabulary.build((task.target_tokens(e) for e in train), level=task.vocab_level,
                                    reserved=reserved_target)
    return source_vocab, target_vocab


def droppable_source(task: SequenceTask, source_vocab: Vocabulary, config: Config) -> torch.Tensor | None:
    """Which source ids word dropout may replace by <unk> (a bool per id of ``source_vocab``): every ordinary word,
    not pad/bos/eos/unk nor what the task keeps (``SourceText.keeps_token``: word problems keep their numbers and
    clause breaks). None when the run has no word dropout (the task's ``vocabulary_options``: ``data.word_dropout``
    0, or not a key of its task)."""
    if task.vocabulary_options(config.data).word_dropout <= 0:
        return None
    keeps = task.source_text.keeps_token if task.source_text else (lambda token: False)
    return torch.tensor([token not in SPECIALS and not keeps(token) for token in source_vocab.tokens],
                        dtype=torch.bool)


@dataclass
class FitResult:
    trainer: object  # the lightning Trainer
    best: object  # the ModelCheckpoint callback that kept the best validation score; None without validation
    best_path: str  # the best checkpoint (the last one when no validation ran)
    weights: dict | None  # the model's weights from the best checkpoint, without the module's "model." prefix
    writer: bool = True  # False in the processes other than rank zero of a multi-process run: they wrote nothing
    stopped_by: str | None = None  # what ended the fit (``stop_reason``); None in the processes other than rank zero
    resumed_seconds: float = 0.0  # seconds the sessions before a resume trained (``TrainingClock``); 0 for a new run


def fit_and_keep_best(config: Config, run_dir: Path, module, train_loader, valid_loader, monitor: str,
                      resume: bool, callbacks: list | None = None) -> FitResult:
    """Fit a LightningModule whose ``model`` is the thing trained: checkpoints ``best`` (highest ``monitor``) and
    ``last`` in RUN_DIR/checkpoints, early stopping after ``train.patience`` validations, a CSV log per session
    merged into RUN_DIR/metrics.csv, and the best weights saved as RUN_DIR/model.pt.

    ``train.devices`` x ``train.num_nodes`` processes train together under ``train.strategy`` (DDP): the loaders
    shard their examples themselves (``models.batching``), so Lightning's distributed sampler is off; only rank
    zero writes (Lightning saves checkpoints and logs from rank zero; the merged metrics and model.pt here).

    ``valid_loader`` None (``train.validate`` false): no validation, no best checkpoint and no early stopping; the
    run trains its whole budget and ``model.pt`` holds the last weights."""
    checkpoints = run_dir / "checkpoints"
    if is_rank_zero():  # the only process that writes the run folder
        own_folder(checkpoints)
        remove_stale_temporaries(checkpoints)
    session = new_session_folder(run_dir)  # each train / resume call logs apart, in a folder made for it
    target = {"monitor": monitor, "mode": "max"}
    # Two checkpoint callbacks: Lightning's save_last only writes when the best one improves.
    best = None
    if valid_loader is not None:
        best = RunCheckpoint(dirpath=checkpoints, filename="best", save_top_k=1, enable_version_counter=False,
                             **target)
    latest = RunCheckpoint(dirpath=checkpoints, filename="last", save_top_k=1, enable_version_counter=False)
    clock = TrainingClock()
    callbacks = [*(callbacks or []), clock, *([best] if best else []), latest]
    shown, bars = progress_callbacks(config.train.progress)  # bars on a terminal, a line per epoch otherwise
    callbacks += shown
    if config.train.patience > 0 and valid_loader is not None:
        callbacks.append(PatienceEarlyStopping(patience=config.train.patience, **target))
    if config.optim.ema_decay > 0:
        # Validation swaps the average in, a checkpoint's state_dict is the average (the raw weights go to its
        # current_model_state, which resume reads back). Buffers are index tables, not learned: not averaged.
        callbacks.append(EMAWeightAveraging(decay=config.optim.ema_decay, use_buffers=False))
    max_time = {"minutes": config.train.max_time_minutes} if config.train.max_time_minutes > 0 else None
    trainer = pl.Trainer(
        default_root_dir=run_dir,
        accelerator=config.train.accelerator,
        devices=config.train.devices,
        num_nodes=config.train.num_nodes,
        strategy=config.train.strategy,
        use_distributed_sampler=False,  # the samplers shard by rank (neuromath.nn.distributed)
        precision=run_precision(config),
        max_epochs=config.train.max_epochs,
        max_steps=config.train.max_steps,
        **validation_schedule(config, len(train_loader) // planned_processes(config), valid_loader is not None),
        min_epochs=config.train.min_epochs,
        max_time=max_time,
        gradient_clip_val=config.optim.grad_clip or None,
        callbacks=callbacks,
        logger=CSVLogger(run_dir / "logs", name="", version=session.name),
        plugins=[RunCheckpointIO()],  # checkpoints written beside their target, synced, renamed: never half
        enable_progress_bar=bars,
        enable_model_summary=False,
        log_every_n_steps=max(1, min(10, len(train_loader) // planned_processes(config))),
        num_sanity_val_steps=0,
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*does not have many workers.*")
        warnings.filterwarnings("ignore", ".*Checkpoint directory.*exists and is not empty.*")
        warnings.filterwarnings("ignore", ".*LeafSpec.*is deprecated.*")
        warnings.filterwarnings("ignore", ".*validation_step.*but have no.*val_dataloader.*")  # train.validate false
        # a streamed corpus is sharded by process and worker, and its loader's length is each process's batches
        warnings.filterwarnings("ignore", ".*IterableDataset.*has.*__len__.*defined.*")
        # the validation scores are gathered from every process already (SequenceModule, ClassifierModule), and the
        # training loss shown is rank zero's own: syncing them at each step would cost a collective step for nothing
        warnings.filterwarnings("ignore", r".*self\.log\('(val_value_accuracy|val_equation_accuracy|val_accuracy|"
                                          r"train_loss)'.*sync_dist=True.*")
        try:
            trainer.fit(
                module,
                train_dataloaders=train_loader,
                val_dataloaders=valid_loader,
                ckpt_path=str(checkpoints / "last.ckpt") if resume else None,
                weights_only=True,  # plain data only: a checkpoint cannot run code
            )
        finally:
            if trainer.is_global_zero:
                plot_learning_curves(merge_metrics(run_dir), run_dir / "learning_curves.png")
    if not trainer.is_global_zero:
        return FitResult(trainer, best, "", None, writer=False)
    stopped_by = stop_reason(trainer, config)
    best_path = checkpoints / ("best.ckpt" if (checkpoints / "best.ckpt").exists() else "last.ckpt")  # by name
    state = read_checkpoint(best_path)["state_dict"]
    weights = {key.removeprefix("model."): value for key, value in state.items() if key.startswith("model.")}
    save_weights(weights, run_dir / "model.pt")
    return FitResult(trainer, best, str(best_path), weights, stopped_by=stopped_by,
                     resumed_seconds=round(clock.before, 1))


STOP_REASONS = {  # what ``stop_reason`` can answer, as the lines printed after training name it
    "early_stopping": "early stopping",
    "no_validation": "its budget (no validation)",
    "max_time": "its time limit (train.max_time_minutes)",
    "max_steps": "its step limit (train.max_steps)",
    "max_epochs": "its epoch limit (train.max_epochs)",
}  # an interrupted fit never gets here: Lightning exits (Ctrl+C) or re-raises the error
CONVERGED = ("early_stopping", "no_validation")  # the reasons that are not a limit cutting an improving run


def limit_that_ended(summary: dict) -> str | None:
    """The ``stopped_by`` of a run's summary when a limit ended it before early stopping (not at convergence), else
    None; summaries written before ``stopped_by`` was recorded have none."""
    stopped_by = summary.get("stopped_by")
    return stopped_by if stopped_by is not None and stopped_by not in CONVERGED else None


def stop_reason(trainer, config: Config) -> str:
    """What ended a finished fit, a key of ``STOP_REASONS``: only ``early_stopping`` (or ``no_validation``, where
    there is no early stopping to wait for) says that the run went on until validation stopped improving; a limit
    (time, steps, epochs) may have cut a run that was still improving, and summary.json says which."""
    for callback in trainer.callbacks:
        if isinstance(callback, EarlyStopping) and callback.stopped_epoch > 0:
            return "early_stopping"
    for callback in trainer.callbacks:
        if isinstance(callback, Timer):
            remaining = callback.time_remaining()  # None before the timer started
            if remaining is not None and remaining <= 0.0:
                return "max_time"
    if not config.train.validate:
        return "no_validation"
    if config.train.max_steps > 0 and trainer.global_step >= config.train.max_steps:
        return "max_steps"
    return "max_epochs"


def planned_processes(config: Config) -> int:
    """The processes a run's config asks for (1 when ``train.devices`` is -1: not known before the trainer starts)."""
    return max(1, config.train.devices) * config.train.num_nodes


def validation_schedule(config: Config, steps_per_epoch: int, validates: bool) -> dict:
    """Validate every epoch, or every ``train.val_every_steps`` steps counted across epochs (the config checks that
    ``max_steps`` is a multiple); a step limit inside the first epoch must then validate by steps."""
    every, limit = config.train.val_every_steps, config.train.max_steps
    if validates and not every and 0 < limit < steps_per_epoch:
        raise ConfigError(f"train.max_steps ({limit}) ends the run inside its first epoch ({steps_per_epoch} steps), "
                          "before any validation: set train.val_every_steps to a divisor of it, or raise it")
    return {"val_check_interval": every, "check_val_every_n_epoch": None} if every else {}


def filter_length(task: SequenceTask, examples: list, config: Config) -> tuple[list, int]:
    kept = [
        e for e in examples
        if len(task.source_tokens(e)) < config.data.max_source_len
        and len(task.target_tokens(e)) < config.data.max_target_len
    ]
    return kept, len(examples) - len(kept)
