"""The task ``mathematics_dataset`` (Saxton et al. 2019; characters in, characters out): its description, registered
in ``neuromath.registry.TASKS``, the built-in default data drawn in process from DeepMind's generator, and the
reader's and generator's settings from a config."""

from __future__ import annotations

import random
from typing import Sequence

import numpy
import sympy.core.random

from neuromath.errors import NeuromathError
from neuromath.registry import TASKS
from neuromath.tasks.base import CardText, SequenceTask, Streaming
from neuromath.tasks.mathematics_dataset.mathematics_generator import module_names, sample_module, select_modules
from neuromath.tasks.mathematics_dataset.release import (
    MathQuestion,
    describe_prediction,
    is_correct,
    read_examples,
    record_files,
    split_list,
    write_release,
)
from neuromath.text import char_tokens

# Modules the built-in default data is drawn from when a config names none: four quick
# arithmetic and number modules with short answers.
DEFAULT_MODULES = ("arithmetic__add_or_sub", "arithmetic__mul", "numbers__place_value", "comparison__sort")


def generate(
    n: int, rng: random.Random, *, modules: str | Sequence[str] | None = None, split: str = "train-easy"
) -> list[MathQuestion]:
    """``n`` questions from the selected modules of ``split`` (about equally many from each),
    drawn with DeepMind's generator seeded from ``rng``; the global random states it touches are
    restored afterwards."""
    globs = split_list(modules)
    if not globs or globs == ["*"]:  # in extrapolate these select their harder variants
        globs = list(DEFAULT_MODULES)
    names = select_modules(module_names(split), globs, split)
    if not names:
        raise NeuromathError(f"no module of {split} matches {','.join(globs)}")
    seed = rng.randrange(2**31)
    counts = [n // len(names) + (i < n % len(names)) for i in range(len(names))]
    saved = random.getstate(), numpy.random.get_state(), sympy.core.random.rng.getstate()
    try:
        examples = []
        for module, count in zip(names, counts):
            if count:
                sample = sample_module(split, module, count, seed)
                examples.extend(
                    MathQuestion(f"{split}/{module}#{k}", q, a, module, split) for k, (q, a) in enumerate(sample.pairs)
                )
    finally:
        random.setstate(saved[0])
        numpy.random.set_state(saved[1])
        sympy.core.random.rng.setstate(saved[2])
    rng.shuffle(examples)  # modules interleaved
    return examples


def read_options(data, role: str) -> dict:
    """Which splits, modules and how many questions a config's data section asks for (role: train, valid, test)."""
    splits = data.train_splits if role in ("train", "valid") else data.test_splits
    return {"splits": splits, "modules": data.modules, "per_module": data.per_module}


def generate_options(data, role: str) -> dict:
    return {"modules": data.modules, "split": "train-easy" if role in ("train", "valid") else "interpolate"}


def prepare_question(text: str) -> MathQuestion:
    """A user's question as an example for ``solve`` (its answer unknown)."""
    question = text.strip()
    if not question:
        raise NeuromathError("the question is empty")
    return MathQuestion("solve", question, "", "", "")


def answer_string(tokens, example: MathQuestion) -> tuple[str, str]:
    """The answer is the decoded characters themselves."""
    answer = "".join(tokens)
    return answer, "" if answer else "the model answered with nothing"


MATHEMATICS_DATASET = SequenceTask(
    name="mathematics_dataset",
    vocab_level="char",
    read=read_examples,
    generate=generate,
    source_tokens=lambda example: char_tokens(example.question),
    target_tokens=lambda example: char_tokens(example.answer),
    is_correct=is_correct,
    equation_matches=is_correct,
    describe=describe_prediction,
    write=write_release,
    shared_vocab=True,
    read_options=read_options,
    generate_options=generate_options,
    accuracy_label="accuracy",
    equation_label=None,
    evaluation="modules",
    prepare=prepare_question,
    answer_text=answer_string,
    card=CardText(
        purpose="reads a question of DeepMind's Mathematics Dataset character by character and writes the answer "
                "as a string",
        pipeline="text2text-generation",
        example="What is 2465.9 plus -0.5?",
        limits=(
            "Only the modules it was trained on (data.modules in config.yaml), asked the way the dataset asks them; "
            "the extrapolation splits measure how far it goes beyond the training difficulty.",
            "The answer is the decoded string, compared exactly; no verifier checks it.",
            "A question longer than the model reads (model.max_len characters) is refused.",
        ),
    ),
    streaming=Streaming(record_files),
)

TASKS.add(MATHEMATICS_DATASET.name, MATHEMATICS_DATASET)
