"""Readers and the writer of neuromath/tasks/word_problems.py, on small files, good and bad."""

import json
import math

import pytest

from neuromath.errors import ConfigError, DataFormatError
from neuromath.tasks.word_problems import (
    FORMATS,
    Example,
    detect_format,
    read_examples,
    read_jsonl,
    read_mwptoolkit_json,
    read_question_equation_csv,
    read_svamp_csv,
    read_svamp_json,
    write_jsonl,
)

SVAMP_HEADER = "Question,Numbers,Equation,Answer,group_nums,Body,Ques_Statement\n"
SVAMP_ROW = (
    'Mary wants number0 cups . She put in number1 cups . How many more ?,8.0 2.0,- number0 number1,6,"[1, 2]",b,q\n'
)


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def mwptoolkit_record(id, text, equation, ans):
    return {"id": id, "original_text": text, "segmented_text": text, "equation": equation, "ans": ans}


# --- svamp_csv --------------------------------------------------------------------------------


def test_read_svamp_csv_maps_masks_and_puts_numbers_back(tmp_path):
    negative_row = 'Take number0 from number1 .,-2.0 12.5,* number0 + number1 100.0,-225,"[]",b,q\n'
    path = write(tmp_path, "train.csv", SVAMP_HEADER + SVAMP_ROW + negative_row)
    first, second = read_svamp_csv(path)
    assert first == Example(
        id="2",
        text="Mary wants 8 cups . She put in 2 cups . How many more ?",
        masked_text="Mary wants n0 cups . She put in n1 cups . How many more ?",
        numbers=("8", "2"),
        equation=("-", "n0", "n1"),
        answer=6.0,
    )
    assert second.id == "3"
    assert second.numbers == ("-2", "12.5")
    assert second.text == "Take -2 from 12.5 ."
    assert second.equation == ("*", "n0", "+", "n1", "100")
    assert second.answer == -225.0


def test_read_svamp_csv_keeps_a_value_mismatch(tmp_path):
    path = write(tmp_path, "dev.csv", SVAMP_HEADER + SVAMP_ROW.replace(",6,", ",7,"))
    (example,) = read_svamp_csv(path)
    assert example.answer == 7.0


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ('Mary wants number0 and number1 cups .,8.0,- number0 8,6,"[]",b,q\n', "number1 has no value in Numbers"),
        ('Mary wants number0 cups .,8.0,- number0 number1,6,"[]",b,q\n',
         "n1 refers to a number the problem does not have"),
        ("Mary wants number0 cups .,8.0,- number0 8,6,b,q\n", "6 fields, the header has 7"),
        ('Mary wants number0 cups .,8.0,,6,"[]",b,q\n', "Equation field is empty"),
        ('Mary wants number0 cups .,8.0,- number0,6,"[]",b,q\n', "operand"),
        ('Mary wants number0 cups .,8.0,% number0 2,6,"[]",b,q\n', "unknown token"),
        ('Mary wants number0 cups .,8.0,/ number0 0,6,"[]",b,q\n', "division by zero"),
        ('Mary wants number0 cups .,eight,number0,6,"[]",b,q\n', "'eight' is not a number"),
        ('Mary wants number0 cups .,8.0,number0,six,"[]",b,q\n', "answer 'six' is not a number"),
    ],
)
def test_read_svamp_csv_names_file_line_and_reason_of_a_bad_row(tmp_path, row, reason):
    path = write(tmp_path, "bad.csv", SVAMP_HEADER + SVAMP_ROW + row)
    with pytest.raises(DataFormatError, match=reason) as caught:
        read_svamp_csv(path)
    assert (caught.value.path, caught.value.line) == (str(path), 3)
    assert str(caught.value).startswith(f"{path}:3: ")


def test_read_svamp_csv_reports_non_utf8_bytes_on_their_line(tmp_path):
    latin1_row = "Caf\u00e9 number0,1,number0,1,a,b,c\n".encode("latin-1")
    path = write(tmp_path, "latin1.csv", (SVAMP_HEADER + SVAMP_ROW).encode() + latin1_row)
    with pytest.raises(DataFormatError, match="not UTF-8") as caught:
        read_svamp_csv(path)
    assert caught.value.line == 3


def test_lenient_reading_skips_and_reports_bad_rows(tmp_path):
    bad_rows = (
        'Bad number0 .,8.0,/ number0 0,6,"[]",b,q\n'
        + "Caf\u00e9 number0,1,number0,1,a,b,c\n"
    ).encode("latin-1")
    path = write(tmp_path, "mixed.csv", SVAMP_HEADER.encode() + bad_rows + SVAMP_ROW.encode())
    skipped = []
    examples = read_svamp_csv(path, lenient=True, skipped=skipped)
    assert [example.id for example in examples] == ["4"]
    assert [(error.line, error.reason) for error in skipped] == [
        (2, "division by zero"),
        (3, "the record holds bytes that are not UTF-8 text"),
    ]
    assert len(read_svamp_csv(path, lenient=True)) == 1  # no list given: skipped silently at the caller's wish


def test_a_row_spanning_lines_is_reported_at_its_first_line(tmp_path):
    row = 'Two\nlines number0 .,8.0,/ number0 0,6,"[]",b,q\n'
    path = write(tmp_path, "multiline.csv", SVAMP_HEADER + SVAMP_ROW + row)
    with pytest.raises(DataFormatError) as caught:
        read_svamp_csv(path)
    assert caught.value.line == 3


@pytest.mark.parametrize("lenient", [False, True])
def test_a_missing_column_or_an_empty_file_is_an_error_even_when_lenient(tmp_path, lenient):
    no_answer = write(tmp_path, "no_answer.csv", "Question,Numbers,Equation\nq number0,1,number0\n")
    with pytest.raises(DataFormatError, match="missing column.*Answer") as caught:
        read_svamp_csv(no_answer, lenient=lenient)
    assert caught.value.line == 1
    empty = write(tmp_path, "empty.csv", " \n")
    with pytest.raises(DataFormatError, match="empty"):
        read_svamp_csv(empty, lenient=lenient)


def test_a_missing_file_is_a_data_format_error(tmp_path):
    with pytest.raises(DataFormatError, match="cannot read"):
        read_examples(tmp_path / "nowhere.csv", "svamp_csv")


# --- question_equation_csv --------------------------------------------------------------------


def test_read_question_equation_csv_answers_with_the_equation_value(tmp_path):
    path = write(tmp_path, "mathqa.csv", "Question,Equation\n120 is what percent of 50 ?,x=((120/50)*100)\n")
    (example,) = read_question_equation_csv(path)
    assert example.masked_text == "n0 is what percent of n1 ?"
    assert example.equation == ("*", "/", "n0", "n1", "100")
    assert example.answer == 240.0


def test_read_question_equation_csv_reports_an_unparsable_equation(tmp_path):
    path = write(tmp_path, "mathqa.csv", "Question,Equation\nAdd 1 and 2,x=1+2\nAdd 3 and 4,x=3+)4\n")
    with pytest.raises(DataFormatError, match="cannot parse") as caught:
        read_question_equation_csv(path)
    assert caught.value.line == 3
    skipped = []
    assert [example.answer for example in read_question_equation_csv(path, lenient=True, skipped=skipped)] == [3.0]
    assert len(skipped) == 1


# --- mwptoolkit_json --------------------------------------------------------------------------


def test_read_mwptoolkit_json_masks_text_and_parses_answers(tmp_path):
    records = [
        mwptoolkit_record(1, "He has 56 books in each of his 9 shelves .", "x=56*9", 504.0),
        mwptoolkit_record(2, "Jason gave 9 cards . He has 4 left .", "X-9=4", "13"),
        {
            "id": "12773",
            "original_text": "一根钢管锯成2段需要(2/5)分钟，如果锯成5段需要多少分钟．",
            "segmented_text": "一 根 钢管 锯 成 2 段 需要 (2/5) 分钟 ， 如果 锯 成 5 段 需要 多少 分钟 ．",
            "equation": "x=(2/5)/(2-1)*(5-1)",
            "ans": "((8)/(5))",
        },
        mwptoolkit_record(4, "He sold 20% of 480 books .", "x=480*20%", "96"),
        mwptoolkit_record(5, "Half of 39.5 is", "x=39.5/2", "19((3)/(4))"),
        mwptoolkit_record(6, "It is 3 times 5", "x=3*5", "1500%"),
    ]
    path = write(tmp_path, "MAWPS.json", json.dumps(records, ensure_ascii=False, indent=1))
    examples = read_mwptoolkit_json(path)
    assert [example.id for example in examples] == ["1", "2", "12773", "4", "5", "6"]
    assert examples[0].equation == ("*", "n0", "n1")
    assert examples[1].equation == ("+", "n0", "n1")
    assert examples[1].answer == 13.0
    chinese = examples[2]
    assert chinese.text == records[2]["original_text"]
    assert chinese.masked_text.startswith("一 根 钢管 锯 成 n0 段 需要 n1 分钟 ，")
    assert chinese.equation == ("*", "/", "n1", "-", "n0", "1", "-", "n2", "1")
    assert chinese.answer == 1.6
    assert [example.answer for example in examples[3:]] == [96.0, 19.75, 15.0]


def test_read_mwptoolkit_json_names_the_line_of_a_bad_record(tmp_path):
    records = [
        mwptoolkit_record(1, "Add 2 and 3", "x=2+3", 5),
        mwptoolkit_record(2, "Speed 60 and 40", "40/(60+x)=1", 20),
        mwptoolkit_record(3, "Add 2 and 3", "x=2/(3-3)", 5),
        {"id": 4, "original_text": "no equation"},
        mwptoolkit_record(5, "Add 2 and 3", "x=2+3", "five"),
        mwptoolkit_record(1, "Add 2 and 3", "x=2+3", 5),
        [1, 2],
    ]
    path = write(tmp_path, "bad.json", json.dumps(records, indent=1))
    with pytest.raises(DataFormatError, match="record 2: cannot solve for x: the equation is not linear") as caught:
        read_mwptoolkit_json(path)
    assert caught.value.line == 9  # "[" and the 7 lines of the first record come before it
    skipped = []
    assert len(read_mwptoolkit_json(path, lenient=True, skipped=skipped)) == 1
    reasons = [error.reason for error in skipped]
    assert "division by zero" in reasons[1]
    assert reasons[2] == "missing key(s) equation, ans"
    assert reasons[3] == "the answer 'five' is not a number"
    assert reasons[4].startswith("id '1' was already used on line 2")
    assert reasons[5] == "a record must be a JSON object, got list"


@pytest.mark.parametrize(
    ("content", "line"), [('[{"id": 1,\n "x": }]', 2), ('{"id": 1}', 1), ("[1, 2] [3]", 1), ('[{"id": 1}', 1)]
)
def test_broken_json_is_an_error_even_when_lenient(tmp_path, content, line):
    path = write(tmp_path, "broken.json", content)
    with pytest.raises(DataFormatError, match="invalid JSON") as caught:
        read_mwptoolkit_json(path, lenient=True)
    assert caught.value.line == line


def test_read_mwptoolkit_json_reports_non_utf8_text(tmp_path):
    good = json.dumps(mwptoolkit_record(1, "Add 2 and 3", "x=2+3", 5)).encode()
    bad = b'{"id": 2, "original_text": "Caf\xe9 2 and 3", "equation": "x=2+3", "ans": 5}'
    path = write(tmp_path, "latin1.json", b"[\n" + good + b",\n" + bad + b"\n]")
    with pytest.raises(DataFormatError, match="not UTF-8") as caught:
        read_mwptoolkit_json(path)
    assert caught.value.line == 3
    assert len(read_mwptoolkit_json(path, lenient=True)) == 1


def test_an_empty_json_list_has_no_examples(tmp_path):
    assert read_mwptoolkit_json(write(tmp_path, "none.json", "[ ]\n")) == []


# --- jsonl ------------------------------------------------------------------------------------


def test_write_jsonl_then_read_jsonl_round_trips(tmp_path):
    examples = [
        Example("a", "Jerry had 135 pens.", "Jerry had n0 pens .", ("135",), ("-", "n0", "19"), 116.0),
        Example("b", "一 共有 (1/4)kg", "一 共有 n0 kg", ("(1/4)", "-2"), ("*", "n0", "n1"), -0.5),
    ]
    path = tmp_path / "out" / "examples.jsonl"
    write_jsonl(examples, path)
    assert read_jsonl(path) == examples
    assert "一 共有" in path.read_text(encoding="utf-8")
    assert [p.name for p in path.parent.iterdir()] == ["examples.jsonl"]  # no temporary file left


def test_write_jsonl_leaves_an_existing_file_whole_when_it_fails(tmp_path):
    path = tmp_path / "examples.jsonl"
    path.write_text("old\n")
    with pytest.raises(TypeError):
        write_jsonl([Example("a", "t", "t", (), ("1",), object())], path)
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["examples.jsonl"]


RECORD_FIELDS = '"id": "a", "text": "t", "masked_text": "t"'


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ('{"id": "a"}', "missing field"),
        ('{%s, "numbers": [], "equation": ["1"], "answer": 1, "extra": 0}' % RECORD_FIELDS, "unknown field"),
        ('{%s, "numbers": ["x"], "equation": ["1"], "answer": 1}' % RECORD_FIELDS, "'x' is not a number"),
        ('{%s, "numbers": [], "equation": "+ 1 1", "answer": 1}' % RECORD_FIELDS, "list of strings"),
        ('{%s, "numbers": [], "equation": ["+", "1"], "answer": 1}' % RECORD_FIELDS, "operand"),
        ('{%s, "numbers": [], "equation": ["n0"], "answer": 1}' % RECORD_FIELDS, "n0 refers"),
        ('{%s, "numbers": [], "equation": ["1"], "answer": "1"}' % RECORD_FIELDS, "answer must be a number"),
        ('{"id": 1, "text": "t", "masked_text": "t", "numbers": [], "equation": ["1"], "answer": 1}',
         "id must be a string"),
        ("[1]", "JSON object"),
        ("{oops", "invalid JSON"),
    ],
)
def test_read_jsonl_names_the_line_and_reason_of_a_bad_record(tmp_path, record, reason):
    good = '{"id": "g", "text": "t", "masked_text": "t", "numbers": ["2"], "equation": ["n0"], "answer": 2}'
    path = write(tmp_path, "bad.jsonl", good + "\n\n" + record + "\n")
    with pytest.raises(DataFormatError, match=reason) as caught:
        read_jsonl(path)
    assert caught.value.line == 3
    skipped = []
    assert [example.id for example in read_jsonl(path, lenient=True, skipped=skipped)] == ["g"]
    assert len(skipped) == 1


@pytest.mark.parametrize("answer", [math.nan, math.inf, -math.inf])
def test_read_jsonl_refuses_an_answer_that_is_not_finite(tmp_path, answer):
    # No equation can be scored against NaN or infinity: every prediction would count as wrong without a word.
    path = tmp_path / "problems.jsonl"
    write_jsonl([Example("a", "t", "t", ("3",), ("n0",), 3.0), Example("b", "t", "t", ("3",), ("n0",), answer)], path)
    with pytest.raises(DataFormatError, match=f"problems.jsonl:2: the answer {answer} is not a finite number"):
        read_jsonl(path)


# --- detect_format and read_examples ----------------------------------------------------------


# --- svamp_json --------------------------------------------------------------------------------


def svamp_record(id, body, question, equation, answer, type="Subtraction"):
    return {"ID": id, "Body": body, "Question": question, "Equation": equation, "Answer": answer, "Type": type}


def test_read_svamp_json_joins_body_and_question_and_masks_the_numbers(tmp_path):
    records = [
        svamp_record("chal-2", "Dan had $ 3 left with him after he bought a candy bar. If he had $ 4 at the start",
                     "How much did the candy bar cost?", "( 4.0 - 3.0 )", 1.0),
        svamp_record("chal-9", "Each box holds 12 pens . Tom has 5 boxes .", "How many pens does Tom have?",
                     "( 12.0 * 5.0 )", 60, "Multiplication"),
    ]
    path = write(tmp_path, "SVAMP.json", json.dumps(records, indent=4))
    examples = read_svamp_json(path)
    assert [example.id for example in examples] == ["chal-2", "chal-9"]
    assert examples[0].text == ("Dan had $ 3 left with him after he bought a candy bar. If he had $ 4 at the start "
                                "How much did the candy bar cost?")
    assert examples[0].numbers == ("3", "4") and examples[0].equation == ("-", "n1", "n0")
    assert examples[0].answer == 1.0 and examples[1].equation == ("*", "n0", "n1") and examples[1].answer == 60.0
    assert detect_format(path) == "svamp_json" and read_examples(path) == examples
    assert detect_format(write(tmp_path, "m.json", json.dumps([mwptoolkit_record(1, "a 1", "x=1", 1)]))) == \
        "mwptoolkit_json"


def test_read_svamp_json_names_the_line_and_reason_of_a_bad_record(tmp_path):
    records = [
        svamp_record("a", "Add 2 and 3 .", "How many?", "( 2.0 + 3.0 )", 5),
        {"ID": "b", "Body": "Add 2 and 3 .", "Question": "How many?", "Answer": 5},
        svamp_record("c", "Add 2 and 3 .", "How many?", "( 2.0 + 3.0 )", 6),
        svamp_record("d", "Add 2 and 3 .", "How many?", "( 2.0 / ( 3.0 - 3.0 ) )", 1),
    ]
    path = write(tmp_path, "SVAMP.json", json.dumps(records, indent=1))
    with pytest.raises(DataFormatError, match="missing key\\(s\\) Equation") as caught:
        read_svamp_json(path)
    assert caught.value.path == str(path) and caught.value.line == 10
    skipped, contradicting = [], []
    examples = read_svamp_json(path, lenient=True, skipped=skipped, contradicting=contradicting)
    assert [example.id for example in examples] == ["a", "c"]  # c is kept, its answer contradicting its equation
    assert "division by zero" in skipped[1].reason and len(contradicting) == 1


def test_detect_format_uses_content_and_extension(tmp_path):
    assert detect_format(write(tmp_path, "a.csv", SVAMP_HEADER + SVAMP_ROW)) == "svamp_csv"
    assert detect_format(write(tmp_path, "b.csv", "\ufeffQuestion,Equation\nq 1,x=1\n")) == "question_equation_csv"
    assert detect_format(write(tmp_path, "c.json", "\n [ ]")) == "mwptoolkit_json"
    assert detect_format(write(tmp_path, "d.txt", '{"id": "a"}\n')) == "jsonl"
    with pytest.raises(DataFormatError, match="unknown format"):
        detect_format(write(tmp_path, "e.csv", "Problem,Solution\n"))
    with pytest.raises(DataFormatError, match="must hold a list"):
        detect_format(write(tmp_path, "f.json", "Question,Equation\n"))


def test_read_examples_dispatches_on_the_detected_or_given_format(tmp_path):
    path = write(tmp_path, "data.txt", SVAMP_HEADER + SVAMP_ROW)
    assert read_examples(path) == read_svamp_csv(path)
    skipped = []
    assert read_examples(path, "question_equation_csv", lenient=True, skipped=skipped) == []
    assert "number0" in skipped[0].reason  # "number0" read as an unknown name of the equation
    with pytest.raises(ConfigError, match="unknown word-problem format"):
        read_examples(path, "xml")
    assert set(FORMATS) == {"svamp_csv", "svamp_json", "mwptoolkit_json", "question_equation_csv", "jsonl"}


# --- rows whose answer contradicts their own equation ------------------------------------------------------------


def svamp_row(numbers, equation, answer):
    return f'Share number0 by number1 .,{numbers},{equation},{answer},"[]",b,q\n'


def test_a_row_whose_answer_contradicts_its_equation_is_kept_and_counted(tmp_path):
    path = write(tmp_path, "dev.csv", SVAMP_HEADER + SVAMP_ROW + SVAMP_ROW.replace(",6,", ",7,"))
    contradicting = []
    examples = read_svamp_csv(path, contradicting=contradicting)
    assert [example.answer for example in examples] == [6.0, 7.0]  # kept, not dropped
    (error,) = contradicting
    assert (error.path, error.line) == (str(path), 3)
    assert "the answer 7 contradicts the row's own equation 8 - 2, whose value is 6" in str(error)
    assert read_examples(path, contradicting=[]) == examples


def test_strict_reading_refuses_a_contradicting_row_naming_file_line_and_reason(tmp_path):
    path = write(tmp_path, "dev.csv", SVAMP_HEADER + SVAMP_ROW + SVAMP_ROW.replace(",6,", ",7,"))
    for lenient in (False, True):  # lenient skips malformed rows; a contradicting one is no malformed row
        with pytest.raises(DataFormatError, match=r"dev.csv:3: the answer 7 contradicts .*strict reading refuses"):
            read_examples(path, strict=True, lenient=lenient)


def test_a_reader_given_no_list_warns_of_contradicting_rows(tmp_path, caplog):
    path = write(tmp_path, "dev.csv", SVAMP_HEADER + SVAMP_ROW.replace(",6,", ",7,") * 2)
    with caplog.at_level("WARNING", logger="neuromath"):
        assert len(read_examples(path)) == 2
    assert "2 rows whose answer contradicts their own equation, kept" in caplog.text
    assert "neuromath data check" in caplog.text


@pytest.mark.parametrize(
    ("numbers", "equation", "answer", "contradicts"),
    [
        ("10.0 3.0", "/ number0 number1", "3.333", False),  # rounded to 3 places: within half a unit
        ("10.0 3.0", "/ number0 number1", "3.33333", False),
        ("10.0 3.0", "/ number0 number1", "3.3", False),  # 10/3 rounds to 3.3
        ("10.0 3.0", "/ number0 number1", "3.4", True),
        ("10.0 3.0", "/ number0 number1", "3.0", True),  # 3.0 is written as the integer 3, exact
        ("10.0 3.0", "/ number0 number1", "3.3333333333333335", False),
        ("1.0 3.0", "/ number0 number1", "0.333", False),  # beyond value accuracy's 1e-4, within the rounding
        ("1.0 3.0", "/ number0 number1", "0.335", True),
        ("100000.0 3.0", "+ number0 number1", "100003.5", False),  # within value accuracy's relative 1e-4
        ("100000.0 3.0", "+ number0 number1", "100015", True),
        ("40.0 7.0", "/ number0 number1", "5.0", True),  # MAWPS fold 0: 40 / 7 answered 5
        ("8.0 2.0", "- number0 number1", "-6", True),  # the sign counts
    ],
)
def test_an_answer_agrees_with_its_equation_within_its_rounding(tmp_path, numbers, equation, answer, contradicts):
    path = write(tmp_path, "dev.csv", SVAMP_HEADER + svamp_row(numbers, equation, answer))
    contradicting = []
    read_svamp_csv(path, contradicting=contradicting)
    assert len(contradicting) == contradicts


def test_json_answers_are_checked_with_the_record_named(tmp_path):
    records = [
        mwptoolkit_record(1, "He has 56 books in each of his 9 shelves .", "x=56*9", 504.0),
        mwptoolkit_record(67, "He has 56 books in each of his 9 shelves .", "x=56*9", 8.5),
        mwptoolkit_record(3, "5 cakes cut in 6", "x=5/6", "((5)/(6))"),  # an exact fraction
        mwptoolkit_record(4, "5 cakes cut in 6", "x=5/6", "((4)/(6))"),
    ]
    path = write(tmp_path, "MAWPS.json", json.dumps(records))  # one line, as MAWPS.json is
    contradicting = []
    assert len(read_mwptoolkit_json(path, contradicting=contradicting)) == 4
    assert [str(error) for error in contradicting] == [
        f"{path}:1: record 67: the answer 8.5 contradicts the row's own equation 56 * 9, whose value is 504",
        f"{path}:1: record 4: the answer ((4)/(6)) contradicts the row's own equation 5 / 6, whose value is "
        "0.8333333333",
    ]


def test_jsonl_answers_are_checked_and_question_equation_answers_are_their_equations(tmp_path):
    example = Example(id="a", text="8 and 2", masked_text="n0 and n1", numbers=("8", "2"), equation=("-", "n0", "n1"),
                      answer=7.0)
    write_jsonl([example], tmp_path / "x.jsonl")
    contradicting = []
    read_jsonl(tmp_path / "x.jsonl", contradicting=contradicting)
    assert [error.line for error in contradicting] == [1]
    path = write(tmp_path, "qe.csv", "Question,Equation\n8 and 2,x=8-2\n")
    contradicting = []
    read_question_equation_csv(path, contradicting=contradicting)
    assert contradicting == []


REAL_CONTRADICTING = {  # file under the data root -> rows whose answer contradicts their equation (data check)
    "mawps-json/MAWPS.json": 27,
    "mawps-cv/fold0/train.csv": 8,
    "mawps-cv/fold0/dev.csv": 1,
    "asdiv-a-cv/fold0/dev.csv": 0,
    "math23k/validset.json": 0,
}


@pytest.mark.parametrize("name", sorted(REAL_CONTRADICTING))
def test_the_real_corpora_have_the_measured_contradicting_rows(name):
    from neuromath.dataroot import data_root

    path = data_root() / name
    if not path.is_file():
        pytest.skip(f"{name} is not under the data root {data_root()}")
    contradicting = []
    read_examples(path, lenient=True, skipped=[], contradicting=contradicting)
    assert len(contradicting) == REAL_CONTRADICTING[name]
    if name == "mawps-cv/fold0/dev.csv":
        assert [error.line for error in contradicting] == [288]  # 40 / 7 answered 5.0


def test_mawps_negative_numbers_are_masked_as_one_number_and_stay_in_the_equation():
    from neuromath.dataroot import data_root

    path = data_root() / "mawps-json/MAWPS.json"
    if not path.is_file():
        pytest.skip(f"MAWPS.json is not under the data root {data_root()}")
    examples = {example.id: example for example in read_examples(path, lenient=True, skipped=[], contradicting=[])}
    assert examples["446"].numbers == ("-2", "-15", "4", "-1")
    assert examples["446"].equation == ("*", "*", "*", "n0", "n1", "n2", "n3")
    assert examples["1339"].numbers == ("5", "2", "9", "-15")  # "... is negative fifteen"
    assert examples["1339"].equation == ("/", "-", "n2", "/", "neg", "n3", "n0", "n1")
