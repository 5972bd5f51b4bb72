"""Which reader a word-problem file takes: ``FORMATS`` by name (``data.format``), ``detect_format`` from the file's
extension and first record, and ``read_examples``, which reads through them."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

from neuromath.errors import ConfigError, DataFormatError
from neuromath.safe_read import open_data
from neuromath.tasks.word_problems.files import (
    SVAMP_COLUMNS,
    SVAMP_JSON_KEYS,
    read_jsonl,
    read_mwptoolkit_json,
    read_question_equation_csv,
    read_svamp_csv,
    read_svamp_json,
)
from neuromath.tasks.word_problems.records import Example

FORMATS: dict[str, Callable[..., list[Example]]] = {  # data.format's names (neuromath.config.rules)
    "svamp_csv": read_svamp_csv,
    "svamp_json": read_svamp_json,
    "mwptoolkit_json": read_mwptoolkit_json,
    "question_equation_csv": read_question_equation_csv,
    "jsonl": read_jsonl,
}


_DETECT_BYTES = 1 << 16


def _first_record_has(text: str, keys: tuple[str, ...]) -> bool:
    """Whether the first record of a JSON list (``text`` its start) is an object with all of ``keys``."""
    start = text.index("[") + 1
    position = start + len(text[start:]) - len(text[start:].lstrip())
    try:
        record, _ = json.JSONDecoder().raw_decode(text, position)
    except (ValueError, RecursionError):  # the first record is longer than the bytes read, or broken
        return False
    return isinstance(record, dict) and all(key in record for key in keys)


def detect_format(path: str | Path) -> str:
    """The name in FORMATS of a file's format, from its extension and its first record or CSV header."""
    path = Path(path)
    try:
        with open_data(path) as stream:  # the start of the file is enough; the reader reads it all
            head = stream.read(_DETECT_BYTES).decode("utf-8-sig", errors="replace")
    except OSError as error:
        raise DataFormatError(path, None, f"cannot read the file: {error.strerror or error}") from None
    text = head.lstrip()
    if not text:
        raise DataFormatError(path, None, "the file is empty")
    if path.suffix.lower() in (".json", ".jsonl") or text[:1] in ("[", "{"):
        if text[:1] == "[":
            return "svamp_json" if _first_record_has(text, SVAMP_JSON_KEYS) else "mwptoolkit_json"
        if text[:1] == "{":
            return "jsonl"
        raise DataFormatError(path, 1, "a .json file must hold a list of records, a .jsonl file one object per line")
    header = next(csv.reader(io.StringIO(text.splitlines()[0])))
    if all(column in header for column in SVAMP_COLUMNS):
        return "svamp_csv"
    if all(column in header for column in ("Question", "Equation")):
        return "question_equation_csv"
    expected = f"{','.join(SVAMP_COLUMNS)} or Question,Equation"
    raise DataFormatError(path, 1, f"unknown format: the header {','.join(header)} has neither {expected}")


def read_examples(
    path: str | Path, format: str | None = None, *, lenient: bool = False, skipped: list | None = None,
    contradicting: list | None = None, strict: bool = False
) -> list[Example]:
    """Read word problems from a file in one of FORMATS (detected when ``format`` is None). Rows whose answer
    contradicts their equation are kept and appended to ``contradicting`` (logged as one warning when it is None);
    ``strict`` refuses the first."""
    if format is None:
        format = detect_format(path)
    if format not in FORMATS:
        raise ConfigError(f"unknown word-problem format {format!r}; known: {', '.join(FORMATS)}")
    return FORMATS[format](path, lenient=lenient, skipped=skipped, contradicting=contradicting, strict=strict)
