"""Task families: plain-Python records, readers, generators and scorers (no torch here).

Each sequence task is described by a ``SequenceTask`` registered in ``neuromath.registry.TASKS``:
how to read and generate its examples, which tokens go in and come out, and what counts as
correct. Training, decoding and evaluation only go through this description.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from neuromath.registry import TASKS


def no_options(data, role: str) -> dict:
    """A task whose reader and generator take no settings from the config's data section."""
    return {}


@dataclass(frozen=True)
class SequenceTask:
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
    verify: Callable[[Sequence[str], Any], bool] | None = None  # accepts a hypothesis without knowing the answer
    verify_many: Callable[[Sequence[tuple[Sequence[str], Any]]], list[bool]] | None = None  # verify of many pairs at once
    shared_vocab: bool = False  # one vocabulary for sources and targets (saved as both files)
    read_options: Callable[[Any, str], dict] = no_options  # (DataConfig, role) -> extra keywords of read
    generate_options: Callable[[Any, str], dict] = no_options  # (DataConfig, role) -> extra keywords of generate
    accuracy_label: str = "value accuracy"  # how reports name the task's accuracy (is_correct)
    equation_label: str | None = "equation accuracy"  # ... and the token-exact match; None when it is the same thing


def _word_problem_task() -> SequenceTask:
    from neuromath.expr.grammar import WORD_PROBLEM_GRAMMAR
    from neuromath.tasks import word_problems as wp
    from neuromath.text import word_tokens

    return SequenceTask(
        name="word_problems",
        vocab_level="word",
        read=wp.read_examples,
        generate=wp.generate,
        source_tokens=lambda example: word_tokens(example.masked_text),
        target_tokens=lambda example: list(example.equation),
        is_correct=wp.is_correct,
        equation_matches=wp.equation_matches,
        describe=wp.describe_prediction,
        write=wp.write_jsonl,
        target_grammar=WORD_PROBLEM_GRAMMAR,
        verify=wp.is_well_formed,
    )


def _normalized_word_problem_task() -> SequenceTask:
    """Word problems with normalised postfix targets (Wang et al. 2018a, equation normalisation): the data, reader,
    generator and source side of ``word_problems``; hypotheses are postfix tokens, scored after conversion to prefix."""
    import dataclasses

    from neuromath.expr import ARITY
    from neuromath.expr.grammar import TreeGrammar
    from neuromath.tasks import word_problems as wp

    return dataclasses.replace(
        _word_problem_task(),
        name="word_problems_normalized",
        target_tokens=wp.normalized_target_tokens,
        is_correct=wp.is_correct_postfix,
        equation_matches=wp.equation_matches_normalized,
        describe=wp.describe_postfix_prediction,
        target_grammar=TreeGrammar(arities=dict(ARITY), notation="postfix"),
        verify=wp.is_well_formed_postfix,
    )


def _mathematics_dataset_task() -> SequenceTask:
    from neuromath.tasks import mathematics_dataset as md
    from neuromath.text import char_tokens

    return SequenceTask(
        name="mathematics_dataset",
        vocab_level="char",
        read=md.read_examples,
        generate=md.generate,
        source_tokens=lambda example: char_tokens(example.question),
        target_tokens=lambda example: char_tokens(example.answer),
        is_correct=md.is_correct,
        equation_matches=md.is_correct,
        describe=md.describe_prediction,
        write=md.write_release,
        shared_vocab=True,
        read_options=md.read_options,
        generate_options=md.generate_options,
        accuracy_label="accuracy",
        equation_label=None,
    )


def _symbolic_task() -> SequenceTask:
    from neuromath.expr.grammar import SYMBOLIC_GRAMMAR
    from neuromath.tasks import symbolic

    return SequenceTask(
        name="symbolic",
        vocab_level="word",
        read=symbolic.read_pairs,
        generate=symbolic.generate,
        source_tokens=lambda example: list(example.source),
        target_tokens=lambda example: list(example.target),
        is_correct=symbolic.is_correct,
        equation_matches=symbolic.exact_match,
        describe=symbolic.describe_prediction,
        write=symbolic.write_pairs,
        source_grammar=SYMBOLIC_GRAMMAR,
        target_grammar=SYMBOLIC_GRAMMAR,
        verify=symbolic.is_correct,  # the problem itself says whether a hypothesis is right
        verify_many=symbolic.verify_many,
        shared_vocab=True,
        generate_options=symbolic.generate_options,
        accuracy_label="verified accuracy",
        equation_label="exact match",
    )


@dataclass(frozen=True)
class EquationTask:
    """A task whose examples are whole equation trees to classify (identities): no token sequences, so training,
    evaluation and completion go through ``neuromath.training.identities`` and ``neuromath.evaluation.identities``."""

    name: str
    read: Callable[..., list]  # read(path, *, lenient=False, skipped=None) -> examples
    generate: Callable[..., list]  # generate(n, rng, **params) -> examples
    write: Callable[[str, list], None]  # write(path, examples), the released JSON format
    is_correct: Callable[[bool, Any], bool]  # is a verification prediction right?
    accuracy_label: str = "accuracy"


def _identities_task() -> EquationTask:
    from neuromath.tasks import identities, identity_generator

    return EquationTask(
        name="identities",
        read=identities.read_equations,
        generate=identity_generator.generate,
        write=identities.write_equations,
        is_correct=identities.is_correct,
    )


TASKS.add("word_problems", _word_problem_task)
TASKS.add("word_problems_normalized", _normalized_word_problem_task)
TASKS.add("mathematics_dataset", _mathematics_dataset_task)
TASKS.add("identities", _identities_task)
TASKS.add("symbolic", _symbolic_task)


# The word-problem tasks (value accuracy over masked numbers): solve, cross-validation and retrieval accept these.
WORD_PROBLEM_TASKS = ("word_problems", "word_problems_normalized")


def get_task(name: str) -> SequenceTask | EquationTask:
    return TASKS.get(name)()
