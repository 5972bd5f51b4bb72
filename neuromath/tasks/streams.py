"""Reading corpora too large for memory: record files read lazily, interleaved, split into shards, shuffled through a
bounded window, with a position that can be saved and restored exactly. No torch here: ``neuromath.training.streaming``
turns these records into batches for Lightning.

The stream of a set of files is their records taken in turn, one from each file that still has one (so the 56
module files of the Mathematics Dataset mix from the first record on). Record ``g`` of the stream belongs to shard
``g % shards``: every shard reads every line, and parses only its own records. A shard's records are cut into
windows of ``window`` records; each window is shuffled with a generator seeded by (seed, shard, pass, window), and a
shard's stream never ends: after the last window it starts a new pass over the files, shuffled afresh.

A shard's position (``ShardPosition``) is the reader's byte offsets at the start of its current window, the pass and
window numbers, and how many of the window's records have been used: restoring it seeks the files, re-reads and
re-shuffles that one window and skips the used records, so a resumed run reads exactly what the interrupted one
would have, at the cost of one window.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from neuromath.errors import DataFormatError
from neuromath.safe_read import open_data

# parse(path, first line number, the record's lines) -> an example, or None for a record to pass over (a blank
# line); a malformed record raises ValueError with the reason.
Parser = Callable[[Path, int, Sequence[str]], Any]

MALFORMED = object()  # what ``RecordFiles.example`` returns for a malformed record of a lenient corpus


@dataclass(frozen=True)
class RecordFiles:
    """The files of a corpus, how many lines make one record, and how a record becomes an example."""

    files: tuple[Path, ...]
    lines_per_record: int
    parse: Parser
    lenient: bool = False  # a malformed record is passed over (and counted) instead of stopping the run

    def example(self, path: Path, line: int, raw: list[bytes]) -> Any:
        """The example of a record read as bytes (its first line ``line``); None for a record to pass over;
        a malformed one is a ``DataFormatError`` naming the file and line, or ``MALFORMED`` when lenient."""
        try:
            return self.parse(path, line, decode_record(path, line, raw))
        except ValueError as error:
            if not self.lenient:
                raise DataFormatError(path, line, str(error)) from None
            return MALFORMED

    def count(self) -> list[int]:
        """Records per file, from a fast count of line ends (no parsing). A file whose lines do not split into whole
        records is a ``DataFormatError`` naming it, found here before training starts rather than hours into it."""
        counts = []
        for path in self.files:
            lines, last = 0, b"\n"
            try:
                with open_data(path) as stream:  # a FIFO or a device: refused before it is read
                    while chunk := stream.read(1 << 24):
                        lines += chunk.count(b"\n")
                        last = chunk[-1:]
            except OSError as error:
                raise DataFormatError(path, None, f"cannot read the file ({error.strerror or error})") from None
            lines += last != b"\n"  # a last line without its newline
            if lines % self.lines_per_record:
                raise DataFormatError(path, lines, f"{lines} lines do not make whole records of "
                                                   f"{self.lines_per_record} lines: the last record is cut short")
            counts.append(lines // self.lines_per_record)
        return counts


def start_state(files: RecordFiles) -> dict:
    """The reader's position before the first record: every file at byte 0 and line 1, its turn on file 0."""
    n = len(files.files)
    return {"offsets": [0] * n, "lines": [1] * n, "turn": 0, "index": 0}


class InterleavedReader:
    """The records of ``files`` in turn, one from each file that still has one, from a position (``start_state`` or
    a ``snapshot``). Yields (stream index, path, first line number, raw lines as bytes); ``snapshot`` is the
    position of the next record."""

    def __init__(self, files: RecordFiles, state: dict | None = None):
        self.files = files
        state = state or start_state(files)
        self.offsets, self.lines = list(state["offsets"]), list(state["lines"])
        self.turn, self.index = state["turn"], state["index"]
        self.streams: list = []

    def snapshot(self) -> dict:
        return {"offsets": list(self.offsets), "lines": list(self.lines), "turn": self.turn, "index": self.index}

    def __enter__(self) -> "InterleavedReader":
        self.streams = []
        for path, offset in zip(self.files.files, self.offsets):
            stream = open_data(path)
            stream.seek(offset)
            self.streams.append(stream)
        return self

    def __exit__(self, *exc) -> None:
        for stream in self.streams:
            stream.close()
        self.streams = []

    def __iter__(self) -> Iterator[tuple[int, Path, int, list[bytes]]]:
        per_record, paths, streams = self.files.lines_per_record, self.files.files, self.streams
        live = list(range(len(paths)))  # the files not yet done; the turn is an index of a file
        position = self.turn
        while live:
            position %= len(live)
            k = live[position]
            record = [streams[k].readline() for _ in range(per_record)]
            if not record[0]:  # this file is done
                live.pop(position)
                continue
            first_line = self.lines[k]
            self.offsets[k] += sum(len(line) for line in record)
            self.lines[k] += per_record
            index = self.index
            self.index += 1
            position += 1
            self.turn = live[position % len(live)]
            yield index, paths[k], first_line, record


def decode_record(path: Path, first_line: int, raw: list[bytes]) -> list[str]:
    """A record's lines as text, without their line ends; bytes that are not UTF-8 are a ``ValueError`` naming the
    line."""
    lines = []
    for offset, line in enumerate(raw):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"not UTF-8 text ({error.reason} at byte {error.start} of line {first_line + offset})") \
                from None
        lines.append(text.rstrip("\n").rstrip("\r"))
    return lines


@dataclass(frozen=True)
class ShardPlan:
    """Which records a shard reads: record ``g`` of the stream with ``g % shards == shard`` and ``g >= skip_head``
    (the first ``skip_head`` records are held out, e.g. as the validation set), in shuffled windows of ``window``."""

    shard: int
    shards: int
    window: int
    seed: int
    skip_head: int = 0


def fresh_position() -> dict:
    return {"pass": 0, "window": 0, "reader": None, "taken": 0}


class ShardStream:
    """One shard's endless stream of examples (``ShardPlan``), from a saved position (``fresh_position`` or one this
    stream reported). Iterating yields (example, position after it). Malformed records raise ``DataFormatError``
    naming the file and line, or are passed over with ``files.lenient`` (``skipped`` counts them)."""

    def __init__(self, files: RecordFiles, plan: ShardPlan, position: dict | None = None):
        self.files, self.plan = files, plan
        self.position = dict(position or fresh_position())
        self.skipped = 0

    def window_records(self, reader: InterleavedReader) -> list[tuple[int, Path, int, list[bytes]]]:
        plan, own = self.plan, []
        for index, path, line, raw in reader:
            if index >= plan.skip_head and index % plan.shards == plan.shard:
                own.append((index, path, line, raw))
                if len(own) == plan.window:
                    break
        return own

    def shuffled(self, records: list, pass_number: int, window: int) -> list:
        order = list(range(len(records)))
        random.Random(f"{self.plan.seed}/{self.plan.shard}/{pass_number}/{window}").shuffle(order)
        return [records[k] for k in order]

    def __iter__(self) -> Iterator[tuple[Any, dict]]:
        position = self.position
        while True:
            start = position["reader"] or start_state(self.files)
            with InterleavedReader(self.files, start) as reader:
                records = self.window_records(reader)
                after = reader.snapshot()
            if not records:  # the pass is over: the next one starts from the first file's first record
                if position["window"] == 0:
                    raise DataFormatError(self.files.files[0], None, f"shard {self.plan.shard} of {self.plan.shards} "
                                                                     "has no records to read")
                position = {"pass": position["pass"] + 1, "window": 0, "reader": None, "taken": 0}
                continue
            window = self.shuffled(records, position["pass"], position["window"])
            for taken in range(position["taken"], len(window)):
                _, path, line, raw = window[taken]
                example = self.files.example(path, line, raw)
                if example is MALFORMED:
                    self.skipped += 1
                elif example is not None:
                    yield example, {**position, "reader": start, "taken": taken + 1}
            position = {"pass": position["pass"], "window": position["window"] + 1, "reader": after, "taken": 0}
