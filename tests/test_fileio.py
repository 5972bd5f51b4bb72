"""neuromath/fileio.py: atomic writes leave no temporary file and give the file the usual permissions, never follow
a link planted at the temporary name, and replace nothing but a regular file (a link, a FIFO, a folder or a device
at the target is refused); a write lock refuses a second writer and names the first, and a lock left by a dead
process is taken over."""

import os
import socket
import stat
import subprocess
import sys
import tempfile

import pytest

from neuromath.errors import LockedError, NeuromathError
from neuromath.fileio import (
    check_output_path,
    current_umask,
    locked,
    open_atomic,
    write_atomic,
    write_text_atomic,
)


def test_atomic_write_mode_and_no_leftovers(tmp_path):
    path = tmp_path / "sub" / "out.txt"
    write_text_atomic(path, "first")
    write_text_atomic(path, "second")
    assert path.read_text() == "second"
    assert os.listdir(path.parent) == ["out.txt"]
    assert path.stat().st_mode & 0o777 == 0o666 & ~current_umask()


def test_umask_is_read_without_changing_it():
    before = os.umask(0o027)
    try:
        assert current_umask() == 0o027
        assert current_umask() == 0o027
    finally:
        os.umask(before)


def test_a_second_writer_is_refused_with_the_holder_named(tmp_path, lock_held_elsewhere):
    run = tmp_path / "run"
    holder = lock_held_elsewhere(run)
    with pytest.raises(LockedError, match=rf"run is being written by process {holder} on host "):
        with locked(run):
            pass
    assert (run / ".neuromath.lock").read_text().splitlines()[0] == str(holder)  # the holder's marker stays


def test_the_holder_may_lock_again_inside_its_block_and_releases_at_the_end(tmp_path):
    run = tmp_path / "run"
    with locked(run) as lock_path:
        assert lock_path == run / ".neuromath.lock"
        with locked(run):  # e.g. cv's folder lock around a fold that trains through the same entry point
            assert lock_path.exists()
        assert lock_path.exists()  # still held: the outer block owns it
    assert not lock_path.exists() and not run.exists()  # released; the empty folder it made is gone


def test_a_file_is_locked_beside_it_and_a_stale_lock_is_taken_over(tmp_path):
    out = tmp_path / "train.txt"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / ".train.txt.lock").write_text(f"{dead.pid}\n{socket.gethostname()}\n")  # its writer was killed
    with locked(out, is_folder=False) as lock_path:
        assert lock_path == tmp_path / ".train.txt.lock"
        assert lock_path.read_text().splitlines()[0] == str(os.getpid())
    assert not out.exists() and not lock_path.exists()


def test_a_lock_held_by_another_live_process_is_respected(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from neuromath.fileio import locked\n"
         f"with locked({str(tmp_path / 'run')!r}):\n    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockedError, match=f"process {holder.pid} "):
            with locked(tmp_path / "run"):
                pass
    finally:
        holder.kill()
        holder.wait()
    with locked(tmp_path / "run"):  # the killed holder's lock is stale now
        pass


def test_a_link_planted_at_the_temporary_name_is_not_followed(tmp_path, monkeypatch):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    run = tmp_path / "run"
    run.mkdir()
    (run / ".out.txt.planted.tmp").symlink_to(outside)
    names = iter(["planted", "fresh"])  # mkstemp tries the planted name first, then a free one
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names)
    write_text_atomic(run / "out.txt", "new")
    assert (run / "out.txt").read_text() == "new"
    assert outside.read_text() == "keep"
    assert (run / ".out.txt.planted.tmp").is_symlink()


def test_a_link_at_the_target_is_refused_and_neither_it_nor_its_target_changes(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    target = tmp_path / "out.txt"
    target.symlink_to(outside)
    with pytest.raises(NeuromathError, match=r"out\.txt exists and is a symbolic link, not a regular file"):
        write_text_atomic(target, "new")
    assert target.is_symlink() and outside.read_text() == "keep"
    assert sorted(os.listdir(tmp_path)) == ["out.txt", "outside.txt"]  # no temporary file left


def test_a_fifo_or_a_folder_at_the_target_is_refused(tmp_path):
    fifo = tmp_path / "predictions.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(NeuromathError, match=r"is a FIFO \(named pipe\), not a regular file"):
        write_atomic(fifo, lambda stream: stream.write(b"x"))
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    folder = tmp_path / "report.md"
    folder.mkdir()
    with pytest.raises(NeuromathError, match="is a folder, not a regular file"):
        write_text_atomic(folder, "x")
    assert folder.is_dir() and sorted(os.listdir(tmp_path)) == ["predictions.jsonl", "report.md"]


def test_a_device_at_the_target_is_refused():
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null here")
    with pytest.raises(NeuromathError, match="/dev/null exists and is a character device"):
        check_output_path("/dev/null")


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")

    def half(stream):
        stream.write(b"ne")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, half)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["out.bin"]
    with open_atomic(target) as stream:
        stream.write(b"new")
    assert target.read_bytes() == b"new"
