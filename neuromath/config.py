"""Typed run configuration: nested frozen dataclasses, YAML files and dotted ``--set`` overrides.

A YAML config is the ``Config`` dataclass written out. Unknown keys and wrong types are errors
(``ConfigError``) that name the key; every run writes its resolved config next to its checkpoints.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from neuromath.errors import ConfigError
from neuromath.fileio import write_text_atomic


@dataclass(frozen=True)
class DataConfig:
    task: str = "word_problems"
    train: str | None = None  # a data file; None -> generate `generate_train` problems
    valid: str | None = None  # None -> generate, or carve `valid_fraction` out of `train`
    test: str | None = None
    format: str | None = None  # None -> detect from each file
    lenient: bool = False  # skip (and report) malformed rows instead of stopping
    generate_train: int = 4000
    generate_valid: int = 300
    generate_test: int = 500
    generate_seed: int = 1234
    valid_fraction: float = 0.1
    valid_max: int = 0  # at most this many carved-out validation examples; 0 -> no cap
    max_source_len: int = 200
    max_target_len: int = 64
    # Tasks whose data comes in modules and splits (mathematics_dataset):
    modules: str = "*"  # comma list of module globs, e.g. "arithmetic__*,numbers__place_value"
    per_module: int = 0  # read at most this many questions per module file; 0 -> all
    train_splits: str = "train-easy,train-medium,train-hard"  # merged into the training (and validation) set
    test_splits: str = "interpolate,extrapolate"  # read for data.test and by evaluate
    # Tasks whose examples have a depth (identities): which depths train/validate and which test
    train_depths: str = "1-7"  # a range "a-b" or a comma list; examples of other depths in the train file are not trained on
    test_depths: str = "8-13"  # when data.test is unset, the train file's examples of these depths are the test set
    # The symbolic task's built-in data when no files are named: which generator, and operators per random expression
    symbolic_method: str = "backward"  # backward | forward | parts | ode1
    symbolic_max_ops: int = 6


@dataclass(frozen=True)
class ModelConfig:
    name: str = "transformer"
    d_model: int = 128
    n_heads: int = 4
    n_encoder_layers: int = 2
    n_decoder_layers: int = 2
    d_ff: int = 256
    dropout: float = 0.1
    norm_first: bool = True  # pre-LayerNorm (True) or post-LayerNorm (False)
    attention: str = "standard"  # kernel from ATTENTION: standard | tp | relative | tree_relative
    attention_in: str = "auto"  # where the kernel is used: comma list of encoder, decoder, cross; auto -> the kernel's own default
    positions: str = "sinusoidal"  # from POSITIONS: sinusoidal | learned | tree
    positions_in: str = "auto"  # comma list of encoder, decoder; the other side gets sinusoidal; auto -> every side it applies to
    embedding: str = "auto"  # plain | role (TP-Transformer eq. 2); auto -> role with attention tp, else plain
    relative_k: int = 16  # relative positions (Shaw et al.): distances clipped to [-k, k]
    tree_depth: int = 16  # tree positions (Shiv & Quirk): levels of the one-hot path stack
    tree_width: int = 2  # tree positions: child indices 0 .. width-1 (larger ones are clipped)
    tree_relations: int = 64  # tree relative attention: relation ids, the most frequent paths + one shared "other"
    tree_relative_form: str = "multiplicative"  # softmax(a_ij * r_ij) or additive: softmax(a_ij + r_ij)
    share_embeddings: bool = True  # tie the target embedding and the output projection
    stack_depth: int = 8  # stack-augmented tree cells and the stack-RNN (identities): slots of the soft stack
    # Recurrent encoder-decoders of word problems (dns, bilstm_seq2seq, group_attention); d_model is the embedding size
    encoder_hidden: int = 256  # units of each encoder direction (the GRU of dns: of its one direction)
    decoder_hidden: int = 512  # units of the LSTM decoder
    groups: str = "global,quantity,quantity_pair,question"  # group_attention: comma list; n_heads heads shared equally
    max_len: int = 512


@dataclass(frozen=True)
class OptimConfig:
    schedule: str = "warmup"  # warmup: d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) * lr_scale; constant: lr; plateau: lr, multiplied by plateau_factor when validation stalls
    lr: float = 1e-3  # the rate of the constant schedule
    lr_scale: float = 1.0  # multiplies the warm-up schedule
    warmup_steps: int = 400
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-9
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    label_smoothing: float = 0.0
    plateau_factor: float = 0.5  # schedule plateau: the learning rate is multiplied by this ...
    plateau_patience: int = 2  # ... after this many validations without a better validation accuracy


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 0
    batch_size: int = 64
    max_epochs: int = 30
    max_steps: int = -1  # stop after this many optimiser steps; -1 -> no limit
    val_every_steps: int = 0  # validate (and checkpoint) every this many steps instead of every epoch; 0 -> per epoch
    patience: int = 5  # validations (epochs, or val_every_steps) without a better validation accuracy before stopping; 0 disables
    min_epochs: int = 1
    accelerator: str = "cpu"
    devices: int = 1
    precision: str = "32-true"
    num_threads: int = 0  # torch CPU threads; 0 -> leave torch's default
    progress: bool = True
    max_time_minutes: float = 0.0  # 0 -> no wall-clock limit


@dataclass(frozen=True)
class DecodeConfig:
    max_len: int = 64
    batch_size: int = 256
    beam: int = 1  # beam width; 1 -> greedy
    nbest: int = 1  # hypotheses kept per input (at most beam)
    length_penalty: float = 1.0  # alpha in score / len^alpha
    constrained: bool = False  # mask tokens that cannot complete a well-formed prefix/postfix expression
    verify: bool = True  # with nbest > 1, answer with the first hypothesis the task's verifier accepts


@dataclass(frozen=True)
class Config:
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)


def _check_value(value: Any, annotation: Any, key: str) -> Any:
    """Return ``value`` converted to ``annotation`` or raise a ConfigError naming ``key``."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _check_value(value, option, key)
            except ConfigError as error:
                errors.append(str(error))
        raise ConfigError(errors[0] if errors else f"{key}: bad value {value!r}")
    if origin is tuple:
        item_types = typing.get_args(annotation)
        if not isinstance(value, (list, tuple)) or len(value) != len(item_types):
            raise ConfigError(f"{key}: expected a list of {len(item_types)} values, got {value!r}")
        return tuple(_check_value(v, t, f"{key}[{i}]") for i, (v, t) in enumerate(zip(value, item_types)))
    if dataclasses.is_dataclass(annotation):
        return _build(annotation, value, key)
    if annotation is bool:
        if isinstance(value, bool):
            return value
    elif annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif annotation is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif annotation is str:
        if isinstance(value, str):
            return value
    else:  # pragma: no cover - a field type this loader does not know is a programming error
        raise TypeError(f"unsupported config type {annotation!r} for {key}")
    raise ConfigError(f"{key}: expected {annotation.__name__}, got {value!r} ({type(value).__name__})")


def _build(cls: type, values: Any, prefix: str) -> Any:
    if not isinstance(values, dict):
        raise ConfigError(f"{prefix or 'config'}: expected a mapping, got {values!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        where = f" in {prefix}" if prefix else ""
        raise ConfigError(f"unknown key{'s' if len(unknown) > 1 else ''}{where}: {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    kwargs = {name: _check_value(v, hints[name], f"{prefix}.{name}" if prefix else name) for name, v in values.items()}
    return cls(**kwargs)


def config_from_dict(values: dict) -> Config:
    return _build(Config, values, "")


def config_to_dict(config: Any) -> dict:
    def plain(value: Any) -> Any:
        if dataclasses.is_dataclass(value):
            return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, tuple):
            return [plain(v) for v in value]
        return value

    return plain(config)


def load_config(path: str | Path | None = None, overrides: list[str] = ()) -> Config:
    """Read a YAML config (or the defaults when ``path`` is None) and apply ``key=value`` overrides."""
    values: dict = {}
    if path is not None:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"{path}: cannot read config: {error.strerror}") from None
        try:
            values = yaml.safe_load(text) or {}
        except yaml.YAMLError as error:
            raise ConfigError(f"{path}: not valid YAML: {error}") from None
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: a config file must hold a mapping")
    for override in overrides:
        values = apply_override(values, override)
    try:
        return config_from_dict(values)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}" if path is not None else str(error)) from None


def apply_override(values: dict, override: str) -> dict:
    """Return a copy of ``values`` with one ``dotted.key=value`` set (the value is read as YAML)."""
    if "=" not in override:
        raise ConfigError(f"override {override!r} is not of the form key=value")
    key, raw = override.split("=", 1)
    parts = key.strip().split(".")
    if not all(parts):
        raise ConfigError(f"override {override!r}: empty key")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        value = raw
    if isinstance(value, str):  # YAML 1.1 reads 1e-4 (no dot) as a string; a user means the number
        try:
            value = float(value)
        except ValueError:
            pass
    result = dict(values)
    node = result
    for part in parts[:-1]:
        child = node.get(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {override!r}: {part} is not a section")
        node[part] = dict(child)
        node = node[part]
    node[parts[-1]] = value
    return result


def save_config(config: Config, path: str | Path) -> None:
    """Write ``config`` as YAML atomically (temporary file, then rename)."""
    write_text_atomic(path, yaml.safe_dump(config_to_dict(config), sort_keys=False))
