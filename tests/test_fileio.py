"""neuromath/fileio.py: atomic writes leave no temporary file and give the file the usual permissions."""

import os

from neuromath.fileio import current_umask, write_text_atomic


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
