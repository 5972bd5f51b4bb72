"""Reading the files of a run folder defensively: a run folder may come from someone else, so each of its
files must be a regular file (a link to one is followed), checked before a byte is read, so that a FIFO cannot hang
the reader and a link to ``/dev/zero`` cannot fill the memory; and the small files (config, vocabularies, summaries)
must be under a size limit. Anything else is a DataFormatError naming the file and the reason."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from neuromath.errors import DataFormatError

MIB = 2**20
# far above what a run writes: a resolved config is about 2 KB, a word vocabulary of a large corpus a few MB
CONFIG_LIMIT = 1 * MIB
VOCABULARY_LIMIT = 64 * MIB
SUMMARY_LIMIT = 16 * MIB

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` (from ``stat`` or ``lstat``) is, in words: ``a FIFO (named pipe)``, ``a
    character device``, ``a symbolic link``, ...; the one wording of every refusal of a file that is not regular."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` open for reading in binary, once it is known to be a regular file. It is opened without blocking (a
    FIFO opens at once instead of waiting for a writer) and checked on the open descriptor, so that what is read is
    what was checked; a FIFO, device, socket or folder is a DataFormatError, as is a file that cannot be opened."""
    path = Path(path)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:  # ENXIO: a socket
        raise DataFormatError(path, None, f"cannot read: {error.strerror or error}") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise DataFormatError(path, None, f"not a regular file but {file_kind(mode)}")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_run_file(path: str | Path, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path`` (``open_regular``), at most ``limit`` of them: a larger ``what``
    (``config file``, ``vocabulary``, ``summary``) is a DataFormatError naming the file, its size and the limit."""
    with open_regular(path) as stream:
        size = os.fstat(stream.fileno()).st_size
        data = stream.read(limit + 1) if size <= limit else b""
    if size > limit or len(data) > limit:  # len: the file grew since fstat
        raise DataFormatError(path, None, f"too large for a {what}: {max(size, len(data)):,} bytes, more than the "
                                          f"{limit:,} it may hold")
    return data


def read_summary(path: str | Path) -> str:
    """The text of a run's summary.json (``read_run_file`` with ``SUMMARY_LIMIT``); not UTF-8 is a DataFormatError."""
    data = read_run_file(path, SUMMARY_LIMIT, "summary")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataFormatError(path, None, f"not UTF-8 text at byte {error.start}") from None
