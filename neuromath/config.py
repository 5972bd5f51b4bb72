"""Typed run configuration: nested frozen dataclasses, YAML files and dotted ``--set`` overrides.

A YAML config names the keys of the ``Config`` dataclass it sets; the others keep their defaults, so a preset in
``neuromath/configs/<task>/<model>.yaml`` (shipped in the package, named ``<task>/<model>`` without a path) names
``data.task``, ``model.name`` and only the keys that differ from the defaults.
Unknown keys and wrong types are errors (``ConfigError``) that name the key.

Not every key means something to every run: ``data.modules`` is read only by the ``mathematics_dataset`` task,
``model.encoder_hidden`` only by the recurrent models. ``TASK_KEYS`` and ``MODEL_KEYS`` below say which key applies
to which task and model; ``load_config(..., strict=True)`` (the CLI, for the files and ``--set`` a user gives)
refuses a key that does not apply, and ``save_config`` writes a run's resolved config with exactly the keys that
apply to its task and model (``show_config`` prints the same).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Sequence

import yaml

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


# ------------------------------------------------------------------------------------------ which keys apply where
#
# A key applies to a run when its task (for ``data.*``) or its model (for every other section) is among the names
# listed for it here: first under the dotted key, else under its section; a key listed under neither applies to
# every task and model. Names are plain strings, so this module needs no torch, models or tasks; a new task adds
# its name to the task tuples (``neuromath.registry.TASKS``), a new model to the model tuples (``MODELS``,
# ``CLASSIFIERS``, the retrieval baselines of ``neuromath.models.retrieval``) and its own keys to the tables. A task
# or model named nowhere here is not checked: every key applies to it.

SEQUENCE_TASKS = ("word_problems", "word_problems_normalized", "mathematics_dataset", "symbolic")
EQUATION_TASKS = ("identities",)  # equation trees classified by neuromath.training.classifier_training
TASK_NAMES = SEQUENCE_TASKS + EQUATION_TASKS

TRANSFORMERS = ("transformer",)
RECURRENT_MODELS = ("dns", "bilstm_seq2seq", "group_attention")
TREE_DECODERS = ("gts", "graph2tree")  # word problems: a Bi-GRU (and graph) encoder, a goal-driven tree decoder
SEQUENCE_MODELS = TRANSFORMERS + RECURRENT_MODELS + TREE_DECODERS  # encoder-decoders trained and decoded token by token
TREE_CLASSIFIERS = ("tree_rnn", "tree_lstm", "second_order_tree_rnn", "mtree_lstm", "mi_tree_lstm",
                    "stack_mtree_lstm", "stack_mi_tree_lstm", "tree_smu", "tree_smu_lstm")
TREE_LSTM_CLASSIFIERS = ("tree_lstm", "mtree_lstm", "mi_tree_lstm", "stack_mtree_lstm", "stack_mi_tree_lstm",
                         "tree_smu_lstm")  # the cells with a memory c and a candidate u (model.dropout_site)
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
    # the vocabulary robustness of the word-problem tasks (their sources are words with masked numbers)
    **{f"data.{key}": ("word_problems", "word_problems_normalized")
       for key in ("lowercase", "min_count", "word_dropout")},
    "data.modules": ("mathematics_dataset",),
    "data.per_module": ("mathematics_dataset",),
    "data.train_splits": ("mathematics_dataset",),
    "data.test_splits": ("mathematics_dataset",),
    "data.train_depths": ("identities",),
    "data.train_extra": ("identities",),
    "data.candidates": ("identities",),
    "data.test_depths": ("identities",),
    "data.symbolic_method": ("symbolic",),
    "data.symbolic_max_ops": ("symbolic",),
    **{f"data.{key}": ("mathematics_dataset", "symbolic")
       for key in ("streaming", "shuffle_window", "loader_workers", "stream_vocab_records")},
}

MODEL_KEYS: dict[str, tuple[str, ...]] = {  # keys or whole sections -> the models that read them
    "model.d_model": SEQUENCE_MODELS + TRAINED_CLASSIFIERS,  # the classifiers' hidden size
    "model.n_heads": TRANSFORMERS + ("group_attention",),
    "model.n_encoder_layers": SEQUENCE_MODELS,
    "model.n_decoder_layers": TRANSFORMERS + RECURRENT_MODELS,  # the tree decoders have one recursive cell
    "model.d_ff": TRANSFORMERS + ("group_attention", "graph2tree"),
    "model.dropout": SEQUENCE_MODELS + TRAINED_CLASSIFIERS,  # classifiers: on each tree node's / side's output
    **{f"model.{key}": TRANSFORMERS for key in (
        "norm_first", "attention", "attention_in", "positions", "positions_in", "embedding", "relative_k",
        "tree_depth", "tree_width", "tree_relations", "tree_relative_form", "share_embeddings",
    )},
    "model.stack_depth": ("stack_mtree_lstm", "stack_mi_tree_lstm", "tree_smu", "tree_smu_lstm", "stack_rnn"),
    # the GRU of dns has decoder_hidden units; the tree decoders' goals and subtrees are encoder_hidden wide
    "model.encoder_hidden": ("bilstm_seq2seq", "group_attention") + TREE_DECODERS,
    "model.decoder_hidden": RECURRENT_MODELS,
    "model.groups": ("group_attention",),
    "model.number_encoder": TREE_CLASSIFIERS,
    "model.tree_activation": ("tree_rnn", "second_order_tree_rnn"),
    "model.dropout_site": TREE_LSTM_CLASSIFIERS,
    "model.tree_leaf": TREE_LSTM_CLASSIFIERS,
    "model.numbers": TREE_DECODERS,
    "model.subtree_embedding": TREE_DECODERS,
    "model.shared_words": ("graph2tree",),
    "model.graph_text": ("graph2tree",),
    "model.max_len": SEQUENCE_MODELS,  # positions of the Transformer; the longest input any sequence model reads
    "optim": SEQUENCE_MODELS + TRAINED_CLASSIFIERS,
    "optim.lr_scale": SEQUENCE_MODELS,  # the warm-up schedule and label smoothing: sequence models only
    "optim.warmup_steps": SEQUENCE_MODELS,
    "optim.label_smoothing": SEQUENCE_MODELS,
    "optim.plateau_factor": TRAINED_CLASSIFIERS,  # the plateau schedule: equation classifiers only
    "optim.plateau_patience": TRAINED_CLASSIFIERS,
    "optim.step_epochs": SEQUENCE_MODELS,  # the step schedule: sequence models only
    "optim.step_gamma": SEQUENCE_MODELS,
    "train": SEQUENCE_MODELS + CLASSIFIER_NAMES,
    "train.validate": SEQUENCE_MODELS,  # the equation classifiers always validate (their plateau schedule reads it)
    # fine-tuning and the completion ranking loss: tree classifiers (the loss mines fillers path-wise)
    **{f"train.{key}": TREE_CLASSIFIERS for key in ("init_from", "rank_weight", "rank_groups", "rank_negatives",
                                                    "rank_hard")},
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


# ------------------------------------------------------------------------------------------ allowed values
#
# Every numeric key has a range, from how the code reads it: sizes and counts that must be at least 1, counts where 0
# means "none" or "no limit", probabilities and fractions, -1 where Lightning reads it as "no limit"; sizes, layers,
# lengths, beams and batches also have an upper bound far above any real run (``MAX_WIDTH`` ...). Floats must also be
# finite. ``Section.__post_init__`` checks them, and the rules between keys in ``CROSS_CHECKS``, whenever a
# section is built. tests/test_config.py holds that every numeric key of every section is in ``RANGES``.


@dataclass(frozen=True)
class Range:
    """The values a numeric key allows: ``low`` <= value (``<`` with ``low_open``) and value < ``high`` (``<=`` with
    ``high_closed``), either bound optional, or the one ``sentinel`` value the code reads specially; floats must be
    finite. ``describe`` says it the way an error message does: ``in [0, 1)``, ``>= 1``, ``-1 (no limit) or >= 1``."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_closed: bool = False
    sentinel: tuple[int, str] | None = None  # (value, what it means), e.g. (-1, "no limit")

    def __contains__(self, value: int | float) -> bool:
        if self.sentinel is not None and value == self.sentinel[0]:
            return True
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or (value <= self.high if self.high_closed else value < self.high)

    def describe(self, floating: bool) -> str:
        """The allowed values in words; ``floating``: the key is a float, so the message says it must be finite."""
        if self.low is not None and self.high is not None:
            low, high = format_number(self.low), format_number(self.high)
            text = f"in {'(' if self.low_open else '['}{low}, {high}{']' if self.high_closed else ')'}"
        elif self.low is not None:
            text = f"{'>' if self.low_open else '>='} {format_number(self.low)}"
            text = f"a finite number {text}" if floating else text
        else:
            text = "a finite number"
        if self.sentinel is not None:
            text = f"{self.sentinel[0]} ({self.sentinel[1]}) or {text}"
        return text


COUNT = Range(low=1)  # counts that must be at least one (sizes and lengths also have upper bounds, below)
NONNEGATIVE = Range(low=0)  # counts where 0 means none, off or no limit; float amounts that may be zero
POSITIVE = Range(low=0, low_open=True)  # rates and factors that must not vanish
PROBABILITY = Range(low=0, high=1)  # [0, 1): dropout, label smoothing, Adam's betas
SEED = Range(low=0, high=2**32 - 1, high_closed=True)  # what numpy (Lightning's seed_everything) accepts
NO_LIMIT_OR_COUNT = Range(low=1, sentinel=(-1, "no limit"))  # Lightning's max_epochs and max_steps

# Upper bounds, checked before anything is built: a width of millions, 100,000 layers or a beam of a million fails
# inside torch (out of memory, or a tensor too large) after seconds or minutes. Each bound is far above what any real
# run needs, the shipped and paper presets included (their largest: d_model 512, d_ff 2048, 6 layers, 8 heads,
# max_len 1024, beam 5, batch 1024, 200,000 generated problems).
MAX_WIDTH = 65_536  # d_model, d_ff and the recurrent hidden sizes
MAX_LAYERS = 256
MAX_LENGTH = 100_000  # tokens of a source, a target or a decoded answer
MAX_BEAM = 1_000  # beam width and n-best size
MAX_BATCH = 100_000  # examples per training or decoding batch
MAX_LENGTH_PENALTY = 10.0  # |alpha| in score / len^alpha: len^alpha stays a float for len <= MAX_LENGTH
WIDTH = Range(low=1, high=MAX_WIDTH, high_closed=True)
DEPTH = Range(low=1, high=MAX_LAYERS, high_closed=True)
LENGTH = Range(low=1, high=MAX_LENGTH, high_closed=True)
BEAM = Range(low=1, high=MAX_BEAM, high_closed=True)
BATCH = Range(low=1, high=MAX_BATCH, high_closed=True)
GENERATED = Range(low=0, high=100_000_000, high_closed=True)  # problems generated in memory; the presets: 200,000
WORKERS = Range(low=0, high=4096, high_closed=True)  # processes or threads of one machine; 0: the default

RANGES: dict[str, Range] = {  # dotted key -> its allowed values; a tuple key (optim.betas): each item
    "data.generate_train": Range(low=1, high=GENERATED.high, high_closed=True),
    "data.generate_valid": GENERATED,  # 0: none generated, the validation set is carved out of the training set
    "data.generate_test": GENERATED,  # 0: no test set
    "data.generate_seed": SEED,
    "data.valid_fraction": Range(low=0, high=1, low_open=True),  # the carved-out share; some must be left to train
    "data.valid_max": NONNEGATIVE,  # 0: no cap
    "data.max_source_len": LENGTH,
    "data.max_target_len": LENGTH,
    "data.min_count": COUNT,  # 1: every training word is in the vocabulary
    "data.word_dropout": PROBABILITY,  # 0: no word dropout; 1 would leave no word to read
    "data.per_module": NONNEGATIVE,  # 0: every question of a module file
    "data.symbolic_max_ops": Range(low=1, high=1000, high_closed=True),  # the presets: 15
    "data.shuffle_window": Range(low=1, high=100_000_000, high_closed=True),  # records held; 1: in file order
    "data.loader_workers": WORKERS,  # 0: the training process reads
    "data.stream_vocab_records": NONNEGATIVE,  # 0: every record
    "model.d_model": WIDTH,
    "model.n_heads": WIDTH,  # at most d_model (heads divide it)
    "model.n_encoder_layers": DEPTH,
    "model.n_decoder_layers": DEPTH,
    "model.d_ff": WIDTH,
    "model.dropout": PROBABILITY,
    "model.relative_k": Range(low=0, high=MAX_LENGTH, high_closed=True),  # 0: every distance shares one embedding
    "model.tree_depth": Range(low=1, high=1024, high_closed=True),  # the presets: 32
    "model.tree_width": Range(low=1, high=1024, high_closed=True),
    # id 0 is shared by the rare relations, so at least one more
    "model.tree_relations": Range(low=2, high=MAX_LENGTH, high_closed=True),
    "model.stack_depth": Range(low=1, high=4096, high_closed=True),
    "model.encoder_hidden": WIDTH,
    "model.decoder_hidden": WIDTH,
    "model.max_len": LENGTH,
    "optim.lr": POSITIVE,
    "optim.lr_scale": POSITIVE,
    "optim.warmup_steps": COUNT,  # the warm-up schedule divides by warmup^1.5
    "optim.betas": PROBABILITY,
    "optim.eps": POSITIVE,  # Adam divides by sqrt(v) + eps, and v is 0 for a parameter that never gets a gradient
    "optim.weight_decay": NONNEGATIVE,
    "optim.grad_clip": NONNEGATIVE,  # 0: no clipping
    "optim.label_smoothing": PROBABILITY,
    "optim.plateau_factor": Range(low=0, high=1, low_open=True),  # multiplies the rate: it must fall, and not to 0
    "optim.plateau_patience": NONNEGATIVE,
    "optim.step_epochs": COUNT,
    "optim.step_gamma": Range(low=0, high=1, low_open=True),  # multiplies the rate: it must not grow, nor reach 0
    "optim.ema_decay": PROBABILITY,  # [0, 1): at 1 the average would never leave the initial weights
    "train.seed": SEED,
    "train.batch_size": BATCH,
    "train.max_epochs": NO_LIMIT_OR_COUNT,
    "train.max_steps": NO_LIMIT_OR_COUNT,
    "train.val_every_steps": NONNEGATIVE,  # 0: validate every epoch
    "train.patience": NONNEGATIVE,  # 0: no early stopping
    "train.min_epochs": NONNEGATIVE,
    "train.devices": Range(low=1, sentinel=(-1, "every device")),
    "train.num_nodes": COUNT,
    "train.num_threads": WORKERS,  # 0: torch's default
    "train.max_time_minutes": NONNEGATIVE,  # 0: no limit
    "train.rank_weight": NONNEGATIVE,  # 0: no completion ranking loss
    "train.rank_groups": Range(low=1, high=MAX_BATCH, high_closed=True),
    "train.rank_negatives": Range(low=1, high=MAX_BATCH, high_closed=True),
    "train.rank_hard": NONNEGATIVE,  # 0: every wrong filler drawn uniformly
    "decode.max_len": LENGTH,  # at most model.max_len (decode_fits_the_model)
    "decode.batch_size": BATCH,
    "decode.beam": BEAM,
    "decode.nbest": BEAM,
    "decode.length_penalty": Range(low=-MAX_LENGTH_PENALTY, high=MAX_LENGTH_PENALTY, high_closed=True),  # alpha
}


def heads_divide_the_width(model: "ModelConfig") -> tuple[str, str] | None:
    """The Transformer's attention kernels split d_model into n_heads equal heads; group attention splits the
    encoder's memory (both directions of encoder_hidden) the same way."""
    if model.name in TRANSFORMERS and model.d_model % model.n_heads:
        return "model.n_heads", f"model.n_heads ({model.n_heads}) must divide model.d_model ({model.d_model})"
    memory = 2 * model.encoder_hidden
    if model.name == "group_attention" and memory % model.n_heads:
        return "model.n_heads", f"model.n_heads ({model.n_heads}) must divide 2 * model.encoder_hidden ({memory})"
    return None


def tree_positions_fit(model: "ModelConfig") -> tuple[str, str] | None:
    """Tree positions put at least one copy of the tree_depth x tree_width one-hot path stack in d_model."""
    stack = model.tree_depth * model.tree_width
    if model.name in TRANSFORMERS and model.positions == "tree" and model.d_model < stack:
        return "model.d_model", (f"model.d_model ({model.d_model}) must be at least model.tree_depth * "
                                 f"model.tree_width ({stack}) for tree positions")
    return None


def last_step_is_validated(train: "TrainConfig") -> tuple[str, str] | None:
    if train.max_steps > 0 and train.val_every_steps > 0 and train.max_steps % train.val_every_steps:
        return "train.max_steps", (f"train.max_steps ({train.max_steps}) must be a multiple of train.val_every_steps "
                                   f"({train.val_every_steps}), so that the last step is validated")
    return None


def training_ends_without_validation(train: "TrainConfig") -> tuple[str, str] | None:
    """Without validation nothing stops a run early, so it needs an epoch or step budget."""
    if not train.validate and train.max_epochs == -1 and train.max_steps <= 0:
        return "train.validate", ("train.validate false needs train.max_epochs or train.max_steps: without "
                                  "validation nothing else ends the run")
    return None


def min_epochs_within_max(train: "TrainConfig") -> tuple[str, str] | None:
    if train.max_epochs != -1 and train.min_epochs > train.max_epochs:
        return "train.min_epochs", (f"train.min_epochs ({train.min_epochs}) cannot exceed train.max_epochs "
                                    f"({train.max_epochs})")
    return None


def hard_fillers_within_negatives(train: "TrainConfig") -> tuple[str, str] | None:
    if train.rank_hard > train.rank_negatives:
        return "train.rank_hard", (f"train.rank_hard ({train.rank_hard}) cannot exceed train.rank_negatives "
                                   f"({train.rank_negatives}): the hard fillers are some of the negatives")
    return None


PRECISION_NAMES = ("32-true", "bf16-mixed", "16-mixed", "auto")  # what each means: neuromath.nn.precision


def precision_is_known(train: "TrainConfig") -> tuple[str, str] | None:
    if train.precision not in PRECISION_NAMES:
        return "train.precision", (f"train.precision must be one of {', '.join(PRECISION_NAMES)}, got "
                                   f"{train.precision!r}")
    return None


# Lightning's strategies that train as neuromath.nn.distributed expects: one process per device, each with the whole
# model (ddp_spawn would pickle the run's loaders and send the fitted model back; sharded strategies split the model)
STRATEGY_NAMES = ("auto", "ddp", "ddp_find_unused_parameters_true")


def strategy_is_known(train: "TrainConfig") -> tuple[str, str] | None:
    if train.strategy not in STRATEGY_NAMES:
        return "train.strategy", (f"train.strategy must be one of {', '.join(STRATEGY_NAMES)}, got "
                                  f"{train.strategy!r}")
    return None


TREE_ACTIVATION_NAMES = ("tanh", "sigmoid")  # neuromath.nn.tree_cells.TREE_ACTIVATIONS


def tree_activation_is_known(model: "ModelConfig") -> tuple[str, str] | None:
    if model.tree_activation not in TREE_ACTIVATION_NAMES:
        return "model.tree_activation", (f"model.tree_activation must be one of {', '.join(TREE_ACTIVATION_NAMES)}, "
                                         f"got {model.tree_activation!r}")
    return None


DROPOUT_SITES = ("output", "candidate")


def dropout_site_is_known(model: "ModelConfig") -> tuple[str, str] | None:
    if model.dropout_site not in DROPOUT_SITES:
        return "model.dropout_site", (f"model.dropout_site must be one of {', '.join(DROPOUT_SITES)}, "
                                      f"got {model.dropout_site!r}")
    return None


TREE_LEAF_NAMES = ("gated", "embedding")  # neuromath.nn.tree_cells.TreeLSTMBase (model.tree_leaf)


def tree_leaf_is_known(model: "ModelConfig") -> tuple[str, str] | None:
    if model.tree_leaf not in TREE_LEAF_NAMES:
        return "model.tree_leaf", (f"model.tree_leaf must be one of {', '.join(TREE_LEAF_NAMES)}, "
                                   f"got {model.tree_leaf!r}")
    return None


def nbest_within_beam(decode: "DecodeConfig") -> tuple[str, str] | None:
    if decode.nbest > decode.beam:
        return "decode.nbest", f"decode: nbest ({decode.nbest}) cannot exceed the beam width ({decode.beam})"
    return None


def task_is_known(data: "DataConfig") -> tuple[str, str] | None:
    if data.task not in TASK_NAMES:
        return "data.task", f"data.task: unknown task {data.task!r}; the tasks are: {', '.join(TASK_NAMES)}"
    return None


def model_is_known(model: "ModelConfig") -> tuple[str, str] | None:
    if model.name not in MODEL_NAMES:
        return "model.name", f"model.name: unknown model {model.name!r}; the models are: {', '.join(MODEL_NAMES)}"
    return None


def decode_fits_the_model(config: "Config") -> tuple[str, str] | None:
    """A Transformer reads and writes at most model.max_len positions (its position tables), so a longer decoding
    would fail in the middle of it. The recurrent and tree decoders have no such table: their run folders keep
    loading whatever the two lengths are."""
    model, decode = config.model, config.decode
    if model.name in TRANSFORMERS and decode.max_len > model.max_len:
        return "decode.max_len", (f"decode.max_len ({decode.max_len}) cannot exceed model.max_len ({model.max_len}): "
                                  "the model writes at most model.max_len tokens")
    return None


# section -> rules between its keys: each returns None, or the dotted key at fault and what is wrong
CROSS_CHECKS: dict[str, tuple[Callable[[Any], tuple[str, str] | None], ...]] = {
    "data": (task_is_known,),
    "model": (model_is_known, heads_divide_the_width, tree_positions_fit, tree_activation_is_known,
              dropout_site_is_known, tree_leaf_is_known),
    "train": (last_step_is_validated, training_ends_without_validation, min_epochs_within_max, precision_is_known,
              strategy_is_known, hard_fillers_within_negatives),
    "decode": (nbest_within_beam,),
}
CONFIG_CHECKS = (decode_fits_the_model,)  # rules between keys of different sections, checked by Config itself


def format_number(value: int | float) -> str:
    """``2`` for 2 and 2.0, ``0.5``, ``nan``: how a message quotes the value it refuses."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:  # 1e308: not 309 digits
        return str(int(value))
    return str(value)


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


PRESETS = Path(__file__).resolve().parent / "configs"  # the presets, shipped as package data


def preset_names() -> list[str]:
    """The shipped presets' names, ``<task>/<model>`` (``word_problems/graph2tree``), sorted."""
    return sorted(path.relative_to(PRESETS).with_suffix("").as_posix() for path in PRESETS.rglob("*.yaml"))


def preset_description(name: str) -> str:
    """The one-line description of a preset: the first line of its file, a comment."""
    first = (PRESETS / f"{name}.yaml").read_text(encoding="utf-8").splitlines()[0]
    return first.lstrip("#").strip()


def find_config(name: str | Path) -> Path:
    """The config file that ``name`` means: a YAML file when one is there, else the shipped preset of that name
    (``word_problems/graph2tree``; ``.yaml`` and the ``configs/`` folder of the repository's older layout may be
    written too). Neither is a ConfigError that lists the closest preset names."""
    path = Path(name)
    if path.exists() and not path.is_dir():  # a file there, read as a config (load_config refuses a FIFO unread)
        return path
    key = path.as_posix().removesuffix(".yaml").removeprefix("configs/")
    names = preset_names()
    if key in names:
        return PRESETS / f"{key}.yaml"
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    raise ConfigError(f"{name}: no such config file and no preset of that name{hint} (`neuromath config list` "
                      "lists the presets)")


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
