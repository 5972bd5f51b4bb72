"""Typed run configuration: nested frozen dataclasses, YAML files and dotted ``--set`` overrides.

A YAML config names the keys of the ``Config`` dataclass it sets; the others keep their defaults, so a preset in
``neuromath/configs/<task>/<model>.yaml`` (shipped in the package, named ``<task>/<model>`` without a path) names
``data.task``, ``model.name`` and only the keys that differ from the defaults. Unknown keys and wrong types are
errors (``ConfigError``) that name the key. Not every key means something to every run (``data.modules``: only the
``mathematics_dataset`` task): ``neuromath.config_rules`` says which key applies to which task and model, the values
each key allows and the rules between keys; ``load_config(..., strict=True)`` (the CLI) refuses a key that does not
apply, and ``save_config`` writes a run's resolved config with exactly the keys that apply (as ``show_config``).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Sequence

import yaml

from neuromath.config_presets import find_config
from neuromath.config_rules import (
    CONFIG_CHECKS,
    CROSS_CHECKS,
    RANGES,
    TASK_NAMES,
    applies,
    format_number,
    why_not_applicable,
)
from neuromath.errors import ConfigError, DataFormatError
from neuromath.fileio import write_text_atomic
from neuromath.safe_read import CONFIG_LIMIT, read_run_file


class Section:
    """Base of the config sections: whenever one is built (from a file, ``--set``, a run folder or Python,
    ``dataclasses.replace`` included) its numeric keys are checked against ``RANGES`` and its keys against each other
    (``CROSS_CHECKS``), so a bad value is a ConfigError naming the key and what it allows before anything runs."""

    section: ClassVar[str]

    def __post_init__(self) -> None:
        check_section(self)


@dataclass(frozen=True)
class DataConfig(Section):
    section: ClassVar[str] = "data"
    task: str = "word_problems"
    # where relative data paths that are not in the working directory are read from (neuromath.dataroot);
    # None -> $NEUROMATH_DATA, else ./data
    root: str | None = None
    train: str | None = None  # a data file; None -> generate `generate_train` problems
    valid: str | None = None  # None -> generate, or carve `valid_fraction` out of `train`
    test: str | None = None
    # identities: comma list of further files whose equations join the training set only (not the validation split,
    # whatever their depth), e.g. the function evaluations of `neuromath generate evaluations`
    train_extra: str | None = None
    # identities: a candidate-classes file (released format) whose fillers the completion ranking loss draws
    # (train.rank_weight > 0)
    candidates: str | None = None
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
    # Word-problem tasks: how source words become vocabulary ids (at training, and when a run solves or evaluates)
    lowercase: bool = True  # lower-case the source words; False keeps their case
    min_count: int = 1  # a source word seen fewer times in the training set is <unk> (the numbers n0, n1, ... never)
    word_dropout: float = 0.0  # training only: each ordinary source word is replaced by <unk> with this probability
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
    # Streaming (mathematics_dataset, symbolic): read data.train lazily, for corpora larger than memory
    # (neuromath.training.streaming); validation comes from data.valid or the first data.valid_max records
    streaming: bool = False
    shuffle_window: int = 10000  # each shard (process x loader worker) shuffles its records in windows of this many
    loader_workers: int = 0  # data-loader worker processes per training process; 0 -> read in the training process
    stream_vocab_records: int = 1000000  # the vocabulary comes from this many records after the held-out head; 0: all


@dataclass(frozen=True)
class ModelConfig(Section):
    section: ClassVar[str] = "model"
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
    # tree classifiers (identities): read every number leaf's value with a small network (numbers as evidence)
    number_encoder: bool = False
    tree_activation: str = "tanh"  # the Tree-RNN cells' node activation: tanh | sigmoid (Arabshahi et al.'s code)
    # where the Tree-LSTM cells apply model.dropout: output (every node's h, where its parent reads it) | candidate
    # (only the candidate u of c = i*u + f_l*c_l + f_r*c_r, as Arabshahi et al.'s code does for its Tree-LSTM)
    dropout_site: str = "output"
    # how the Tree-LSTM cells make a leaf's state: gated (a node without children, Tai et al.: [i, o, u] from the
    # embedding x, c = i*u, h = o*tanh(c)) | embedding (h = x, c = 0, as Arabshahi et al.'s code; their released
    # Tree-LSTM, imported by neuromath import released, needs it)
    tree_leaf: str = "gated"
    # Recurrent encoder-decoders of word problems (dns, bilstm_seq2seq, group_attention); d_model is the embedding size
    encoder_hidden: int = 256  # units of each encoder direction (the GRU of dns: of its one direction)
    decoder_hidden: int = 512  # units of the LSTM decoder
    groups: str = "global,quantity,quantity_pair,question"  # group_attention: comma list; n_heads heads shared equally
    # Tree decoders (gts, graph2tree), for ablations: how a number leaf is embedded (pointer: the encoder state at its
    # position in the problem; slot: a learned embedding per slot n0, n1, ..., like a constant), and whether goals and
    # parents read the embeddings of finished subtrees (False: a right goal and a merged parent see zeros instead)
    numbers: str = "pointer"
    subtree_embedding: bool = True
    # graph2tree: also link each word of a number's quantity cell to the other occurrences of that word in the problem
    # (the question's words reach the numbers; neuromath.tasks.word_problems.graphs.shared_word_links)
    shared_words: bool = False
    # graph2tree: build the graphs from the problem's words as written, not from the vocabulary's tokens, so a word the
    # vocabulary does not know is still a content word, equal to its other occurrences (needs a task with source_words)
    graph_text: bool = False
    max_len: int = 512


@dataclass(frozen=True)
class OptimConfig(Section):
    section: ClassVar[str] = "optim"
    # warmup: d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) * lr_scale; constant: lr;
    # plateau: lr, multiplied by plateau_factor when validation stalls; step: lr * step_gamma^(epoch // step_epochs)
    # (the recipe of GTS and Graph2Tree: halved every 20 epochs)
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
    step_epochs: int = 20  # schedule step: the learning rate is multiplied by step_gamma every step_epochs epochs
    step_gamma: float = 0.5
    # 0: off. Else an exponential moving average of the weights (Polyak averaging), ema <- decay * ema + (1 - decay)
    # * weights after every optimiser step, is what validation scores, the checkpoints keep and the test reads
    ema_decay: float = 0.0


@dataclass(frozen=True)
class TrainConfig(Section):
    section: ClassVar[str] = "train"
    seed: int = 0
    batch_size: int = 64
    max_epochs: int = 30  # -1 -> no limit (then max_steps, patience or max_time_minutes ends training)
    max_steps: int = -1  # stop after this many optimiser steps; -1 -> no limit
    val_every_steps: int = 0  # validate (and checkpoint) every this many steps instead of every epoch; 0 -> per epoch
    # validations (epochs, or val_every_steps) without a better validation accuracy before stopping; 0 disables
    patience: int = 5
    min_epochs: int = 1
    accelerator: str = "cpu"
    # processes per machine (CPU: processes; GPU: one per device) and machines; more than one in all trains with DDP
    # (neuromath.nn.distributed): batch_size is per process, so a step reads devices * num_nodes * batch_size examples
    devices: int = 1  # -1 -> every device of the accelerator
    num_nodes: int = 1
    strategy: str = "auto"  # auto (DDP when several processes), ddp, or ddp_find_unused_parameters_true
    # 32-true, bf16-mixed, 16-mixed (GPU) or auto (bf16 where the CPU or GPU has it): neuromath.nn.precision;
    # evaluate, solve and completion run in the same precision
    precision: str = "32-true"
    num_threads: int = 0  # torch CPU threads; 0 -> leave torch's default
    progress: bool = True
    max_time_minutes: float = 0.0  # 0 -> no wall-clock limit
    # false: no validation set (nothing carved out of data.train, which is trained on whole) and no early stopping;
    # the run trains max_epochs epochs (or max_steps steps) and keeps its last weights: the refit of `cv --refit`
    validate: bool = True
    # tree classifiers (identities): start from the weights and node vocabulary of this trained run (fine-tuning)
    init_from: str | None = None
    # tree classifiers: the completion ranking loss (neuromath.training.ranking), weighted by rank_weight (0: off)
    # and added to the verification loss; per step rank_groups blanks, each with rank_negatives wrong fillers from
    # data.candidates, rank_hard of them those the model ranks highest
    rank_weight: float = 0.0
    rank_groups: int = 4
    rank_negatives: int = 15
    rank_hard: int = 8


@dataclass(frozen=True)
class DecodeConfig(Section):
    section: ClassVar[str] = "decode"
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

    def __post_init__(self) -> None:
        """The rules between keys of different sections (``CONFIG_CHECKS``), as ``Section`` checks its own."""
        for rule in CONFIG_CHECKS:
            problem = rule(self)
            if problem is not None:
                key, message = problem
                raise config_error(message, key)


def check_section(values: Section) -> None:
    """Raise a ConfigError (with ``.key``, the dotted key at fault) for the first key of a config section outside
    its range (``RANGES``) or rule it breaks (``CROSS_CHECKS``); a section built in Python has its types checked
    here too (``_build`` checks them for files and ``--set``)."""
    hints = section_types(type(values))
    for item in dataclasses.fields(values):
        key = f"{values.section}.{item.name}"
        value = getattr(values, item.name)
        try:
            _check_value(value, hints[item.name], key)
        except ConfigError as error:
            raise config_error(str(error), key) from None
        allowed = RANGES.get(key)
        if allowed is None:
            continue
        for index, number in enumerate(value) if isinstance(value, tuple) else [(None, value)]:
            where = key if index is None else f"{key}[{index}]"
            if number not in allowed:
                floating = isinstance(number, float) or hints[item.name] is float
                raise config_error(f"{where} must be {allowed.describe(floating)}, got {format_number(number)}", key)
    for rule in CROSS_CHECKS.get(values.section, ()):
        problem = rule(values)
        if problem is not None:
            key, message = problem
            raise config_error(message, key)


@functools.cache
def section_types(cls: type) -> dict[str, Any]:
    """The field types of a config section class (``typing.get_type_hints``, read once per class)."""
    return typing.get_type_hints(cls)


def config_error(message: str, key: str) -> ConfigError:
    """A ConfigError that also says which dotted key it is about (``load_config`` names the ``--set`` that gave it)."""
    error = ConfigError(message)
    error.key = key
    return error


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
            try:
                return float(value)
            except OverflowError:  # an integer with hundreds of digits
                raise ConfigError(f"{key}: an integer of {len(str(value))} digits is too large for a float") from None
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
    unknown = sorted(str(name) for name in set(values) - names)  # YAML keys may be numbers, null, ...
    if unknown:
        where = f" in {prefix}" if prefix else ""
        raise ConfigError(
            f"unknown key{'s' if len(unknown) > 1 else ''}{where}: {', '.join(unknown)}; "
            f"known: {', '.join(sorted(names))}"
        )
    kwargs = {}
    for name, value in values.items():
        key = f"{prefix}.{name}" if prefix else name
        try:
            kwargs[name] = _check_value(value, hints[name], key)
        except ConfigError as error:
            if getattr(error, "key", None) is None:  # the innermost key at fault, for load_config to name its --set
                error.key = key
            raise
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
