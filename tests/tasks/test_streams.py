"""The lazy record reader behind ``data.streaming``: files interleaved record by record, shards that split the stream
without overlap, shuffle windows that hold at most ``window`` records, and positions that restore exactly."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neuromath.errors import DataFormatError
from neuromath.tasks import mathematics_dataset as md
from neuromath.tasks.streams import InterleavedReader, RecordFiles, ShardPlan, ShardStream
from neuromath.tasks.symbolic import pairs


def parse(path: Path, line: int, lines) -> tuple | None:
    """A test record: (file name, first line, its lines); a blank record is passed over, 'bad' is malformed."""
    if not lines[0]:
        return None
    if lines[0] == "bad":
        raise ValueError("a bad record")
    return path.name, line, tuple(lines)


def write_files(folder: Path, sizes: list[int], per_record: int = 1) -> RecordFiles:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, size in enumerate(sizes):
        path = folder / f"f{k}.txt"
        path.write_text("".join(f"r{k}.{i}.{j}\n" for i in range(size) for j in range(per_record)))
        paths.append(path)
    return RecordFiles(tuple(paths), per_record, parse)


def record_names(examples) -> list[str]:
    return [example[2][0].rsplit(".", 1)[0] for example in examples]


def test_files_are_interleaved_one_record_each_in_turn(tmp_path):
    files = write_files(tmp_path, [3, 1, 2], per_record=2)
    with InterleavedReader(files) as reader:
        read = [(index, path.name, line, [raw.decode() for raw in lines]) for index, path, line, lines in reader]
    assert [(index, name, line) for index, name, line, _ in read] == [
        (0, "f0.txt", 1), (1, "f1.txt", 1), (2, "f2.txt", 1), (3, "f0.txt", 3), (4, "f2.txt", 3), (5, "f0.txt", 5)]
    assert read[3][3] == ["r0.1.0\n", "r0.1.1\n"]
    assert files.count() == [3, 1, 2]


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(0, 7), min_size=1, max_size=4), cut=st.integers(0, 30))
def test_a_reader_restored_from_a_snapshot_reads_the_rest_unchanged(tmp_path_factory, sizes, cut):
    files = write_files(tmp_path_factory.mktemp("files"), sizes)
    with InterleavedReader(files) as reader:
        everything = [(index, path, line) for index, path, line, _ in reader]
    assert len(everything) == sum(sizes) and [index for index, _, _ in everything] == list(range(sum(sizes)))
    with InterleavedReader(files) as reader:
        head = [(index, path, line) for index, path, line, _ in islice(reader, cut)]
        snapshot = reader.snapshot()
    with InterleavedReader(files, snapshot) as reader:
        rest = [(index, path, line) for index, path, line, _ in reader]
    assert head + rest == everything


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(0, 9), min_size=1, max_size=3).filter(lambda s: sum(s) >= 4),
       shards=st.integers(1, 3), window=st.integers(1, 5), skip=st.integers(0, 3))
def test_shards_split_one_pass_without_overlap_and_windows_are_bounded(tmp_path_factory, sizes, shards, window, skip):
    files = write_files(tmp_path_factory.mktemp("files"), sizes)
    total = sum(sizes)
    with InterleavedReader(files) as reader:
        stream_order = [f"r{path.stem[1:]}.{(line - 1)}" for _, path, line, _ in reader]
    seen = []
    for shard in range(shards):
        plan = ShardPlan(shard, shards, window, seed=7, skip_head=skip)
        own = [name for g, name in enumerate(stream_order) if g >= skip and g % shards == shard]
        if not own:
            continue
        taken = list(islice(ShardStream(files, plan), len(own)))
        names = record_names(example for example, _ in taken)
        assert sorted(names) == sorted(own)  # its own records, each once in a pass
        for start in range(0, len(own), window):  # shuffled only within a window of the stream
            assert sorted(names[start:start + window]) == sorted(own[start:start + window])
        seen += names
    assert sorted(seen) == sorted(stream_order[skip:]) and len(seen) == total - min(skip, total)


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(1, 6), min_size=1, max_size=3), window=st.integers(1, 4), cut=st.integers(0, 25),
       shards=st.integers(1, 2))
def test_a_shard_restored_from_any_reported_position_continues_exactly_across_passes(
        tmp_path_factory, sizes, window, cut, shards):
    files = write_files(tmp_path_factory.mktemp("files"), sizes)
    if sum(sizes) <= shards - 1:
        return
    plan = ShardPlan(shards - 1, shards, window, seed=3)
    run = list(islice(ShardStream(files, plan), cut + 20))  # well into a second and third pass
    position = run[cut - 1][1] if cut else None
    resumed = [example for example, _ in islice(ShardStream(files, plan, position), 20)]
    assert resumed == [example for example, _ in run[cut:]]


def test_passes_are_shuffled_afresh(tmp_path):
    files = write_files(tmp_path, [40])
    stream = ShardStream(files, ShardPlan(0, 1, window=40, seed=0))
    first, second = (record_names(example for example, _ in batch) for batch in
                     (islice(stream, 0, 40), islice(ShardStream(files, ShardPlan(0, 1, 40, 0)), 40, 80)))
    assert sorted(first) == sorted(second) and first != second
    assert first != [f"r0.{i}" for i in range(40)]  # not file order


def test_bad_records_name_file_and_line_or_are_skipped_when_lenient(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("a\nbad\n\nc\n")
    files = RecordFiles((path,), 1, parse)
    with pytest.raises(DataFormatError, match=r"f\.txt:2: a bad record"):
        list(islice(ShardStream(files, ShardPlan(0, 1, 1, 0)), 3))
    lenient = ShardStream(RecordFiles((path,), 1, parse, lenient=True), ShardPlan(0, 1, 1, 0))
    assert [example[2][0] for example, _ in islice(lenient, 4)] == ["a", "c", "a", "c"]  # blank passed over too
    assert lenient.skipped == 2

    (tmp_path / "odd.txt").write_text("q1\na1\nq2\n")
    with pytest.raises(DataFormatError, match=r"odd\.txt:3: 3 lines do not make whole records of 2 lines"):
        RecordFiles((tmp_path / "odd.txt",), 2, parse).count()
    (tmp_path / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(DataFormatError, match=r"latin\.txt:1: not UTF-8 text .*of line 1"):
        next(iter(ShardStream(RecordFiles((tmp_path / "latin.txt",), 1, parse), ShardPlan(0, 1, 1, 0))))


def test_a_shard_without_records_says_so(tmp_path):
    files = write_files(tmp_path, [1])
    with pytest.raises(DataFormatError, match="shard 1 of 2 has no records"):
        next(iter(ShardStream(files, ShardPlan(1, 2, 4, 0))))


def test_the_tasks_stream_the_records_their_readers_read(tmp_path):
    questions = [md.MathQuestion("", f"What is {k} + 1?", str(k + 1), module, "train-easy")
                 for k in range(5) for module in ("arithmetic__add", "numbers__place_value")]
    md.write_release(questions, tmp_path / "md")

    class Data:
        train_splits, modules = "train-easy", "arithmetic__*"

    files = md.record_files(tmp_path / "md", Data())
    assert [path.name for path in files.files] == ["arithmetic__add.txt"]
    streamed = [example for example, _ in islice(ShardStream(files, ShardPlan(0, 1, 100, 0)), 5)]
    assert sorted(streamed, key=lambda e: e.id) == sorted(md.read_examples(files.files[0]), key=lambda e: e.id)

    pair_file = tmp_path / "pairs.txt"
    pair_file.write_text("2|mul x x\tmul INT+ 2 x\n\n1|x\tmul INT+ 2 x\n")
    streamed = [example for example, _ in islice(ShardStream(pairs.record_files(pair_file, None),
                                                             ShardPlan(0, 1, 100, 0)), 2)]
    assert sorted(streamed, key=lambda e: e.id) == sorted(pairs.read_pairs(pair_file), key=lambda e: e.id)
    pair_file.write_text("2|mul x\tx\n")
    with pytest.raises(DataFormatError, match=r"pairs\.txt:1: input"):
        next(iter(ShardStream(pairs.record_files(pair_file, None), ShardPlan(0, 1, 100, 0))))
