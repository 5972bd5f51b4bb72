"""What the word-problem tasks hand the trainer beyond the splits as read (``SequenceTask.prepare_splits``) and how
their runs read source words (``SourceText.vocabulary_options``). All of it comes after the validation carve-out,
so no problem joined to training varies or repeats a validation problem's story. No torch here.

In order: ``data.train_extra`` (another collection's problems whose story is not held out), ``data.contrast``
(contrast problems of each training problem, whose own equation training pushes down), ``data.augment``
(variations of each training problem), ``data.valid_variations`` (variations of each validation problem) and
``data.targets: canonical`` (one prefix form for equivalent equations, in every split).
"""

from __future__ import annotations

from typing import Callable

from neuromath.tasks.base import Splits, VocabularyOptions
from neuromath.tasks.word_problems.contrast import contrasts
from neuromath.tasks.word_problems.normalisation import with_canonical_equation
from neuromath.tasks.word_problems.overlap import new_stories
from neuromath.tasks.word_problems.variations import augment, vary


def comma_list(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def prepare_splits(data, splits: Splits, read: Callable[[str], tuple[list, dict]]) -> Splits:
    """The splits a word-problem run trains on; ``splits.report`` gains ``train.extra``, ``train.contrast``,
    ``train.augmented`` and ``valid.varied`` where those settings add anything."""
    train, valid, test, report = splits.train, splits.valid, splits.test, splits.report
    seed = data.generate_seed
    if data.train_extra:  # kept apart from held-out stories
        train, report["train"]["extra"] = with_extra_problems(data, train, valid + test, read)
    made: list = []
    if data.contrast:  # of the training problems as read, not of their augmented copies
        made, counts = contrasts(train, comma_list(data.contrast), seed)
        report["train"]["contrast"] = {"added": len(made), "by_variation": counts}
    if data.augment:
        added, counts = augment(train, comma_list(data.augment), data.augment_copies, seed)
        report["train"]["augmented"] = {"added": len(added), "by_variation": counts, "copies": data.augment_copies}
        train = train + added
    train = train + made
    if data.valid_variations and valid:
        valid, report["valid"]["varied"] = with_variations(valid, data.valid_variations, seed)
    if data.targets == "canonical":
        train, valid, test = ([with_canonical_equation(example) for example in split] for split in (train, valid, test))
    return Splits(train, valid, test, report)


def with_extra_problems(data, train: list, held_out: list,
                        read: Callable[[str], tuple[list, dict]]) -> tuple[list, dict]:
    """``train`` joined by the problems of ``data.train_extra``'s files whose story no training problem has and no
    held-out problem has or nearly has (``new_stories``), and the report: each file read, how many were left out
    and why, how many joined."""
    extra, files = [], []
    for path in comma_list(data.train_extra):
        examples, entry = read(path)
        extra += examples
        files.append(entry)
    added, counts = new_stories(extra, held_out, train, data.train_extra_similarity)
    return train + added, {"files": files, **counts}


def with_variations(valid: list, names: str, seed: int) -> tuple[list, dict[str, int]]:
    """The validation problems followed by one variation of each kind in ``names`` (a comma list) per problem that
    has it (``data.valid_variations``), and how many each kind added."""
    counts = {}
    varied = list(valid)
    for name in comma_list(names):
        made = [example for _, example in vary(valid, name, seed)]
        counts[name] = len(made)
        varied.extend(made)
    return varied, counts


def vocabulary_options(data) -> VocabularyOptions:
    """``data.min_count`` and ``data.word_dropout``."""
    return VocabularyOptions(min_count=data.min_count, word_dropout=data.word_dropout)
