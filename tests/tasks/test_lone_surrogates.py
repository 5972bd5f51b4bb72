"""A lone surrogate escaped in JSON (``"\\ud800"``) is refused by every JSON reader of the tasks with the file and
the line: it used to pass the readers and crash ``train`` and ``evaluate`` when they wrote it out."""

import json

import pytest

from neuromath.errors import DataFormatError
from neuromath.expr.equation_tree import apply, symbol
from neuromath.tasks.identities import equation_record, read_candidates, read_equations
from neuromath.tasks.json_text import check_text, lone_surrogate_in
from neuromath.tasks.word_problems import read_jsonl, read_mwptoolkit_json

X = symbol("var_0")
LONE = ["\ud800", "\udfff", "a\udc80b"]  # high, low, and the range surrogateescape uses for bytes that are not UTF-8


def jsonl_record(identifier, text="He has 5 apples", **changes):
    record = {"id": identifier, "text": text, "masked_text": "He has n0 apples", "numbers": ["5"], "equation": ["n0"],
              "answer": 5}
    return {**record, **changes}


def test_the_check_finds_a_lone_surrogate_in_any_key_or_value_at_any_depth():
    assert lone_surrogate_in({"a": ["b", {"c": ["\U0001f600"]}]}) is None  # a pair is one character: text
    assert lone_surrogate_in({"a": [1, {"c": ["x\ud800"]}]}) == "x\ud800"
    assert lone_surrogate_in({"\udfff": 1}) == "\udfff"
    deep = "\ud800"
    for _ in range(5000):  # deeper than the recursion limit
        deep = [deep]
    assert lone_surrogate_in(deep) == "\ud800"
    with pytest.raises(DataFormatError, match=r"f\.json:3: .*lone surrogate \\ud800, half of a character pair"):
        check_text({"t": "ab\ud800"}, "f.json", 3)


@pytest.mark.parametrize("lone", LONE)
@pytest.mark.parametrize("field", ["id", "text", "masked_text", "numbers"])
def test_read_jsonl_refuses_a_lone_surrogate_with_the_file_and_line(tmp_path, lone, field):
    bad = jsonl_record("b", **{field: [lone] if field == "numbers" else lone})
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in [jsonl_record("a"), bad]) + "\n", encoding="utf-8")
    assert "\\ud" in path.read_text() and path.read_text().isascii()  # escaped in the file, as JSON allows
    with pytest.raises(DataFormatError, match="lone surrogate") as caught:
        read_jsonl(path)
    assert (caught.value.path, caught.value.line) == (str(path), 2)
    skipped: list = []
    assert [example.id for example in read_jsonl(path, lenient=True, skipped=skipped)] == ["a"]
    assert [error.line for error in skipped] == [2]


def test_read_jsonl_keeps_a_character_escaped_as_a_pair(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(jsonl_record("a", text="He has 5 \U0001f34e")) + "\n", encoding="utf-8")
    assert "\\ud83c\\udf4e" in path.read_text()
    assert read_jsonl(path)[0].text == "He has 5 \U0001f34e"


@pytest.mark.parametrize("field", ["id", "original_text", "segmented_text", "equation", "ans"])
def test_read_mwptoolkit_json_refuses_a_lone_surrogate_with_the_file_and_line(tmp_path, field):
    good = {"id": "1", "original_text": "Add 2 and 3", "segmented_text": "Add 2 and 3", "equation": "x=2+3", "ans": 5}
    path = tmp_path / "MAWPS.json"
    path.write_text(json.dumps([good, {**good, "id": "2", field: "\ud800"}], indent=1), encoding="utf-8")
    with pytest.raises(DataFormatError, match="lone surrogate") as caught:
        read_mwptoolkit_json(path)
    assert caught.value.path == str(path)
    assert path.read_text().splitlines()[caught.value.line - 1].strip() == "{"  # the bad record's opening brace
    assert caught.value.line > 2


@pytest.mark.parametrize("where", ["label", "extra", "vars"])
def test_read_equations_and_read_candidates_refuse_a_lone_surrogate_with_the_file_and_line(tmp_path, where):
    good = {"equation": equation_record(apply("Equality", X, X)), "label": "1"}
    if where == "vars":
        bad = {**good, "equation": {**good["equation"], "vars": good["equation"]["vars"] + "\ud800"}}
    else:
        bad = {**good, where: "\udc80"}
    for reader, records in ((read_equations, (good, bad)), (read_candidates, ({**good, "class": "a"}, {**bad,
                                                                                                       "class": "b"}))):
        path = tmp_path / f"{reader.__name__}.json"
        path.write_text(json.dumps([[], list(records)], indent=4), encoding="utf-8")
        with pytest.raises(DataFormatError, match="lone surrogate") as caught:
            reader(path)
        line = path.read_text().splitlines().index("        {", 10) + 1  # the second record's opening brace
        assert (caught.value.path, caught.value.line) == (str(path), line)
    skipped: list = []
    assert len(read_equations(tmp_path / "read_equations.json", lenient=True, skipped=skipped)) == 1
    assert len(skipped) == 1
