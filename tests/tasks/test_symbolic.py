import json

import pytest

from neuromath.cli import main
from neuromath.errors import DataFormatError
from neuromath.tasks import get_task
from neuromath.tasks.symbolic import (
    SymbolicExample,
    canonical,
    deduplicate,
    read_pairs,
    unique_by_input,
    write_pairs,
)


def pair(source: str, target: str, count: int = 1) -> SymbolicExample:
    return SymbolicExample(tuple(source.split()), tuple(target.split()), count)


def test_the_file_format_round_trips(tmp_path):
    path = tmp_path / "prim.txt"
    path.write_text("3|mul INT+ 2 x\tpow x INT+ 2\n\n1|sub Y' Y\tmul c exp x\n", encoding="utf-8")
    examples = read_pairs(path)
    assert [(e.count, e.source, e.target) for e in examples] == [
        (3, ("mul", "INT+", "2", "x"), ("pow", "x", "INT+", "2")),
        (1, ("sub", "Y'", "Y"), ("mul", "c", "exp", "x")),
    ]
    assert [e.kind for e in examples] == ["integration", "ode1"]
    assert [e.method for e in examples] == ["integration", "ode1"]  # no stats file: the kind
    assert examples[1].id == f"{path}:3" and examples[0].size == 1
    out = tmp_path / "copy.txt"
    write_pairs(examples, out)
    assert out.read_text(encoding="utf-8") == "3|mul INT+ 2 x\tpow x INT+ 2\n1|sub Y' Y\tmul c exp x\n"
    (tmp_path / "copy.txt.stats.json").write_text(json.dumps({"method": "backward"}))
    assert {e.method for e in read_pairs(out)} == {"backward"}


@pytest.mark.parametrize("line, reason", [
    ("mul INT+ 2 x\tpow x INT+ 2", "no '|'"),
    ("two|x\tx", "count 'two' is not an integer"),
    ("0|x\tx", "at least 1"),
    ("1|x x", "one tab"),
    ("1|x\tx\tx", "one tab"),
    ("1|add x\tx", "input: wrong arity"),
    ("1|x\tmul x 7", "output: stray digit"),
    ("1|x\tfoo", "output: unknown token 'foo'"),
])
def test_malformed_lines_name_file_line_and_reason(tmp_path, line, reason):
    path = tmp_path / "bad.txt"
    path.write_text(f"1|x\tx\n{line}\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match=f"bad.txt:2: .*{reason}"):
        read_pairs(path)
    skipped = []
    assert len(read_pairs(path, lenient=True, skipped=skipped)) == 1
    assert len(skipped) == 1 and skipped[0].line == 2


def test_canonical_forms_ignore_order_and_grouping_of_sums_and_products():
    assert canonical("add x add INT+ 1 x".split()) == canonical("add add x x INT+ 1".split())
    assert canonical("mul sin x mul INT+ 2 x".split()) == canonical("mul x mul sin x INT+ 2".split())
    assert canonical("sub x INT+ 1".split()) != canonical("sub INT+ 1 x".split())
    assert canonical("add x mul x INT+ 2".split()) != canonical("mul x add x INT+ 2".split())
    assert canonical("add x".split()) == "add x"  # malformed: its own key


def test_deduplication_counts_on_hand_built_files(tmp_path):
    train = tmp_path / "train.txt"
    test = tmp_path / "test.txt"
    write_pairs([
        pair("add x INT+ 1", "x"),                 # 0
        pair("add INT+ 1 x", "x", 2),               # duplicate of 0 (order)
        pair("cos x", "sin x"),                     # 2
        pair("mul INT+ 2 x", "pow x INT+ 2"),       # 3
        pair("cos x", "add sin x INT+ 1"),          # duplicate of 2 (same input, other output)
    ], train)
    write_pairs([
        pair("exp x", "exp x"),                     # new
        pair("mul x INT+ 2", "pow x INT+ 2"),       # in train (order)
        pair("exp x", "exp x", 4),                  # duplicate within test
        pair("sin x", "mul INT- 1 cos x"),          # new
        pair("cos x", "sin x"),                     # in train
    ], test)
    train_kept, test_kept, counts = deduplicate(read_pairs(train), read_pairs(test))
    assert counts.as_dict() == {"train_read": 5, "train_duplicates": 2, "test_read": 5, "test_duplicates": 1,
                                "test_in_train": 2, "train_kept": 3, "test_kept": 2}
    assert [e.source for e in test_kept] == [("exp", "x"), ("sin", "x")]
    assert test_kept[0].count == 5  # the counts of merged duplicates add up
    assert train_kept[0].count == 3
    assert main(["data", "dedup", str(train), str(test)]) == 0
    assert len(read_pairs(tmp_path / "train.dedup.txt")) == 3
    assert [e.source for e in read_pairs(tmp_path / "test.dedup.txt")] == [("exp", "x"), ("sin", "x")]


def test_dedup_command_prints_counts_as_json(tmp_path, capsys):
    train, test = tmp_path / "a.txt", tmp_path / "b"
    write_pairs([pair("x", "x"), pair("x", "x")], train)
    write_pairs([pair("x", "x"), pair("cos x", "sin x")], test)
    assert main(["data", "dedup", str(train), str(test), "--json", "--test-out", str(tmp_path / "t.txt")]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert (counts["train_duplicates"], counts["test_in_train"], counts["test_kept"]) == (1, 1, 1)
    assert counts["train_out"].endswith("a.dedup.txt") and counts["test_out"].endswith("t.txt")
    assert unique_by_input(read_pairs(tmp_path / "t.txt"))[1] == 0


def test_the_task_description():
    task = get_task("symbolic")
    example = pair("mul INT+ 2 x", "pow x INT+ 2")
    assert task.source_tokens(example) == ["mul", "INT+", "2", "x"]
    assert task.equation_matches(["pow", "x", "INT+", "2"], example)
    assert not task.equation_matches(["add", "pow", "x", "INT+", "2", "INT+", "1"], example)
    assert task.target_grammar.arity("add") == 2 and task.target_grammar.arity("sin") == 1
    assert "INT+" in task.target_grammar.number_starts


def test_generate_command_writes_pairs_stats_and_counts(tmp_path, capsys):
    out = tmp_path / "ode.txt"
    assert main(["generate", "symbolic", "--method", "ode1", "--n", "2", "--max-ops", "2", "--seed", "3",
                 "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "wrote 2 of 2 ode1 pairs" in printed and "tried" in printed
    examples = read_pairs(out)
    assert len(examples) == 2 and all(e.method == "ode1" and e.kind == "ode1" for e in examples)
    assert json.loads((tmp_path / "ode.txt.stats.json").read_text())["counts"]["kept"] == 2
