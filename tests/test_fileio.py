"""neuromath/fileio.py: atomic writes leave no temporary file and give the file the usual permissions; a write lock
refuses a second writer and names the first, and a lock left by a dead process is taken over."""

import os
import socket
import subprocess
import sys

import pytest

from neuromath.errors import LockedError
from neuromath.fileio import current_umask, locked, write_text_atomic


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
