"""What a task family fills in to describe itself: ``SequenceTask`` (token sequences in and out) and ``EquationTask``
(equation trees to classify), registered in ``neuromath.registry.TASKS``; training, decoding, evaluation and the CLI
go through them and never branch on a task's name. No torch.

Optional sequence-task capabilities (None elsewhere): ``Verifier`` (checks a hypothesis without its answer),
``Streaming`` (lazy training corpus), ``SourceText`` (sources in words with masked numbers). For the trainer:
``Splits`` (through ``prepare_splits``), ``VocabularyOptions``, ``Completion`` (ranking candidates for a blank).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence


def no_options(data, role: str) -> dict:
    """A task whose reader and generator take no settings from the config's data section."""
    return {}


@dataclass(frozen=True)
class Splits:
    """A run's examples by split, and its ``data.json`` report (per split: source; counts read, skipped, left out,
    added)."""

    train: list
    valid: list
    test: list
    report: dict = field(default_factory=dict)


@dataclass(frozen=True)
class VocabularyOptions:
    """How a run's vocabularies and its training steps read source words (``SequenceTask.vocabulary_options``)."""

    min_count: int = 1  # a source word seen fewer times in training is <unk>; 1 keeps every word
    word_dropout: float = 0.0  # training only: the share of ordinary source words read as <unk>; 0 drops none


def default_vocabulary_options(data) -> VocabularyOptions:
    """Every training word kept, none dropped: a task whose data section has no such keys."""
    return VocabularyOptions()


def streaming_option(data) -> bool:
    """The data section's ``streaming`` key where its class has one (the tasks with ``record_files``), else False."""
    return bool(data.option("streaming", False))


@dataclass(frozen=True)
class Completion:
    """What ranking candidates for a blank needs (``train.rank_weight``). A candidate has ``tree`` and
    ``value_class``; an example ``tree`` and ``label``."""

    read_candidates: Callable[[str], list]  # a candidate file -> its candidates
    token_key: Callable[[Any], tuple]  # a tree -> a key: two subtrees with one key are written the same
    candidate_classes: Callable[[Sequence], dict]  # candidates -> {each one's token_key: its value class}
    # (examples, candidates, n, rng) -> (up to n true examples with one blank each, a report); ValueError: none fits
    make_blanks: Callable[..., tuple[list, Any]]
    # (scores, candidates, value class) -> the place (1 = first) of the first right candidate, highest score first
    right_rank: Callable[[Sequence[float], Sequence, str], int]
    summarise_ranks: Callable[[Sequence[int]], dict]  # ranks -> n, top1, top5, mrr


@dataclass(frozen=True)
class CardText:
    """What a run's model card (``RUN/README.md``, ``neuromath.sharing.card``) says of its task, so the card never
    branches on the task's name."""

    purpose: str  # what a model of the task does, one sentence without its subject: "reads ... and writes ..."
    pipeline: str  # the Hugging Face task type of its results: text2text-generation, text-classification
    example: str  # an input as a user types it, for the card's usage lines
    limits: tuple[str, ...] = ()  # what a user of its runs should know, beyond what every card says


NO_CARD_TEXT = CardText("solves the task's problems", "text2text-generation", "...")


def keeps_nothing(token: str) -> bool:
    """Word dropout may replace every ordinary source word."""
    return False


def reserves_nothing(train: Sequence[Any]) -> tuple[list[str], list[str]]:
    """No token is in a vocabulary whatever its count."""
    return [], []


@dataclass(frozen=True)
class Verifier:
    """Accepts or rejects a hypothesis without the answer (``decode.verify`` answers with the first accepted
    hypothesis of an n-best list; solve and serve report the verdict)."""

    verify: Callable[[Sequence[str], Any], bool]  # (hypothesis tokens, example) -> accepted
    # verify of many (hypothesis, example) pairs at once; None: verify one by one
    verify_many: Callable[[Sequence[tuple[Sequence[str], Any]]], list[bool]] | None = None
    # named verdicts of many pairs, for a verifier that tells more than yes / no ("correct" is yes; symbolic:
    # neuromath.tasks.symbolic.verify.VERDICTS, incl. "timeout"); None: verify / verify_many alone
    verdicts_many: Callable[[Sequence[tuple[Sequence[str], Any]]], list[str]] | None = None


@dataclass(frozen=True)
class Streaming:
    """Lazy reading of a training corpus too large for memory (``data.streaming``, ``neuromath.training.streaming``)."""

    # (path, DataConfig, lenient) -> the training corpus as a ``neuromath.tasks.streams.RecordFiles``
    record_files: Callable[..., Any]
    # (DataConfig) -> whether a run with those settings reads data.train lazily through ``record_files``
    enabled: Callable[[Any], bool] = streaming_option


@dataclass(frozen=True)
class SourceText:
    """Sources in words with masked numbers (word problems): how words are read, which ones vocabularies and word
    dropout treat apart, and what batches carry beside the ids."""

    # (DataConfig) -> source_tokens for those settings (e.g. data.lowercase); None: source_tokens always. Training
    # and neuromath.api read sources through ``SequenceTask.configured(data)``.
    tokens_for: Callable[[Any], Callable[[Any], list[str]]] | None = None
    # a source token that word dropout must never replace by <unk> (besides pad/bos/eos/unk, which never are)
    keeps_token: Callable[[str], bool] = keeps_nothing
    # (training examples) -> (source tokens, target tokens) always in the vocabularies (exempt from data.min_count;
    # added when unseen)
    reserved_tokens: Callable[[Sequence[Any]], tuple[list[str], list[str]]] = reserves_nothing
    # (DataConfig) -> how the run's vocabularies and training read source words
    vocabulary_options: Callable[[Any], VocabularyOptions] = default_vocabulary_options
    # batches carry each row's raw source tokens (``neuromath.models.batching.SourceWords``), for models that read
    # words the vocabulary maps to <unk> (model.char_ngrams, graph2tree's model.graph_text)
    in_batches: bool = False
    # values of the masked numbers (n0, n1, ...) for models comparing quantities (graph2tree); None: no values
    number_values: Callable[[Any], list[float]] | None = None


@dataclass(frozen=True)
class SequenceTask:
    """Token sequences in and out. Hooks every family fills are flat; optional capabilities (``verifier``,
    ``streaming``, ``source_text``) are None where absent."""

    name: str
    vocab_level: str  # "word" or "char"
    read: Callable[..., list]  # read(path, format=None, *, lenient=False, skipped=None) -> examples
    generate: Callable[..., list]  # generate(n, rng, **params) -> examples
    source_tokens: Callable[[Any], list[str]]
    target_tokens: Callable[[Any], list[str]]
    is_correct: Callable[[Sequence[str], Any], bool]  # the task's own notion of a right answer
    equation_matches: Callable[[Sequence[str], Any], bool]  # token-exact match of the target
    describe: Callable[[Sequence[str], Any], dict]  # a JSON-ready record of one prediction
    write: Callable[[list, str], None]  # write examples in the project's own format
    source_grammar: Any = None  # a neuromath.expr.grammar.TreeGrammar when sources are prefix/postfix expressions
    target_grammar: Any = None  # ... when targets are (tree positions, tree relative attention, constrained decoding)
    shared_vocab: bool = False  # one vocabulary for sources and targets (saved as both files)
    read_options: Callable[[Any, str], dict] = no_options  # (DataConfig, role) -> extra keywords of read
    generate_options: Callable[[Any, str], dict] = no_options  # (DataConfig, role) -> extra keywords of generate
    accuracy_label: str = "value accuracy"  # how reports name the task's accuracy (is_correct)
    equation_label: str | None = "equation accuracy"  # ... and the token-exact match; None when it is the same thing
    # how evaluate scores and reports runs: a name in the EVALUATION registry (sequence, modules, symbolic)
    evaluation: str = "sequence"
    prepare: Callable[[str], Any] | None = None  # a user's text -> an example for solve; None: solve does not apply
    # (hypothesis tokens, example) -> (answer as a user reads it, why there is none or ""), when the answer is not an
    # equation over the problem's numbers (symbolic, Mathematics Dataset); None: from ``describe`` (word problems)
    answer_text: Callable[[Sequence[str], Any], tuple[str, str]] | None = None
    folds: bool = False  # cross-validation over fold files applies (neuromath cv)
    # (DataConfig, Splits, read) -> the training splits from those read or generated (validation carved out), with
    # what the family adds, varies or rewrites in the report; ``read(path)`` -> (examples, report entry) reads one
    # more file like data.train. None: the splits as read
    prepare_splits: Callable[[Any, Splits, Callable[[str], tuple[list, dict]]], Splits] | None = None
    card: CardText = NO_CARD_TEXT  # what a run's model card says of the task
    verifier: Verifier | None = None  # None: no hypothesis is checked without its answer
    streaming: Streaming | None = None  # None: the task reads its data into memory only
    source_text: SourceText | None = None  # None: sources are read one way, every word alike, ids alone in batches

    def configured(self, data) -> "SequenceTask":
        """This task as read under data section ``data``: ``source_tokens`` from ``source_text.tokens_for(data)``
        when present, else the task itself."""
        if self.source_text is None or self.source_text.tokens_for is None:
            return self
        return dataclasses.replace(self, source_tokens=self.source_text.tokens_for(data))

    def vocabulary_options(self, data) -> VocabularyOptions:
        """Vocabulary and word-dropout options under data section ``data`` (without ``source_text``: keep all, drop
        none)."""
        if self.source_text is None:
            return default_vocabulary_options(data)
        return self.source_text.vocabulary_options(data)


@dataclass(frozen=True)
class EquationTask:
    """Equation trees to classify (identities). Models train by the ``classifier`` procedure; evaluation and
    completion go through ``verification``."""

    name: str
    read: Callable[..., list]  # read(path, *, lenient=False, skipped=None) -> examples
    generate: Callable[..., list]  # generate(n, rng, **params) -> examples
    write: Callable[[list, str], None]  # write(examples, path), the released JSON format
    is_correct: Callable[[bool, Any], bool]  # is a verification prediction right?
    accuracy_label: str = "accuracy"
    evaluation: str = "verification"  # how evaluate scores and reports runs: a name in the EVALUATION registry
    prepare: Callable[[str], Any] | None = None  # a user's text -> an equation tree for solve; None: no solve
    # (equation tree) -> True / False / None (cannot tell): a check beside the model's verdict (numeric evaluation)
    reference_check: Callable[[Any], bool | None] | None = None
    completion: Completion | None = None  # None: the task's runs cannot train to complete (train.rank_weight)
    card: CardText = NO_CARD_TEXT  # what a run's model card says of the task
