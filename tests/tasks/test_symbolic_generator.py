"""Tests of neuromath/tasks/symbolic/symbolic_generator.py and symbolic_methods.py: tree counts and uniform shapes
(Lample & Charton, appendix C), the numeric checks, the four methods, determinism, counts, time limits, files and
argument errors."""

import itertools
import json
import math
import random
from collections import Counter

import pytest
import sympy

from neuromath.errors import ExpressionError, NeuromathError
from neuromath.expr.symbolic_prefix import prefix_size
from neuromath.expr.sympy_bridge import prefix_to_sympy, symbol, sympy_to_prefix
from neuromath.tasks.symbolic import SymbolicExample, canonical, read_pairs
from neuromath.tasks.symbolic.random_expressions import (
    ODE_LEAF_WEIGHTS,
    random_expression_tokens,
    sample_shape,
    tree_count_table,
)
from neuromath.tasks.symbolic.symbolic_generator import (
    DUPLICATE,
    GenerationCounts,
    generate,
    generate_symbolic_file,
    generate_with_counts,
)
from neuromath.tasks.symbolic.symbolic_methods import (
    CHECK_FAILED,
    Rejected,
    check_pair,
    draw_expression,
    known_integrals,
    lookup_known,
    run_attempt,
)

x, c, Y, Y_PRIME = symbol("x"), symbol("c"), symbol("Y"), symbol("Y'")
GENEROUS_LIMIT = 30.0  # seconds per attempt: nothing in these small runs comes near it


# ------------------------------------------------------------------------------------ tree shapes, by enumeration


def all_trees(internal: int) -> list:
    """Every unary-binary tree with ``internal`` internal nodes, as nested tuples, by direct enumeration."""
    if internal == 0:
        return ["leaf"]
    trees = [("unary", child) for child in all_trees(internal - 1)]
    for left_size in range(internal):
        for left in all_trees(left_size):
            for right in all_trees(internal - 1 - left_size):
                trees.append(("binary", left, right))
    return trees


def forests(empty: int, internal: int) -> int:
    """How many ordered tuples of ``empty`` trees have ``internal`` internal nodes in all (a direct loop)."""
    total = 0
    for sizes in itertools.product(range(internal + 1), repeat=empty):
        if sum(sizes) == internal:
            total += math.prod(len(all_trees(size)) for size in sizes)
    return total


def preorder_arities(tree) -> tuple[int, ...]:
    if tree == "leaf":
        return (0,)
    if tree[0] == "unary":
        return (1,) + preorder_arities(tree[1])
    return (2,) + preorder_arities(tree[1]) + preorder_arities(tree[2])


def test_tree_counts_from_one_empty_node_by_hand():
    # n = 1: u(L), b(L, L). n = 2: u(u(L)), u(b(L,L)), b(u(L),L), b(L,u(L)), b(b(L,L),L), b(L,b(L,L)).
    assert [len(all_trees(n)) for n in range(4)] == [1, 2, 6, 22]
    table = tree_count_table(4)
    assert [table[n][1] for n in range(5)] == [1, 2, 6, 22, 90]


def test_tree_count_table_matches_enumerated_forests():
    table = tree_count_table(4)
    for internal in range(5):
        for empty in range(1, 4):
            if empty + internal <= 5:
                assert table[internal][empty] == forests(empty, internal), (empty, internal)
    assert all(table[internal][0] == 0 for internal in range(1, 5))


def test_sampled_shapes_are_uniform_over_all_trees():
    shapes = [preorder_arities(tree) for tree in all_trees(3)]
    rng = random.Random(2024)
    draws = 4400
    seen = Counter(tuple(sample_shape(3, rng)) for _ in range(draws))
    assert set(seen) == set(shapes)  # every sample is a tree with 3 internal nodes, and every such tree occurs
    expected = draws / len(shapes)
    chi_square = sum((seen[shape] - expected) ** 2 / expected for shape in shapes)
    assert chi_square < 50.0  # 21 degrees of freedom: the 99.9% quantile is about 46.8


def test_sample_shape_with_no_internal_node_is_a_leaf():
    assert sample_shape(0, random.Random(0)) == [0]


# ------------------------------------------------------------------------------------ random expressions, checks


def test_random_expressions_have_the_operators_asked_for_and_hold_x():
    rng = random.Random(3)
    for n_ops in range(1, 7):
        for _ in range(20):
            tokens = random_expression_tokens(n_ops, rng)
            assert prefix_size(tokens) == n_ops
            assert "x" in tokens
            assert all(token not in ("c", "Y", "Y'") for token in tokens)


def test_ode_solutions_hold_x_and_c_when_they_have_two_leaves():
    rng = random.Random(4)
    for _ in range(50):
        tokens = random_expression_tokens(3, rng, ODE_LEAF_WEIGHTS)
        leaves = [t for t in tokens if t in ("x", "c") or t.startswith("INT")]
        if len(leaves) >= 2:
            assert "x" in tokens and "c" in tokens


def test_the_check_of_kept_pairs_tells_right_from_wrong():
    def check(kind, source, target):
        return check_pair(kind, sympy_to_prefix(source), sympy_to_prefix(target))

    assert check("integration", sympy.cos(x), sympy.sin(x)) == "ok"
    assert check("integration", sympy.cos(x), sympy.sin(x) + x) == CHECK_FAILED
    assert check("integration", x, x**3) == CHECK_FAILED
    assert check("integration", 1 / (2 * sympy.sqrt(x)), sympy.sqrt(x)) == "ok"  # defined for x > 0 only
    assert check("ode1", Y_PRIME - Y, c * sympy.exp(x)) == "ok"
    assert check("ode1", x * (Y_PRIME - Y), c * sympy.exp(x)) == "ok"  # a product: one factor is 0
    assert check("ode1", Y_PRIME - 2 * Y, c * sympy.exp(x)) == CHECK_FAILED
    assert check("ode1", x * (Y_PRIME - 2 * Y), c * sympy.exp(x)) == CHECK_FAILED


def test_known_integral_lookup_uses_canonical_forms():
    antiderivative = x * sympy.sin(x) + sympy.cos(x)
    table = known_integrals([SymbolicExample(tuple(sympy_to_prefix(x * sympy.cos(x))),
                                             tuple(sympy_to_prefix(antiderivative)))])
    assert list(table) == [canonical(sympy_to_prefix(x * sympy.cos(x)))]
    assert lookup_known(sympy.cos(x) * x, table) == antiderivative
    assert lookup_known(x * sympy.sin(x), table) is None


def test_parts_uses_the_known_table_and_the_check_catches_a_wrong_entry():
    # replay the first draws of parts attempts (one operator each) to find the integral parts will need
    for attempt in range(60):
        rng = random.Random(f"5/parts/{attempt}")
        try:
            big_f, big_g = draw_expression(rng, 1, tree_count_table(1)), draw_expression(rng, 1, tree_count_table(1))
            partner = sympy.diff(big_f, x) * big_g
            partner_integral = sympy.integrate(partner, x)
            entry = sympy_to_prefix(partner_integral)
            wrong_entry = sympy_to_prefix(partner_integral + x)
        except (Rejected, ExpressionError):
            continue
        if run_attempt(5, "parts", attempt, 1).kept:
            break
    else:
        pytest.fail("no parts attempt to replay")
    key = canonical(sympy_to_prefix(partner))
    right = run_attempt(5, "parts", attempt, 1, known={key: entry})
    assert right.kept and right.integral_source == "table"
    assert run_attempt(5, "parts", attempt, 1).integral_source == "sympy"
    assert run_attempt(5, "parts", attempt, 1, known={key: wrong_entry}).reason == CHECK_FAILED


def test_an_attempt_depends_only_on_seed_method_and_index():
    first = [run_attempt(11, "backward", k, 4) for k in range(6)]
    again = [run_attempt(11, "backward", k, 4) for k in reversed(range(6))][::-1]
    assert first == again
    assert [run_attempt(12, "backward", k, 4) for k in range(6)] != first


# ------------------------------------------------------------------------------------ the methods, end to end


def real_value(expression, values):
    value = complex(expression.evalf(30, subs=values))
    if not math.isfinite(value.real) or abs(value.imag) > 1e-12 * (1 + abs(value.real)):
        return None
    return value.real


def assert_antiderivative(integrand, antiderivative, rng):
    derivative = sympy.diff(antiderivative, x)
    checked = 0
    for _ in range(200):
        point = {x: sympy.Float(rng.uniform(-3, 3), 30)}
        want, got = real_value(integrand, point), real_value(derivative, point)
        if want is None or got is None:
            continue
        assert got == pytest.approx(want, rel=1e-7, abs=1e-9), (integrand, antiderivative, point)
        checked += 1
        if checked == 3:
            return
    pytest.fail(f"no point where {integrand} and {antiderivative} are both real")


def assert_solves(equation, solution, rng):
    """The equation is 0 at Y = solution, Y' = its x-derivative, at 50 digits, relative to the largest value of
    any of its subexpressions there (where cancellation could happen)."""
    substituted = equation.subs({Y: solution, Y_PRIME: sympy.diff(solution, x)})
    checked = 0
    for _ in range(200):
        point = {x: sympy.Float(rng.uniform(-3, 3), 50), c: sympy.Float(rng.uniform(-2, 2), 50)}
        if real_value(solution, point) is None:
            continue
        residual = abs(complex(substituted.evalf(50, subs=point)))
        size = max(abs(complex(part.evalf(50, subs=point))) for part in sympy.preorder_traversal(substituted))
        if not math.isfinite(size):
            continue
        assert residual <= 1e-30 * (1 + size), (equation, solution, point)
        checked += 1
        if checked == 3:
            return
    pytest.fail(f"no point where {solution} is real")


BACKWARD_SEED = random.Random(5).getrandbits(63)  # what generate(..., rng=random.Random(5)) uses


@pytest.fixture(scope="module")
def generated():
    """Three pairs of every method, max_ops 3, one worker."""
    runs = {}
    for method in ("backward", "forward", "parts", "ode1"):
        seed = BACKWARD_SEED if method == "backward" else 17
        runs[method] = generate_with_counts(3, seed, method=method, max_ops=3, time_limit=GENEROUS_LIMIT)
    return runs


@pytest.mark.parametrize("method", ["backward", "forward", "parts", "ode1"])
def test_every_method_yields_pairs_that_check_out(generated, method):
    examples, counts = generated[method]
    assert len(examples) == 3 and counts.kept == 3
    rng = random.Random(method)
    attempts = []
    for example in examples:
        assert example.method == method
        prefix, _, attempt = example.id.partition("#")
        assert prefix == method
        attempts.append(int(attempt))
        source, target = prefix_to_sympy(example.source), prefix_to_sympy(example.target)
        if method == "ode1":
            assert "Y'" in example.source and "c" in example.target and "x" in example.target
            assert_solves(source, target, rng)
        else:
            assert "x" in example.target
            assert_antiderivative(source, target, rng)
    assert attempts == sorted(attempts) and len(set(attempts)) == 3
    assert attempts[-1] == counts.tried - 1  # the counts stop at the attempt that brought the last pair


@pytest.mark.parametrize("method", ["backward", "forward", "parts", "ode1"])
def test_counts_add_up(generated, method):
    _, counts = generated[method]
    assert counts.tried == counts.kept + counts.timed_out + counts.errors + sum(counts.rejected.values())
    assert counts.as_dict()["tried"] == counts.tried


def test_parts_counts_where_the_integrals_came_from(generated):
    _, counts = generated["parts"]
    assert counts.integral_sources == {"sympy": 3}  # no table given


def test_same_seed_same_pairs_for_any_number_of_workers(generated):
    one_worker, counts = generated["backward"]
    two_workers = generate(3, random.Random(5), method="backward", max_ops=3, workers=2, time_limit=GENEROUS_LIMIT)
    assert [(e.source, e.target, e.id) for e in two_workers] == [(e.source, e.target, e.id) for e in one_worker]


def test_a_tiny_time_limit_gives_timeouts():
    examples, counts = generate_with_counts(1, 3, method="forward", max_ops=6, time_limit=0.005, max_attempts=3)
    assert counts.tried == 3
    assert counts.timed_out >= 1
    assert counts.tried == counts.kept + counts.timed_out + counts.errors + sum(counts.rejected.values())
    assert len(examples) == counts.kept


def test_file_and_stats_are_written_and_read_back(tmp_path, capsys):
    path = tmp_path / "pairs.txt"
    report = generate_symbolic_file(path, 2, method="backward", max_ops=3, seed=9, workers=1,
                                    time_limit=GENEROUS_LIMIT, progress=True)
    assert "generating backward" in capsys.readouterr().err
    pairs = read_pairs(path)
    assert len(pairs) == report.written == 2
    assert all(pair.method == "backward" for pair in pairs)  # from the stats file
    stats = json.loads((tmp_path / "pairs.txt.stats.json").read_text())
    assert (stats["method"], stats["max_ops"], stats["seed"], stats["n_asked"]) == ("backward", 3, 9, 2)
    assert stats["counts"]["kept"] == 2 and stats["counts"]["tried"] == report.counts.tried
    assert report.stats_path == tmp_path / "pairs.txt.stats.json"
    assert "wrote 2 of 2 backward pairs" in report.summary()


def test_summary_is_one_line_with_the_reasons():
    counts = GenerationCounts(tried=130, kept=100, timed_out=3, errors=0, rejected={"too long": 9, "no x": 18})
    assert counts.summary() == "tried 130, kept 100, timed out 3, errors 0, rejected 27 (no x: 18, too long: 9)"
    counts.integral_sources = {"table": 2, "sympy": 5}
    assert counts.summary().endswith("; integral of f*G from sympy 5, table 2")


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"method": "sideways"}, "unknown symbolic generation method"),
        ({"n": 0}, "number of pairs"),
        ({"max_ops": 0}, "max_ops"),
        ({"workers": 0}, "workers"),
        ({"time_limit": 0}, "time limit"),
        ({"max_tokens": 0}, "max_tokens"),
    ],
)
def test_bad_arguments_raise(arguments, message):
    call = {"n": 2, "seed": 0, **arguments}
    with pytest.raises(NeuromathError, match=message):
        generate_with_counts(**call)


def test_repeated_inputs_are_merged_into_counts_unless_asked_not_to():
    """One-operator backward pairs repeat often (f = 1 from F = x, ...): kept once, their count| counting repeats."""
    merged, counts = generate_with_counts(12, 4, method="backward", max_ops=1, time_limit=GENEROUS_LIMIT)
    plain, plain_counts = generate_with_counts(12, 4, method="backward", max_ops=1, time_limit=GENEROUS_LIMIT,
                                               unique=False)
    keys = [canonical(e.source) for e in merged]
    assert len(set(keys)) == len(keys) == 12
    duplicates = counts.rejected.get(DUPLICATE, 0)
    assert duplicates > 0 and sum(e.count for e in merged) == 12 + duplicates
    assert counts.tried == counts.kept + counts.timed_out + counts.errors + sum(counts.rejected.values())
    assert len({canonical(e.source) for e in plain}) < 12 and all(e.count == 1 for e in plain)
    # the pairs kept without merging are, in order, the first occurrences of the merged ones
    first = []
    for e in plain:
        if canonical(e.source) not in [canonical(f.source) for f in first]:
            first.append(e)
    assert [(e.source, e.target) for e in first] == [(e.source, e.target) for e in merged[: len(first)]]
