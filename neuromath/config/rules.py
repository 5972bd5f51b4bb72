"""The rules of the run configuration (``neuromath.config``): the values a numeric key allows (``Range`` and the
bounds its fields are declared with), the names an enumerated key allows, the rules between keys, and which keys of
the shared sections (optim, train, decode) each kind of model reads (``KIND_KEYS``). Plain names and functions: this
module imports no config class; the classes (``neuromath.config.models``, ``neuromath.config.tasks``,
``neuromath.config.sections``) declare them on their fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from neuromath.errors import ConfigError

# The rules read config sections by attribute; they are typed as these aliases because the config classes import
# this module, not the other way round.
Config = ModelConfig = TrainConfig = DecodeConfig = Any

# ------------------------------------------------------------------------------------------ which kinds read what
#
# The model section and the data section are families of classes (one per model family, one per task): a key applies
# where its class has it. The optim, train and decode sections are shared; what of them a model reads follows from
# how it trains, its kind (``ModelConfig.kind``): a sequence model trains and decodes token by token, a classifier
# scores equations (a tree cell, or a sequence encoder over the pre-order tokens), the majority class only counts
# labels, and a retrieval baseline trains nothing. A key (or whole section) listed here applies to the kinds named;
# a key listed under neither itself nor its section applies to every kind. A new model of an existing kind changes
# nothing here.

SEQUENCE = "sequence"
TREE_CLASSIFIER = "tree_classifier"
SEQUENCE_CLASSIFIER = "sequence_classifier"
MAJORITY = "majority"
RETRIEVAL = "retrieval"
KINDS = (SEQUENCE, TREE_CLASSIFIER, SEQUENCE_CLASSIFIER, MAJORITY, RETRIEVAL)
CLASSIFIER_KINDS = (TREE_CLASSIFIER, SEQUENCE_CLASSIFIER)
TRAINED_KINDS = (SEQUENCE,) + CLASSIFIER_KINDS
# the training procedure (neuromath.registry.TRAINING) each kind follows; a retrieval baseline is fitted by cv alone
PROCEDURES = {SEQUENCE: "sequence", TREE_CLASSIFIER: "classifier", SEQUENCE_CLASSIFIER: "classifier",
              MAJORITY: "classifier"}

KIND_KEYS: dict[str, tuple[str, ...]] = {  # keys or whole sections of optim, train, decode -> the kinds that read them
    "optim": TRAINED_KINDS,
    "optim.lr_scale": (SEQUENCE,),  # the warm-up schedule and label smoothing: sequence models only
    "optim.warmup_steps": (SEQUENCE,),
    "optim.label_smoothing": (SEQUENCE,),
    "optim.loss_denominator": (SEQUENCE,),  # tokens per batch of the cross-entropy (training.module.SequenceModule)
    "optim.contrast_weight": (SEQUENCE,),  # the unlikelihood term of data.contrast's problems
    "optim.plateau_factor": CLASSIFIER_KINDS,  # the plateau schedule: equation classifiers only
    "optim.plateau_patience": CLASSIFIER_KINDS,
    "optim.step_epochs": (SEQUENCE,),  # the step schedule: sequence models only
    "optim.step_gamma": (SEQUENCE,),
    "train": TRAINED_KINDS + (MAJORITY,),
    "train.validate": (SEQUENCE,),  # the equation classifiers always validate (their plateau schedule reads it)
    "train.compile": (SEQUENCE,),  # torch.compile of the training forward: sequence models (neuromath.nn.compiling)
    "train.compile_mode": (SEQUENCE,),
    "train.length_multiple": (SEQUENCE,),  # padding of a batch's lengths (neuromath.models.batching.collate)
    "train.length_grouping": (SEQUENCE,),  # batches of one length (neuromath.models.batching.LengthGroupedBatches)
    # fine-tuning and the completion ranking loss: tree classifiers (the loss mines fillers path-wise)
    **{f"train.{key}": (TREE_CLASSIFIER,) for key in ("init_from", "rank_weight", "rank_groups", "rank_negatives",
                                                      "rank_hard")},
    "decode": (SEQUENCE,),  # the classifiers score equations, they decode nothing ...
    "decode.batch_size": (SEQUENCE,) + CLASSIFIER_KINDS + (MAJORITY,),  # ... but validate in batches of this size
}


def kinds_reading(key: str) -> tuple[str, ...]:
    """The kinds of model that read the dotted optim, train or decode ``key``."""
    return KIND_KEYS.get(key, KIND_KEYS.get(key.split(".", 1)[0], KINDS))


# ------------------------------------------------------------------------------------------ allowed values
#
# Every numeric key has a range, from how the code reads it: sizes and counts that must be at least 1, counts where 0
# means "none" or "no limit", probabilities and fractions, -1 where Lightning reads it as "no limit"; sizes, layers,
# lengths, beams and batches also have an upper bound far above any real run (``MAX_WIDTH`` ...). Floats must also be
# finite. Each field declares its range (``neuromath.config.sections.ranged``); ``Section.__post_init__`` checks them,
# and the rules between keys (a class's ``rules``), whenever a section is built. tests/test_config.py holds that every
# numeric key of every section class has a range.


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

def heads_divide_the_width(model: ModelConfig) -> tuple[str, str] | None:
    """The Transformer's attention kernels split d_model into n_heads equal heads."""
    if model.d_model % model.n_heads:
        return "model.n_heads", f"model.n_heads ({model.n_heads}) must divide model.d_model ({model.d_model})"
    return None


def heads_divide_the_memory(model: ModelConfig) -> tuple[str, str] | None:
    """Group attention splits the encoder's memory (both directions of encoder_hidden) into n_heads equal heads."""
    memory = 2 * model.encoder_hidden
    if memory % model.n_heads:
        return "model.n_heads", f"model.n_heads ({model.n_heads}) must divide 2 * model.encoder_hidden ({memory})"
    return None


def heads_divide_among_the_groups(model: ModelConfig) -> tuple[str, str] | None:
    """Group attention shares model.n_heads equally among the groups of model.groups."""
    groups = len(model.groups.split(","))
    if model.n_heads % groups:
        return "model.n_heads", (f"model.n_heads ({model.n_heads}) must be a multiple of the {groups} groups of "
                                 "model.groups")
    return None


GRAPH2TREE_GRAPHS = 4  # one graph convolution head per graph (neuromath.models.tree_decoders.GRAPHS)


def heads_divide_the_states(model: ModelConfig) -> tuple[str, str] | None:
    """Graph2Tree splits the encoder states (encoder_hidden) into one graph convolution head per graph."""
    if model.encoder_hidden % GRAPH2TREE_GRAPHS:
        return "model.encoder_hidden", (f"model.encoder_hidden ({model.encoder_hidden}) must be a multiple of "
                                        f"{GRAPH2TREE_GRAPHS} for graph2tree (one graph convolution head per graph)")
    return None


def relevance_reads_pointers(model: ModelConfig) -> tuple[str, str] | None:
    """The number-relevance loss reads each number's encoder state, which only pointed numbers have."""
    if model.number_relevance > 0 and model.numbers != "pointer":
        return "model.number_relevance", ("model.number_relevance reads each number's encoder state: it needs "
                                          "model.numbers pointer")
    return None


WORD_VECTOR_SOURCES = ("embedding", "pretrained")  # model.encoder of the recurrent and tree word-problem models


def pretrained_encoder_is_named(model: ModelConfig) -> tuple[str, str] | None:
    """``model.encoder: pretrained`` reads ``model.pretrained``; its word states replace the model's own embeddings,
    so the word-part features of those embeddings do not apply; the freezing keys need the pretrained encoder."""
    if model.encoder != "pretrained":
        if model.pretrained or model.freeze_embeddings or model.freeze_layers:
            key = "model.pretrained" if model.pretrained else (
                "model.freeze_embeddings" if model.freeze_embeddings else "model.freeze_layers")
            return key, f"{key} applies to model.encoder pretrained, and model.encoder is {model.encoder!r}"
        return None
    if not model.pretrained:
        return "model.pretrained", ("model.encoder pretrained needs model.pretrained: a Hugging Face model name or a "
                                    "local folder with its config, weights and tokenizer")
    for key in ("char_ngrams", "subwords"):
        if getattr(model, key):
            return f"model.{key}", (f"model.{key} adds word parts to the model's own embeddings, which "
                                    "model.encoder pretrained replaces")
    return None


def tree_positions_fit(model: ModelConfig) -> tuple[str, str] | None:
    """Tree positions put at least one copy of the tree_depth x tree_width one-hot path stack in d_model."""
    stack = model.tree_depth * model.tree_width
    if model.positions == "tree" and model.d_model < stack:
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
                                    f"({train.max_epochs}): for a shorter run, set both "
                                    f"(--set train.min_epochs={train.max_epochs})")
    return None


def hard_fillers_within_negatives(train: TrainConfig) -> tuple[str, str] | None:
    if train.rank_hard > train.rank_negatives:
        return "train.rank_hard", (f"train.rank_hard ({train.rank_hard}) cannot exceed train.rank_negatives "
                                   f"({train.rank_negatives}): the hard fillers are some of the negatives")
    return None


# ------------------------------------------------------------------------------------------ names a key allows

PRECISION_NAMES = ("32-true", "bf16-mixed", "16-mixed", "auto")  # what each means: neuromath.nn.precision
# Lightning's strategies that train as neuromath.nn.distributed expects: one process per device, each with the whole
# model (ddp_spawn would pickle the run's loaders and send the fitted model back; sharded strategies split the model)
STRATEGY_NAMES = ("auto", "ddp", "ddp_find_unused_parameters_true")

TREE_ACTIVATION_NAMES = ("tanh", "sigmoid")  # neuromath.nn.tree_cells.TREE_ACTIVATIONS

DROPOUT_SITES = ("output", "candidate")

# The names that nn registers (ATTENTION, POSITIONS in neuromath.registry); tests/test_config_classes.py checks that
# the two agree, so that the config refuses a name before any model is built.
ATTENTION_KERNELS = ("standard", "tp", "relative", "tree_relative")
POSITION_ENCODINGS = ("sinusoidal", "learned", "tree")

TREE_LEAF_NAMES = ("gated", "embedding")  # neuromath.nn.tree_cells.TreeLSTMBase (model.tree_leaf)


# ------------------------------------------------------------------------------------------ rules between keys


# the variations of word problems (neuromath.tasks.word_problems.variations) that data.augment adds to the training
# set and data.valid_variations to the validation set: three keep the answer, question_changed asks another question
# about the same story (its own equation and answer)
ATTENTION_PLACES = ("encoder", "decoder", "cross")  # model.attention_in
POSITION_SIDES = ("encoder", "decoder")  # model.positions_in
ATTENTION_GROUPS = ("global", "quantity", "quantity_pair", "question")  # model.groups (Li et al. 2019, Sec. 3.2)
ACCELERATORS = ("cpu", "gpu", "cuda", "auto")  # train.accelerator, as Lightning names them
# train.protocol: how the kept epoch is chosen. clean: on validation data carved out of training (data.valid_fraction)
# or data.valid; literature: on the test split itself, as MWPToolkit's k-fold trainer and the SVAMP code do
PROTOCOLS = ("clean", "literature")
# data.format: the file formats each sequence task reads (null: detected from the file)
WORD_PROBLEM_FORMATS = ("svamp_csv", "svamp_json", "mwptoolkit_json", "question_equation_csv", "jsonl")
MATHEMATICS_SPLITS = ("train-easy", "train-medium", "train-hard")  # data.train_splits of the Mathematics Dataset
MATHEMATICS_TEST_SPLITS = ("interpolate", "extrapolate")  # data.test_splits


def parse_depths(text: str, key: str = "data.train_depths") -> set[int]:
    """``"1-7"`` -> {1, ..., 7}; ``"8,10-12"`` -> {8, 10, 11, 12}; a ConfigError for anything else."""
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


def depths_are_ranges(data: Any) -> tuple[str, str] | None:
    """data.train_depths and test_depths parse (``parse_depths``) when the config is built."""
    for key in ("train_depths", "test_depths"):
        try:
            parse_depths(getattr(data, key), f"data.{key}")
        except ConfigError as error:
            return f"data.{key}", str(error)
    return None


AUGMENT_NAMES = ("sentences_reordered", "numbers_resampled", "irrelevant_sentence", "question_changed")
# data.contrast: the variations whose problems must not be answered with the original equation
CONTRAST_NAMES = ("question_removed", "question_changed")


def augmentations_are_known(data: Any) -> tuple[str, str] | None:
    for key in ("augment", "valid_variations"):
        value = getattr(data, key)
        names = [name.strip() for name in value.split(",") if name.strip()]
        unknown = [name for name in names if name not in AUGMENT_NAMES]
        if unknown:
            return f"data.{key}", (f"data.{key}: {', '.join(repr(name) for name in unknown)} is not a variation it "
                                   f"takes; the variations are: {', '.join(AUGMENT_NAMES)}")
        if len(set(names)) < len(names):
            return f"data.{key}", f"data.{key} names a variation twice: {value!r}"
    return None


def contrasts_are_known(data: Any) -> tuple[str, str] | None:
    names = [name.strip() for name in data.contrast.split(",") if name.strip()]
    unknown = [name for name in names if name not in CONTRAST_NAMES]
    if unknown:
        return "data.contrast", (f"data.contrast: {', '.join(repr(name) for name in unknown)} is not a variation it "
                                 f"takes; the variations are: {', '.join(CONTRAST_NAMES)}")
    if len(set(names)) < len(names):
        return "data.contrast", f"data.contrast names a variation twice: {data.contrast!r}"
    return None


def nbest_within_beam(decode: DecodeConfig) -> tuple[str, str] | None:
    if decode.nbest > decode.beam:
        return "decode.nbest", f"decode: nbest ({decode.nbest}) cannot exceed the beam width ({decode.beam})"
    return None


def decode_fits_the_model(config: Config) -> tuple[str, str] | None:
    """A Transformer reads and writes at most model.max_len positions (its position tables), so a longer decoding
    would fail in the middle of it. The recurrent and tree decoders have no such table: their run folders keep
    loading whatever the two lengths are."""
    model, decode = config.model, config.decode
    if model.bounded_positions and decode.max_len > model.max_len:
        return "decode.max_len", (f"decode.max_len ({decode.max_len}) cannot exceed model.max_len ({model.max_len}): "
                                  "the model writes at most model.max_len tokens")
    return None


def format_number(value: int | float) -> str:
    """``2`` for 2 and 2.0, ``0.5``, ``nan``: how a message quotes the value it refuses."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:  # 1e308: not 309 digits
        return str(int(value))
    return str(value)


SCHEDULES = {SEQUENCE: ("warmup", "constant", "step"), TREE_CLASSIFIER: ("plateau", "constant"),
             SEQUENCE_CLASSIFIER: ("plateau", "constant")}  # what optim.schedule each trained kind can follow


def schedule_fits_the_kind(config: Config) -> tuple[str, str] | None:
    """A sequence model follows the warm-up, constant or step schedule, an equation classifier the plateau or
    constant one: checked when the config is built, not after the data and the model."""
    allowed = SCHEDULES.get(config.model.kind)
    if allowed is not None and config.optim.schedule not in allowed:  # an unknown name, or another kind's schedule
        return "optim.schedule", (f"optim.schedule {config.optim.schedule!r} does not apply to {config.model.name!r} "
                                  f"({config.model.kind.replace('_', ' ')}): use {' or '.join(allowed)}")
    return None


def model_fits_the_task(config: Config) -> tuple[str, str] | None:
    """The model's kind is one the task's examples can train (``model_kinds`` of the data class): a sequence model
    reads token sequences, an equation classifier equation trees."""
    kinds = type(config.data).model_kinds
    if config.model.kind not in kinds:
        members = type(config.model).family_root().members
        names = [name for name, member in members.items() if member.kind in kinds]
        return "model.name", (f"model {config.model.name!r} ({config.model.kind.replace('_', ' ')}) does not apply to "
                              f"the {config.data.task} task: its models are {', '.join(names)}")
    return None


def literature_selects_on_test(config: Config) -> tuple[str, str] | None:
    """``train.protocol: literature`` keeps the epoch with the best test-split score: it needs a sequence model (one
    that chooses an epoch by decoding), validation on, and no validation file of its own. That the run has a test
    split is checked when its data is read (``cv`` gives each fold's)."""
    if config.train.protocol != "literature":
        return None
    if PROCEDURES.get(config.model.kind) != SEQUENCE:
        return "train.protocol", (f"train.protocol literature chooses an epoch by decoding the test split; "
                                  f"{config.model.name!r} ({config.model.kind.replace('_', ' ')}) does not")
    if getattr(config.data, "valid", None):
        return "train.protocol", (f"train.protocol literature chooses the epoch on data.test, so data.valid "
                                  f"({config.data.valid}) would go unused: leave it out")
    if not config.train.validate:
        return "train.protocol", "train.protocol literature chooses an epoch: it needs train.validate true"
    return None


def contrast_needs_a_sequence_model(config: Config) -> tuple[str, str] | None:
    """``data.contrast`` adds problems whose equation training pushes down: only the sequence models' loss reads the
    mark; a retrieval baseline would keep them as answers to copy."""
    if getattr(config.data, "contrast", "") and PROCEDURES.get(config.model.kind) != SEQUENCE:
        return "data.contrast", (f"data.contrast trains against the original equation through a sequence model's "
                                 f"loss; {config.model.name!r} ({config.model.kind.replace('_', ' ')}) has none")
    return None


def grouping_needs_a_training_set(config: Config) -> tuple[str, str] | None:
    """``train.length_grouping`` sorts pools of a training set read whole; a stream (``data.streaming``) is read in
    shuffle windows and has none."""
    if config.train.length_grouping and getattr(config.data, "streaming", False):
        return "train.length_grouping", ("train.length_grouping sorts pools of a training set read whole; "
                                         "data.streaming reads a stream: set train.length_grouping 0")
    return None


# rules between sections, checked by Config itself
CONFIG_CHECKS = (model_fits_the_task, decode_fits_the_model, schedule_fits_the_kind, literature_selects_on_test,
                 contrast_needs_a_sequence_model, grouping_needs_a_training_set)
