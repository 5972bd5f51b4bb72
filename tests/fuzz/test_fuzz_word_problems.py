"""Fuzzing the word-problem readers and the solve path: whatever the bytes, a reader returns examples or raises a
NeuromathError, and a problem text with any hypothesis ends in a record or a NeuromathError, never another exception.

Each reader starts from a small valid file of its format, mutated at the level of its records (fields deleted,
duplicated or replaced by nasty values: huge fields and numbers, NaN, deep nesting) and then of its bytes
(truncation, flipped and inserted bytes, invalid UTF-8, deeply nested brackets). CI runs derandomised (the profile of
tests/conftest.py); ``--hypothesis-profile random`` draws fresh cases.
"""

import csv
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import mutated_bytes

from neuromath.errors import DataFormatError, NeuromathError
from neuromath.tasks import get_task
from neuromath.tasks.word_problems import FORMATS, read_examples

READER_EXAMPLES = 500  # per format, each file read strict, lenient and with its format detected
SOLVE_EXAMPLES = 2000
FUZZ_SETTINGS = settings(
    deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)  # on top of the profile in force (derandomised in CI)

SVAMP_ROWS = [
    ["Question", "Numbers", "Equation", "Answer", "group_nums"],
    ["Mary has number0 cups and puts in number1 more .", "8.0 2.0", "+ number0 number1", "10.0", "[1, 2]"],
    ["Take number0 from number1 .", "-2.0 12.5", "* number0 + number1 100.0", "-225", "[]"],
    ["Share number0 among number1 .", "(2/5) 4", "/ number0 number1", "0.1", "[]"],
]
QUESTION_EQUATION_ROWS = [
    ["Question", "Equation"],
    ["120 is what percent of 50 ?", "x=((120/50)*100)"],
    ["Tom has 7 apples and gets 4 more , then has 5 less than Ann ?", "X-7-4=5"],
    ["Sam has twelve eggs and sells 25% of them .", "x=12*25%"],
]
MWPTOOLKIT_RECORDS = [
    {"id": "1", "original_text": "一段布剪去6米，正好剪去这段布的(2/5)",
     "segmented_text": "一段 布 剪去 6 米 ， 正好 剪去 这段 布 的 (2/5)", "equation": "x=6/(2/5)", "ans": "15"},
    {"id": "2", "original_text": "Find the product of -2 , 4 and -1 .", "equation": "x=((-2.0)*4.0)*(-1.0)", "ans": 8},
    {"id": "3", "original_text": "A 2^10 byte page holds 3 lines", "equation": "x=1024/3", "ans": "((1024)/(3))"},
]
JSONL_RECORDS = [
    {"id": "a", "text": "Jerry had 135 pens.", "masked_text": "Jerry had n0 pens .", "numbers": ["135"],
     "equation": ["-", "n0", "19"], "answer": 116.0},
    {"id": "b", "text": "一 共有 (1/4)kg", "masked_text": "一 共有 n0 kg", "numbers": ["(1/4)", "-2"],
     "equation": ["*", "n0", "n1"], "answer": -0.5},
]

NASTY_STRINGS = [
    "", " ", "x" * 140_000, "9" * 5000, "1e999", "2^99999", "NaN", "Infinity", "-0", "(1/0)", "n99",
    "(" * 3000 + "1" + ")" * 3000, "- " * 3000 + "1", " ".join(["neg"] * 3000 + ["n0"]), "x=" + "+".join("1" * 500),
    "x=1=2", "+ n0", "\udcff\udcfe", "\x00", '"', "\n", "number0 number7", "一二三", "¹²³", "3²", "1e308*1e308",
]
NASTY_JSON_VALUES = [
    None, True, 0, -1, 1.5, float("nan"), float("inf"), 10**400, [], {}, ["n0"], [["n0"]], {"a": 1},
    [[[[[[[[[[1]]]]]]]]]], *NASTY_STRINGS,
]


def csv_text(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def json_text(records: list, lines: bool) -> str:
    if lines:
        return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    return json.dumps(records, ensure_ascii=False, indent=1)


@st.composite
def mutated_records(draw, format: str) -> str:
    """The text of a file of ``format`` after a few record-level mutations."""
    if format in ("svamp_csv", "question_equation_csv"):
        rows = [list(row) for row in (SVAMP_ROWS if format == "svamp_csv" else QUESTION_EQUATION_ROWS)]
        for _ in range(draw(st.integers(1, 3))):
            row = rows[draw(st.integers(0, len(rows) - 1))]
            column = draw(st.integers(0, len(row) - 1)) if row else 0
            action = draw(st.sampled_from(["replace", "delete", "duplicate", "replace", "duplicate row"]))
            if action == "delete" and row:
                del row[column]
            elif action == "duplicate" and row:
                row.insert(column, row[column])
            elif action == "replace" and row:
                row[column] = draw(st.sampled_from(NASTY_STRINGS) | st.text(max_size=20))
            else:
                rows.append(list(row))
        return csv_text(rows)
    records: list = [dict(record) for record in (JSONL_RECORDS if format == "jsonl" else MWPTOOLKIT_RECORDS)]
    objects = list(records)  # the records that stay JSON objects
    for _ in range(draw(st.integers(1, 3))):
        record = objects[draw(st.integers(0, len(objects) - 1))]
        key = draw(st.sampled_from(sorted(record) + ["extra"]))
        action = draw(st.sampled_from(["replace", "delete", "replace", "duplicate record", "not an object"]))
        if action == "delete":
            record.pop(key, None)
        elif action == "replace":
            record[key] = draw(st.sampled_from(NASTY_JSON_VALUES) | st.text(max_size=20))
        elif action == "duplicate record":
            records.append(record)  # the same id twice
        else:
            records.append(draw(st.sampled_from(NASTY_JSON_VALUES)))
    return json_text(records, lines=format == "jsonl")


@settings(FUZZ_SETTINGS, max_examples=READER_EXAMPLES)
@pytest.mark.parametrize("format", sorted(FORMATS))
@given(data=st.data())
def test_a_reader_returns_examples_or_raises_a_neuromath_error(tmp_path, format, data):
    content = data.draw(mutated_records(format).flatmap(mutated_bytes), label="file")
    path = tmp_path / f"fuzz.{'csv' if format.endswith('csv') else format.split('_')[-1]}"
    path.write_bytes(content)
    for lenient in (False, True):
        skipped: list = []
        try:
            examples = FORMATS[format](path, lenient=lenient, skipped=skipped)
        except NeuromathError:
            continue
        assert all(isinstance(error, DataFormatError) and error.line is not None for error in skipped)
        assert len({example.id for example in examples}) == len(examples)
    try:
        read_examples(path)  # the format detected from the content
    except NeuromathError:
        pass


TEXT_PIECES = [
    "Tom has", " 135 ", "apples", "19", " and ", "1e308", "1e999", "2^99999", "2^10", "3²", "10⁻³", "9" * 5000,
    "(" * 500, ")" * 500, "(2/5)", "1(1/2)", "30%", "1,000", "-", "twelve", "fifty-eight", "一共有", "，", "。", "?",
    "\u200b", "\ud800", "e5", "0^-1", "1e-5000", ".5", "2nd",
]
HYPOTHESIS_TOKENS = ["+", "-", "*", "/", "^", "neg", "0", "1", "100", "3.14", "(1/3)", "x", "<unk>"]


@settings(FUZZ_SETTINGS, max_examples=SOLVE_EXAMPLES)
@given(
    text=st.lists(st.sampled_from(TEXT_PIECES) | st.text(max_size=12), max_size=8).map("".join),
    data=st.data(),
)
def test_a_problem_text_and_any_hypothesis_end_in_a_record_or_a_neuromath_error(text, data):
    task = get_task("word_problems")
    try:
        example = task.prepare(text)
    except NeuromathError:
        return
    masks = [f"n{k}" for k in range(len(example.numbers) + 1)]  # one beyond the problem's numbers
    tokens = data.draw(st.lists(st.sampled_from(HYPOTHESIS_TOKENS + masks), max_size=12), label="hypothesis")
    for task in (get_task("word_problems"), get_task("word_problems_normalized")):
        record = task.describe(tokens, example)
        assert (record["reason"] is None) == (record["predicted_answer_text"] is not None)
        assert task.is_correct(tokens, example) is False  # the prepared problem has no gold answer
        assert task.verifier.verify(tokens, example) in (True, False)
        task.equation_matches(tokens, example)
