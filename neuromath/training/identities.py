"""Training equation classifiers (identities task) as Arabshahi et al. 2018 and Mali et al. 2021 describe it:
Adam with weight decay, the learning rate halved when validation accuracy stalls, mini-batches of 50 equations,
early stopping on validation accuracy; trained on shallow equations (depth 1-7), tested on deeper ones (8-13).
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import torch
from torch.utils.data import DataLoader, Dataset

from neuromath.config import Config, load_config, save_config
from neuromath.errors import ConfigError, NeuromathError
from neuromath.fileio import write_text_atomic
from neuromath.tasks.identities import EquationExample, EquationNode, is_correct, postorder, preorder, read_equations
from neuromath.text import Vocabulary
from neuromath.training.data import EpochShuffleSampler, move_batch, pad


def parse_depths(text: str, key: str = "data.train_depths") -> set[int]:
    """``"1-7"`` -> {1, ..., 7}; ``"8,10-12"`` -> {8, 10, 11, 12}."""
    depths: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                low, high = (int(p) for p in part.split("-", 1))
                if low > high:
                    raise ValueError
                depths.update(range(low, high + 1))
            elif part:
                depths.add(int(part))
    except ValueError:
        raise ConfigError(f"{key} must be depth ranges like '1-7' or '8,10-12', got {text!r}") from None
    if not depths:
        raise ConfigError(f"{key} names no depth")
    return depths


@dataclass
class IdentityData:
    train: list[EquationExample]
    valid: list[EquationExample]
    test: list[EquationExample]
    report: dict = field(default_factory=dict)


def prepare_identity_data(config: Config) -> IdentityData:
    """Train / validation / test equations from the config's data section.

    ``data.train`` is a file in the released format, or unset to generate ``generate_train`` equations with the
    built-in generator (seed ``generate_seed``, depths up to the largest test depth). Training uses its equations
    of ``data.train_depths``; validation is ``data.valid`` or a seeded ``valid_fraction`` carved from them; the test
    set is ``data.test`` (all its depths) or, when unset, the train source's equations of ``data.test_depths``.
    """
    data = config.data
    train_depths = parse_depths(data.train_depths, "data.train_depths")
    test_depths = parse_depths(data.test_depths, "data.test_depths")
    report: dict = {}
    if data.train:
        pool = read_equations(data.train, lenient=data.lenient, skipped=(skipped := []))
        report["train_source"] = {"file": data.train, "read": len(pool), "skipped": [str(e) for e in skipped]}
    else:
        from neuromath.tasks.identity_generator import generate

        pool = generate(data.generate_train, random.Random(data.generate_seed), max_depth=max(train_depths | test_depths))
        report["train_source"] = {"generated": len(pool), "seed": data.generate_seed}
    if any(e.label is None for e in pool):
        raise NeuromathError(f"{data.train}: training equations need labels 1 or 0 (found -1)")
    train = [e for e in pool if e.depth in train_depths]
    if data.valid:
        valid = read_equations(data.valid, lenient=data.lenient)
    else:
        order = list(range(len(train)))
        random.Random(data.generate_seed + 1).shuffle(order)
        n_valid = max(1, round(data.valid_fraction * len(train)))
        if data.valid_max:
            n_valid = min(n_valid, data.valid_max)
        chosen = set(order[:n_valid])
        valid = [e for i, e in enumerate(train) if i in chosen]
        train = [e for i, e in enumerate(train) if i not in chosen]
    test = read_equations(data.test, lenient=data.lenient) if data.test else [e for e in pool if e.depth in test_depths]
    if not train or not valid:
        raise NeuromathError(f"no training or validation equations of depths {data.train_depths} (train source: {report})")
    report.update({"train": len(train), "valid": len(valid), "test": len(test)})
    return IdentityData(train, valid, test, report)


# ------------------------------------------------------------------------------------------ encoding and batches


def node_vocabulary(examples: Sequence[EquationExample]) -> Vocabulary:
    """Every node symbol of the training equations (operators and leaves) plus the four symbols."""
    from neuromath.tasks.identities import SYMBOLS

    return Vocabulary.build([[n.token for n in preorder(e.tree) if n.func != "Equality"] for e in examples] + [list(SYMBOLS)])


def side_tree(side: EquationNode, vocab: Vocabulary) -> tuple:
    """A side as the tree engine's nested tuples: leaves carry vocabulary ids, internal nodes operator ids."""
    from neuromath.models.identities import OPERATOR_IDS

    built: list[tuple] = []  # a stack: post-order visits children before parents
    for node in postorder(side):
        if node.is_leaf:
            built.append((vocab.index.get(node.token, vocab.unk_id), ()))
        else:
            children = tuple(built[-len(node.children):])
            del built[-len(node.children):]
            built.append((OPERATOR_IDS[node.func], children))
    return built[0]


class EncodedEquations(Dataset):
    """Each equation's two sides encoded once for a classifier reading ``input_kind``: ``trees`` (the tree engine's
    nested tuples), ``tokens`` (pre-order id sequences) or ``none`` (the majority class reads only the labels)."""

    def __init__(self, examples: Sequence[EquationExample], vocab: Vocabulary, input_kind: str):
        if input_kind not in ("trees", "tokens", "none"):
            raise ValueError(f"input_kind must be trees, tokens or none, not {input_kind!r}")
        self.examples = list(examples)
        self.input_kind = input_kind
        encoded: dict[int, object] = {}  # side object -> its encoding: equations that share a side encode it once

        def encode(side: EquationNode):
            if id(side) not in encoded:
                if input_kind == "trees":
                    encoded[id(side)] = side_tree(side, vocab)
                else:
                    encoded[id(side)] = vocab.encode([n.token for n in preorder(side)]) if input_kind == "tokens" else None
            return encoded[id(side)]

        self.items = [
            (encode(example.tree.children[0]), encode(example.tree.children[1]), float(bool(example.label)))
            for example in self.examples
        ]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int):
        return self.items[index]


def make_collate(input_kind: str):
    """The collate function for a classifier reading ``trees``, ``tokens`` or nothing (``none``)."""
    from neuromath.nn.tree_engine import make_tree_batch

    def collate(items) -> dict:
        lefts, rights, labels = zip(*items)
        batch = {"labels": torch.tensor(labels, dtype=torch.float)}  # (B,)
        sides = [side for pair in zip(lefts, rights) for side in pair]  # sides 2i (left) and 2i+1 (right)
        if input_kind == "trees":
            batch["trees"] = make_tree_batch(sides)
        elif input_kind == "tokens":
            batch["tokens"] = pad(sides)  # (2B, T)
            batch["lengths"] = torch.tensor([len(s) for s in sides], dtype=torch.long)  # (2B,)
        return batch

    return collate


def make_loader(dataset: EncodedEquations, batch_size: int, seed: int | None = None) -> DataLoader:
    sampler = EpochShuffleSampler(len(dataset), seed) if seed is not None else None
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, collate_fn=make_collate(dataset.input_kind))


# ------------------------------------------------------------------------------------------ training


def train_classifier(config: Config, run_dir: str | Path, resume: bool = False) -> dict:
    """Train (or resume) an equation classifier in ``run_dir``; returns the summary (also summary.json)."""
    import lightning.pytorch as pl

    from neuromath.models.identities import build_classifier
    from neuromath.training.module import ClassifierModule
    from neuromath.training.run import check_resume_config, fit_and_keep_best, save_weights

    for name in ("lightning", "lightning.pytorch", "lightning.fabric"):
        logging.getLogger(name).setLevel(logging.WARNING)
    run_dir = Path(run_dir)
    checkpoints = run_dir / "checkpoints"
    if resume:
        if not (checkpoints / "last.ckpt").exists():
            raise NeuromathError(f"{run_dir}: nothing to resume (no checkpoints/last.ckpt)")
        check_resume_config(load_config(run_dir / "config.yaml"), config)
    elif checkpoints.exists() and any(checkpoints.iterdir()):
        raise NeuromathError(f"{run_dir} already holds a run; pass --resume to continue it or choose another --out")
    if config.train.num_threads:
        torch.set_num_threads(config.train.num_threads)
    pl.seed_everything(config.train.seed, workers=True, verbose=False)
    data = prepare_identity_data(config)
    vocab = Vocabulary.load(run_dir / "node_vocab.json") if resume else node_vocabulary(data.train)
    run_dir.mkdir(parents=True, exist_ok=True)
    vocab.save(run_dir / "node_vocab.json")
    save_config(config, run_dir / "config.yaml")
    write_text_atomic(run_dir / "data.json", json.dumps(data.report, indent=2))

    model = build_classifier(config.model, vocab)
    train_set = EncodedEquations(data.train, vocab, model.input_kind)
    valid_set = EncodedEquations(data.valid, vocab, model.input_kind)
    summary: dict = {
        "run_dir": str(run_dir),
        "model": config.model.name,
        "train_examples": len(train_set),
        "valid_examples": len(valid_set),
        "parameters": sum(p.numel() for p in model.parameters()),
        "node_vocab_size": len(vocab),
    }
    if hasattr(model, "fit"):  # the majority class: nothing to train
        model.fit([bool(e.label) for e in data.train])
        save_weights(model.state_dict(), run_dir / "model.pt")
        summary.update({"epochs": 0, "steps": 0, "best_val_accuracy": predict_accuracy(model, data.valid, vocab)})
    else:
        fitted = fit_and_keep_best(
            config, run_dir, ClassifierModule(config, model),
            make_loader(train_set, config.train.batch_size, seed=config.train.seed),
            make_loader(valid_set, config.decode.batch_size), monitor="val_accuracy", resume=resume,
        )
        model.load_state_dict(fitted.weights)
        score = fitted.best.best_model_score
        summary.update(
            {
                "best_checkpoint": fitted.best_path,
                "best_val_accuracy": float(score) if score is not None else None,
                "epochs": fitted.trainer.current_epoch,
                "steps": fitted.trainer.global_step,
            }
        )
    if data.test:
        from neuromath.evaluation.identities import verification_metrics

        model.eval()
        summary["test"] = verification_metrics(data.test, predict_logits(model, data.test, vocab) > 0)
    write_text_atomic(run_dir / "summary.json", json.dumps(summary, indent=2))
    return summary


# ------------------------------------------------------------------------------------------ using a trained run


@torch.no_grad()
def predict_logits(model: torch.nn.Module, examples: Sequence[EquationExample], vocab: Vocabulary,
                   batch_size: int = 512) -> torch.Tensor:
    """The verification logit of every equation, in order (labels are not needed)."""
    was_training = model.training
    model.eval()
    loader = make_loader(EncodedEquations(examples, vocab, model.input_kind), batch_size)
    device = next(iter(model.buffers()), next(iter(model.parameters()), torch.empty(0))).device
    logits = torch.cat([model(move_batch(batch, device)).float().cpu() for batch in loader]) if examples else torch.empty(0)
    model.train(was_training)
    return logits


def predict_accuracy(model: torch.nn.Module, examples: Sequence[EquationExample], vocab: Vocabulary) -> float:
    predicted = predict_logits(model, examples, vocab) > 0
    return sum(is_correct(p, e) for p, e in zip(predicted.tolist(), examples)) / max(1, len(examples))


@dataclass
class LoadedClassifier:
    model: torch.nn.Module
    vocab: Vocabulary
    config: Config
    run_dir: Path

    def logits(self, examples: Sequence[EquationExample], batch_size: int = 512) -> torch.Tensor:
        return predict_logits(self.model, examples, self.vocab, batch_size)


def load_classifier(run_dir: str | Path) -> LoadedClassifier:
    """A trained classifier from a run directory (its config, node vocabulary and best weights)."""
    from neuromath.models.identities import build_classifier

    run_dir = Path(run_dir)
    for needed in ("config.yaml", "node_vocab.json", "model.pt"):
        if not (run_dir / needed).exists():
            raise NeuromathError(f"{run_dir} is not a trained identities run (no {needed})")
    config = load_config(run_dir / "config.yaml")
    vocab = Vocabulary.load(run_dir / "node_vocab.json")
    model = build_classifier(config.model, vocab)
    model.load_state_dict(torch.load(run_dir / "model.pt", map_location="cpu", weights_only=True))
    model.eval()
    return LoadedClassifier(model, vocab, config, run_dir)
