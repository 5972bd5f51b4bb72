"""Outputs of several files are all or nothing (``fileio.publish_together``): a failure before they are all written
leaves the old files, a kill between two renames is rolled forward by the next write, and the commands that write
several files (``generate identities``, ``generate symbolic``, ``data dedup``) publish them that way; the lock of
``generate identities`` covers the files named after its stem."""

import os
import subprocess
import sys

import pytest

import neuromath.cli.data as data_cli
from neuromath.cli import main
from neuromath.errors import NeuromathError
from neuromath.fileio import finish_publishing, publish_together, write_text_atomic

IDENTITIES = ["generate", "identities", "--n", "30", "--max-depth", "4", "--no-baselines", "--no-progress"]
IDENTITY_FILES = ["ids.json", "ids.stats.md", "ids.test.json", "ids.train.json", "ids.valid.json"]


def contents(folder):
    """Every entry of ``folder`` (hidden ones too) and the text of each file."""
    return {path.name: path.read_text() if path.is_file() else "<folder>" for path in folder.iterdir()}


def test_files_published_together_appear_together_and_leave_nothing_else(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "sub" / "b.txt"
    with publish_together([a, b], key=tmp_path / "ab") as (staged_a, staged_b):
        write_text_atomic(staged_a, "A")
        write_text_atomic(staged_b, "B")
        assert not a.exists() and not b.exists()  # nothing is visible before the block ends
    assert a.read_text() == "A" and b.read_text() == "B"
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "sub"] and os.listdir(tmp_path / "sub") == ["b.txt"]


def test_a_failure_before_every_file_is_written_leaves_the_old_files(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old A")
    b.write_text("old B")
    with pytest.raises(RuntimeError, match="disk full"):
        with publish_together([a, b]) as (staged_a, staged_b):
            write_text_atomic(staged_a, "new A")
            raise RuntimeError("disk full")
    with pytest.raises(NeuromathError, match=r"not written, so nothing was published: .*b\.txt"):
        with publish_together([a, b]) as (staged_a, staged_b):
            write_text_atomic(staged_a, "new A")  # the block forgot b
    assert contents(tmp_path) == {"a.txt": "old A", "b.txt": "old B"}


def test_a_kill_between_two_renames_is_rolled_forward_by_the_next_write(tmp_path, monkeypatch):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old A")
    b.write_text("old B")
    real_replace = os.replace

    def killed_after_the_first_rename(source, target):
        real_replace(source, target)
        if str(target) == str(a):
            raise KeyboardInterrupt  # stands for the kill: nothing after the first rename runs

    monkeypatch.setattr(os, "replace", killed_after_the_first_rename)
    with pytest.raises(KeyboardInterrupt):
        with publish_together([a, b]) as (staged_a, staged_b):
            write_text_atomic(staged_a, "new A")
            write_text_atomic(staged_b, "new B")
    monkeypatch.setattr(os, "replace", real_replace)
    assert a.read_text() == "new A" and b.read_text() == "old B"  # mixed, until the journal is read
    assert (tmp_path / ".a.txt.publish.json").is_file()
    finish_publishing(a)
    assert contents(tmp_path) == {"a.txt": "new A", "b.txt": "new B"}


def test_staging_left_by_a_kill_before_the_journal_is_discarded(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("old")
    leftover = tmp_path / ".a.txt.staging.x1y2"
    leftover.mkdir()
    (leftover / "a.txt").write_text("half")
    finish_publishing(a)
    assert contents(tmp_path) == {"a.txt": "old"}


def test_a_target_that_is_not_a_regular_file_is_refused_before_anything_is_written(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (tmp_path / "b.txt").symlink_to(outside)
    with pytest.raises(NeuromathError, match="b.txt exists and is a symbolic link"):
        with publish_together([tmp_path / "a.txt", tmp_path / "b.txt"]):
            pytest.fail("the block must not run")
    assert outside.read_text() == "keep" and sorted(os.listdir(tmp_path)) == ["b.txt", "outside.txt"]


def test_generate_identities_fails_whole_and_leaves_the_previous_files(tmp_path, monkeypatch, capsys):
    out = tmp_path / "ids.json"
    assert main([*IDENTITIES, "--seed", "0", "--out", str(out)]) == 0
    before = contents(tmp_path)
    assert sorted(before) == IDENTITY_FILES

    def audit_fails(*args, **kwargs):
        raise NeuromathError("the audit failed")  # after the four equation files were written

    monkeypatch.setattr("neuromath.tasks.identities.dataset.audit_report", audit_fails)
    assert main([*IDENTITIES, "--seed", "1", "--out", str(out)]) == 1
    assert "the audit failed" in capsys.readouterr().err
    assert contents(tmp_path) == before  # no new split beside an old one, no staging left


def test_generate_identities_locks_the_stem_its_split_files_share(tmp_path, capsys):
    holder = subprocess.Popen(  # another process writes D/ids.json, so holds the lock of the stem D/ids
        [sys.executable, "-c", "import time; from neuromath.fileio import locked\n"
         f"with locked({str(tmp_path / 'ids.json')!r}, is_folder=False), "
         f"locked({str(tmp_path / 'ids')!r}, is_folder=False):\n    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        code = main([*IDENTITIES, "--out", str(tmp_path / "ids.txt")])  # would write D/ids.{train,valid,test}.json
    finally:
        holder.kill()
        holder.wait()
    assert code == 1
    assert f"{tmp_path / 'ids'} is being written by process {holder.pid}" in capsys.readouterr().err
    assert not list(tmp_path.glob("ids.*"))


def test_generate_symbolic_writes_its_pairs_and_stats_together(tmp_path, capsys):
    out = tmp_path / "pairs.txt"
    assert main(["generate", "symbolic", "--n", "2", "--max-ops", "1", "--no-progress", "--out", str(out)]) == 0
    assert sorted(os.listdir(tmp_path)) == ["pairs.txt", "pairs.txt.stats.json"]


def test_dedup_writes_both_outputs_or_neither(tmp_path, monkeypatch, capsys):
    pairs = tmp_path / "sym.txt"
    pairs.write_text("1|sin x\tmul INT- 1 cos x\n1|exp x\texp x\n")
    train_out, test_out = tmp_path / "train.txt", tmp_path / "test.txt"
    train_out.write_text("old train\n")
    test_out.write_text("old test\n")
    real_write = data_cli.write_pairs
    calls = []

    def second_write_fails(examples, path):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_write(examples, path)

    monkeypatch.setattr(data_cli, "write_pairs", second_write_fails)
    arguments = ["data", "dedup", str(pairs), str(pairs), "--train-out", str(train_out), "--test-out", str(test_out)]
    assert main(arguments) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert contents(tmp_path) == {"sym.txt": pairs.read_text(), "train.txt": "old train\n", "test.txt": "old test\n"}
    monkeypatch.setattr(data_cli, "write_pairs", real_write)
    assert main(arguments) == 0
    assert train_out.read_text() == pairs.read_text() and test_out.read_text() == ""
    assert sorted(os.listdir(tmp_path)) == ["sym.txt", "test.txt", "train.txt"]


def test_a_planted_journal_cannot_move_files_outside_its_output(tmp_path):
    """A folder received from someone may hold a journal; it only ever moves this output's staged files onto its
    own targets, so one naming other files is refused and moves nothing."""
    outside, victim = tmp_path / "outside.txt", tmp_path / "data" / "victim.txt"
    outside.write_text("mine")
    victim.parent.mkdir()
    victim.write_text("keep")
    key = tmp_path / "data" / "ids"
    journal = key.with_name(".ids.publish.json")
    journal.write_text('{"renames": [["%s", "%s"]], "staging": []}' % (outside, victim))
    with pytest.raises(NeuromathError, match="not one of this output's"):
        finish_publishing(key, [victim])
    assert outside.read_text() == "mine" and victim.read_text() == "keep"


def test_readers_refuse_the_files_of_an_interrupted_publish_until_it_is_finished(tmp_path, monkeypatch):
    from neuromath.tasks.identities import read_equations
    from neuromath.tasks.symbolic import read_pairs

    ids, pairs = tmp_path / "ids.json", tmp_path / "pairs.txt"
    real_replace = os.replace

    def killed_after_the_first_rename(source, target):
        real_replace(source, target)
        if str(target) == str(ids):
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed_after_the_first_rename)
    with pytest.raises(KeyboardInterrupt):
        with publish_together([ids, pairs], key=tmp_path / "out") as (staged_ids, staged_pairs):
            write_text_atomic(staged_ids, "[[]]")
            write_text_atomic(staged_pairs, "")
    monkeypatch.setattr(os, "replace", real_replace)
    for read, path in ((read_equations, ids), (read_pairs, pairs)):
        with pytest.raises(NeuromathError, match="interrupted before all of its files were in place"):
            read(path)
    finish_publishing(tmp_path / "out", [ids, pairs])
    assert read_equations(ids) == [] and read_pairs(pairs) == []
