"""neuromath/tasks/identities.py: the released JSON format (on ../shared/data/identities and on hand-made
records), tree utilities, numeric evaluation and SymPy conversion."""

import json
import math
import random
from collections import Counter

import numpy as np
import pytest

from neuromath.dataroot import data_root
from neuromath.errors import DataFormatError, ExpressionError
from neuromath.tasks.identities import (
    PI,
    UNARY_FUNCTIONS,
    EquationExample,
    OutsideDomain,
    apply,
    equation_record,
    evaluate,
    evaluate_arrays,
    format_infix,
    height,
    is_correct,
    number,
    numeric_check,
    parse_preorder,
    path_to,
    preorder,
    read_candidates,
    read_equations,
    replace_at,
    replace_path,
    size,
    subtree_at,
    symbol,
    to_preorder,
    to_sympy,
    write_candidates,
    write_equations,
)

SHARED = data_root() / "identities"  # $NEUROMATH_DATA; tests/conftest.py points it at ../shared/data
BLANKS = SHARED / "40k_test_blank_0.json"
CANDIDATES = SHARED / "candidate_classes.json"
needs_shared = pytest.mark.skipif(not BLANKS.exists(), reason="../shared/data/identities is not beside the repository")

X, Y = symbol("var_0"), symbol("var_1")


def token_key(tree):
    return tuple(node.token for node in preorder(tree))


@needs_shared
def test_reader_on_the_released_blank_file():
    examples = read_equations(BLANKS)
    assert len(examples) == 277
    assert Counter(e.depth for e in examples) == {8: 277}
    assert all(e.label is True and e.blank is not None for e in examples)
    # every blank is a subtree of height at most 1, and the first record's blank is its node 5 (a -1 leaf)
    assert all(height(subtree_at(e.tree, e.blank)) <= 1 for e in examples)
    first = examples[0]
    assert first.source.endswith("40k_test_blank_0.json:11")
    assert subtree_at(first.tree, first.blank) == number(-1)
    assert format_infix(first.tree).startswith("y + sin((-1)*x) = ")


@needs_shared
def test_reader_on_the_released_candidates_and_the_blank_classes():
    candidates = read_candidates(CANDIDATES)
    assert len(candidates) == 1470
    assert len({c.value_class for c in candidates}) == 602
    assert Counter(c.depth for c in candidates) == {0: 21, 1: 1449}
    classes: dict[tuple, set] = {}
    for candidate in candidates:
        classes.setdefault(token_key(candidate.tree), set()).add(candidate.value_class)
    # some records number their nodes breadth-first; the blank must still land on a node whose value class exists
    blanks = [subtree_at(e.tree, e.blank) for e in read_equations(BLANKS)]
    assert [len(classes.get(token_key(b), ())) for b in blanks] == [1] * 277


@needs_shared
def test_released_records_survive_writing_and_reading(tmp_path):
    raw = json.loads(BLANKS.read_text())[8]
    examples = read_equations(BLANKS)
    for record, example in zip(raw, examples):
        written = equation_record(example.tree)
        for key in ("func", "vars", "numNodes", "depth"):
            assert written[key] == record["equation"][key]
    out = tmp_path / "copy.json"
    write_equations(examples, out)
    again = read_equations(out)
    assert [e.tree for e in again] == [e.tree for e in examples]
    assert [subtree_at(e.tree, e.blank) for e in again] == [subtree_at(e.tree, e.blank) for e in examples]
    candidates = read_candidates(CANDIDATES)
    write_candidates(candidates, tmp_path / "candidates.json")
    back = read_candidates(tmp_path / "candidates.json")
    assert [(c.tree, c.value_class) for c in back] == [(c.tree, c.value_class) for c in candidates]


@needs_shared
def test_numeric_check_exposes_the_release_noise():
    """The released 'correct' equations include ones that hold only on part of the domain (cos(x) = sqrt(1 -
    sin(x)^2)) or not at all; the numeric check must call those false, and find no difference in the clear
    identities (which only a proof can call true)."""
    rng = random.Random(0)
    checks = [numeric_check(e.tree, rng) for e in read_equations(BLANKS)]
    assert sum(check.agrees for check in checks) > 200 and sum(check.verdict is False for check in checks) > 10
    assert not any(check.verdict is True for check in checks if not check.constant)  # no proof without a prover


def test_parse_and_print_a_hand_made_tree():
    funcs = "Equality,Add,Symbol,#,#,sin,Pi,#,#,#,Pow,Symbol,#,#,Half,#,#"
    values = ",,var_0,#,#,,pi,#,#,#,,var_1,#,#,1/2,#,#"
    tree = parse_preorder(funcs, values)
    assert tree == apply("Equality", apply("Add", X, apply("sin", PI)), apply("Pow", Y, number("1/2")))
    assert to_preorder(tree) == (funcs, values)
    assert height(tree) == 3 and size(tree) == 8
    assert [n.token for n in preorder(tree)] == ["Equality", "Add", "var_0", "sin", "pi", "Pow", "var_1", "1/2"]


@pytest.mark.parametrize(
    "funcs, values, reason",
    [
        ("Add,Symbol,#,#,#", ",var_0,#,#,#", "Add needs 2 children, has 1"),
        ("sin,Symbol,#,#,Symbol,#,#", ",var_0,#,#,var_1,#,#", "sin takes one (left) child"),
        ("sin,#,Symbol,#,#", ",#,var_0,#,#", "sin takes one (left) child"),
        ("Symbol,Integer,#,#,#", "var_0,2,#,#,#", "leaf Symbol has a child"),
        ("sinh,Symbol,#,#,#", ",var_0,#,#,#", "unknown function 'sinh'"),
        ("Integer,#,#", "two,#,#", "not a number"),
        ("One,#,#", "2,#,#", "One leaf with value '2'"),
        ("Add,Symbol,#,#", ",var_0,#,#", "ends in the middle of a node"),
        ("Symbol,#,#,#", "var_0,#,#,#", "left over"),
        ("Symbol,#", "var_0,#,#", "func has 2 entries but vars has 3"),
    ],
)
def test_malformed_trees_are_refused_with_the_reason(funcs, values, reason):
    with pytest.raises(ExpressionError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse_preorder(funcs, values)


def _write(path, groups):
    path.write_text(json.dumps(groups, indent=4))
    return path


def test_file_errors_name_the_file_and_line(tmp_path):
    good = {"equation": equation_record(apply("Equality", X, X)), "label": "1"}
    bad = {"equation": {**equation_record(apply("Equality", X, X)), "func": "Equality,Symbol,#,#,Foo,#,#"},
           "label": "1"}
    path = _write(tmp_path / "eq.json", [[], [good, bad]])
    with pytest.raises(DataFormatError) as error:
        read_equations(path)
    line = path.read_text().splitlines().index("        {", 10) + 1  # the second record's opening brace
    assert error.value.line == line and error.value.path == str(path)
    assert "unknown function 'Foo'" in str(error.value)
    skipped: list = []
    assert len(read_equations(path, lenient=True, skipped=skipped)) == 1 and len(skipped) == 1

    wrong_depth = _write(tmp_path / "depth.json", [[good]])
    with pytest.raises(DataFormatError, match="tree of depth 1 in the list of depth 0"):
        read_equations(wrong_depth)
    (tmp_path / "broken.json").write_text("[[{]]")
    with pytest.raises(DataFormatError, match="not valid JSON"):
        read_equations(tmp_path / "broken.json")
    bad_label = _write(tmp_path / "label.json", [[], [{**good, "label": "yes"}]])
    with pytest.raises(DataFormatError, match="label must be 1 or 0"):
        read_equations(bad_label)
    bad_blank = _write(tmp_path / "blank.json", [[], [{**good, "blankNodeNum": "7"}]])
    with pytest.raises(DataFormatError, match="blankNodeNum '7' is not a node"):
        read_equations(bad_blank)
    with pytest.raises(DataFormatError, match="no such file"):
        read_equations(tmp_path / "missing.json")


def test_a_file_read_again_is_remembered_until_it_changes(tmp_path):
    """A run over seeds reads its files once per seed: the second read returns the same examples (and, lenient,
    the same skipped records) from memory, in a list of its own; a file rewritten on disk is read anew, even at the
    same size and modification time."""
    import os

    from neuromath.tasks.identities import equations

    good = {"equation": equation_record(apply("Equality", X, X)), "label": "1"}
    bad = {"equation": {**equation_record(apply("Equality", X, X)), "func": "Equality,Symbol,#,#,Foo,#,#"},
           "label": "0"}
    path = _write(tmp_path / "eq.json", [[], [good, bad, good]])
    first_skipped: list = []
    first = read_equations(path, lenient=True, skipped=first_skipped)
    parsed = []
    real_parse = equations._parse_equations
    equations._parse_equations = lambda *args: parsed.append(args) or real_parse(*args)
    try:
        again_skipped: list = []
        again = read_equations(path, lenient=True, skipped=again_skipped)
        assert parsed == [] and again == first and again is not first and len(again) == 2
        assert [str(e) for e in again_skipped] == [str(e) for e in first_skipped] and len(again_skipped) == 1
        again.clear()
        assert len(read_equations(path, lenient=True)) == 2  # the caller's list was a copy
        with pytest.raises(DataFormatError, match="unknown function 'Foo'"):
            read_equations(path)  # strict is its own reading: the bad record still stops it
        assert len(parsed) == 1
        flipped = {**good, "label": "0"}  # the same size and, written at once, the same modification time
        before = path.stat()
        _write(path, [[], [good, bad, flipped]])
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        changed = read_equations(path, lenient=True)
        assert [e.label for e in changed] == [True, False] and len(parsed) == 2
    finally:
        equations._parse_equations = real_parse


def test_height_counts_levels_as_the_recursive_definition():
    rng = random.Random(0)

    def grow(levels):
        if levels == 0 or rng.random() < 0.25:
            return symbol("x")
        if rng.random() < 0.3:
            return apply("sin", grow(levels - 1))
        return apply("Add", grow(levels - 1), grow(levels - 1))

    def recursive(node):
        return 0 if not node.children else 1 + max(recursive(child) for child in node.children)

    trees = [grow(rng.randint(0, 9)) for _ in range(300)]
    assert {height(tree) for tree in trees} >= set(range(6))
    assert all(height(tree) == recursive(tree) for tree in trees)
    deep = symbol("x")
    for _ in range(5000):  # deeper than Python's recursion limit
        deep = apply("sin", deep)
    assert height(deep) == 5000


def test_written_files_read_back_with_labels_and_blanks(tmp_path):
    examples = [
        EquationExample(apply("Equality", apply("Add", X, Y), apply("Add", Y, X)), True),
        EquationExample(apply("Equality", X, Y), False),
        EquationExample(apply("Equality", apply("Mul", number(2), X), apply("Add", X, X)), True, blank=2),
    ]
    write_equations(examples, tmp_path / "set.json")
    back = read_equations(tmp_path / "set.json")
    # grouped by depth on writing: the depth-1 equation comes first, then the two of depth 2 in their order
    assert [(e.tree, e.label, e.blank) for e in back] == [
        (e.tree, e.label, e.blank) for e in (examples[1], examples[0], examples[2])
    ]


def test_the_scorer_compares_with_the_label():
    true_example = EquationExample(apply("Equality", X, X), True)
    assert is_correct(True, true_example) and not is_correct(False, true_example)
    assert is_correct(False, EquationExample(apply("Equality", X, Y), False))
    with pytest.raises(ValueError, match="no label"):
        is_correct(True, EquationExample(apply("Equality", X, X), None))


def test_subtree_and_replace_use_preorder_numbers():
    tree = apply("Equality", apply("Add", X, apply("sin", Y)), number(3))
    assert subtree_at(tree, 3) == apply("sin", Y)
    replaced = replace_at(tree, 3, apply("cos", X))
    assert replaced == apply("Equality", apply("Add", X, apply("cos", X)), number(3))
    assert replace_at(tree, 5, PI) == apply("Equality", apply("Add", X, apply("sin", Y)), PI)
    with pytest.raises(IndexError):
        subtree_at(tree, 6)
    with pytest.raises(IndexError):
        replace_at(tree, 6, PI)
    assert path_to(tree, 4) == (0, 1, 0) and path_to(tree, 0) == ()
    shared = replace_path(tree, path_to(tree, 4), PI)
    assert shared.children[1] is tree.children[1] and shared.children[0].children[0] is X  # off-path subtrees shared


def test_evaluate_and_domain():
    shared = apply("Add", X, X)  # the same node object twice
    assert evaluate(apply("Mul", shared, shared), {"var_0": 1.5}) == pytest.approx(9.0)
    expression = apply("Add", apply("Pow", apply("sin", X), number(2)), apply("Pow", apply("cos", X), number(2)))
    assert evaluate(expression, {"var_0": 0.3}) == pytest.approx(1.0)
    assert evaluate(apply("Mul", number("2/5"), PI), {}) == pytest.approx(0.4 * math.pi)
    for outside in (apply("log", number(-1)), apply("Pow", number(-8), number("1/3")), apply("asin", number(2)),
                    apply("Pow", number(0), number(-1)), apply("exp", number(1000))):
        with pytest.raises(OutsideDomain):
            evaluate(outside, {})


def test_array_evaluation_matches_the_scalar_one_with_its_domain():
    """evaluate_arrays (many points at once, numpy) gives evaluate's value at every point, and NaN exactly where
    evaluate raises OutsideDomain: poles, logs and roots of negatives, asin out of range, 0 to a negative power."""
    rng = random.Random(5)
    leaves = [symbol("var_0"), symbol("var_1"), number(0), number(-1), number(2), number("1/2"), number("-3/2"), PI]

    def term(depth):
        if depth == 0 or rng.random() < 0.25:
            return rng.choice(leaves)
        if rng.random() < 0.5:
            return apply(rng.choice(UNARY_FUNCTIONS), term(depth - 1))
        return apply(rng.choice(["Add", "Mul", "Pow"]), term(depth - 1), term(depth - 1))

    points = {"var_0": [-2.5, -1.0, 0.0, 0.3, 1.0, 2.0], "var_1": [0.5, -0.7, 3.0, -3.0, 0.0, 1.5]}
    arrays = {name: np.array(values) for name, values in points.items()}
    outside = inside = 0
    for _ in range(300):
        expression = term(4)
        values = np.broadcast_to(evaluate_arrays(expression, arrays.__getitem__), (6,))
        for k in range(6):
            try:
                expected = evaluate(expression, {name: v[k] for name, v in points.items()})
            except OutsideDomain:
                assert math.isnan(values[k]), str(expression)
                outside += 1
            else:
                assert values[k] == pytest.approx(expected, rel=1e-9, abs=1e-12), str(expression)
                inside += 1
    assert outside > 100 and inside > 100  # both branches were exercised


def test_numeric_check_verdicts():
    rng = random.Random(1)
    pythagoras = apply("Equality", apply("Add", apply("Pow", apply("sin", X), number(2)),
                                        apply("Pow", apply("cos", X), number(2))), number(1))
    assert numeric_check(pythagoras, rng).agrees and numeric_check(pythagoras, rng).verdict is None  # not a proof
    assert numeric_check(pythagoras, rng, prover=lambda equation: True).verdict is True
    assert numeric_check(apply("Equality", apply("sin", X), apply("cos", X)), rng).verdict is False
    # sqrt(x^2) = x holds only for x >= 0: false on the reals
    root_of_square = apply("Pow", apply("Pow", X, number(2)), number("1/2"))
    assert numeric_check(apply("Equality", root_of_square, X), rng).verdict is False
    # log(x) = log(x) is defined only for x > 0, still true wherever defined
    assert numeric_check(apply("Equality", apply("log", X), apply("log", X)), rng).agrees
    # nowhere defined: no verdict
    never_defined = apply("asin", apply("Add", number(3), apply("Pow", X, number(2))))
    assert numeric_check(apply("Equality", never_defined, X), rng).verdict is None


def test_to_sympy():
    import sympy

    tree = apply("Equality", apply("Mul", X, apply("Pow", Y, number(-1))), apply("Pow", X, number("1/2")))
    expression = to_sympy(tree)
    x, y = sympy.symbols("x y", real=True)
    assert expression.lhs == x / y and expression.rhs == sympy.sqrt(x)


@pytest.mark.parametrize("text,shown", [
    ("cos(x + y) = cos(x)*cos(y) - sin(x)*sin(y)", "cos(x + y) = cos(x)*cos(y) + (-1)*sin(x)*sin(y)"),
    ("sin(x)^2 + cos(x)^2 = 1", "sin(x)^2 + cos(x)^2 = 1"),
    ("(x + y)^2 = exp(x + 1)", "(x + y)^2 = exp(x + 1)"),  # a sum under a power keeps its brackets
])
def test_format_infix_brackets_a_sum_only_where_it_is_needed(text, shown):
    from neuromath.tasks.identities.typed_equations import parse_equation

    assert format_infix(parse_equation(text)) == shown
