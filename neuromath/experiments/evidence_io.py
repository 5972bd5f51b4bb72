"""Reading and writing the files of evidence: JSON summaries (size-limited, as a run folder's files are read) and
gzip JSON Lines whose bytes depend only on their records."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from neuromath.errors import NeuromathError
from neuromath.fileio import write_atomic
from neuromath.safe_read import SUMMARY_LIMIT, read_run_file


def write_gzip_lines(records: list[dict], path: Path) -> None:
    """JSON Lines, gzip with no time stamp or name in its header, so the same records give the same bytes."""
    data = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records).encode("utf-8")

    def write(stream) -> None:
        with gzip.GzipFile(filename="", mode="wb", fileobj=stream, mtime=0) as packed:
            packed.write(data)

    write_atomic(path, write)


def read_gzip_lines(path: Path) -> list[dict]:
    records = []
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            try:
                records.append(json.loads(line))
            except ValueError:
                raise NeuromathError(f"{path}: line {number}: not valid JSON") from None
    return records


def read_json(path: Path) -> dict:
    try:
        return json.loads(read_run_file(path, SUMMARY_LIMIT))
    except ValueError as error:
        raise NeuromathError(f"{path}: not valid JSON: {error}") from None
