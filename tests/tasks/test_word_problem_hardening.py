"""Bad input to the word-problem readers, masking and solving ends in one clear error, never a traceback.

Each test is one case a reviewer reproduced: oversized CSV fields, numbers of thousands of digits, equations nested
thousands deep, numbers written in scientific notation or as powers, solutions without an answer, non-finite gold
answers and the malformed record of Math23K's test set.
"""

import json
import re

import pytest

from neuromath.api import Candidate, Solution, Solver
from neuromath.cli import main
from neuromath.config import DecodeConfig
from neuromath.dataroot import data_root
from neuromath.errors import DataFormatError, ExpressionError
from neuromath.tasks import get_task
from neuromath.tasks.word_problems import (
    describe_prediction,
    equation_value,
    mask_numbers,
    prepare_problem,
    read_examples,
    read_jsonl,
    read_mwptoolkit_json,
)

DATA = data_root()  # the benchmark corpora ($NEUROMATH_DATA; tests/conftest.py points it at ../shared/data)
HUGE_FIELD = "many words " * 20_000  # 220,000 characters, over the CSV module's limit of 131,072
JSONL_FIELDS = '"id": "a", "text": "t", "masked_text": "t"'


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


# --- 1. a CSV field over 128 KiB -----------------------------------------------------------------------------------

CSV_FILES = {
    "svamp.csv": (
        "Question,Numbers,Equation,Answer\n"
        f'"{HUGE_FIELD} number0 .",3,number0,3\n'
        "Tom has number0 apples and eats number1 .,5 2,- number0 number1,3\n"
    ),
    "mathqa.csv": f'Question,Equation\n"{HUGE_FIELD} 3",x=3\nTom has 5 apples and eats 2 .,x=5-2\n',
}


@pytest.mark.parametrize("name", sorted(CSV_FILES))
def test_a_csv_field_over_the_limit_names_file_and_row(tmp_path, name):
    path = write(tmp_path, name, CSV_FILES[name])
    with pytest.raises(DataFormatError) as caught:
        read_examples(path)
    assert str(caught.value) == f"{path}:2: a field is longer than the CSV limit of 131072 characters"


@pytest.mark.parametrize("name", sorted(CSV_FILES))
def test_a_csv_field_over_the_limit_is_skipped_and_reported_when_lenient(tmp_path, name):
    path = write(tmp_path, name, CSV_FILES[name])
    skipped = []
    (example,) = read_examples(path, lenient=True, skipped=skipped)
    assert example.id == "3" and example.answer == 3  # reading goes on at the next line
    assert [(error.line, error.reason) for error in skipped] == [
        (2, "a field is longer than the CSV limit of 131072 characters")
    ]


def test_a_header_over_the_csv_limit_is_an_error_even_when_lenient(tmp_path):
    path = write(tmp_path, "header.csv", f"Question,Equation,{'x' * 140_000}\nAdd 2 and 3,x=2+3\n")
    with pytest.raises(DataFormatError, match=r"header.csv:1: the header: a field is longer than the CSV limit"):
        read_examples(path, "question_equation_csv", lenient=True)


def test_data_templates_reports_an_oversized_field_instead_of_a_traceback(tmp_path, capsys):
    path = write(tmp_path, "mathqa.csv", CSV_FILES["mathqa.csv"])
    assert main(["data", "templates", str(path)]) == 1
    assert capsys.readouterr().err == f"error: {path}:2: a field is longer than the CSV limit of 131072 characters\n"
    assert main(["data", "templates", str(path), "--lenient", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)[0]["examples"] == 1 and json.loads(captured.out)[0]["skipped"] == 1
    assert f"skipped: {path}:2: a field is longer than the CSV limit" in captured.err


# --- 2. a number of more than 4,300 digits -------------------------------------------------------------------------


def test_a_number_too_long_to_read_in_a_problem_to_solve_is_a_clear_error():
    with pytest.raises(DataFormatError) as caught:
        prepare_problem(f"Tom has {'9' * 5000} apples and eats 2. How many are left?")
    assert str(caught.value) == "<input>: number literal '99999999999999999999999999999…' has 5000 digits; " \
        "at most 4300 are read"


def test_a_number_too_long_to_read_in_a_jsonl_record_names_the_line(tmp_path):
    good = '{%s, "numbers": ["2"], "equation": ["n0"], "answer": 2}' % JSONL_FIELDS
    huge = '{%s, "numbers": ["%s"], "equation": ["n0"], "answer": 2}' % (JSONL_FIELDS.replace('"a"', '"b"'), "9" * 5000)
    path = write(tmp_path, "huge.jsonl", good + "\n" + huge + "\n")
    with pytest.raises(DataFormatError) as caught:
        read_jsonl(path)
    assert str(caught.value) == (
        f"{path}:2: numbers: number literal '99999999999999999999999999999…' has 5000 digits; at most 4300 are read"
    )
    skipped = []
    assert [example.id for example in read_jsonl(path, lenient=True, skipped=skipped)] == ["a"]
    assert skipped[0].line == 2


def test_a_json_integer_too_long_to_decode_is_a_clear_error(tmp_path):
    huge_answer = '{%s, "numbers": ["2"], "equation": ["n0"], "answer": %s}' % (JSONL_FIELDS, "9" * 5000)
    path = write(tmp_path, "answer.jsonl", huge_answer + "\n")
    with pytest.raises(DataFormatError, match=r"answer.jsonl:1: cannot decode the line: a number has more than 4300"):
        read_jsonl(path)
    record = {"id": "1", "original_text": "2 apples", "segmented_text": "2 apples", "equation": "x=2"}
    text = json.dumps([record, record | {"id": "2"}], indent=1).replace('"x=2"\n }', '"x=2", "ans": %s}' % ("9" * 5000))
    path = write(tmp_path, "answer.json", text)
    with pytest.raises(DataFormatError, match=r"answer.json:2: cannot decode the record starting here: a number"):
        read_mwptoolkit_json(path, lenient=True)  # the JSON structure itself cannot be decoded


# --- 3. a prefix equation nested 2,000 deep ------------------------------------------------------------------------


def test_an_equation_nested_too_deeply_is_refused_on_its_line(tmp_path):
    deep = json.dumps(["neg"] * 2000 + ["n0"])
    record = '{%s, "numbers": ["2"], "equation": %s, "answer": 2}' % (JSONL_FIELDS, deep)
    path = write(tmp_path, "deep.jsonl", record + "\n")
    with pytest.raises(DataFormatError) as caught:
        read_jsonl(path)
    assert str(caught.value) == f"{path}:1: equation: expression nested too deeply: 2001 levels, at most 100 are read"
    assert read_jsonl(path, lenient=True) == []


def test_json_nested_thousands_deep_is_a_clear_error(tmp_path):
    path = write(tmp_path, "nested.jsonl", "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(DataFormatError, match="nested.jsonl:1: cannot decode the line: arrays or objects nested"):
        read_jsonl(path)
    path = write(tmp_path, "nested.json", "[\n" + "[" * 100_000 + "]" * 100_000 + "]")
    with pytest.raises(DataFormatError, match="nested.json:2: cannot decode the record starting here: arrays"):
        read_mwptoolkit_json(path)


# --- 4. scientific notation and powers are one number --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "masked", "numbers"),
    [
        ("What is 1e308 plus 1e308?", "What is n0 plus n1 ?", ("1" + "0" * 308, "1" + "0" * 308)),
        ("A 2^10 byte page and 3² cm", "A n0 byte page and n1 cm", ("1024", "9")),
        ("2.5E-3 kg and 1.5e+3 m", "n0 kg and n1 m", ("0.0025", "1500")),
        ("2**3 and 2^-2 and 3^-1 and 2^3^2", "n0 and n1 and n2 and n3", ("8", "0.25", "(1/3)", "512")),
        ("10⁻³ of 4³", "n0 of n1", ("0.001", "64")),
        ("the e5 key, mp3 files, 2 ^ 3 apart", "the e5 key , mp3 files , n0 ^ n1 apart", ("2", "3")),
    ],
)
def test_scientific_notation_and_powers_are_one_number_recorded_by_value(text, masked, numbers):
    assert mask_numbers(text) == (masked, numbers)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2^99999 grains", "the number '2^99999': power too large to compute"),
        ("1e5000 grains", "the number '1e5000': the value has more than 4300 digits"),
        ("0^-1 grains", "the number '0^-1': division by zero"),
    ],
)
def test_a_power_too_large_to_compute_is_a_clear_error(text, reason):
    with pytest.raises(ExpressionError, match=re.escape(reason)):
        mask_numbers(text)
    with pytest.raises(DataFormatError, match=re.escape(f"<input>: {reason}")):
        prepare_problem(text)


def test_the_sum_of_two_numbers_beyond_the_float_range_is_exact():
    example = prepare_problem("What is 1e308 plus 1e308?")
    record = describe_prediction(["+", "n0", "n1"], example)
    assert record["predicted_answer_text"] == "2" + "0" * 308
    assert record["predicted_value"] is None and record["reason"] is None  # no float holds it, the text does


# --- 5. a solution without an answer says why ----------------------------------------------------------------------


class EveryWord:
    """A source vocabulary that holds every word (no unknown-word note)."""

    def __contains__(self, token: str) -> bool:
        return True


class ScriptedSolver(Solver):
    """A Solver of the word_problems task whose model answers with fixed tokens (no trained run needed)."""

    tokens: tuple[str, ...] = ()

    def __init__(self, run_dir=None, device="cpu", **decode):
        self.task = get_task("word_problems")
        self.decode = DecodeConfig()
        self.source_vocab = EveryWord()

    def predict_nbest(self, examples, batch_size=None):
        return [[Candidate(self.tokens, 0.0, None)] for _ in examples]


@pytest.mark.parametrize(
    ("tokens", "reason"),
    [
        (("/", "n0", "-", "n1", "n1"), "division by zero"),
        (("^", "n0", "^", "n0", "n0"), "power too large to compute"),
        (("+", "n0"), "no well-formed equation: prefix tokens '+ n0': operator '+' at position 0 has 1 of its 2"),
        ((), "no well-formed equation: empty token list"),
    ],
)
def test_solve_says_why_there_is_no_answer(tokens, reason):
    ScriptedSolver.tokens = tokens
    solution = ScriptedSolver().solve("Tom has 135 apples and 19 pears.")
    assert solution.answer is None and solution.answer_text == "" and solution.reason.startswith(reason)
    assert str(solution).startswith(f"no answer: {reason}")


def test_solve_has_no_reason_when_there_is_an_answer():
    ScriptedSolver.tokens = ("-", "n0", "n1")
    solution = ScriptedSolver().solve("Tom has 135 apples and eats 19.")
    assert (solution.equation, solution.answer, solution.answer_text, solution.reason) == ("135 - 19", 116, "116", "")
    assert str(solution) == "135 - 19 = 116"


def test_the_solve_command_prints_the_reason_and_exits_non_zero(monkeypatch, capsys):
    monkeypatch.setattr("neuromath.api.load", lambda run_dir, **decode: ScriptedSolver())
    ScriptedSolver.tokens = ("/", "n0", "-", "n1", "n1")
    assert main(["solve", "run", "Tom has 135 apples and 19 pears."]) == 1
    assert capsys.readouterr().out == "no answer: division by zero (135 / (19 - 19))\n"
    assert main(["solve", "run", "Tom has 135 apples and 19 pears.", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["reason"] == "division by zero" and result["answer"] is None and result["answer_text"] == ""
    ScriptedSolver.tokens = ("-", "n0", "n1")
    assert main(["solve", "run", "Tom has 135 apples and eats 19.", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reason"] == ""


def test_the_solve_command_refuses_a_number_too_large_with_exit_2(monkeypatch, capsys):
    monkeypatch.setattr("neuromath.api.load", lambda run_dir, **decode: ScriptedSolver())
    assert main(["solve", "run", "What is 2^99999 plus 1?"]) == 2
    assert capsys.readouterr().err.startswith("error: <input>: the number '2^99999': power too large to compute")


def test_a_solution_str_names_the_reason():
    solution = Solution("t", "", None, "", ("+", "n0"), reason="no well-formed equation: ...")
    assert str(solution) == "no answer: no well-formed equation: ... (model output + n0)"


# --- 6. gold answers that are not finite ---------------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_jsonl_answer_that_is_not_finite_is_refused(tmp_path, answer):
    record = '{%s, "numbers": ["2"], "equation": ["n0"], "answer": %s}' % (JSONL_FIELDS, answer)
    path = write(tmp_path, "answers.jsonl", record + "\n")
    with pytest.raises(DataFormatError, match=r"answers.jsonl:1: the answer -?(nan|inf) is not a finite number"):
        read_jsonl(path)


@pytest.mark.parametrize("answer", ['"NaN"', "NaN", "Infinity", '"10^400"', "1e999"])
def test_an_mwptoolkit_answer_that_is_not_finite_is_refused(tmp_path, answer):
    text = '[{"id": "7", "original_text": "2 apples", "equation": "x=2", "ans": %s}]' % answer
    path = write(tmp_path, "answers.json", text)
    with pytest.raises(DataFormatError, match=r"answers.json:1: the answer .* is not a (finite )?number"):
        read_mwptoolkit_json(path)


@pytest.mark.parametrize("answer", ["nan", "inf", "-Infinity", "1e999"])
def test_an_svamp_answer_that_is_not_finite_is_refused(tmp_path, answer):
    path = write(tmp_path, "svamp.csv", f"Question,Numbers,Equation,Answer\nTom has number0 .,2,number0,{answer}\n")
    with pytest.raises(DataFormatError, match=r"svamp.csv:2: the answer -?(nan|inf) is not a finite number"):
        read_examples(path)


def test_a_mask_with_thousands_of_digits_is_an_unknown_token_on_its_line(tmp_path):
    """Found by the reader fuzz test with a random seed: int() of a 5,001-digit mask index raised ValueError."""
    mask = "number" + "0" * 5001
    path = write(tmp_path, "svamp.csv", f"Question,Numbers,Equation,Answer\nTom has number0 .,2,+ number0 {mask},2\n")
    with pytest.raises(DataFormatError, match=r"svamp.csv:2: unknown token"):
        read_examples(path)
    with pytest.raises(ExpressionError):
        equation_value(["+", "n0", "n" + "0" * 5001], ["2"])


# --- 7. the malformed record of Math23K's test set -----------------------------------------------------------------


def test_math23k_testset_has_one_record_whose_equation_carries_units():
    path = DATA / "math23k" / "testset.json"
    if not path.exists():
        pytest.skip(f"the benchmark data is not under the data root {DATA}")
    with pytest.raises(DataFormatError) as caught:
        read_examples(path)
    # x=80千米/小时 ("80 km / hour"): the record is malformed, the reader is right to refuse it.
    assert str(caught.value) == (
        f"{path}:1129: record 10431: equation 'x=80千米/小时': cannot parse '80千米/小时' at position 2: "
        "missing operator before '千米'"
    )
    skipped = []
    assert len(read_examples(path, lenient=True, skipped=skipped)) == 2316
    assert [error.line for error in skipped] == [1129]


# --- found by tests/fuzz/test_fuzz_word_problems.py ----------------------------------------------------------------


def test_an_equation_whose_value_is_beyond_the_float_range_is_a_bad_row(tmp_path):
    path = write(tmp_path, "mathqa.csv", f"Question,Equation\nAdd 2 and 3 ?,x=2+3\nWhat is 7 ?,{'9' * 400}\n")
    with pytest.raises(DataFormatError, match=r"mathqa.csv:3: the value of equation '9999.*' is beyond the range of a"):
        read_examples(path)
    assert [example.answer for example in read_examples(path, lenient=True)] == [5.0]


def test_a_segmented_text_that_is_not_a_string_is_a_bad_record(tmp_path):
    text = '[{"id": "1", "original_text": "2 apples", "segmented_text": [], "equation": "x=2", "ans": 2}]'
    path = write(tmp_path, "segmented.json", text)
    with pytest.raises(DataFormatError, match="segmented.json:1: original_text, segmented_text and equation must be"):
        read_mwptoolkit_json(path)
