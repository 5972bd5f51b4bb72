"""Reading and writing the files of evidence: JSON summaries (size-limited and depth-limited, as a run folder's files
are read: ``neuromath.safe_read.read_json_file``) and gzip JSON Lines whose bytes depend only on their records."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

from neuromath.errors import DataFormatError
from neuromath.fileio import write_atomic
from neuromath.safe_read import SUMMARY_LIMIT, load_json, open_data, read_json_file


def write_gzip_lines(records: list[dict], path: Path) -> None:
    """JSON Lines, gzip with no time stamp or name in its header, so the same records give the same bytes."""
    data = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records).encode("utf-8")

    def write(stream) -> None:
        with gzip.GzipFile(filename="", mode="wb", fileobj=stream, mtime=0) as packed:
            packed.write(data)

    write_atomic(path, write)


def read_gzip_lines(path: Path) -> list[dict]:
    """The records of a gzip JSON Lines file of evidence: a regular file (a FIFO or a device is refused unread), each
    line JSON nested at most ``MAX_JSON_DEPTH`` levels; anything else is a DataFormatError naming the file and line."""
    records = []
    try:
        with open_data(path) as raw, gzip.open(raw, "rt", encoding="utf-8") as stream:
            for number, line in enumerate(stream, start=1):
                try:
                    records.append(load_json(line, path, number))
                except ValueError:
                    raise DataFormatError(path, number, "not valid JSON") from None
    except FileNotFoundError:
        raise
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
        raise DataFormatError(path, None, f"not a readable gzip file of JSON lines ({error})") from None
    return records


def read_json(path: Path) -> dict:
    """A JSON summary of evidence (``read_json_file`` with the summary size limit)."""
    return read_json_file(path, SUMMARY_LIMIT, "summary")
