"""Reading files someone else may have written. Each file must be regular (links followed), checked before a byte is
read, so a FIFO cannot hang the reader nor ``/dev/zero`` fill memory; a run folder's small files (config,
vocabularies, summaries) have size limits; JSON nesting is limited to ``MAX_JSON_DEPTH`` (checked without
recursion: an error, not a RecursionError). Anything else is a DataFormatError naming the file and the reason.

Data paths get the same check: ``check_data_path`` (file or folder, as ``find_data`` returns) and ``open_data`` /
``read_data_text`` (what the readers open)."""

from __future__ import annotations

import io
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from neuromath.errors import DataFormatError

MIB = 2**20
# far above what a run writes: a resolved config is about 2 KB, a word vocabulary of a large corpus a few MB
CONFIG_LIMIT = 1 * MIB
VOCABULARY_LIMIT = 64 * MIB
SUMMARY_LIMIT = 16 * MIB
# JSON of a run folder or of evidence is a few levels deep (a summary: 4); far deeper is not ours, and Python's
# parser recurses once per level
MAX_JSON_DEPTH = 100

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` (from ``stat`` or ``lstat``) is, in words: ``a FIFO (named pipe)``, ``a
    character device``, ``a symbolic link``, ...; the one wording of every refusal of a file that is not regular."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` open in binary once known to be a regular file: opened non-blocking (a FIFO does not wait for a
    writer) and checked on the open descriptor, so what is read is what was checked. A FIFO, device, socket, folder
    or unopenable file is a DataFormatError."""
    try:
        return open_checked(path)
    except OSError as error:  # ENXIO: a socket
        raise DataFormatError(path, None, f"cannot read: {error.strerror or error}") from None


def open_checked(path: str | Path) -> BinaryIO:
    """``open_regular``, but an unopenable file raises ``open``'s OSError, for readers that report it themselves."""
    path = Path(path)
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
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


def check_data_path(path: str | Path, folder: bool | None = None) -> Path:
    """``path`` as a Path once known to be a regular file or folder (links followed); a FIFO, device or socket is a
    DataFormatError. ``folder``: True a folder, False a file, None either. A missing path is returned for the caller
    to report."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return path
    except OSError as error:
        raise DataFormatError(path, None, f"cannot read: {error.strerror or error}") from None
    if stat.S_ISDIR(mode):
        if folder is False:
            raise DataFormatError(path, None, "a folder, not a data file")
        return path
    if not stat.S_ISREG(mode):
        raise DataFormatError(path, None, f"not a regular file but {file_kind(mode)}: data is read from files and "
                                          "folders only")
    if folder is True:
        raise DataFormatError(path, None, "a file, not a folder")
    return path


def open_data(path: str | Path, encoding: str | None = None, newline: str | None = None) -> BinaryIO | TextIO:
    """A data file opened like ``open``, once ``open_checked`` finds it regular (else DataFormatError; an unopenable
    file raises ``open``'s OSError). Binary without ``encoding``, else text as ``open(path, "r", encoding=...,
    newline=...)``."""
    stream = open_checked(path)
    if encoding is None:
        return stream
    return io.TextIOWrapper(stream, encoding=encoding, newline=newline)


def read_data_bytes(path: str | Path) -> bytes:
    """The bytes of the data file ``path``, read like ``Path.read_bytes`` once ``open_data`` has checked it."""
    with open_data(path) as stream:
        return stream.read()


def read_data_text(path: str | Path, encoding: str = "utf-8") -> str:
    """The text of the data file ``path``, read like ``Path.read_text`` (line ends translated; bytes that are not
    ``encoding`` raise UnicodeDecodeError, an OSError what ``open`` raises) once ``open_data`` has checked it."""
    with open_data(path, encoding=encoding) as stream:
        return stream.read()


_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{\]}]')  # a string (skipped whole) or a bracket


def json_depth_error(text: str, limit: int = MAX_JSON_DEPTH) -> tuple[int, int] | None:
    """Where the JSON ``text`` first nests deeper than ``limit`` levels, as (line, depth), or None. Found by a scan
    of its brackets outside strings, without recursion; text with at most ``limit`` brackets is not scanned."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for match in _JSON_TOKENS.finditer(text):
        first = match.group()[0]
        if first in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, match.start()) + 1, depth
        elif first in "]}":
            depth -= 1
    return None


def load_json(text: str | bytes, path: str | Path | None = None, line: int = 1, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)`` if it nests at most ``limit`` levels; deeper is a DataFormatError naming ``path``, the
    line (counted from ``line``, where ``text`` starts in the file) and the depth, never a RecursionError. Invalid
    JSON or non-UTF-8 bytes raise ``json.JSONDecodeError`` / UnicodeDecodeError (ValueErrors) for the caller."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8-sig" if text[:3] == b"\xef\xbb\xbf" else "utf-8")
    found = json_depth_error(text, limit)
    if found is not None:
        raise DataFormatError(path, line + found[0] - 1, f"JSON nested more than {limit} levels deep")
    try:
        return json.loads(text)
    except RecursionError:  # only when called with little stack left: still an error naming the file
        raise DataFormatError(path, line, "JSON nested too deeply to read") from None


def read_json_file(path: str | Path, limit: int = SUMMARY_LIMIT, what: str = "JSON file") -> Any:
    """The JSON value of a run-folder or evidence file: a regular file (``open_regular``) of at most ``limit``
    bytes, UTF-8, valid JSON nested at most ``MAX_JSON_DEPTH`` levels; anything else is a DataFormatError naming
    the file and the reason."""
    data = read_run_file(path, limit, what)
    try:
        return load_json(data, path)
    except UnicodeDecodeError as error:
        raise DataFormatError(path, None, f"not UTF-8 text at byte {error.start}") from None
    except json.JSONDecodeError as error:
        raise DataFormatError(path, error.lineno, f"not valid JSON ({error.msg})") from None
