"""Training equation classifiers (identities task) as Arabshahi et al. 2018 and Mali et al. 2021 describe it:
Adam with weight decay, the learning rate halved when validation accuracy stalls, mini-batches of 50 equations,
early stopping on validation accuracy; trained on shallow equations (depth 1-7), tested on deeper ones (8-13).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import lightning.pytorch as pl
import torch

from neuromath.config import Config, save_config
from neuromath.config.rules import parse_depths
from neuromath.errors import ConfigError, NeuromathError
from neuromath.fileio import write_text_atomic
from neuromath.models.classifiers import (
    EncodedEquations,
    build_classifier,
    config_reads_numbers,
    make_loader,
    node_vocabulary,
    predict_logits,
    reads_numbers,
)
from neuromath.models.hub import model_folder
from neuromath.models.weights import has_weights, load_run_weights, weights_file
from neuromath.nn.distributed import is_rank_zero
from neuromath.tasks import EquationTask, get_task
from neuromath.text import Vocabulary
from neuromath.training.allocator import keep_freed_memory
from neuromath.training.module import ClassifierModule
from neuromath.training.ranking import CompletionRanking
from neuromath.training.run import (
    TrainResult,
    check_run_dir,
    fit_and_keep_best,
    processes_summary,
    quiet_lightning,
    resumed_summary,
    run_precision,
)
from neuromath.training.run_folder import save_weights


@dataclass
class IdentityData:
    train: list  # the task's equations (``EquationTask.read``)
    valid: list
    test: list
    report: dict = field(default_factory=dict)


def read_training_file(task: EquationTask, path: str, lenient: bool) -> tuple[list, dict]:
    """A file of labelled training equations and what reading it reported (file, rows read, rows skipped)."""
    examples = task.read(path, lenient=lenient, skipped=(skipped := []))
    if any(e.label is None for e in examples):
        raise NeuromathError(f"{path}: training equations need labels 1 or 0 (found -1)")
    return examples, {"file": path, "read": len(examples), "skipped": [str(e) for e in skipped]}


def prepare_identity_data(config: Config) -> IdentityData:
    """Train / validation / test equations from the config's data section.

    ``data.train`` is a file in the released format, or unset to generate ``generate_train`` equations with the
    built-in generator (seed ``generate_seed``, depths up to the largest test depth). Training uses its equations
    of ``data.train_depths``; validation is ``data.valid`` or a seeded ``valid_fraction`` carved from them; the test
    set is ``data.test`` (all its depths) or, when unset, the train source's equations of ``data.test_depths``.
    The equations of ``data.train_extra`` (a comma list of files, all their depths) are added to the training set
    after validation is carved out, so they never reach validation.
    """
    data, task = config.data, get_task(config.data.task)
    train_depths = parse_depths(data.train_depths, "data.train_depths")
    test_depths = parse_depths(data.test_depths, "data.test_depths")
    report: dict = {}
    if data.train:
        pool, report["train_source"] = read_training_file(task, data.train, data.lenient)
    else:
        pool = task.generate(
            data.generate_train, random.Random(data.generate_seed), max_depth=max(train_depths | test_depths)
        )
        report["train_source"] = {"generated": len(pool), "seed": data.generate_seed}
    train = [e for e in pool if e.depth in train_depths]
    if data.valid:
        valid = task.read(data.valid, lenient=data.lenient)
    else:
        order = list(range(len(train)))
        random.Random(data.generate_seed + 1).shuffle(order)
        n_valid = max(1, round(data.valid_fraction * len(train)))
        if data.valid_max:
            n_valid = min(n_valid, data.valid_max)
        chosen = set(order[:n_valid])
        valid = [e for i, e in enumerate(train) if i in chosen]
        train = [e for i, e in enumerate(train) if i not in chosen]
    test = task.read(data.test, lenient=data.lenient) if data.test else [e for e in pool if e.depth in test_depths]
    extra_files = [name.strip() for name in (data.train_extra or "").split(",") if name.strip()]
    if extra_files:
        report["train_extra"] = []
        for name in extra_files:
            extra, read = read_training_file(task, name, data.lenient)
            report["train_extra"].append(read)
            train.extend(extra)
    if not train or not valid:
        raise NeuromathError(
            f"no training or validation equations of depths {data.train_depths} (train source: {report})"
        )
    report.update({"train": len(train), "valid": len(valid), "test": len(test)})
    return IdentityData(train, valid, test, report)


# ------------------------------------------------------------------------------------------ training


def fit_classifier(config: Config, run_dir: str | Path, resume: bool = False,
                   callbacks: list | None = None) -> TrainResult:
    """Train (or resume) an equation classifier in ``run_dir``: node vocabulary, config, data report, best weights
    and summary.json. The held-out test set (``result.data.test``) is scored by ``neuromath.experiments``.
    ``callbacks``: more Lightning callbacks (``benchmarks/time_to_result.py`` records each epoch's cost with one)."""
    quiet_lightning()
    run_dir = Path(run_dir)
    check_run_dir(run_dir, config, resume)
    keep_freed_memory()
    if config.train.num_threads:
        torch.set_num_threads(config.train.num_threads)
    pl.seed_everything(config.train.seed, workers=True, verbose=False)
    task = get_task(config.data.task)
    data = prepare_identity_data(config)
    # a trained run or export, or a model on the hub by id (downloaded into the Hugging Face cache)
    init_from = model_folder(config.train.init_from) if config.train.init_from else None
    if init_from is not None and not has_weights(init_from):
        raise NeuromathError(f"train.init_from: {init_from} is not a trained identities run (no model.pt or "
                             "model.safetensors)")
    if resume:
        vocab = Vocabulary.load(run_dir / "node_vocab.json")
    elif init_from is not None:  # the start run's vocabulary, so its embeddings keep their rows
        vocab = Vocabulary.load(init_from / "node_vocab.json")
    else:
        vocab = node_vocabulary(data.train, config_reads_numbers(config.model))
    if is_rank_zero():  # every process of a multi-process run builds the same vocabulary; rank zero writes
        run_dir.mkdir(parents=True, exist_ok=True)
        vocab.save(run_dir / "node_vocab.json")
        save_config(config, run_dir / "config.yaml")
        write_text_atomic(run_dir / "data.json", json.dumps(data.report, indent=2))

    model = build_classifier(config.model, vocab)
    if init_from is not None and not resume:  # a resumed run reads its own checkpoint instead
        load_run_weights(model, weights_file(init_from))  # a run folder's model.pt or an export's safetensors
    ranking = None
    if config.train.rank_weight > 0:
        if not config.data.candidates:
            raise ConfigError("train.rank_weight > 0 needs data.candidates, the candidate file to draw fillers from")
        if task.completion is None:
            raise ConfigError(f"train.rank_weight > 0: the {task.name} task has no completion to rank")
        candidates = task.completion.read_candidates(config.data.candidates)
        ranking = CompletionRanking(
            task.completion, data.train, candidates, vocab, config.train.rank_groups, config.train.rank_negatives,
            config.train.rank_hard, seed=config.train.seed, numbers=reads_numbers(model), valid=data.valid,
        )
    train_set = EncodedEquations(data.train, vocab, model.input_kind, reads_numbers(model))
    valid_set = EncodedEquations(data.valid, vocab, model.input_kind, reads_numbers(model))
    summary: dict = {
        "run_dir": str(run_dir),
        "model": config.model.name,
        "train_examples": len(train_set),
        "valid_examples": len(valid_set),
        "parameters": sum(p.numel() for p in model.parameters()),
        "precision": run_precision(config),
        "node_vocab_size": len(vocab),
    }
    if not model.trainable:  # the majority class: counted from the labels, nothing to train
        model.fit([bool(e.label) for e in data.train])
        save_weights(model.state_dict(), run_dir / "model.pt")
        accuracy = predict_accuracy(model, data.valid, vocab, task.is_correct)
        summary.update({"epochs": 0, "steps": 0, "best_val_accuracy": accuracy})
    else:
        module = ClassifierModule(config, model, ranking)
        fitted = fit_and_keep_best(
            config, run_dir, module,
            make_loader(train_set, config.train.batch_size, seed=config.train.seed),
            make_loader(valid_set, config.decode.batch_size, shard=True), monitor=module.monitor, resume=resume,
            callbacks=callbacks,
        )
        if not fitted.writer:  # another process of a multi-process run: rank zero writes the summary and tests
            return TrainResult({}, IdentityData([], [], [], data.report))
        model.load_state_dict(fitted.weights)
        score = fitted.best.best_model_score
        summary.update(
            {
                "best_checkpoint": fitted.best_path,
                "best_val_accuracy": float(score) if score is not None else None,
                "epochs": fitted.trainer.current_epoch,
                "steps": fitted.trainer.global_step,
                "stopped_by": fitted.stopped_by,
                **resumed_summary(fitted),
                **processes_summary(config, fitted.trainer),
            }
        )
        if ranking is not None:  # selected on completion: score the chosen weights on both validation measures
            completion = ranking.validate(model)
            summary.update({
                "best_val_accuracy": predict_accuracy(model, data.valid, vocab, task.is_correct),
                "best_val_completion": {key: completion[key] for key in ("n", "top1", "top5", "mrr")},
            })
    write_text_atomic(run_dir / "summary.json", json.dumps(summary, indent=2))
    return TrainResult(summary, data)


def predict_accuracy(model: torch.nn.Module, examples: Sequence[Any], vocab: Vocabulary,
                     is_correct: Callable[[bool, Any], bool]) -> float:
    """The share of ``examples`` whose prediction is right by the task's ``is_correct``."""
    predicted = predict_logits(model, examples, vocab) > 0
    return sum(is_correct(p, e) for p, e in zip(predicted.tolist(), examples)) / max(1, len(examples))
