"""The data section of the run configuration: one class per task, chosen by ``data.task``.

Each class declares the keys its task reads; ``DataConfig(**values)`` builds the class that ``values["task"]`` names
(``neuromath.config.sections.ChosenSection``). Adding a task: a class here and the task itself
(``neuromath.registry.TASKS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from neuromath.config.rules import (
    CLASSIFIER_KINDS,
    COUNT,
    GENERATED,
    LENGTH,
    MAJORITY,
    MATHEMATICS_SPLITS,
    MATHEMATICS_TEST_SPLITS,
    NONNEGATIVE,
    PROBABILITY,
    RETRIEVAL,
    SEED,
    SEQUENCE,
    WORD_PROBLEM_FORMATS,
    WORKERS,
    Range,
    augmentations_are_known,
    contrasts_are_known,
    depths_are_ranges,
)
from neuromath.config.sections import ChosenSection, family, list_of, one_of, ranged


@family("data", "task", "task")
@dataclass(frozen=True)
class DataConfig(ChosenSection):
    """The root of the data family, with what every task reads: ``DataConfig(task=..., **keys)`` builds the class of
    that task."""

    model_kinds: ClassVar[tuple[str, ...]] = (SEQUENCE,)  # the kinds of model its examples train
    default_model: ClassVar[str] = "transformer"  # model.name when a config names none
    task: str = "word_problems"
    # where relative data paths that are not in the working directory are read from (neuromath.dataroot);
    # None -> $NEUROMATH_DATA, else ./data
    root: str | None = None
    train: str | None = None  # a data file; None -> generate `generate_train` problems
    valid: str | None = None  # None -> generate, or carve `valid_fraction` out of `train`
    test: str | None = None
    lenient: bool = False  # skip (and report) malformed rows instead of stopping
    generate_train: int = ranged(4000, Range(low=1, high=GENERATED.high, high_closed=True))
    generate_seed: int = ranged(1234, SEED)
    # the carved-out share of the training set; some must be left to train
    valid_fraction: float = ranged(0.1, Range(low=0, high=1, low_open=True))
    valid_max: int = ranged(0, NONNEGATIVE)  # at most this many carved-out validation examples; 0 -> no cap


@dataclass(frozen=True)
class SequenceData(DataConfig):
    """What the sequence tasks read: a source and a target per example, read in one of several file formats and
    filtered by length; the held-out sets generated or read."""

    format: str | None = None  # None -> detect from each file
    generate_valid: int = ranged(300, GENERATED)  # 0: none generated, the validation set is carved out of the train
    generate_test: int = ranged(500, GENERATED)  # 0: no test set
    max_source_len: int = ranged(200, LENGTH)
    max_target_len: int = ranged(64, LENGTH)


@DataConfig.register("word_problems", "word_problems_normalized")
@dataclass(frozen=True)
class WordProblemsData(SequenceData):
    """Word problems with masked numbers: how source words become vocabulary ids (at training, and when a run
    solves or evaluates), and what variations of the training problems join the training set."""

    model_kinds: ClassVar[tuple[str, ...]] = (SEQUENCE, RETRIEVAL)
    rules: ClassVar = (augmentations_are_known, contrasts_are_known)
    task: str = "word_problems"
    format: str | None = one_of(None, None, *WORD_PROBLEM_FORMATS)  # None -> detect from each file
    lowercase: bool = True  # lower-case the source words; False keeps their case
    # refuse a row whose gold answer contradicts its own equation (an error naming the file, line and reason); false
    # keeps such rows and counts them in the run's data.json (neuromath data check lists them)
    strict: bool = False
    # a source word seen fewer times in the training set is <unk> (the numbers n0, n1, ... never); 1: every word kept
    min_count: int = ranged(1, COUNT)
    # training only: each ordinary source word is replaced by <unk> with this probability (1 would leave none)
    word_dropout: float = ranged(0.0, PROBABILITY)
    # training only: variations of each training problem (after the validation carve-out) join the training set,
    # augment_copies of each kind per problem: a comma list of sentences_reordered, numbers_resampled,
    # irrelevant_sentence (they keep the answer) and question_changed (another question about the same story, its
    # own equation and answer) (neuromath.tasks.word_problems.variations); "" adds none
    augment: str = ""
    augment_copies: int = ranged(1, Range(low=1, high=100, high_closed=True))
    # training only, a question-aware objective: a comma list of question_removed and question_changed. Each training
    # problem's variation of each kind (made before augment's) joins training paired with the problem's own equation,
    # and the loss pushes that equation's probability down (unlikelihood, weighted by optim.contrast_weight): without
    # its question, or under another question, the story alone must not give the old answer
    # (neuromath.tasks.word_problems.contrast); "" adds none
    contrast: str = ""
    # variations of each validation problem (made from the validation set alone, one of each kind where its rule
    # applies) that join the validation set, so that early stopping and the best checkpoint are chosen for
    # robustness as well as plain accuracy: the same names as augment; "" adds none
    valid_variations: str = ""
    # the equations taught: as_written (each data set's own form) | canonical (one prefix form for equivalent ones:
    # the operands of + and * ordered by their numbers' positions, chains rebuilt left-deep; Wang et al. 2018a's
    # normalisation, in prefix). canonical rewrites the gold equations of every split, so equation accuracy counts
    # a match with the canonical form; value accuracy is the same either way
    targets: str = one_of("as_written", "as_written", "canonical")
    # training only: a comma list of word-problem files (another collection, e.g. MAWPS beside ASDiv-A) whose problems
    # join the training set after the validation carve-out; one whose story is in the validation or test set, or
    # already in training, is left out (neuromath.tasks.word_problems.overlap.story_key)
    train_extra: str | None = None
    # a train_extra problem whose story's word set shares at least this Jaccard share with a held-out problem's is
    # its copy (names changed, a word edited) and left out too; 1: only the same story
    train_extra_similarity: float = ranged(0.8, Range(low=0, high=1, low_open=True, high_closed=True))


@dataclass(frozen=True)
class StreamingData(SequenceData):
    """Streaming (mathematics_dataset, symbolic): read data.train lazily, for corpora larger than memory
    (neuromath.training.streaming); validation comes from data.valid or the first data.valid_max records."""

    streaming: bool = False
    # each shard (process x loader worker) shuffles its records in windows of this many; 1: in file order
    shuffle_window: int = ranged(10000, Range(low=1, high=100_000_000, high_closed=True))
    # data-loader worker processes per training process; 0 -> read in the training process
    loader_workers: int = ranged(0, WORKERS)
    # the vocabulary comes from this many records after the held-out head; 0: all
    stream_vocab_records: int = ranged(1000000, NONNEGATIVE)


@DataConfig.register("mathematics_dataset")
@dataclass(frozen=True)
class MathematicsDatasetData(StreamingData):
    """The Mathematics Dataset (Saxton et al.): modules and splits."""

    task: str = "mathematics_dataset"
    modules: str = "*"  # comma list of module globs, e.g. "arithmetic__*,numbers__place_value"
    per_module: int = ranged(0, NONNEGATIVE)  # read at most this many questions per module file; 0 -> all
    format: str | None = one_of(None, None, "mathematics_dataset")  # the release's folder layout
    # merged into the training (and validation) set
    train_splits: str = list_of(",".join(MATHEMATICS_SPLITS), *MATHEMATICS_SPLITS)
    test_splits: str = list_of(",".join(MATHEMATICS_TEST_SPLITS), *MATHEMATICS_TEST_SPLITS)  # data.test, evaluate


@DataConfig.register("symbolic")
@dataclass(frozen=True)
class SymbolicData(StreamingData):
    """Integration and ODEs in prefix notation (Lample & Charton): the built-in data when no files are named."""

    task: str = "symbolic"
    format: str | None = one_of(None, None, "lample_charton")  # one pair per line, prefix notation
    symbolic_method: str = one_of("backward", "backward", "forward", "parts", "ode1")  # the generator
    # operators per random expression (the presets: 15)
    symbolic_max_ops: int = ranged(6, Range(low=1, high=1000, high_closed=True))


@DataConfig.register("identities")
@dataclass(frozen=True)
class IdentitiesData(DataConfig):
    """Equation trees with a depth (identities): which depths train and validate and which test. Identities reads one
    file format, filters no equation by length, carves its validation set out of the training equations and takes
    its test set from data.test or data.test_depths."""

    model_kinds: ClassVar[tuple[str, ...]] = (*CLASSIFIER_KINDS, MAJORITY)
    default_model: ClassVar[str] = "tree_lstm"
    task: str = "identities"
    # comma list of further files whose equations join the training set only (not the validation split, whatever
    # their depth), e.g. the function evaluations of `neuromath generate evaluations`
    train_extra: str | None = None
    # a candidate-classes file (released format) whose fillers the completion ranking loss draws (train.rank_weight)
    candidates: str | None = None
    # a range "a-b" or a comma list; examples of other depths in the train file are not trained on
    rules: ClassVar = (depths_are_ranges,)
    train_depths: str = "1-7"
    test_depths: str = "8-13"  # when data.test is unset, the train file's examples of these depths are the test set
