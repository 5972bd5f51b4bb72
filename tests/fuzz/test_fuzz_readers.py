"""Fuzzing the readers of the symbolic, Mathematics Dataset and identities tasks, and the symbolic verifier: whatever
the bytes, a reader returns records or raises a NeuromathError (strict and lenient), and the verifier gives every
token sequence a verdict, never another exception.

Each reader starts from a small valid file of its format (built here; the identities one also from the shared data
when it is there), mutated first at the level of its records (columns and fields deleted, duplicated or replaced by
nasty values: huge fields and numbers, 3,000 nested operators) and then of its bytes (truncation at a random byte,
flipped and inserted bytes, invalid UTF-8, deeply nested brackets). CI runs derandomised (the profile of
tests/conftest.py); ``--hypothesis-profile random`` draws fresh cases.
"""

import copy
import dataclasses
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import mutated_bytes

from neuromath.dataroot import data_root
from neuromath.errors import DataFormatError, NeuromathError
from neuromath.expr.symbolic_prefix import ARITIES, CONSTANTS, FUNCTION_LEAVES
from neuromath.tasks.identities.equations import read_candidates, read_equations
from neuromath.tasks.json_text import lone_surrogate_in
from neuromath.tasks.mathematics_dataset.release import read_examples, read_module_file
from neuromath.tasks.symbolic import SymbolicExample, read_pairs
from neuromath.tasks.symbolic.verify import VERDICTS, verdicts

READER_EXAMPLES = 1000  # per reader, each file read strict and lenient
VERIFIER_EXAMPLES = 500  # random token sequences, most of them malformed (no worker needed)
WELL_FORMED_EXAMPLES = 200  # random well-formed hypotheses, checked by SymPy in the worker pool
FUZZ_SETTINGS = settings(
    deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)  # on top of the profile in force (derandomised in CI)
SHARED_IDENTITIES = data_root() / "identities" / "40k_test_blank_0.json"  # tests/conftest.py: ../shared/data

SYMBOLIC_LINES = [
    "1|mul INT+ 2 x\tpow x INT+ 2",
    "3|cos x\tsin x",
    "1|add mul INT- 3 sin mul INT+ 3 x exp x\tadd cos mul INT+ 3 x exp x",
    "2|add mul Y' x Y\tmul c inv x",
]
MATHEMATICS_LINES = [
    "Solve 3*d = -5*d + 16 for d.", "2",
    "What is the value of (-4)/(-10)*(-10)/2?", "-2",
    "Let f(x) = x**2. Calculate f(3).", "9",
]
IDENTITY_RECORDS = [  # depth 1: x = x; depth 2: x + 1 = 1 + x (label 1), sin(x) = x (label 0)
    [],
    [{"equation": {"func": "Equality,Symbol,#,#,Symbol,#,#", "vars": ",var_0,#,#,var_0,#,#"}, "label": "1"}],
    [
        {"equation": {"func": "Equality,Add,Symbol,#,#,One,#,#,Add,One,#,#,Symbol,#,#",
                      "vars": ",,var_0,#,#,1,#,#,,1,#,#,var_0,#,#"}, "label": "1"},
        {"equation": {"func": "Equality,sin,Symbol,#,#,#,Symbol,#,#", "vars": ",,var_0,#,#,#,var_0,#,#"},
         "label": "0", "blankNodeNum": "2"},
    ],
]

DEEP = 3000
NASTY_STRINGS = [
    "", " ", "\t", "|", "#", ",", "x" * 100_000, "9" * 5000, "INT+ " + " ".join("9" * 5000), "1e999", "NaN",
    " ".join(["sin"] * DEEP + ["x"]), " ".join(["add x"] * DEEP + ["x"]), ",".join(["sin", "#"] * DEEP),
    "\x00", "\ud800", "一二三", "INT- 0", "0|x\tx", "-1", "var_9", "Pi", "Float", "Equality",
]
NASTY_JSON_VALUES = [None, True, 0, -1, 1.5, 10**400, [], {}, [[]], {"func": "Symbol"}, *NASTY_STRINGS]
# drawn as copies: a drawn {} can become a record's "equation" and be mutated there by a later draw, which would
# change this list for every later example (hypothesis then calls the strategy flaky: the same choices, other data)
NASTY_JSON = st.sampled_from(NASTY_JSON_VALUES).map(copy.deepcopy)


def mutate_list(draw, items: list, replacements) -> None:
    """Delete, duplicate or replace one item of ``items`` (in place), or add one."""
    action = draw(st.sampled_from(["delete", "duplicate", "replace", "replace", "append"]))
    position = draw(st.integers(0, max(0, len(items) - 1)))
    if action == "delete" and items:
        del items[position]
    elif action == "duplicate" and items:
        items.insert(position, items[position])
    elif action == "replace" and items:
        items[position] = draw(replacements)
    else:
        items.append(draw(replacements))


@st.composite
def mutated_symbolic(draw) -> str:
    """A ``count|input<TAB>output`` file with a few of its lines, columns or tokens mutated."""
    lines = list(SYMBOLIC_LINES)
    for _ in range(draw(st.integers(1, 3))):
        if not lines:
            break
        index = draw(st.integers(0, len(lines) - 1))
        count, _, pair = lines[index].partition("|")
        columns = [count, *pair.split("\t")]
        level = draw(st.sampled_from(["line", "column", "token"]))
        if level == "line":
            mutate_list(draw, lines, st.sampled_from(NASTY_STRINGS + SYMBOLIC_LINES) | st.text(max_size=20))
            continue
        if level == "column":
            mutate_list(draw, columns, st.sampled_from(NASTY_STRINGS) | st.text(max_size=10))
        else:
            column = draw(st.integers(0, len(columns) - 1))
            tokens = columns[column].split()
            vocabulary = sorted(ARITIES) + ["INT+", "INT-", "0", "7", "x", *FUNCTION_LEAVES, *CONSTANTS, "?"]
            mutate_list(draw, tokens, st.sampled_from(vocabulary + NASTY_STRINGS))
            columns[column] = " ".join(tokens)
        lines[index] = f"{columns[0]}|" + "\t".join(columns[1:]) if columns else ""
    return "".join(line + "\n" for line in lines)


@st.composite
def mutated_mathematics(draw) -> str:
    """A module file (question line, answer line, ...) with a few lines deleted, duplicated or replaced."""
    lines = list(MATHEMATICS_LINES)
    for _ in range(draw(st.integers(1, 3))):
        mutate_list(draw, lines, st.sampled_from(NASTY_STRINGS) | st.text(max_size=20))
    return "".join(line + "\n" for line in lines)


def identity_seeds() -> list:
    """The built-in records, and the first records of the shared completion file when it is there."""
    seeds = [IDENTITY_RECORDS]
    if SHARED_IDENTITIES.exists():
        groups = json.loads(SHARED_IDENTITIES.read_text(encoding="utf-8"))
        seeds.append([group[:2] for group in groups])
    return seeds


@st.composite
def mutated_identities(draw) -> str:
    """A depth-indexed JSON list of records with a few fields, entries of ``func`` / ``vars`` or records mutated."""
    groups = json.loads(json.dumps(draw(st.sampled_from(identity_seeds()))))  # a deep copy
    for _ in range(draw(st.integers(1, 3))):
        filled = [group for group in groups if group]
        if not filled:
            break
        group = draw(st.sampled_from(filled))
        record = draw(st.sampled_from(group))
        level = draw(st.sampled_from(["record", "field", "entries", "entries"]))
        if level == "record" or not isinstance(record, dict) or not isinstance(record.get("equation"), dict):
            mutate_list(draw, group, NASTY_JSON)
        elif level == "field":
            target = draw(st.sampled_from([record, record["equation"]]))
            key = draw(st.sampled_from(sorted(target) + ["extra"]))
            action = draw(st.sampled_from(["delete", "replace", "replace"]))
            if action == "delete":
                target.pop(key, None)
            else:
                target[key] = draw(NASTY_JSON | st.text(max_size=10))
        else:
            equation = record["equation"]
            key = draw(st.sampled_from(["func", "vars"]))
            if isinstance(equation.get(key), str):
                entries = equation[key].split(",")
                mutate_list(draw, entries, st.sampled_from(["#", "", "Add", "sin", "Symbol", "One", "var_0", "x"]
                                                          + NASTY_STRINGS))
                equation[key] = ",".join(entries)
    # written as UTF-8, a lone surrogate is invalid bytes; escaped ("\ud800"), it is valid JSON the reader must refuse
    return json.dumps(groups, indent=1, ensure_ascii=draw(st.booleans()))


def assert_reads_or_refuses(read, path: Path, lenient_mode: bool = True) -> None:
    """``read(path, lenient=..., skipped=...)`` returns a list or raises NeuromathError; every skipped row is a
    DataFormatError that names its line, and no record returned holds a lone surrogate."""
    for lenient in (False, True) if lenient_mode else (False,):
        skipped: list = []
        try:
            records = read(path, lenient=lenient, skipped=skipped) if lenient_mode else read(path)
        except NeuromathError:
            continue
        assert isinstance(records, list)
        assert all(isinstance(error, DataFormatError) and error.line is not None for error in skipped)
        assert lone_surrogate_in([dataclasses.asdict(record) for record in records
                                  if dataclasses.is_dataclass(record)]) is None


@settings(FUZZ_SETTINGS, max_examples=READER_EXAMPLES)
@given(content=mutated_symbolic().flatmap(mutated_bytes))
def test_the_symbolic_reader_returns_pairs_or_raises_a_neuromath_error(tmp_path, content):
    path = tmp_path / "pairs.txt"
    path.write_bytes(content)
    assert_reads_or_refuses(read_pairs, path)


@settings(FUZZ_SETTINGS, max_examples=READER_EXAMPLES)
@given(content=mutated_mathematics().flatmap(mutated_bytes))
def test_the_mathematics_dataset_reader_returns_questions_or_raises_a_neuromath_error(tmp_path, content):
    path = tmp_path / "train-easy" / "algebra__linear_1d.txt"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(content)
    assert_reads_or_refuses(read_module_file, path)
    assert_reads_or_refuses(read_examples, tmp_path)  # the root of a release tree


@settings(FUZZ_SETTINGS, max_examples=READER_EXAMPLES)
@given(content=mutated_identities().flatmap(mutated_bytes))
def test_the_identities_readers_return_equations_or_raise_a_neuromath_error(tmp_path, content):
    path = tmp_path / "equations.json"
    path.write_bytes(content)
    assert_reads_or_refuses(read_equations, path)
    assert_reads_or_refuses(read_candidates, path, lenient_mode=False)


VERIFIER_TOKENS = sorted(ARITIES) + ["INT+", "INT-", "0", "1", "9", "x", "c", *FUNCTION_LEAVES, *CONSTANTS, "<unk>", ""]
PROBLEMS = (
    SymbolicExample(("mul", "INT+", "2", "x"), ("pow", "x", "INT+", "2")),
    SymbolicExample(("add", "mul", "Y'", "x", "Y"), ("mul", "c", "inv", "x")),
)


@settings(FUZZ_SETTINGS, max_examples=VERIFIER_EXAMPLES)
@given(tokens=st.lists(st.sampled_from(VERIFIER_TOKENS), max_size=30) | st.sampled_from(
    [["sin"] * DEEP + ["x"], ["add", "x"] * DEEP + ["x"], ["INT+"] + ["9"] * 5000, ["x"] * DEEP]
))
def test_the_verifier_gives_any_token_sequence_a_verdict(tokens):
    results = verdicts([(tokens, problem) for problem in PROBLEMS], workers=1, time_limit=2.0)
    assert all(verdict in VERDICTS for verdict in results)


@st.composite
def well_formed(draw, depth: int = 0) -> list[str]:
    """A random well-formed prefix expression over the verifier's tokens."""
    if depth >= 4 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from([["x"], ["c"], ["Y"], ["pi"], ["E"], ["INT+", "0"], ["INT+", "2"], ["INT-", "1"],
                                     ["INT+", "9", "9", "9"]]))
    operator = draw(st.sampled_from(sorted(ARITIES)))
    return [operator] + [token for _ in range(ARITIES[operator]) for token in draw(well_formed(depth + 1))]


@settings(FUZZ_SETTINGS, max_examples=WELL_FORMED_EXAMPLES)
@given(tokens=well_formed())
def test_the_verifier_gives_any_well_formed_hypothesis_a_verdict(tokens):
    results = verdicts([(tokens, problem) for problem in PROBLEMS], workers=1, time_limit=2.0)
    assert all(verdict in VERDICTS for verdict in results)
