"""From task examples to the padded tensor batches the sequence models read: datasets, the collate function, a seeded
sampler. Here, beside the models, because training and ``neuromath.api`` both need them and neither may import the
other."""

from __future__ import annotations

import functools
from typing import Sequence

import torch
from torch.utils.data import DataLoader, Dataset, Sampler

from neuromath.nn.distributed import process_rank, shard_positions
from neuromath.tasks import SequenceTask
from neuromath.text import Vocabulary


class EncodedExamples(Dataset):
    """Examples turned into source ids and target ids (with bos/eos) once, up front, with the values of their masked
    numbers where the task gives them (``SourceText.number_values``) and their source tokens as written where the
    task carries them (``SourceText.in_batches``)."""

    def __init__(self, examples: Sequence, task: SequenceTask, source_vocab: Vocabulary, target_vocab: Vocabulary):
        self.examples = list(examples)
        sources = [task.source_tokens(example) for example in self.examples]
        self.items = [encode_example(example, task, source_vocab, target_vocab, source=source)
                      for example, source in zip(self.examples, sources)]
        # (values, words) per example; None for a task that carries neither (no tuple per example of a large corpus)
        text = task.source_text
        self.extras = ([carried(example, task, source) for example, source in zip(self.examples, sources)]
                       if text is not None and (text.number_values is not None or text.in_batches) else None)
        # the examples whose equation training pushes down (data.contrast: they say so by ``unlikely``); None: none
        unlikely = [bool(getattr(example, "unlikely", False)) for example in self.examples]
        self.unlikely = unlikely if any(unlikely) else None

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> tuple:
        """(source ids, target ids, index, number values or None, source words or None[, unlikely]): the last only
        where some example of the set is a contrast problem."""
        source, target = self.items[index]
        item = (source, target, index, *(self.extras[index] if self.extras is not None else (None, None)))
        return item if self.unlikely is None else (*item, self.unlikely[index])


def carried(example, task: SequenceTask, source: list[str]) -> tuple[list[float] | None, list[str] | None]:
    """What an item carries beside its ids: the values of the example's masked numbers (``SourceText.number_values``)
    and ``source``, its source tokens as written (``SourceText.in_batches``); None where the task gives none."""
    text = task.source_text
    if text is None:
        return None, None
    return (text.number_values(example) if text.number_values is not None else None,
            source if text.in_batches else None)


class SourceWords:
    """A batch's source tokens as the task wrote them, one tuple per row (before the vocabulary maps unknown words to
    <unk>; no eos). It rides in the batch dict under ``source_words``; ``to`` leaves it as it is, so moving a batch
    to a device (``move_batch``, Lightning) moves the tensors only."""

    def __init__(self, rows: Sequence[Sequence[str]]):
        self.rows = tuple(tuple(row) for row in rows)

    def to(self, device) -> "SourceWords":
        return self

    def __getitem__(self, row: int) -> tuple[str, ...]:
        return self.rows[row]

    def __len__(self) -> int:
        return len(self.rows)


def encode_example(example, task: SequenceTask, source_vocab: Vocabulary, target_vocab: Vocabulary,
                   limits: tuple[int, int] | None = None,
                   source: list[str] | None = None) -> tuple[list[int], list[int]] | None:
    """An example's source ids (eos added) and target ids (bos and eos added); with ``limits`` (the most source and
    target tokens, exclusive: data.max_source_len and max_target_len), None for an example that has more.
    ``source``: the example's source tokens, when the caller has read them already."""
    source = task.source_tokens(example) if source is None else source
    target = task.target_tokens(example)
    if limits is not None and (len(source) >= limits[0] or len(target) >= limits[1]):
        return None
    return source_vocab.encode(source, add_eos=True), target_vocab.encode(target, add_bos=True, add_eos=True)


def round_up(length: int, multiple: int) -> int:
    return -(-length // multiple) * multiple


def pad_right(batch: torch.Tensor, extra: int) -> torch.Tensor:
    """(B, T) -> (B, T + extra), pad (0) on the right; the tensor itself when ``extra`` is 0."""
    return torch.nn.functional.pad(batch, (0, extra)) if extra else batch


def pad(sequences: Sequence[Sequence[int]], pad_id: int = 0, length: int | None = None) -> torch.Tensor:
    """The sequences as one (B, T) tensor, right-padded with ``pad_id`` to ``length`` (default: the longest)."""
    length = max(len(s) for s in sequences) if length is None else length
    # one tensor from padded lists: a tensor per row cost a third of the time of streaming a corpus
    return torch.tensor([[*s, *[pad_id] * (length - len(s))] for s in sequences], dtype=torch.long).view(
        len(sequences), length)  # (B, T)


def move_batch(batch: dict, device) -> dict:
    """A batch dict on ``device``: every value has ``.to`` (tensors, and the tree engine's ``TreeBatch``)."""
    return {key: value.to(device) for key, value in batch.items()}


def collate(items: list[tuple], length_multiple: int = 1) -> dict:
    """Items ``(source ids, target ids, index[, number values or None[, source words or None[, unlikely]]])`` -> a
    batch; ``number_values`` (B, K) is there when the items carry values, NaN-padded, ``source_words``
    (``SourceWords``) when they carry words, and ``unlikely`` (B,) bool when the items come from a set with contrast
    problems (``data.contrast``), so that the batches of every training process have the same keys. With
    ``length_multiple`` m > 1 the source length S and the target length T are padded up to multiples of m
    (``train.length_multiple``: few batch shapes for compiled graphs)."""
    sources, targets, indices = (list(column) for column in zip(*(item[:3] for item in items)))
    target = pad(targets)  # (B, T+1): bos ... eos
    extra = round_up(target.size(1) - 1, length_multiple) - (target.size(1) - 1)  # pad positions after T
    batch = {
        "source": pad(sources, length=round_up(max(len(s) for s in sources), length_multiple)),  # (B, S)
        "target_in": pad_right(target[:, :-1], extra),  # (B, T)
        "target_out": pad_right(target[:, 1:], extra),  # (B, T)
        "index": torch.tensor(indices, dtype=torch.long),  # (B,)
    }
    values = [item[3] if len(item) > 3 else None for item in items]
    if any(row is not None for row in values):
        width = max(1, max(len(row or ()) for row in values))
        padded = torch.full((len(items), width), float("nan"))  # (B, K)
        for position, row in enumerate(values):
            if row:
                padded[position, : len(row)] = torch.tensor(row, dtype=torch.float)
        batch["number_values"] = padded
    words = [item[4] if len(item) > 4 else None for item in items]
    if any(row is not None for row in words):
        batch["source_words"] = SourceWords(row or () for row in words)
    if any(len(item) > 5 for item in items):  # every batch of a set with contrast problems, even one without any
        batch["unlikely"] = torch.tensor([len(item) > 5 and bool(item[5]) for item in items], dtype=torch.bool)
    return batch


class EpochShuffleSampler(Sampler[int]):
    """A shuffle that depends only on (seed, epoch), so a resumed run sees the same batches. With several training
    processes (``neuromath.nn.distributed``) process ``rank`` of ``world`` takes positions ``rank, rank + world, ...``
    of the shuffle, the last ``size % world`` left out of the epoch so every process has as many batches: the W
    batches of a step are then, together, the one-process batch of W times the size."""

    def __init__(self, size: int, seed: int):
        self.size, self.seed, self.epoch = size, seed, 0

    def set_epoch(self, epoch: int) -> None:  # called by Lightning at the start of every epoch
        self.epoch = epoch

    def __iter__(self):
        rank, world = process_rank()  # read when iterated: the process group is up by then
        generator = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        order = torch.randperm(self.size, generator=generator).tolist()
        return iter(order[rank:self.size - self.size % world:world])

    def __len__(self) -> int:
        return self.size // process_rank()[1]


class LengthGroupedBatches(Sampler[list[int]]):
    """Training batches of examples of about one length, so that little of a batch is padding (``train.length_grouping``
    G). Each epoch, from (seed, epoch) alone: the examples are shuffled as by ``EpochShuffleSampler``, cut into pools
    of G batches, each pool sorted by (source length, target length), cut into batches, and the batches of the epoch
    shuffled. Every example is read once per epoch; the batches differ from epoch to epoch, and so does their order.
    With W training processes a batch is W times the size and process ``rank`` takes rows ``rank, rank + W, ...`` of
    it, so that the W batches of a step are together the one-process batch (the last ``size % W`` examples of the
    shuffle are left out of the epoch, as ``EpochShuffleSampler`` leaves them)."""

    def __init__(self, lengths: Sequence[tuple[int, int]], batch_size: int, seed: int, grouping: int):
        if grouping < 1 or batch_size < 1:
            raise ValueError(f"length grouping needs a pool of at least one batch (grouping {grouping}, batch size "
                             f"{batch_size})")
        self.lengths, self.batch_size, self.seed, self.grouping = list(lengths), batch_size, seed, grouping
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:  # called by Lightning at the start of every epoch
        self.epoch = epoch

    def batches(self, world: int) -> list[list[int]]:
        """The epoch's batches of all ``world`` processes together, in the order they are read."""
        size = len(self.lengths) - len(self.lengths) % world
        generator = torch.Generator().manual_seed(self.seed * 100_003 + self.epoch)
        order = torch.randperm(len(self.lengths), generator=generator).tolist()[:size]
        step = self.batch_size * world
        batches = []
        for start in range(0, size, step * self.grouping):
            pool = sorted(order[start:start + step * self.grouping], key=self.lengths.__getitem__)  # stable
            batches.extend(pool[i:i + step] for i in range(0, len(pool), step))
        return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]

    def __iter__(self):
        rank, world = process_rank()  # read when iterated: the process group is up by then
        return iter([batch[rank::world] for batch in self.batches(world)])

    def __len__(self) -> int:
        world = process_rank()[1]
        return -(-(len(self.lengths) - len(self.lengths) % world) // (self.batch_size * world))


class ShardSampler(Sampler[int]):
    """Evaluation order for several training processes: process ``rank`` reads ``shard_positions`` (every W-th
    example from its rank on, padded by wrapping round so every process reads as many); ``gather_shards`` puts the
    results back in order without the padding. In a single process, every example in order."""

    def __init__(self, size: int):
        self.size = size

    def __iter__(self):
        return iter(shard_positions(self.size, *process_rank()))

    def __len__(self) -> int:
        return len(shard_positions(self.size, *process_rank()))


def make_loader(dataset: EncodedExamples, batch_size: int, shuffle_seed: int | None = None,
                shard: bool = False, length_multiple: int = 1, length_grouping: int = 0) -> DataLoader:
    """Batches of ``dataset``: shuffled each epoch with ``shuffle_seed`` (training), in order otherwise; ``shard``
    (validation during training) splits the in-order reading among the training processes; ``length_multiple``
    rounds the batches' lengths up (``collate``); ``length_grouping`` G > 0 (training: ``train.length_grouping``)
    makes each batch of examples of about one length (``LengthGroupedBatches``)."""
    collate_fn = collate if length_multiple == 1 else functools.partial(collate, length_multiple=length_multiple)
    if length_grouping and shuffle_seed is not None:
        lengths = [(len(source), len(target)) for source, target in dataset.items]
        batches = LengthGroupedBatches(lengths, batch_size, shuffle_seed, length_grouping)
        return DataLoader(dataset, batch_sampler=batches, collate_fn=collate_fn, num_workers=0)
    sampler = (EpochShuffleSampler(len(dataset), shuffle_seed) if shuffle_seed is not None
               else ShardSampler(len(dataset)) if shard else None)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, collate_fn=collate_fn, num_workers=0)
