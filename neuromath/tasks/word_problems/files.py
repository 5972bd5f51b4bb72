"""Reading and writing word-problem files: the SVAMP repository's CSV (MAWPS, ASDiv-A, SVAMP) and its
``SVAMP.json``, MWPToolkit JSON (MAWPS, Math23K), MathQA-style ``Question,Equation`` CSV, and this project's JSON
Lines. Which reader a file takes: ``neuromath.tasks.word_problems.formats``.

Readers (``read_<format>(path, *, lenient=False, skipped=None)``) raise ``DataFormatError``
naming the file, the line and the reason for a malformed record; with ``lenient=True`` they
skip it instead and append the error to ``skipped``. A file that cannot be read as a whole (it
is missing or empty, its CSV header lacks a column, its JSON is broken) always raises. A gold
answer that is not a finite number (NaN, infinity) is a malformed record.

A record whose gold answer contradicts its own equation (``answer_contradiction``) is kept and
appended to ``contradicting`` as a DataFormatError; without a list the reader logs one warning with
their count; ``strict=True`` raises the first instead.

A CSV row the CSV module cannot split (a field over its limit of 128 KiB) is a bad record like any
other; reading goes on at the next line. A JSON file whose structure cannot be decoded (a number of
more than 4300 digits, arrays nested thousands deep) cannot be read as a whole.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, fields
from pathlib import Path

from neuromath.errors import DataFormatError, ExpressionError, NeuromathError
from neuromath.expr import (
    BINARY_OPERATORS,
    evaluate,
    format_infix,
    format_number,
    is_number,
    parse_infix,
    parse_number,
)
from neuromath.expr.numbers import MAX_NUMBER_DIGITS, shorten
from neuromath.fileio import write_text_atomic
from neuromath.safe_read import read_data_bytes
from neuromath.tasks.json_text import check_text
from neuromath.tasks.word_problems.answer_scoring import VALUE_REL_TOL, equation_value, fill_numbers
from neuromath.tasks.word_problems.equation_targets import example_from_equation
from neuromath.tasks.word_problems.records import Example, number_value

_INVALID_UTF8_REGEX = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8, kept by "surrogateescape"


def _read_text(path: Path) -> str:
    """The file's text; bytes that are not UTF-8 are kept as lone surrogates for a per-record error."""
    try:
        data = read_data_bytes(path)  # a FIFO or a device: refused before it is read
    except OSError as error:
        raise DataFormatError(path, None, f"cannot read the file: {error.strerror or error}") from None
    text = data.decode("utf-8-sig", errors="surrogateescape")
    if not text.strip():
        raise DataFormatError(path, None, "the file is empty")
    return text


def _check_utf8(strings: Sequence[object]) -> None:
    for value in strings:
        if isinstance(value, str) and _INVALID_UTF8_REGEX.search(value):
            raise DataFormatError(None, None, "the record holds bytes that are not UTF-8 text")


_WARNED_CONTRADICTING: set = set()  # files whose contradicting rows were logged


def _build_all(
    path: Path,
    records: Iterator[tuple[int, object]],
    build: Callable[[object, int], tuple[Example, str | None]],
    lenient: bool,
    skipped: list | None,
    contradicting: list | None = None,
    strict: bool = False,
) -> list[Example]:
    """Build one Example per (line, record); a bad record raises, or is skipped and reported when lenient.
    A record that is a NeuromathError (the file's reader could not even split it) counts as a bad record.
    ``build`` returns the Example and its gold answer as written (None when the answer is the equation's value); a
    record whose answer contradicts its equation is kept and reported (see the module docstring)."""
    examples = []
    ids: dict[str, int] = {}
    found: list[DataFormatError] = []
    for line, record in records:
        try:
            if isinstance(record, NeuromathError):
                raise record
            example, written_answer = build(record, line)
            if example.id in ids:
                raise DataFormatError(None, None, f"id {example.id!r} was already used on line {ids[example.id]}")
        except NeuromathError as error:
            reason = error.reason if isinstance(error, DataFormatError) else str(error)
            located = DataFormatError(path, line, reason)
            if not lenient:
                raise located from error
            if skipped is not None:
                skipped.append(located)
            continue
        ids[example.id] = line
        examples.append(example)
        reason = answer_contradiction(example, written_answer)
        if reason is not None:
            if example.id != str(line):  # a file of one line (MAWPS.json) names every record on line 1
                reason = f"record {shorten(example.id)}: {reason}"
            if strict:
                raise DataFormatError(path, line, f"{reason}; strict reading refuses such rows")
            found.append(DataFormatError(path, line, reason))
    if contradicting is not None:
        contradicting.extend(found)
    elif found and path not in _WARNED_CONTRADICTING:  # once per file and process: verify reads a fold many times
        _WARNED_CONTRADICTING.add(path)
        logging.getLogger("neuromath").warning(
            "%s: %d rows whose answer contradicts their own equation, kept (the first: %s); neuromath data check "
            "%s lists them", path, len(found), found[0], path)
    return examples


def answer_contradiction(example: Example, written_answer: str | None) -> str | None:
    """Why the gold answer of ``example`` contradicts its own equation, or None when they agree.

    They agree when the equation's value is within value accuracy's tolerance of the answer (``VALUE_REL_TOL``,
    relative), or within the answer's rounding: half a unit of the last decimal place it is written with
    (``3.333`` for 10/3, ``0.25`` for 0.2492; ``5.0`` counts as ``5``, exact). An answer that is the equation's own
    value (``written_answer`` None) always agrees."""
    if written_answer is None or not example.equation:
        return None
    try:
        value = float(equation_value(example.equation, example.numbers))
    except (NeuromathError, OverflowError):
        return None  # the readers refuse an equation without a value; one beyond the float range cannot be compared
    # the decimal places of a plain decimal (3.333 -> 3; 5.0 -> 0); any other form (a fraction, 50%, 1e-05) is exact
    decimal = re.fullmatch(r"\s*[-+]?[0-9]*\.([0-9]*?)0*\s*", written_answer)
    rounding = 0.5 * 10.0 ** -len(decimal[1]) if decimal and decimal[1] else 0.0
    tolerance = max(VALUE_REL_TOL * max(abs(value), abs(example.answer)), rounding) * (1 + 1e-9) + 1e-12
    if abs(value - example.answer) <= tolerance:
        return None
    equation = shorten(format_infix(fill_numbers(example.equation, example.numbers)), 60)
    return (f"the answer {shorten(written_answer.strip(), 30)} contradicts the row's own equation {equation}, whose "
            f"value is {value:.10g}")


def _csv_error(error: csv.Error) -> DataFormatError:
    """The error of a row the CSV module cannot split, in words."""
    if "field larger than field limit" in str(error):
        limit = csv.field_size_limit()
        return DataFormatError(None, None, f"a field is longer than the CSV limit of {limit} characters")
    return DataFormatError(None, None, f"malformed CSV: {error}")


def _csv_rows(
    path: Path, text: str, required: Sequence[str]
) -> Iterator[tuple[int, tuple[list[str], list[str]] | DataFormatError]]:
    """(line, (header, row)) for each data row of a CSV file whose header has the ``required`` columns;
    (line, error) for a row the CSV module cannot split, after which reading goes on at the next line."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except csv.Error as error:
        raise DataFormatError(path, 1, f"the header: {_csv_error(error).reason}") from None
    missing = [column for column in required if column not in header]
    if missing:
        raise DataFormatError(
            path, 1, f"missing column(s) {', '.join(missing)} in the header {shorten(','.join(header), 200)}"
        )
    last_line = reader.line_num
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            yield last_line + 1, _csv_error(error)
            last_line = reader.line_num
            continue
        line, last_line = last_line + 1, reader.line_num
        if row:
            yield line, (header, row)


def _row_fields(header_and_row: tuple[list[str], list[str]], columns: Sequence[str]) -> list[str]:
    """The values of ``columns`` in a CSV row, stripped; raises DataFormatError for a malformed row."""
    header, row = header_and_row
    if len(row) != len(header):
        raise DataFormatError(None, None, f"the row has {len(row)} fields, the header has {len(header)}")
    _check_utf8(row)
    values = dict(zip(header, row))
    for column in columns:
        if not values[column].strip():
            raise DataFormatError(None, None, f"the {column} field is empty")
    return [values[column].strip() for column in columns]


def _canonical_number(text: str) -> str:
    """A number literal (with an optional leading ``-``) written canonically: ``8.0`` -> ``8``."""
    try:
        value = number_value(text)
    except ExpressionError:
        raise DataFormatError(None, None, f"{shorten(text)!r} is not a number") from None
    return format_number(value) if value >= 0 else "-" + format_number(-value)


_SVAMP_MASK_REGEX = re.compile(r"\bnumber(\d{1,4})\b")  # 4 digits at most, as MASK_REGEX
SVAMP_COLUMNS = ("Question", "Numbers", "Equation", "Answer")


def _svamp_example(header_and_row: tuple[list[str], list[str]], line: int) -> tuple[Example, str]:
    question, numbers_text, equation_text, answer_text = _row_fields(header_and_row, SVAMP_COLUMNS)
    question = " ".join(question.split())
    numbers = tuple(_canonical_number(number) for number in numbers_text.split())
    for mask in _SVAMP_MASK_REGEX.finditer(question):
        if int(mask[1]) >= len(numbers):
            raise DataFormatError(None, None, f"{mask[0]} has no value in Numbers ({len(numbers)} given)")
    equation = []
    for token in equation_text.split():
        mask = _SVAMP_MASK_REGEX.fullmatch(token)
        if mask:
            equation.append(f"n{mask[1]}")
        elif token in BINARY_OPERATORS:
            equation.append(token)
        elif is_number(token):
            equation.append(format_number(parse_number(token)))
        else:
            raise DataFormatError(None, None, f"unknown token {shorten(token)!r} in the equation")
    try:
        answer = float(answer_text)
    except ValueError:
        raise DataFormatError(None, None, f"the answer {shorten(answer_text)!r} is not a number") from None
    check_finite_answer(answer)
    equation_value(equation, numbers)  # raises ExpressionError for an ill-formed equation or a division by zero
    return Example(
        id=str(line),
        text=_SVAMP_MASK_REGEX.sub(lambda mask: numbers[int(mask[1])], question),
        masked_text=_SVAMP_MASK_REGEX.sub(lambda mask: f"n{mask[1]}", question),
        numbers=numbers,
        equation=tuple(equation),
        answer=answer,
    ), answer_text


def read_svamp_csv(
    path: str | Path, *, lenient: bool = False, skipped: list | None = None,
    contradicting: list | None = None, strict: bool = False
) -> list[Example]:
    """The SVAMP repository's CSV (MAWPS, ASDiv-A, SVAMP): ``Question,Numbers,Equation,Answer,...``
    with numbers masked as ``number0..`` and prefix equations. Ids are line numbers."""
    path = Path(path)
    rows = _csv_rows(path, _read_text(path), SVAMP_COLUMNS)
    return _build_all(path, rows, _svamp_example, lenient, skipped, contradicting, strict)


def _question_equation_example(header_and_row: tuple[list[str], list[str]], line: int) -> tuple[Example, None]:
    question, equation = _row_fields(header_and_row, ("Question", "Equation"))
    return example_from_equation(str(line), question, equation), None  # the answer is the equation's value


def read_question_equation_csv(
    path: str | Path, *, lenient: bool = False, skipped: list | None = None,
    contradicting: list | None = None, strict: bool = False
) -> list[Example]:
    """A MathQA-style CSV with the header ``Question,Equation`` and infix equations such as
    ``x=((120/50)*100)``; the answer is the equation's value. Ids are line numbers."""
    path = Path(path)
    rows = _csv_rows(path, _read_text(path), ("Question", "Equation"))
    return _build_all(path, rows, _question_equation_example, lenient, skipped, contradicting, strict)


def _json_array_items(path: Path, text: str) -> Iterator[tuple[int, object]]:
    """(line, item) for each item of a JSON array, the line being where the item starts."""
    decoder = json.JSONDecoder()

    def skip_whitespace(position: int) -> int:
        while position < len(text) and text[position].isspace():
            position += 1
        return position

    line, counted_up_to = 1, 0
    try:
        position = skip_whitespace(0)
        if text[position : position + 1] != "[":
            raise json.JSONDecodeError("expected a JSON list of records", text, position)
        position = skip_whitespace(position + 1)
        at_end = text[position : position + 1] == "]"
        if at_end:
            position += 1
        while not at_end:
            item, end = decoder.raw_decode(text, position)
            line += text.count("\n", counted_up_to, position)
            counted_up_to = position
            yield line, item
            position = skip_whitespace(end)
            separator = text[position : position + 1]
            if separator not in (",", "]"):
                raise json.JSONDecodeError("expected ',' or ']'", text, position)
            at_end = separator == "]"
            position = skip_whitespace(position + 1)
        if text[position:].strip():
            raise json.JSONDecodeError("extra data after the list", text, position)
    except json.JSONDecodeError as error:
        raise DataFormatError(path, error.lineno, f"invalid JSON: {error.msg}") from None
    except (ValueError, RecursionError) as error:  # raised by the decoder for what it cannot represent
        line += text.count("\n", counted_up_to, position)
        raise DataFormatError(path, line, f"cannot decode the record starting here: {_json_limit(error)}") from None


def _json_limit(error: ValueError | RecursionError) -> str:
    """The reason of an error the JSON decoder raises on valid JSON it cannot represent."""
    if isinstance(error, RecursionError):
        return "arrays or objects nested too deeply"
    if "digits" in str(error):
        return f"a number has more than {MAX_NUMBER_DIGITS} digits"
    return str(error)


def check_finite_answer(answer: float) -> None:
    """Raise DataFormatError for a gold answer that is NaN or infinite: no equation can be scored against it."""
    if not math.isfinite(answer):
        raise DataFormatError(None, None, f"the answer {answer} is not a finite number")


_ANSWER_FRACTION_REGEX = re.compile(r"\(\((\d+)\)/\((\d+)\)\)")


def _parse_answer(raw: object) -> float:
    """A gold answer: a number, or text such as ``"9"``, ``"50%"``, ``"((5)/(6))"``, ``"19((3)/(4))"``."""
    answer = None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        try:
            answer = float(raw)
        except OverflowError:  # an integer beyond the float range
            answer = math.inf
    elif isinstance(raw, str):
        try:
            answer = float(evaluate(parse_infix(_ANSWER_FRACTION_REGEX.sub(r"(\1/\2)", raw.strip()))))
        except ExpressionError:
            pass
        except OverflowError:  # an exact value beyond the float range
            answer = math.inf
    if answer is None:
        raise DataFormatError(None, None, f"the answer {shorten(repr(raw))} is not a number")
    check_finite_answer(answer)
    return answer


MWPTOOLKIT_KEYS = ("id", "original_text", "equation", "ans")


def _written_answer(raw: object) -> str:
    """A gold answer as its file writes it: the text, or a JSON number as Python writes it back (``8.5``, ``95``)."""
    return raw if isinstance(raw, str) else repr(raw)


def _checked_record(record: object, keys: tuple[str, ...]) -> dict:
    """A JSON record that is an object with ``keys``, valid UTF-8 and text without lone surrogates."""
    if not isinstance(record, dict):
        raise DataFormatError(None, None, f"a record must be a JSON object, got {type(record).__name__}")
    missing = [key for key in keys if key not in record]
    if missing:
        raise DataFormatError(None, None, f"missing key(s) {', '.join(missing)}")
    _check_utf8(list(record.values()))
    check_text(record)
    return record


def _infix_example(id: object, text: str, equation: str, raw_answer: object,
                   segmented_text: str | None = None) -> tuple[Example, str]:
    """The Example of a problem with raw numbers and an infix equation, and its answer as the file writes it."""
    answer = _parse_answer(raw_answer)
    try:
        example = example_from_equation(str(id), text, equation, answer, segmented_text=segmented_text)
    except ExpressionError as error:
        raise DataFormatError(None, None, f"record {shorten(str(id))}: {error}") from None
    return example, _written_answer(raw_answer)


def _mwptoolkit_example(record: object, line: int) -> tuple[Example, str]:
    record = _checked_record(record, MWPTOOLKIT_KEYS)
    text, equation = record["original_text"], record["equation"]
    segmented_text = record.get("segmented_text")
    if not all(isinstance(value, str) for value in (text, equation, "" if segmented_text is None else segmented_text)):
        raise DataFormatError(None, None, "original_text, segmented_text and equation must be strings")
    return _infix_example(record["id"], text, equation, record["ans"], segmented_text)


def read_mwptoolkit_json(
    path: str | Path, *, lenient: bool = False, skipped: list | None = None,
    contradicting: list | None = None, strict: bool = False
) -> list[Example]:
    """MWPToolkit JSON (MAWPS, Math23K): a list of ``{id, original_text, segmented_text, equation, ans}``
    with raw numbers and infix equations such as ``x=56*9``. The segmented text is masked when given."""
    path = Path(path)
    records = _json_array_items(path, _read_text(path))
    return _build_all(path, records, _mwptoolkit_example, lenient, skipped, contradicting, strict)


SVAMP_JSON_KEYS = ("ID", "Body", "Question", "Equation", "Answer")  # and Type, the variation's kind


def _svamp_json_example(record: object, line: int) -> tuple[Example, str]:
    record = _checked_record(record, SVAMP_JSON_KEYS)
    body, question, equation = record["Body"], record["Question"], record["Equation"]
    if not all(isinstance(value, str) for value in (body, question, equation)):
        raise DataFormatError(None, None, "Body, Question and Equation must be strings")
    # the problem is its body and its question, as the SVAMP repository joins them
    return _infix_example(record["ID"], f"{body.strip()} {question.strip()}", equation, record["Answer"])


def read_svamp_json(
    path: str | Path, *, lenient: bool = False, skipped: list | None = None,
    contradicting: list | None = None, strict: bool = False
) -> list[Example]:
    """SVAMP's ``SVAMP.json``: a list of ``{ID, Body, Question, Equation, Answer, Type}`` with raw numbers and
    infix equations such as ``( 4.0 - 3.0 )``."""
    path = Path(path)
    records = _json_array_items(path, _read_text(path))
    return _build_all(path, records, _svamp_json_example, lenient, skipped, contradicting, strict)


_EXAMPLE_FIELDS = tuple(field.name for field in fields(Example))


def _jsonl_example(line_text: object, line: int) -> tuple[Example, str]:
    _check_utf8([line_text])
    try:
        record = json.loads(line_text)
    except json.JSONDecodeError as error:
        raise DataFormatError(None, None, f"invalid JSON: {error.msg} (column {error.colno})") from None
    except (ValueError, RecursionError) as error:
        raise DataFormatError(None, None, f"cannot decode the line: {_json_limit(error)}") from None
    if not isinstance(record, dict):
        raise DataFormatError(None, None, f"a line must hold a JSON object, got {type(record).__name__}")
    check_text(record)
    missing = [name for name in _EXAMPLE_FIELDS if name not in record]
    unknown = sorted(set(record) - set(_EXAMPLE_FIELDS))
    if missing or unknown:
        raise DataFormatError(None, None, f"missing field(s) {missing}, unknown field(s) {unknown}")
    for name in ("id", "text", "masked_text"):
        if not isinstance(record[name], str):
            raise DataFormatError(None, None, f"{name} must be a string")
    for name in ("numbers", "equation"):
        if not (isinstance(record[name], list) and all(isinstance(token, str) for token in record[name])):
            raise DataFormatError(None, None, f"{name} must be a list of strings")
    if not isinstance(record["answer"], (int, float)) or isinstance(record["answer"], bool):
        raise DataFormatError(None, None, "answer must be a number")
    answer = _parse_answer(record["answer"])  # NaN, Infinity and integers beyond the float range are refused
    numbers = tuple(record["numbers"])
    try:
        for number in numbers:
            number_value(number)
    except ExpressionError as error:
        raise DataFormatError(None, None, f"numbers: {error}") from None
    try:
        equation_value(record["equation"], numbers)
    except ExpressionError as error:
        raise DataFormatError(None, None, f"equation: {error}") from None
    return Example(
        id=record["id"],
        text=record["text"],
        masked_text=record["masked_text"],
        numbers=numbers,
        equation=tuple(record["equation"]),
        answer=answer,
    ), _written_answer(record["answer"])


def read_jsonl(
    path: str | Path, *, lenient: bool = False, skipped: list | None = None,
    contradicting: list | None = None, strict: bool = False
) -> list[Example]:
    """This project's JSON Lines: one Example per line with its dataclass fields (see ``write_jsonl``)."""
    path = Path(path)
    lines = ((number, line) for number, line in enumerate(_read_text(path).splitlines(), 1) if line.strip())
    return _build_all(path, lines, _jsonl_example, lenient, skipped, contradicting, strict)


def write_jsonl(examples: Sequence[Example], path: str | Path) -> None:
    """Write Examples as JSON Lines, atomically (a temporary file in the same folder, then a rename)."""
    write_text_atomic(path, "".join(json.dumps(asdict(example), ensure_ascii=False) + "\n" for example in examples))
