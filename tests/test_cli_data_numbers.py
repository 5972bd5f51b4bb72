"""neuromath data numbers (the quantities read from a text) and neuromath data check (malformed and contradicting
rows of word-problem files), through the command line."""

import json

import pytest

from neuromath.cli import main
from neuromath.config import load_config
from neuromath.errors import DataFormatError
from neuromath.tasks import get_task
from neuromath.training.run import prepare_data


def numbers_json(capsys, text):
    assert main(["data", "numbers", text, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["numbers"]


def test_data_numbers_reads_twelve_hundred_and_minus_five(capsys):
    assert numbers_json(capsys, "twelve hundred") == [{"text": "twelve hundred", "value": 1200, "start": 0, "end": 14}]
    assert numbers_json(capsys, "-5") == [{"text": "-5", "value": -5, "start": 0, "end": 2}]


def test_data_numbers_gives_each_quantity_its_span_and_a_json_value(capsys):
    text = "Jerry had twelve hundred pens, it was minus 5 degrees; add 2 1/2 cups, 25% more and 1/3 of 1,200."
    numbers = numbers_json(capsys, text)
    assert [(number["text"], number["value"]) for number in numbers] == [
        ("twelve hundred", 1200), ("minus 5", -5), ("2 1/2", 2.5), ("25%", 0.25), ("1/3", 1 / 3), ("1,200", 1200),
    ]
    assert all(text[number["start"] : number["end"]] == number["text"] for number in numbers)
    assert [type(number["value"]) for number in numbers] == [int, int, float, float, float, int]


def test_data_numbers_reads_subtraction_and_ranges_without_a_negative(capsys):
    assert [number["value"] for number in numbers_json(capsys, "What is 10-5, pages 3-5, or 10 minus 5?")] == [
        10, 5, 3, 5, 10, 5,
    ]


def test_data_numbers_leaves_what_it_cannot_read_as_text(capsys):
    assert numbers_json(capsys, "twelve hundredths and two thirds") == []
    assert main(["data", "numbers", "twelve hundredths"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "no numbers read" in captured.err


def test_data_numbers_prints_one_line_per_quantity(capsys):
    assert main(["data", "numbers", "He had twelve hundred pens and -5 more."]) == 0
    assert capsys.readouterr().out.splitlines() == ["1200\ttwelve hundred\t7-21", "-5\t-5\t31-33"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2^99999 grains", "the number '2^99999': power too large to compute"),
        ("a \udcff 5", "TEXT is not UTF-8 text"),
    ],
)
def test_data_numbers_bad_text_is_one_error_line(capsys, text, reason):
    assert main(["data", "numbers", text]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and reason in err and len(err.splitlines()) == 1


def test_data_numbers_help_has_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["data", "numbers", "--help"])
    assert "neuromath data numbers \"Jerry had twelve hundred pens" in capsys.readouterr().out


# --- data check and the contradicting column of data templates ----------------------------------------------------

HEADER = "Question,Numbers,Equation,Answer,group_nums,Body,Ques_Statement\n"
GOOD = 'Mary wants number0 cups . She put in number1 cups .,8.0 2.0,- number0 number1,6,"[]",b,q\n'
CONTRADICTING = GOOD.replace(",6,", ",7,")
MALFORMED = 'Mary wants number0 cups .,8.0,- number0 number1,6,"[]",b,q\n'


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "dev.csv"
    path.write_text(HEADER + GOOD + CONTRADICTING + MALFORMED, encoding="utf-8")
    return path


def test_data_check_lists_malformed_and_contradicting_rows(data_file, capsys):
    assert main(["data", "check", str(data_file)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{data_file}: 2 problems read, 1 malformed rows skipped, 1 rows whose answer contradicts " \
        "their own equation (kept)"
    assert out[1].startswith(f"  malformed: {data_file}:4: n1 refers to a number")
    assert out[2] == f"  contradicts: {data_file}:3: the answer 7 contradicts the row's own equation 8 - 2, whose " \
        "value is 6"
    assert main(["data", "check", str(data_file), "--json"]) == 0
    [result] = json.loads(capsys.readouterr().out)
    assert result["problems"] == 2
    assert [row["line"] for row in result["skipped"]] == [4]
    assert result["contradicting"] == [
        {"line": 3, "reason": "the answer 7 contradicts the row's own equation 8 - 2, whose value is 6"}
    ]


def test_data_check_strict_refuses_the_first_bad_row(data_file, tmp_path, capsys):
    assert main(["data", "check", str(data_file), "--strict"]) == 1
    assert capsys.readouterr().err.startswith(f"error: {data_file}:3: the answer 7 contradicts")
    only_malformed = tmp_path / "malformed.csv"
    only_malformed.write_text(HEADER + GOOD + MALFORMED, encoding="utf-8")
    assert main(["data", "check", str(only_malformed), "--strict"]) == 1
    assert capsys.readouterr().err.startswith(f"error: {only_malformed}:3: n1 refers to a number")


def test_data_templates_counts_contradicting_rows_and_strict_refuses_them(data_file, capsys):
    assert main(["data", "templates", str(data_file), "--lenient", "--json"]) == 0
    captured = capsys.readouterr()
    [row] = json.loads(captured.out)
    assert (row["examples"], row["skipped"], row["contradicting"]) == (2, 1, 1)
    assert f"{data_file}: 1 rows whose answer contradicts their own equation, kept" in captured.err
    assert main(["data", "templates", str(data_file), "--lenient"]) == 0
    assert f"| {data_file} | 2 | 1 | 1 | 0 | 1 | 1 |" in capsys.readouterr().out
    assert main(["data", "templates", str(data_file), "--lenient", "--strict"]) == 1
    assert "dev.csv:3: the answer 7 contradicts" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["augment", "vary", "unseen"])
def test_the_other_word_problem_data_commands_take_strict(data_file, tmp_path, capsys, command):
    out = str(tmp_path / "out.jsonl")
    arguments = {
        "augment": ["augment", str(data_file), "--out", out],
        "vary": ["vary", str(data_file), "--variation", "irrelevant_sentence", "--out", out],
        "unseen": ["unseen", str(data_file), "--train", str(data_file), "--out", out],
    }[command]
    assert main(["data", *arguments, "--lenient", "--strict"]) == 1
    assert "dev.csv:3: the answer 7 contradicts" in capsys.readouterr().err


def test_a_run_counts_contradicting_rows_in_data_json_and_data_strict_refuses_them(tmp_path, caplog):
    path = tmp_path / "train.csv"
    path.write_text(HEADER + GOOD + CONTRADICTING + GOOD, encoding="utf-8")
    overrides = ["data.task=word_problems", f"data.train={path}", f"data.test={path}"]
    config = load_config(None, overrides)
    prepared = prepare_data(config, get_task("word_problems"))
    assert len(prepared.train) + len(prepared.valid) == 3  # kept, not dropped
    [reason] = prepared.report["train"]["contradicting"]
    assert reason.startswith(f"{path}:3: the answer 7 contradicts")
    assert prepared.report["test"]["contradicting"] == [reason]
    assert f"{path}: 1 rows whose answer contradicts their own equation, kept" in caplog.text
    with pytest.raises(DataFormatError, match=r"train.csv:3: .*strict reading refuses such rows"):
        prepare_data(load_config(None, [*overrides, "data.strict=true"]), get_task("word_problems"))
