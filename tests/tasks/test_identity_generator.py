import json
import random
import time
from collections import Counter
from fractions import Fraction

import pytest
import sympy

from neuromath.errors import ExpressionError
from neuromath.tasks.identities import (
    PI,
    EquationExample,
    EquationNode,
    apply,
    from_sympy,
    number,
    numeric_check,
    read_equations,
    symbol,
    to_sympy,
)
from neuromath.tasks.identities.axioms import AXIOMS, PATTERN, parse_pattern, variables_of
from neuromath.tasks.identities.dataset import generate_identity_files, split_by_depth, statistics_table
from neuromath.tasks.identities.identity_chunks import equation_key
from neuromath.tasks.identities.identity_generator import balanced_counts, generate, generate_with_counts
from neuromath.tasks.identities.identity_labels import SympyJudge, has_inexact_zero, numeric_label
from neuromath.tasks.identities.mutations import mutate
from neuromath.tasks.identities.rewrites import AxiomRewrite, instantiate, layout, match

X, Y, Z = symbol("var_0"), symbol("var_1"), symbol("var_2")
A, B, N = (EquationNode(PATTERN, name) for name in ("a", "b", "n"))


def add(left, right):
    return apply("Add", left, right)


def mul(left, right):
    return apply("Mul", left, right)


def power(base, exponent):
    return apply("Pow", base, exponent)


def equation(left, right):
    return apply("Equality", left, right)


# ------------------------------------------------------------------------------------------- from_sympy


def test_from_sympy_nests_sums_and_products_left_to_right_in_the_data_convention():
    x, y, z = sympy.symbols("x y z")
    assert from_sympy(x + y + z) == add(add(X, Y), Z)
    # x - y is Add(x, Mul(-1, y)); 2*x/y is Mul(2, x, Pow(y, -1)), nested as ((2*x)*y^-1)
    assert from_sympy(sympy.Eq(x - y, 2 * x / y)) == equation(
        add(X, mul(number(-1), Y)), mul(mul(number(2), X), power(Y, number(-1)))
    )
    assert from_sympy(sympy.sqrt(x)) == power(X, EquationNode("Half", "1/2"))
    assert from_sympy(sympy.Rational(2, 5) * sympy.sin(x)) == mul(EquationNode("Rational", "2/5"), apply("sin", X))
    assert from_sympy(sympy.pi / 2) == mul(EquationNode("Half", "1/2"), PI)
    assert from_sympy(-x) == mul(EquationNode("NegativeOne", "-1"), X)
    assert from_sympy(sympy.Integer(7)) == EquationNode("Integer", "7")
    assert from_sympy(sympy.Integer(1)) == EquationNode("One", "1")
    assert from_sympy(sympy.Float(0.7) * x) == mul(EquationNode("Float", "0.7"), X)
    assert from_sympy(sympy.E) == apply("exp", number(1))
    assert from_sympy(sympy.acot(sympy.Symbol("w"))) == apply("acot", symbol("var_3"))


def test_from_sympy_rejects_what_the_grammar_cannot_hold():
    with pytest.raises(ExpressionError):
        from_sympy(sympy.Symbol("q"))
    with pytest.raises(ExpressionError):
        from_sympy(sympy.Abs(sympy.Symbol("x")))


def test_from_sympy_inverts_to_sympy_on_a_tree_in_sympy_form():
    tree = equation(add(number(1), mul(number(-1), apply("cos", X))), mul(number(2), power(apply("sin", X), number(2))))
    assert from_sympy(to_sympy(tree)) == equation(
        add(number(1), mul(number(-1), apply("cos", X))), mul(number(2), power(apply("sin", X), number(2)))
    )


# ------------------------------------------------------------------------------------------- notation and matching


def test_parse_pattern_writes_subtraction_division_roots_and_literals_like_the_data():
    assert parse_pattern("a - b") == add(A, mul(number(-1), B))
    assert parse_pattern("a - 1") == add(A, number(-1))
    assert parse_pattern("a/b") == mul(A, power(B, number(-1)))
    assert parse_pattern("pi/2") == mul(PI, power(number(2), number(-1)))
    assert parse_pattern("1/2") == EquationNode("Half", "1/2")
    assert parse_pattern("-3/4") == EquationNode("Rational", "-3/4")
    assert parse_pattern("sqrt(a)") == power(A, number(Fraction(1, 2)))
    assert parse_pattern("-a") == mul(number(-1), A)
    assert parse_pattern("2*a*b") == mul(mul(number(2), A), B)
    assert parse_pattern("sin(x)**n") == power(apply("sin", X), N)
    with pytest.raises(ExpressionError):
        parse_pattern("f(a)")
    with pytest.raises(ExpressionError):
        parse_pattern("q + 1")


def test_match_binds_variables_to_subtrees():
    pattern = parse_pattern("sin(a + b)")
    tree = apply("sin", add(power(X, number(2)), apply("cos", Y)))
    assert match(pattern, tree) == {"a": power(X, number(2)), "b": apply("cos", Y)}


def test_a_repeated_variable_must_match_equal_subtrees():
    pattern = parse_pattern("sin(a)**2 + cos(a)**2")
    same = add(power(apply("sin", add(X, Y)), number(2)), power(apply("cos", add(X, Y)), number(2)))
    different = add(power(apply("sin", add(X, Y)), number(2)), power(apply("cos", add(Y, X)), number(2)))
    assert match(pattern, same) == {"a": add(X, Y)}
    assert match(pattern, different) is None


def test_failing_matches():
    assert match(parse_pattern("sin(a)"), apply("cos", X)) is None  # other function
    assert match(parse_pattern("a + 0"), add(X, number(1))) is None  # other literal
    assert match(parse_pattern("a**n"), power(X, Y)) is None  # n binds integer leaves only
    assert match(parse_pattern("a**n"), power(X, number(3))) == {"a": X, "n": number(3)}
    assert match(parse_pattern("sin(a)"), X) is None  # a leaf where the pattern has a node


def test_instantiate_and_an_axiom_rewrite_with_a_free_variable():
    assert instantiate(parse_pattern("a*(b + c)"), {"a": X, "b": Y, "c": number(2)}) == mul(X, add(Y, number(2)))
    pythagoras = next(axiom for axiom in AXIOMS if axiom.name == "Pythagoras")
    backward = AxiomRewrite(pythagoras, pythagoras.right, pythagoras.left, 1.0)  # 1 -> sin(a)^2 + cos(a)^2
    assert backward.free_variables == ["a"]
    built = backward.build(backward.match(number(1)), random.Random(3), ["var_0"])
    bound = match(pythagoras.left, built)
    assert bound is not None and set(bound) == {"a"}
    tangent = next(axiom for axiom in AXIOMS if axiom.name == "tangent")
    forward = AxiomRewrite(tangent, tangent.left, tangent.right, 1.0)
    assert forward.build(forward.match(apply("tan", Y)), random.Random(0), []) == mul(
        apply("sin", Y), power(apply("cos", Y), number(-1))
    )


# ------------------------------------------------------------------------------------------- axioms


def axiom_instances(axiom):
    """The axiom with a, b, c as x, y, z and n, m as a few integers."""
    for integers in ((2, 3), (-1, 2), (3, -2)):
        bindings = {"a": X, "b": Y, "c": Z, "n": number(integers[0]), "m": number(integers[1])}
        yield equation(instantiate(axiom.left, bindings), instantiate(axiom.right, bindings))


def test_axiom_set_size_names_and_variables():
    assert 30 <= len(AXIOMS) <= 150
    assert len({axiom.name for axiom in AXIOMS}) == len(AXIOMS)
    assert {axiom.family for axiom in AXIOMS} == {"algebra", "power", "trigonometry", "values", "exp-log", "inverse"}
    for axiom in AXIOMS:
        assert set(variables_of(axiom.left)) | set(variables_of(axiom.right)) <= {"a", "b", "c", "n", "m"}
        assert axiom.left != axiom.right, axiom.name


@pytest.mark.parametrize("axiom", AXIOMS, ids=[axiom.name for axiom in AXIOMS])
def test_every_axiom_holds_numerically(axiom):
    rng = random.Random(7)
    for instance in axiom_instances(axiom):
        check = numeric_check(instance, rng, points=20, attempts=400)
        assert check.agrees and check.verdict is not False, (axiom.name, check)  # a proof: the SymPy test below


def sympy_proves(difference, symbols) -> bool:
    """simplify, then a few rewrites SymPy needs for some identities, then the same for positive symbols (the
    power and logarithm rules hold for positive values; the numeric test covers the rest of the real line)."""
    positive = {name: sympy.Symbol(name.name, positive=True) for name in symbols}
    for expression in (difference, difference.subs(positive)):
        for attempt in (
            lambda e: sympy.simplify(e),
            lambda e: sympy.simplify(sympy.expand_trig(e)),
            lambda e: sympy.trigsimp(e.rewrite(sympy.sin)),
            lambda e: sympy.simplify(e.rewrite(sympy.log)),
            lambda e: sympy.simplify(e.rewrite(sympy.asin)),
        ):
            if attempt(expression) == 0:
                return True
    return False


def test_every_axiom_is_proved_by_sympy():
    unproved = []
    for axiom in AXIOMS:
        instance = next(axiom_instances(axiom))
        expression = to_sympy(instance)
        difference = expression.lhs - expression.rhs
        if not sympy_proves(difference, difference.free_symbols):
            unproved.append(axiom.name)
    assert unproved == []


# ------------------------------------------------------------------------------------------- checks, mutations


def test_numeric_label_on_hand_cases():
    rng = random.Random(0)
    assert numeric_label(parse_equation("sin(x)**2 + cos(x)**2 = 1"), rng) is True
    assert numeric_label(parse_equation("sin(2*x) = 2*sin(x)"), rng) is False
    assert numeric_label(parse_equation("sqrt(x**2) = x"), rng) is False  # |x| is not x
    assert numeric_label(parse_equation("log(x*y) = log(x) + log(y)"), rng) is True  # both defined: x, y > 0
    # defined nowhere on the real line: no point can tell
    assert numeric_label(parse_equation("log(-1 - x**2) = log(-1 - x**2) + 0"), rng) is None


def parse_equation(text):
    left, right = text.split("=")
    return equation(parse_pattern(left), parse_pattern(right))


def test_has_inexact_zero_finds_constants_that_are_zero_only_on_paper():
    assert has_inexact_zero(parse_equation("cos(pi/2)**x = 0"))
    assert not has_inexact_zero(parse_equation("sin(0)**x = 0"))
    assert not has_inexact_zero(parse_equation("cos(pi/3) = 1/2"))


def test_mutate_changes_exactly_one_place_and_layout_reports_height_and_slack():
    tree = parse_equation("sin(x + y) = sin(x)*cos(y) + cos(x)*sin(y)")
    shape = layout(tree)
    assert shape.height == 4 and shape.node_count == 16 and shape.symbols == ["var_0", "var_1"]
    slack = {position.path: position.slack for position in shape.positions}
    assert slack[()] == slack[(1,)] == slack[(1, 0, 0, 0)] == 0  # a longest path: = + * sin x
    assert slack[(0,)] == slack[(0, 0, 1)] == 1  # the left side, sin(x + y), is one level short
    rng = random.Random(5)
    for _ in range(50):
        mutant = mutate(tree, rng)
        assert mutant != tree and mutant.func == "Equality"


# ------------------------------------------------------------------------------------------- generation


@pytest.fixture(scope="module")
def small_set():
    examples, counts = generate_with_counts(130, random.Random(2024), max_depth=13)
    return examples, counts


def test_generated_set_is_balanced_per_depth_and_reaches_depth_13(small_set):
    examples, counts = small_set
    assert len(examples) == 130 and counts.kept == 130
    by_depth = Counter((example.depth, example.label) for example in examples)
    for depth in range(1, 14):  # 65 true ones over 13 depths: 5 true and 5 false at each
        assert by_depth[(depth, True)] == 5 and by_depth[(depth, False)] == 5, depth
    assert counts.checked >= 130 and counts.verified >= 130


def test_generated_set_has_no_duplicates_even_with_sides_swapped(small_set):
    examples, _ = small_set
    keys = [equation_key(example.tree) for example in examples]
    assert len(set(keys)) == len(keys)
    assert all(example.tree.children[0] != example.tree.children[1] for example in examples if example.depth > 1)
    swapped = equation(*reversed(examples[5].tree.children))
    assert equation_key(swapped) == equation_key(examples[5].tree)


def test_every_generated_label_holds_when_checked_again(small_set):
    examples, _ = small_set
    rng = random.Random(99)  # other points than the generator's
    undecided = []
    for example in examples:
        verdict = None
        for low, high in ((-3.0, 3.0), (0.05, 2.0), (-1.0, 1.0)):
            check = numeric_check(example.tree, rng, points=20, attempts=200, low=low, high=high)
            if check.verdict is False:
                verdict = False
                break
            if check.verdict is True:
                verdict = True
        if verdict is None:
            undecided.append(example)
        else:
            assert verdict == example.label, str(example.tree)
    with SympyJudge(timeout=5.0) as judge:
        for example in undecided:
            assert example.label is True and judge.simplifies_to_zero(example.tree) is True, str(example.tree)


def test_generation_is_deterministic_for_a_seed():
    first = generate(52, random.Random(17), max_depth=6)
    again = generate(52, random.Random(17), max_depth=6)
    other = generate(52, random.Random(18), max_depth=6)
    assert len(first) == 52
    assert [(str(e.tree), e.label) for e in first] == [(str(e.tree), e.label) for e in again]
    assert [str(e.tree) for e in first] != [str(e.tree) for e in other]
    assert {example.depth for example in first} == set(range(1, 7))
    in_two_processes = generate(52, random.Random(17), max_depth=6, workers=2)
    assert [(str(e.tree), e.label) for e in in_two_processes] == [(str(e.tree), e.label) for e in first]


def test_balanced_counts_spreads_evenly_and_gives_a_short_depth_all_it_has():
    assert balanced_counts({1: 100, 2: 100, 3: 100}, 30) == {1: 10, 2: 10, 3: 10}
    assert balanced_counts({1: 2, 2: 100, 3: 100}, 30) == {1: 2, 2: 14, 3: 14}
    assert balanced_counts({1: 100, 2: 100, 3: 100}, 31) == {1: 10, 2: 10, 3: 11}  # the deepest get the rest
    assert balanced_counts({1: 3, 2: 4}, 30) == {1: 3, 2: 4}


# ------------------------------------------------------------------------------------------- splits, tables, files


def hand_examples():
    """20 equations (10 labelled true) at each depth 1..13: x = k, then s = s + k with s = sin(...sin(x))."""
    examples = []
    for depth in range(1, 14):
        side = X
        for _ in range(depth - 2):
            side = apply("sin", side)
        for index in range(20):
            tree = equation(X, number(index)) if depth == 1 else equation(side, add(side, number(index)))
            examples.append(EquationExample(tree, index % 2 == 0))
    return examples


def test_split_by_depth_keeps_test_depths_apart_and_validation_stratified():
    examples = hand_examples()
    assert {example.depth for example in examples} == set(range(1, 14))
    train, valid, test = split_by_depth(examples, random.Random(0))
    assert {example.depth for example in train} == set(range(1, 8)) == {example.depth for example in valid}
    assert {example.depth for example in test} == set(range(8, 14))
    assert len(train) + len(valid) == 7 * 20 and len(test) == 6 * 20
    assert Counter((e.depth, e.label) for e in valid) == {(d, label): 1 for d in range(1, 8) for label in (True, False)}
    assert not {id(e) for e in train} & {id(e) for e in valid}
    custom_train, custom_valid, custom_test = split_by_depth(examples, random.Random(0), range(1, 3), range(3, 5), 0.5)
    assert len(custom_train) == len(custom_valid) == 20 and len(custom_test) == 40
    with pytest.raises(ValueError):
        split_by_depth(examples, random.Random(0), range(1, 9), range(8, 14))


def test_statistics_table_counts_and_shares_per_depth():
    examples = [
        EquationExample(equation(X, X), True),
        EquationExample(equation(X, Y), False),
        EquationExample(equation(X, Y), False),
        EquationExample(equation(add(X, number(0)), X), True),
    ]
    assert statistics_table(examples) == (
        "| depth | equations | true | false | share true |\n"
        "| ---: | ---: | ---: | ---: | ---: |\n"
        "| 1 | 3 | 1 | 2 | 33.3% |\n"
        "| 2 | 1 | 1 | 0 | 100.0% |\n"
        "| total | 4 | 2 | 2 | 50.0% |\n"
    )


def test_generate_identity_files_writes_the_set_its_splits_and_the_table(tmp_path):
    out = tmp_path / "identities.json"
    report = generate_identity_files(60, 10, seed=3, out_path=out, progress=False)
    written = read_equations(out)
    assert report.written == len(written) == 60
    train, valid, test = (read_equations(tmp_path / f"identities.{name}.json") for name in ("train", "valid", "test"))
    assert len(train) + len(valid) + len(test) == 60
    assert {e.depth for e in test} == {8, 9, 10} and max(e.depth for e in train + valid) <= 7
    assert report.split_sizes == {"train": len(train), "valid": len(valid), "test": len(test)}
    stats = (tmp_path / "identities.stats.md").read_text()
    assert statistics_table(written) in stats and "duplicates" in stats and "contradicted" in stats
    assert json.loads(out.read_text())[0] == []  # depth 0 holds nothing
    again = tmp_path / "again.json"
    generate_identity_files(60, 10, seed=3, out_path=again, progress=False)
    assert again.read_text() == out.read_text()


# ------------------------------------------------------------------------------------------- SymPy time limit


def test_the_time_limit_ends_a_pathological_simplify_and_the_next_call_works():
    huge = equation(
        parse_pattern("(sin(x) + cos(y) + tan(z) + exp(w) + log(x))**15"),
        parse_pattern("(sin(x) + cos(y) + tan(z) + exp(w) + log(x) + 1)**15"),
    )
    with SympyJudge(timeout=0.5) as judge:
        # the first question waits for the worker to start (importing and warming SymPy, never charged to it)
        assert judge.simplifies_to_zero(parse_equation("x + x = 2*x")) is True
        started = time.perf_counter()
        assert judge.simplifies_to_zero(huge) is None
        assert time.perf_counter() - started < 3.0
        assert judge.timeouts == 1
        assert judge.simplifies_to_zero(parse_equation("sin(x)**2 + cos(x)**2 = 1")) is True
        assert judge.simplifies_to_zero(parse_equation("sin(x) = cos(x)")) is False
