"""Training on corpora that do not fit in memory (``data.streaming``): the training file or release tree is read lazily
(the record streams of ``neuromath.tasks``), split into one shard per process and data-loader worker, shuffled through
a bounded window, and its read position travels in the checkpoint so that ``--resume`` continues with exactly the
batch the interrupted run would have trained on next.

An epoch of a stream is ``records // (shards * batch_size)`` batches per process (the same number on every process,
as DDP needs); a shard's stream runs on across epochs, starting a new shuffled pass over the files when it reaches
their end. The validation set is ``data.valid`` or the first ``data.valid_max`` records of the stream, which no shard
trains on; the vocabulary comes from the head of the stream (``data.stream_vocab_records``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Any, Iterator

import torch
from lightning.pytorch.callbacks import Callback
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from neuromath.config import Config
from neuromath.errors import ConfigError, NeuromathError
from neuromath.models.batching import carried, collate, encode_example
from neuromath.nn.distributed import process_rank
from neuromath.tasks import MALFORMED, InterleavedReader, RecordFiles, SequenceTask, ShardPlan, ShardStream
from neuromath.text import Vocabulary


def head_records(files: RecordFiles, start: int, count: int) -> Iterator[Any]:
    """The examples of stream records ``start`` .. ``start + count - 1`` (all from ``start`` when ``count`` is 0), in
    stream order; blank records are passed over, malformed ones stop with a ``DataFormatError`` or, with
    ``files.lenient``, are passed over too."""
    with InterleavedReader(files) as reader:
        for _, path, line, raw in islice(reader, start, start + count if count else None):
            example = files.example(path, line, raw)
            if example is not None and example is not MALFORMED:
                yield example


class HeadSample:
    """Records ``start`` .. ``start + count - 1`` of a stream as an iterable that reads them afresh each time it is
    iterated (a vocabulary is built from it without holding the examples)."""

    def __init__(self, files: RecordFiles, start: int, count: int):
        self.files, self.start, self.count = files, start, count

    def __iter__(self) -> Iterator[Any]:
        return head_records(self.files, self.start, self.count)


def pass_through(batch: dict) -> dict:
    """The data loader's collate function: the workers' batches are collated already."""
    return batch


class StreamedBatches(IterableDataset):
    """Collated batches of one shard per worker slot. ``StreamingLoader`` sets ``plan`` before each iteration: per
    slot, (shard, shards, saved position or None, batches to yield). Each batch carries ``batch["stream"]``, the
    shard and its position after the batch, for the loader to record once the batch is trained on."""

    def __init__(self, files: RecordFiles, task: SequenceTask, source_vocab: Vocabulary, target_vocab: Vocabulary,
                 config: Config, skip_head: int):
        self.files, self.task = files, task
        self.source_vocab, self.target_vocab = source_vocab, target_vocab
        self.batch_size, self.window, self.seed = config.train.batch_size, config.data.shuffle_window, config.train.seed
        self.max_source_len, self.max_target_len = config.data.max_source_len, config.data.max_target_len
        self.skip_head = skip_head
        self.length_multiple = config.train.length_multiple
        self.plan: list[tuple[int, int, dict | None, int]] = []

    def __iter__(self) -> Iterator[dict]:
        worker = get_worker_info()
        shard, shards, position, count = self.plan[worker.id if worker is not None else 0]
        if count <= 0:
            return
        stream = ShardStream(self.files, ShardPlan(shard, shards, self.window, self.seed, self.skip_head), position)
        items: list = []
        made = 0
        task, limits = self.task, (self.max_source_len, self.max_target_len)
        for example, here in stream:
            source = task.source_tokens(example)
            ids = encode_example(example, task, self.source_vocab, self.target_vocab, limits, source=source)
            if ids is None:  # too long: in-memory runs leave these out too
                continue
            items.append((*ids, len(items), *carried(example, task, source)))
            if len(items) == self.batch_size:
                batch = collate(items, self.length_multiple)
                batch["stream"] = {"shard": shard, "position": here}
                yield batch
                items, made = [], made + 1
                if made == count:
                    return


class StreamingLoader:
    """The training loader of a streamed corpus, stateful in the way Lightning saves and restores loaders
    (``state_dict`` / ``load_state_dict``, kept under the fit loop in every checkpoint).

    Process ``rank`` of ``world`` with ``workers`` loader workers reads shards ``rank * W .. rank * W + W - 1``
    (W = max(1, workers)). PyTorch's loader takes one batch from each worker in turn; ``turn`` is the worker slot
    whose batch comes next, so a resumed loader hands the slots their shards rotated and the order goes on unbroken.
    Positions are recorded only for batches trained on (``consumed``, called by ``StreamPosition``), never for the
    ones the loader fetched ahead."""

    def __init__(self, dataset: StreamedBatches, workers: int, records: int):
        self.dataset, self.workers = dataset, workers
        self.records = records  # in the stream, the held-out head left out
        self.positions: dict[int, dict] = {}
        self.turn = 0
        self.epoch_consumed = 0

    @property
    def slots(self) -> int:
        return max(1, self.workers)

    def __len__(self) -> int:
        _, world = process_rank()
        return max(1, self.records // (world * self.slots) // self.dataset.batch_size)

    def __iter__(self) -> Iterator[dict]:
        rank, world = process_rank()
        length = len(self)
        if self.epoch_consumed >= length:
            self.epoch_consumed = 0
        remaining = length - self.epoch_consumed
        slots, plan = self.slots, []
        for slot in range(slots):
            shard = rank * slots + (self.turn + slot) % slots
            plan.append((shard, world * slots, self.positions.get(shard), len(range(slot, remaining, slots))))
        self.dataset.plan = plan
        if self.workers == 0:
            return iter(self.dataset)
        # its own generator: a loader draws its workers' base seed from the one it has, and drawing from torch's
        # global generator would shift the dropout draws of a resumed run against the uninterrupted one
        return iter(DataLoader(self.dataset, batch_size=None, num_workers=self.workers, collate_fn=pass_through,
                               generator=torch.Generator().manual_seed(self.dataset.seed)))

    def consumed(self, stream: dict) -> None:
        """Record that the batch whose ``batch["stream"]`` is ``stream`` has been trained on."""
        shard = stream["shard"]
        self.positions[shard] = stream["position"]
        self.turn = (shard % self.slots + 1) % self.slots
        self.epoch_consumed += 1

    def state_dict(self) -> dict:
        """Every process's shard positions (gathered from all ranks: Lightning writes rank 0's checkpoint only), the
        next worker slot, and the batches consumed in this epoch; plain data, as checkpoints must be."""
        _, world = process_rank()
        positions = [[shard, position] for shard, position in sorted(self.positions.items())]
        if world > 1:
            gathered: list = [None] * world
            torch.distributed.all_gather_object(gathered, positions)
            positions = sorted((pair for part in gathered for pair in part), key=lambda pair: pair[0])
        return {"shards": world * self.slots, "positions": positions, "turn": self.turn,
                "epoch_consumed": self.epoch_consumed}

    def load_state_dict(self, state: dict) -> None:
        _, world = process_rank()
        if state["shards"] != world * self.slots:
            raise ConfigError(
                f"the checkpoint's stream was read in {state['shards']} shards (processes x loader workers), this run "
                f"reads it in {world * self.slots}: resume with the same train.devices / num_nodes and "
                "data.loader_workers")
        self.positions = {int(shard): position for shard, position in state["positions"]}
        self.turn, self.epoch_consumed = int(state["turn"]), int(state["epoch_consumed"])


class StreamPosition(Callback):
    """Tells the streaming loader which batch was trained on, after each training batch (before a checkpoint of that
    step is written: Lightning runs checkpoint callbacks last)."""

    def __init__(self, loader: StreamingLoader):
        self.loader = loader

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self.loader.consumed(batch["stream"])


@dataclass
class StreamSetup:
    files: RecordFiles
    records: int  # in the whole stream
    valid: list  # the validation examples carved from the stream's head (empty when data.valid names a file)
    held_out: int  # stream records held out as the validation set (0 when data.valid names a file)
    vocab_sample: HeadSample  # what the vocabulary is built from
    report: dict


def open_stream(config: Config, task: SequenceTask) -> StreamSetup:
    """The streamed training corpus of ``config``, and its validation set when that is the stream's head (a
    ``data.valid`` file is the caller's to read, as in-memory runs do). Refuses what cannot stream: a task without
    ``Streaming``, no data.train, a ``data.per_module`` cap, no validation set named."""
    data = config.data
    if task.streaming is None:
        raise ConfigError(f"data.streaming: the {task.name} task reads its data into memory only")
    if not data.train:
        raise ConfigError("data.streaming reads data.train lazily; name a file or folder (the built-in generators "
                          "make in-memory data)")
    if data.option("per_module", 0):
        raise ConfigError("data.per_module keeps the head of each module file in memory; with data.streaming the "
                          "files are read whole (set data.per_module=0)")
    files = task.streaming.record_files(data.train, data, data.lenient)
    counts = files.count()
    records = sum(counts)
    report: dict = {"train": {"source": data.train, "streaming": True, "files": len(files.files), "records": records}}
    valid, held_out = [], 0
    if not data.valid:
        if data.valid_max <= 0:
            raise ConfigError("data.streaming needs a validation set: name data.valid, or set data.valid_max to hold "
                              "out that many records at the head of the stream")
        held_out = min(data.valid_max, records // 10)
        valid = list(head_records(files, 0, held_out))
        report["valid"] = {"source": f"the first {held_out} records of the stream (data.valid_max)",
                           "read": len(valid)}
        if not valid:
            raise NeuromathError(f"{data.train}: the validation set (the stream's head) is empty")
    report["train"]["held_out_as_valid"] = held_out
    if records - held_out < 1:
        raise NeuromathError(f"{data.train}: no training records after the validation set")
    sample = HeadSample(files, held_out, data.stream_vocab_records)
    return StreamSetup(files, records, valid, held_out, sample, report)


def streaming_loader(setup: StreamSetup, task: SequenceTask, source_vocab: Vocabulary, target_vocab: Vocabulary,
                     config: Config) -> tuple[StreamingLoader, StreamPosition]:
    """The training loader of a stream and the callback that keeps its position."""
    dataset = StreamedBatches(setup.files, task, source_vocab, target_vocab, config, setup.held_out)
    loader = StreamingLoader(dataset, config.data.loader_workers, setup.records - setup.held_out)
    return loader, StreamPosition(loader)
