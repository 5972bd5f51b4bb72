"""Typed run configuration: nested frozen dataclasses, YAML files and dotted ``--set`` overrides.

A YAML config names the keys of the ``Config`` dataclass it sets; the others keep their defaults, so a preset in
``configs/<task>/<model>.yaml`` names ``data.task``, ``model.name`` and only the keys that differ from the defaults.
Unknown keys and wrong types are errors (``ConfigError``) that name the key.

Not every key means something to every run: ``data.modules`` is read only by the ``mathematics_dataset`` task,
``model.encoder_hidden`` only by the recurrent models. ``TASK_KEYS`` and ``MODEL_KEYS`` below say which key applies
to which task and model; ``load_config(..., strict=True)`` (the CLI, for the files and ``--set`` a user gives)
refuses a key that does not apply, and ``save_config`` writes a run's resolved config with exactly the keys that
apply to its task and model (``show_config`` prints the same).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

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
    # a range "a-b" or a comma list; examples of other depths in the train file are not trained on
    train_depths: str = "1-7"
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
    # where the kernel is used: comma list of encoder, decoder, cross; auto -> the kernel's own default
    attention_in: str = "auto"
    positions: str = "sinusoidal"  # from POSITIONS: sinusoidal | learned | tree
    # comma list of encoder, decoder; the other side gets sinusoidal; auto -> every side it applies to
    positions_in: str = "auto"
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
    # warmup: d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) * lr_scale; constant: lr;
    # plateau: lr, multiplied by plateau_factor when validation stalls
    schedule: str = "warmup"
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
    # validations (epochs, or val_every_steps) without a better validation accuracy before stopping; 0 disables
    patience: int = 5
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


# ------------------------------------------------------------------------------------------ which keys apply where
#
# A key applies to a run when its task (for ``data.*``) or its model (for every other section) is among the names
# listed for it here: first under the dotted key, else under its section; a key listed under neither applies to
# every task and model. Names are plain strings, so this module needs no torch, models or tasks; a new task adds
# its name to the task tuples (``neuromath.registry.TASKS``), a new model to the model tuples (``MODELS``,
# ``CLASSIFIERS``, the retrieval baselines of ``neuromath.models.retrieval``) and its own keys to the tables. A task
# or model named nowhere here is not checked: every key applies to it.

SEQUENCE_TASKS = ("word_problems", "word_problems_normalized", "mathematics_dataset", "symbolic")
EQUATION_TASKS = ("identities",)  # equation trees classified by neuromath.training.identities
TASK_NAMES = SEQUENCE_TASKS + EQUATION_TASKS

TRANSFORMERS = ("transformer",)
RECURRENT_MODELS = ("dns", "bilstm_seq2seq", "group_attention")
SEQUENCE_MODELS = TRANSFORMERS + RECURRENT_MODELS  # encoder-decoders trained and decoded token by token
TREE_CLASSIFIERS = ("tree_rnn", "tree_lstm", "second_order_tree_rnn", "mtree_lstm", "mi_tree_lstm",
                    "stack_mtree_lstm", "stack_mi_tree_lstm", "tree_smu")
SEQUENCE_CLASSIFIERS = ("rnn", "lstm", "stack_rnn")
TRAINED_CLASSIFIERS = TREE_CLASSIFIERS + SEQUENCE_CLASSIFIERS
CLASSIFIER_NAMES = TRAINED_CLASSIFIERS + ("majority",)  # identities: the majority class has no parameters
RETRIEVAL_MODELS = ("jaccard", "cosine")  # word problems: nothing trained, only data and model.name are read
MODEL_NAMES = SEQUENCE_MODELS + CLASSIFIER_NAMES + RETRIEVAL_MODELS

TASK_KEYS: dict[str, tuple[str, ...]] = {  # data keys -> the tasks that read them
    # identities reads one file format, filters no equation by length, carves its validation set out of the training
    # equations and takes its test set from data.test or data.test_depths: these five are for the sequence tasks
    "data.format": SEQUENCE_TASKS,
    "data.generate_valid": SEQUENCE_TASKS,
    "data.generate_test": SEQUENCE_TASKS,
    "data.max_source_len": SEQUENCE_TASKS,
    "data.max_target_len": SEQUENCE_TASKS,
    "data.modules": ("mathematics_dataset",),
    "data.per_module": ("mathematics_dataset",),
    "data.train_splits": ("mathematics_dataset",),
    "data.test_splits": ("mathematics_dataset",),
    "data.train_depths": ("identities",),
    "data.test_depths": ("identities",),
    "data.symbolic_method": ("symbolic",),
    "data.symbolic_max_ops": ("symbolic",),
}

MODEL_KEYS: dict[str, tuple[str, ...]] = {  # keys or whole sections -> the models that read them
    "model.d_model": SEQUENCE_MODELS + TRAINED_CLASSIFIERS,  # the classifiers' hidden size
    "model.n_heads": TRANSFORMERS + ("group_attention",),
    "model.n_encoder_layers": SEQUENCE_MODELS,
    "model.n_decoder_layers": SEQUENCE_MODELS,
    "model.d_ff": TRANSFORMERS + ("group_attention",),
    "model.dropout": SEQUENCE_MODELS,
    **{f"model.{key}": TRANSFORMERS for key in (
        "norm_first", "attention", "attention_in", "positions", "positions_in", "embedding", "relative_k",
        "tree_depth", "tree_width", "tree_relations", "tree_relative_form", "share_embeddings",
    )},
    "model.stack_depth": ("stack_mtree_lstm", "stack_mi_tree_lstm", "tree_smu", "stack_rnn"),
    "model.encoder_hidden": ("bilstm_seq2seq", "group_attention"),  # the GRU of dns has decoder_hidden units
    "model.decoder_hidden": RECURRENT_MODELS,
    "model.groups": ("group_attention",),
    "model.max_len": SEQUENCE_MODELS,  # positions of the Transformer; the longest input any sequence model reads
    "optim": SEQUENCE_MODELS + TRAINED_CLASSIFIERS,
    "optim.lr_scale": SEQUENCE_MODELS,  # the warm-up schedule and label smoothing: sequence models only
    "optim.warmup_steps": SEQUENCE_MODELS,
    "optim.label_smoothing": SEQUENCE_MODELS,
    "optim.plateau_factor": TRAINED_CLASSIFIERS,  # the plateau schedule: equation classifiers only
    "optim.plateau_patience": TRAINED_CLASSIFIERS,
    "train": SEQUENCE_MODELS + CLASSIFIER_NAMES,
    "decode": SEQUENCE_MODELS,  # the classifiers score equations, they decode nothing ...
    "decode.batch_size": SEQUENCE_MODELS + CLASSIFIER_NAMES,  # ... but validate in batches of this size
}


def applies_to(key: str) -> tuple[str, ...] | None:
    """The tasks (``data.*``) or models (other sections) that the dotted ``key`` applies to; None: all of them."""
    section = key.split(".", 1)[0]
    table = TASK_KEYS if section == "data" else MODEL_KEYS
    return table.get(key, table.get(section))


def why_not_applicable(key: str, task: str, model: str) -> str | None:
    """Why the dotted ``key`` does not apply to a run of ``task`` with ``model``, or None when it does."""
    names = applies_to(key)
    kind, name, known = ("task", task, TASK_NAMES) if key.startswith("data.") else ("model", model, MODEL_NAMES)
    if names is None or name in names or name not in known:
        return None
    return f"{key} does not apply to the {name} {kind} (it applies to: {', '.join(names)})"


def applies(key: str, config: Config) -> bool:
    """Whether the dotted ``key`` applies to the task and model of ``config``."""
    return why_not_applicable(key, config.data.task, config.model.name) is None


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
        raise ConfigError(
            f"unknown key{'s' if len(unknown) > 1 else ''}{where}: {', '.join(unknown)}; "
            f"known: {', '.join(sorted(names))}"
        )
    kwargs = {name: _check_value(v, hints[name], f"{prefix}.{name}" if prefix else name) for name, v in values.items()}
    return cls(**kwargs)


def config_from_dict(values: dict) -> Config:
    return _build(Config, values, "")


def config_to_dict(config: Any, applicable_only: bool = False) -> dict:
    """``config`` as plain dicts, lists and scalars; with ``applicable_only`` (``config`` a whole ``Config``), only
    the keys that apply to its task and model (see ``MODEL_KEYS``)."""

    def plain(value: Any) -> Any:
        if dataclasses.is_dataclass(value):
            return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, tuple):
            return [plain(v) for v in value]
        return value

    values = plain(config)
    if applicable_only:
        values = {
            section: {key: value for key, value in keys.items() if applies(f"{section}.{key}", config)}
            for section, keys in values.items()
        }
    return values


def _dotted_keys(values: dict) -> list[str]:
    """``{"model": {"d_model": 8}}`` -> ``["model.d_model"]`` (sections are mappings once a config is built)."""
    return [f"{section}.{key}" for section, keys in values.items() if isinstance(keys, dict) for key in keys]


def _source(key: str, overrides: Sequence[str]) -> str | None:
    """The last ``--set`` that gave the dotted ``key`` (itself or its whole section), or None: the file did."""
    for override in reversed(overrides):
        target = override.split("=", 1)[0].strip()
        if key == target or key.startswith(f"{target}."):
            return f"--set {override}"
    return None


def load_config(path: str | Path | None = None, overrides: Sequence[str] = (), *, strict: bool = False) -> Config:
    """Read a YAML config (or the defaults when ``path`` is None) and apply ``key=value`` overrides.

    ``strict=True`` is for what a user writes, presets and ``--set``: a key that does not apply to the resulting
    task and model (``why_not_applicable``) is a ConfigError naming the file or override, the key and the tasks or
    models it applies to, whatever its value, default included. The CLI passes it for ``--config`` and ``--set``.

    ``strict=False`` (the default) is for reading back a run's ``config.yaml``: earlier versions of ``save_config``
    wrote every key of every section, so a run folder may hold keys that do not apply to its task and model, some
    with values other than the defaults (the identities presets used to set ``model.dropout``, which no classifier
    reads). Such keys load as they are; nothing reads them, ``save_config`` leaves them out and
    ``config_to_dict(..., applicable_only=True)`` skips them. Unknown keys and wrong types are errors either way.
    """
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
        config = config_from_dict(values)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}" if path is not None else str(error)) from None
    if strict:
        problems = []
        for key in _dotted_keys(values):
            reason = why_not_applicable(key, config.data.task, config.model.name)
            if reason is not None:
                source = _source(key, overrides)  # None: the file
                if source is None:
                    problems.append(f"{path}: {reason}")
                else:
                    problems.append(f"{path}, {source}: {reason}" if path is not None else f"{source}: {reason}")
        if problems:
            raise ConfigError("; ".join(problems))
    return config


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


class _Dumper(yaml.SafeDumper):
    """Lists in flow style (``betas: [0.9, 0.98]``), mappings in block style."""


_Dumper.add_representer(
    list, lambda dumper, value: dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True)
)


def config_yaml(config: Config) -> str:
    """``config`` as YAML with every key that applies to its task and model, sections and keys in dataclass order."""
    return yaml.dump(config_to_dict(config, applicable_only=True), Dumper=_Dumper, sort_keys=False, allow_unicode=True)


def save_config(config: Config, path: str | Path) -> None:
    """Write ``config`` as YAML atomically (temporary file, then rename): the run's resolved config, complete for
    its task and model, without the keys that do not apply to them."""
    write_text_atomic(path, config_yaml(config))


def show_config(path: str | Path | None = None, overrides: Sequence[str] = ()) -> str:
    """The config a run of ``path`` with ``--set`` ``overrides`` would use, as YAML: every key that applies to its
    task and model, defaults included (for ``neuromath config show CONFIG [--set KEY=VALUE ...]``). Keys that do
    not apply are refused, as for training (``strict=True``)."""
    return config_yaml(load_config(path, overrides, strict=True))
