"""The rules of the run configuration (``neuromath.config``): which key applies to which task and model
(``TASK_KEYS``, ``MODEL_KEYS``, ``why_not_applicable``), the values each numeric key allows (``Range``, ``RANGES``)
and the rules between keys (``CROSS_CHECKS``, ``CONFIG_CHECKS``). Plain names and tables: this module imports no
config class, so ``neuromath.config`` checks every section it builds against them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

# The rules read config sections (neuromath.config's DataConfig, ModelConfig, ...) by attribute; they are typed as
# these aliases because neuromath.config imports this module, not the other way round.
Config = DataConfig = ModelConfig = TrainConfig = DecodeConfig = Any

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


def heads_divide_the_width(model: ModelConfig) -> tuple[str, str] | None:
    """The Transformer's attention kernels split d_model into n_heads equal heads; group attention splits the
    encoder's memory (both directions of encoder_hidden) the same way."""
    if model.name in TRANSFORMERS and model.d_model % model.n_heads:
        return "model.n_heads", f"model.n_heads ({model.n_heads}) must divide model.d_model ({model.d_model})"
    memory = 2 * model.encoder_hidden
    if model.name == "group_attention" and memory % model.n_heads:
        return "model.n_heads", f"model.n_heads ({model.n_heads}) must divide 2 * model.encoder_hidden ({memory})"
    return None


def tree_positions_fit(model: ModelConfig) -> tuple[str, str] | None:
    """Tree positions put at least one copy of the tree_depth x tree_width one-hot path stack in d_model."""
    stack = model.tree_depth * model.tree_width
    if model.name in TRANSFORMERS and model.positions == "tree" and model.d_model < stack:
        return "model.d_model", (f"model.d_model ({model.d_model}) must be at least model.tree_depth * "
                                 f"model.tree_width ({stack}) for tree positions")
    return None


def last_step_is_validated(train: TrainConfig) -> tuple[str, str] | None:
    if train.max_steps > 0 and train.val_every_steps > 0 and train.max_steps % train.val_every_steps:
        return "train.max_steps", (f"train.max_steps ({train.max_steps}) must be a multiple of train.val_every_steps "
                                   f"({train.val_every_steps}), so that the last step is validated")
    return None


def training_ends_without_validation(train: TrainConfig) -> tuple[str, str] | None:
    """Without validation nothing stops a run early, so it needs an epoch or step budget."""
    if not train.validate and train.max_epochs == -1 and train.max_steps <= 0:
        return "train.validate", ("train.validate false needs train.max_epochs or train.max_steps: without "
                                  "validation nothing else ends the run")
    return None


def min_epochs_within_max(train: TrainConfig) -> tuple[str, str] | None:
    if train.max_epochs != -1 and train.min_epochs > train.max_epochs:
        return "train.min_epochs", (f"train.min_epochs ({train.min_epochs}) cannot exceed train.max_epochs "
                                    f"({train.max_epochs})")
    return None


def hard_fillers_within_negatives(train: TrainConfig) -> tuple[str, str] | None:
    if train.rank_hard > train.rank_negatives:
        return "train.rank_hard", (f"train.rank_hard ({train.rank_hard}) cannot exceed train.rank_negatives "
                                   f"({train.rank_negatives}): the hard fillers are some of the negatives")
    return None


PRECISION_NAMES = ("32-true", "bf16-mixed", "16-mixed", "auto")  # what each means: neuromath.nn.precision


def precision_is_known(train: TrainConfig) -> tuple[str, str] | None:
    if train.precision not in PRECISION_NAMES:
        return "train.precision", (f"train.precision must be one of {', '.join(PRECISION_NAMES)}, got "
                                   f"{train.precision!r}")
    return None


# Lightning's strategies that train as neuromath.nn.distributed expects: one process per device, each with the whole
# model (ddp_spawn would pickle the run's loaders and send the fitted model back; sharded strategies split the model)
STRATEGY_NAMES = ("auto", "ddp", "ddp_find_unused_parameters_true")


def strategy_is_known(train: TrainConfig) -> tuple[str, str] | None:
    if train.strategy not in STRATEGY_NAMES:
        return "train.strategy", (f"train.strategy must be one of {', '.join(STRATEGY_NAMES)}, got "
                                  f"{train.strategy!r}")
    return None


TREE_ACTIVATION_NAMES = ("tanh", "sigmoid")  # neuromath.nn.tree_cells.TREE_ACTIVATIONS


def tree_activation_is_known(model: ModelConfig) -> tuple[str, str] | None:
    if model.tree_activation not in TREE_ACTIVATION_NAMES:
        return "model.tree_activation", (f"model.tree_activation must be one of {', '.join(TREE_ACTIVATION_NAMES)}, "
                                         f"got {model.tree_activation!r}")
    return None


DROPOUT_SITES = ("output", "candidate")


def dropout_site_is_known(model: ModelConfig) -> tuple[str, str] | None:
    if model.dropout_site not in DROPOUT_SITES:
        return "model.dropout_site", (f"model.dropout_site must be one of {', '.join(DROPOUT_SITES)}, "
                                      f"got {model.dropout_site!r}")
    return None


TREE_LEAF_NAMES = ("gated", "embedding")  # neuromath.nn.tree_cells.TreeLSTMBase (model.tree_leaf)


def tree_leaf_is_known(model: ModelConfig) -> tuple[str, str] | None:
    if model.tree_leaf not in TREE_LEAF_NAMES:
        return "model.tree_leaf", (f"model.tree_leaf must be one of {', '.join(TREE_LEAF_NAMES)}, "
                                   f"got {model.tree_leaf!r}")
    return None


def nbest_within_beam(decode: DecodeConfig) -> tuple[str, str] | None:
    if decode.nbest > decode.beam:
        return "decode.nbest", f"decode: nbest ({decode.nbest}) cannot exceed the beam width ({decode.beam})"
    return None


def task_is_known(data: DataConfig) -> tuple[str, str] | None:
    if data.task not in TASK_NAMES:
        return "data.task", f"data.task: unknown task {data.task!r}; the tasks are: {', '.join(TASK_NAMES)}"
    return None


def model_is_known(model: ModelConfig) -> tuple[str, str] | None:
    if model.name not in MODEL_NAMES:
        return "model.name", f"model.name: unknown model {model.name!r}; the models are: {', '.join(MODEL_NAMES)}"
    return None


def decode_fits_the_model(config: Config) -> tuple[str, str] | None:
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
