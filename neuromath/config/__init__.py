"""Typed run configuration: frozen dataclass sections, YAML files and dotted ``--set`` overrides.

A YAML config names the keys of the ``Config`` it sets; the others keep their defaults, so a preset in
``neuromath/configs/<task>/<model>.yaml`` (shipped in the package, named ``<task>/<model>`` without a path) names
``data.task``, ``model.name`` and only the keys that differ from the defaults. Unknown keys and wrong types are
errors (``ConfigError``) that name the key.

The model and data sections are families of classes: ``model.name`` chooses the model's class
(``neuromath.config.models``: ``TransformerConfig``, ``TreeLSTMConfig``, ...) and ``data.task`` the task's
(``neuromath.config.tasks``), and each class has exactly the keys its models or task read, with their allowed values
declared on the fields. The optim, train and decode sections are shared; the keys of them a model reads follow from
its kind (``neuromath.config.rules.KIND_KEYS``). ``load_config(..., strict=True)`` (the CLI) refuses a key that does
not apply, naming the file or ``--set``, the key and the models or tasks it applies to; ``save_config`` writes a
run's resolved config with exactly the keys that apply (as ``show_config``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Sequence

import yaml

from neuromath.config.models import ModelConfig, model_names
from neuromath.config.presets import find_config
from neuromath.config.rules import (
    ACCELERATORS,
    BATCH,
    BEAM,
    CONFIG_CHECKS,
    COUNT,
    LENGTH,
    MAX_BATCH,
    MAX_LENGTH_PENALTY,
    NO_LIMIT_OR_COUNT,
    NONNEGATIVE,
    POSITIVE,
    PRECISION_NAMES,
    PROBABILITY,
    PROTOCOLS,
    SCHEDULES,
    SEED,
    STRATEGY_NAMES,
    WORKERS,
    Range,
    hard_fillers_within_negatives,
    kinds_reading,
    last_step_is_validated,
    min_epochs_within_max,
    nbest_within_beam,
    training_ends_without_validation,
)
from neuromath.config.sections import (
    ChosenSection,
    Section,
    build_section,
    check_section,
    config_error,
    one_of,
    ranged,
    section_types,
)
from neuromath.config.tasks import DataConfig
from neuromath.errors import ConfigError, DataFormatError
from neuromath.fileio import write_text_atomic
from neuromath.safe_read import CONFIG_LIMIT, read_run_file

__all__ = ["Config", "DataConfig", "DecodeConfig", "ModelConfig", "OptimConfig", "Section", "TrainConfig",
           "applies", "check_section", "config_error", "config_from_dict", "config_to_dict", "config_yaml",
           "load_config", "save_config", "section_types", "show_config", "why_not_applicable"]

TASK_NAMES = DataConfig.known()
MODEL_NAMES = ModelConfig.known()


@dataclass(frozen=True)
class OptimConfig(Section):
    section: ClassVar[str] = "optim"
    # warmup: d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) * lr_scale; constant: lr;
    # plateau: lr, multiplied by plateau_factor when validation stalls; step: lr * step_gamma^(epoch // step_epochs)
    # (the schedule of GTS and Graph2Tree: halved every 20 epochs)
    schedule: str | None = None  # null: the model's kind's own (warmup for sequence models, plateau for classifiers)
    lr: float = ranged(1e-3, POSITIVE)  # the rate of the constant schedule
    lr_scale: float = ranged(1.0, POSITIVE)  # multiplies the warm-up schedule
    warmup_steps: int = ranged(400, COUNT)  # the warm-up schedule divides by warmup^1.5
    betas: tuple[float, float] = ranged((0.9, 0.98), PROBABILITY)  # each of the two
    # Adam divides by sqrt(v) + eps, and v is 0 for a parameter that never gets a gradient
    eps: float = ranged(1e-9, POSITIVE)
    weight_decay: float = ranged(0.0, NONNEGATIVE)
    grad_clip: float = ranged(1.0, NONNEGATIVE)  # 0: no clipping
    label_smoothing: float = ranged(0.0, PROBABILITY)
    # sequence models: what a batch's summed cross-entropy is divided by. batch: its own target tokens (each batch
    # weighs the same); average: the training set's average target tokens per batch, so that every token weighs the
    # same whatever batch it is in (batches of one length, train.length_grouping, otherwise favour short targets)
    loss_denominator: str = one_of("batch", "batch", "average")
    # data.contrast: the weight of the unlikelihood term, -log(1 - p(original equation | varied problem)), averaged
    # over a batch's contrast problems and added to the cross-entropy of its other problems
    contrast_weight: float = ranged(1.0, NONNEGATIVE)
    # schedule plateau: the learning rate is multiplied by this (it must fall, and not to 0) ...
    plateau_factor: float = ranged(0.5, Range(low=0, high=1, low_open=True))
    plateau_patience: int = ranged(2, NONNEGATIVE)  # ... after this many validations without a better accuracy
    step_epochs: int = ranged(20, COUNT)  # schedule step: the rate is multiplied by step_gamma every step_epochs
    step_gamma: float = ranged(0.5, Range(low=0, high=1, low_open=True))  # it must not grow, nor reach 0
    # 0: off. Else an exponential moving average of the weights (Polyak averaging), ema <- decay * ema + (1 - decay)
    # * weights after every optimiser step, is what validation scores, the checkpoints keep and the test reads; at 1
    # the average would never leave the initial weights
    ema_decay: float = ranged(0.0, PROBABILITY)
    # a pretrained encoder (model.encoder pretrained): its own learning rate (0: optim.lr), on the same schedule, and
    # a linear warm-up of that rate over its first encoder_warmup_steps steps (0: none)
    encoder_lr: float = ranged(0.0, NONNEGATIVE)
    encoder_warmup_steps: int = ranged(0, NONNEGATIVE)


@dataclass(frozen=True)
class TrainConfig(Section):
    section: ClassVar[str] = "train"
    rules: ClassVar = (last_step_is_validated, training_ends_without_validation, min_epochs_within_max,
                       hard_fillers_within_negatives)
    seed: int = ranged(0, SEED)
    batch_size: int = ranged(64, BATCH)
    # -1 -> no limit (then max_steps, patience or max_time_minutes ends training)
    max_epochs: int = ranged(30, NO_LIMIT_OR_COUNT)
    max_steps: int = ranged(-1, NO_LIMIT_OR_COUNT)  # stop after this many optimiser steps; -1 -> no limit
    # validate (and checkpoint) every this many steps instead of every epoch; 0 -> per epoch
    val_every_steps: int = ranged(0, NONNEGATIVE)
    # validations (epochs, or val_every_steps) without a better validation accuracy before stopping; 0 disables
    patience: int = ranged(5, NONNEGATIVE)
    min_epochs: int = ranged(1, NONNEGATIVE)
    accelerator: str = one_of("cpu", *ACCELERATORS)
    # processes per machine (CPU: processes; GPU: one per device) and machines; more than one in all trains with DDP
    # (neuromath.nn.distributed): batch_size is per process, so a step reads devices * num_nodes * batch_size examples
    devices: int = ranged(1, Range(low=1, sentinel=(-1, "every device")))  # -1 -> every device of the accelerator
    num_nodes: int = ranged(1, COUNT)
    strategy: str = one_of("auto", *STRATEGY_NAMES)  # auto: DDP when several processes
    # 32-true, bf16-mixed, 16-mixed (GPU) or auto (bf16 where the CPU or GPU has it): neuromath.nn.precision;
    # evaluate, solve and completion run in the same precision
    precision: str = one_of("32-true", *PRECISION_NAMES)
    num_threads: int = ranged(0, WORKERS)  # torch CPU threads; 0 -> leave torch's default
    # sequence models: the training forward through torch.compile (inductor, dynamic shapes; neuromath.nn.compiling);
    # the weights and run folder are the eager model's
    compile: bool = False
    # torch.compile's mode for train.compile: reduce-overhead captures CUDA graphs on a GPU (one per batch shape: pair
    # it with length_multiple); default fuses kernels only
    compile_mode: str = one_of("default", "default", "reduce-overhead")
    # sequence models: pad every training and validation batch's source and target lengths up to a multiple of this
    # (1: to the longest example), so that batches fall into few shapes (compiled graphs, CUDA graphs); pad is masked
    length_multiple: int = ranged(1, LENGTH)
    # sequence models: 0 reads training batches of random examples; G > 0 sorts each pool of G batches' examples by
    # length before cutting it into batches (their order shuffled), so a batch holds examples of about one length and
    # little padding (neuromath.models.batching.LengthGroupedBatches); a map-style training set only (not streaming)
    length_grouping: int = ranged(0, NONNEGATIVE)
    progress: bool | None = None  # null: bars on a terminal, a line per epoch otherwise; true / false force either
    max_time_minutes: float = ranged(0.0, NONNEGATIVE)  # 0 -> no wall-clock limit
    # false: no validation set (nothing carved out of data.train, which is trained on whole) and no early stopping;
    # the run trains max_epochs epochs (or max_steps steps) and keeps its last weights: the refit of `cv --refit`
    validate: bool = True
    # how the kept epoch is chosen (neuromath.config.rules.PROTOCOLS): clean, on validation data never tested on;
    # literature, on the test split (the published k-fold protocol of MWPToolkit and SVAMP): an optimistic number,
    # labelled as such in the summary, the model card and the results pages
    protocol: str = one_of("clean", *PROTOCOLS)
    # tree classifiers (identities): start from the weights and node vocabulary of this trained run (fine-tuning)
    init_from: str | None = None
    # tree classifiers: the completion ranking loss (neuromath.training.ranking), weighted by rank_weight (0: off)
    # and added to the verification loss; per step rank_groups blanks, each with rank_negatives wrong fillers from
    # data.candidates, rank_hard of them (0: none) those the model ranks highest
    rank_weight: float = ranged(0.0, NONNEGATIVE)
    rank_groups: int = ranged(4, Range(low=1, high=MAX_BATCH, high_closed=True))
    rank_negatives: int = ranged(15, Range(low=1, high=MAX_BATCH, high_closed=True))
    rank_hard: int = ranged(8, NONNEGATIVE)


@dataclass(frozen=True)
class DecodeConfig(Section):
    section: ClassVar[str] = "decode"
    rules: ClassVar = (nbest_within_beam,)
    max_len: int = ranged(64, LENGTH)  # at most model.max_len (decode_fits_the_model)
    batch_size: int = ranged(256, BATCH)
    beam: int = ranged(1, BEAM)  # beam width; 1 -> greedy
    nbest: int = ranged(1, BEAM)  # hypotheses kept per input (at most beam)
    # alpha in score / len^alpha (len^alpha stays a float for len <= MAX_LENGTH)
    length_penalty: float = ranged(1.0, Range(low=-MAX_LENGTH_PENALTY, high=MAX_LENGTH_PENALTY, high_closed=True))
    constrained: bool = False  # mask tokens that cannot complete a well-formed prefix/postfix expression
    verify: bool = True  # with nbest > 1, answer with the first hypothesis the task's verifier accepts
    # Transformer family: decode in fixed shapes through torch.compile (CUDA graphs on a GPU); the same hypotheses
    # (neuromath.decoding.fixed_shapes)
    compile: bool = False


@dataclass(frozen=True)
class Config:
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)

    def __post_init__(self) -> None:
        """The schedule a model's kind follows when none is named (``SCHEDULES``), then the rules between keys of
        different sections (``CONFIG_CHECKS``), as ``Section`` checks its own."""
        kind = getattr(self.model, "kind", None)
        if self.optim.schedule is None and kind in SCHEDULES:
            object.__setattr__(self, "optim", dataclasses.replace(self.optim, schedule=SCHEDULES[kind][0]))
        for rule in CONFIG_CHECKS:
            problem = rule(self)
            if problem is not None:
                key, message = problem
                raise config_error(message, key)


SECTIONS: dict[str, type] = {"data": DataConfig, "model": ModelConfig, "optim": OptimConfig, "train": TrainConfig,
                             "decode": DecodeConfig}


def section_keys(section: str) -> tuple[str, ...]:
    """Every key of a section (of every class, for the model and data families), in declaration order."""
    cls = SECTIONS[section]
    if issubclass(cls, ChosenSection):
        return cls.keys()
    return tuple(item.name for item in dataclasses.fields(cls))


def key_range(key: str) -> Range | None:
    """The values the dotted numeric ``key`` allows (None: not a numeric key), as its field declares them."""
    section, name = key.split(".", 1)
    cls = SECTIONS[section]
    classes = cls.members.values() if issubclass(cls, ChosenSection) else [cls]
    for klass in classes:
        item = klass.__dataclass_fields__.get(name)
        if item is not None:
            return item.metadata.get("range")
    return None


# ------------------------------------------------------------------------------------------ which keys apply where


def applies_to(key: str) -> tuple[str, ...] | None:
    """The tasks (``data.*``) or models (other sections) that the dotted ``key`` applies to; None: all of them."""
    section, name = key.split(".", 1)
    if section == "data":
        return None if name == "task" else DataConfig.names_with(name)
    if section == "model":
        return None if name == "name" else ModelConfig.names_with(name)
    kinds = kinds_reading(key)
    return model_names(*kinds)


def why_not_applicable(key: str, task: str, model: str) -> str | None:
    """Why the dotted ``key`` does not apply to a run of ``task`` with ``model``, or None when it does."""
    names = applies_to(key)
    data = key.startswith("data.")
    kind, name, known = ("task", task, DataConfig.known()) if data else ("model", model, ModelConfig.known())
    if names is None or name in names or name not in known:
        return None
    return f"{key} does not apply to the {name} {kind} (it applies to: {', '.join(names)})"


def applies(key: str, config: Config) -> bool:
    """Whether the dotted ``key`` applies to the task and model of ``config``."""
    return why_not_applicable(key, config.data.task, config.model.name) is None


def config_from_dict(values: dict) -> Config:
    """A Config from plain dicts (a run folder's config.yaml): the keys of other models or tasks are left out. Without
    ``model.name``, the model is the task's default (``default_model`` of its data class)."""
    data, model = values.get("data"), values.get("model")
    if isinstance(data, dict) and (model is None or isinstance(model, dict)) and "name" not in (model or {}):
        task = data.get("task", DataConfig.default_choice())
        if isinstance(task, str) and task in DataConfig.members:
            values = {**values, "model": {**(model or {}), "name": DataConfig.members[task].default_model}}
    return build_section(Config, values, "")


def config_to_dict(config: Any, applicable_only: bool = False) -> dict:
    """``config`` as plain dicts, lists and scalars; with ``applicable_only`` (``config`` a whole ``Config``), only
    the keys that apply to its task and model (the model and data sections have no others; of the optim, train
    and decode sections, those its model's kind reads: ``KIND_KEYS``)."""

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


EXTENDS_DEPTH = 4  # a config may extend one that extends another, this many deep


def read_config_values(path: str | Path, chain: tuple[str, ...] = ()) -> dict:
    """The values of a config file or preset, with those of the config it ``extends`` underneath: ``extends:
    word_problems/graph2tree`` (a preset, or a file relative to this one) then only the keys that differ. Each
    section merges key by key; a value written here wins."""
    file = find_config(path)  # messages name the config as the user wrote it
    try:  # a regular file of at most CONFIG_LIMIT bytes: a FIFO or a link to /dev/zero is refused, not read
        text = read_run_file(file, CONFIG_LIMIT, "config file").decode("utf-8")
    except DataFormatError as error:
        raise ConfigError(f"{path}: {error.reason.replace('cannot read:', 'cannot read config:')}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not a config file (not UTF-8 text at byte {error.start})") from None
    try:
        values = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, RecursionError) as error:  # ValueError: e.g. !!int x, a date 2021-02-30
        raise ConfigError(f"{path}: not valid YAML: {error}") from None
    if values is None or values == {}:
        raise ConfigError(f"{path}: the config file is empty: it names no task (data.task, one of "
                          f"{', '.join(TASK_NAMES)}); the presets (neuromath config list) show what a config "
                          "holds")
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: a config file must hold a mapping")
    if "extends" not in values:
        return values
    base = values.pop("extends")
    if not isinstance(base, str) or not base.strip():
        raise ConfigError(f"{path}: extends names one preset (word_problems/graph2tree) or config file, not "
                          f"{base!r}")
    beside = file.parent / base
    if not Path(base).is_absolute() and beside.is_file() and beside.suffix in (".yaml", ".yml"):
        base = str(beside)  # a file named relative to the config that extends it
    here = str(file.resolve())
    if here in chain or len(chain) >= EXTENDS_DEPTH:
        raise ConfigError(f"{path}: extends {base}: " + ("the configs extend each other in a circle" if here in chain
                          else f"more than {EXTENDS_DEPTH} configs deep"))
    merged = read_config_values(base, (*chain, here))
    for section, mapping in values.items():
        if isinstance(mapping, dict) and isinstance(merged.get(section), dict):
            merged[section] = {**merged[section], **mapping}
        else:
            merged[section] = mapping
    return merged


def load_config(path: str | Path | None = None, overrides: Sequence[str] = (), *, strict: bool = False) -> Config:
    """Read a YAML config (or the defaults when ``path`` is None) and apply ``key=value`` overrides.

    ``strict=True`` is for what a user writes, presets and ``--set``: a key that does not apply to the resulting
    task and model (``why_not_applicable``) is a ConfigError naming the file or override, the key and the tasks or
    models it applies to, whatever its value, default included. The CLI passes it for ``--config`` and ``--set``.

    ``strict=False`` (the default) is for reading back a run's ``config.yaml``: earlier versions of ``save_config``
    wrote every key of every section, so a run folder may hold keys that do not apply to its task and model, some
    with values other than the defaults (the word-problem presets' ``data.modules``). The keys of the model and data
    sections that belong to other models or tasks are left out (their classes do not have them); the optim, train
    and decode keys that its model's kind does not read load as they are, and ``save_config`` and
    ``config_to_dict(..., applicable_only=True)`` leave them out. Unknown keys are errors either way, and so is an
    override of a key that does not apply: what a user asks for is never dropped silently.
    """
    values: dict = read_config_values(path) if path is not None else {}
    for override in overrides:
        values = apply_override(values, override)
    try:
        config = config_from_dict(values)
    except ConfigError as error:
        source = _source(error.key, overrides) if getattr(error, "key", None) else None  # None: the file
        where = ", ".join(str(part) for part in (path, source) if part is not None)
        raise ConfigError(f"{where}: {error}" if where else str(error)) from None
    if path is not None and "task" not in values.get("data", {}):
        raise ConfigError(f"{path}: the config names no task: set data.task (one of {', '.join(TASK_NAMES)})")
    if not strict:  # a file's keys of other models or tasks are left out, but not a key asked for by an override
        for override in overrides:
            key = override.split("=", 1)[0].strip()
            if "." in key:  # a key of another model or task, or a shared key its model's kind does not read
                reason = why_not_applicable(key, config.data.task, config.model.name)
                if reason is not None:
                    raise ConfigError(f"{path}, --set {override}: {reason}" if path is not None
                                      else f"--set {override}: {reason}")
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
    except (yaml.YAMLError, ValueError, RecursionError):  # not YAML (ValueError: e.g. !!int x): the text itself
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
