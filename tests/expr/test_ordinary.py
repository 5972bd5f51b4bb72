"""Ordinary notation read without eval: the trees of hand-checked inputs, errors that name the place, and any tree
written with full brackets read back as itself."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuromath.errors import ExpressionError
from neuromath.expr.ordinary import parse_ordinary, parse_ordinary_equation
from neuromath.expr.symbolic_prefix import LEAVES, MAX_DEPTH, PrefixNode, node_tokens


@pytest.mark.parametrize("text, prefix", [
    ("x*cos(x)", "mul x cos x"),
    ("exp(x) * sin(x)", "mul exp x sin x"),
    ("-3*x^2 + 0.25", "add mul INT- 3 pow x INT+ 2 div INT+ 1 INT+ 4"),
    ("-x^2", "mul INT- 1 pow x INT+ 2"),  # -(x^2), not (-x)^2
    ("2^3^2", "pow INT+ 2 pow INT+ 3 INT+ 2"),  # right-associative
    ("x - 1 - c", "sub sub x INT+ 1 c"),  # left-associative
    ("x/2/c", "div div x INT+ 2 c"),
    ("log(x)**2", "pow ln x INT+ 2"),
    ("arctan(e^x)", "atan pow E x"),
    ("Y'' + Y' - Y", "sub add Y'' Y' Y"),
    ("sqrt(π)", "sqrt pi"),
    ("+x", "x"),
])
def test_hand_checked_trees(text, prefix):
    assert " ".join(node_tokens(parse_ordinary(text, LEAVES))) == prefix


@pytest.mark.parametrize("text, message", [
    ("2x", "at position 1: missing operator before 'x'"),
    ("sin x", "at position 0: the function 'sin' needs its argument in brackets"),
    ("foo(x)", "at position 0: unknown function 'foo'"),
    ("x + y", "at position 4: unknown name 'y'"),
    ("(x + 1", "at position 0: unclosed '('"),
    ("x)", "at position 1: unmatched ')'"),
    ("   ", "at position 0: empty expression"),
    ("x $ 2", "at position 2: unknown character '$'"),
    ("x +", "at position 3: incomplete"),
    ("x * * 2", "at position 4: expected a number, name or '(' but found '*'"),
    ("(" * (MAX_DEPTH + 5) + "x" + ")" * (MAX_DEPTH + 5), "nested too deeply"),
    ("-" * (MAX_DEPTH + 5) + "x", "nested too deeply"),
])
def test_bad_input_names_the_place_and_the_reason(text, message):
    with pytest.raises(ExpressionError, match=message.replace("(", r"\(").replace(")", r"\)").replace("$", r"\$")
                       .replace("*", r"\*").replace("+", r"\+")):
        parse_ordinary(text, LEAVES)


def test_an_equation_has_two_sides():
    left, right = parse_ordinary_equation("sin(x)^2 + cos(x)^2 = 1", ["x"])
    assert " ".join(node_tokens(left)) == "add pow sin x INT+ 2 pow cos x INT+ 2"
    assert right == PrefixNode("INT", value=1)
    for bad, message in [("x + 1", "needs '=' between its two sides"), ("x = 1 = x", "missing operator before '='"),
                         ("2x = 1", "missing operator before 'x'")]:
        with pytest.raises(ExpressionError, match=message):
            parse_ordinary_equation(bad, ["x"])


BINARY_SPELLING = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "^"}
trees = st.recursive(
    st.one_of(st.sampled_from(["x", "c", "pi", "Y'"]).map(PrefixNode),
              st.integers(0, 10**6).map(lambda value: PrefixNode("INT", value=value))),
    lambda children: st.one_of(
        st.tuples(st.sampled_from(list(BINARY_SPELLING)), children, children).map(
            lambda t: PrefixNode(t[0], (t[1], t[2]))),
        st.tuples(st.sampled_from(["sin", "exp", "ln", "acosh", "sqrt"]), children).map(
            lambda t: PrefixNode(t[0], (t[1],)))),
    max_leaves=12)


def bracketed(node: PrefixNode) -> str:
    if node.token == "INT":
        return str(node.value)
    if not node.children:
        return node.token
    if node.token in BINARY_SPELLING:
        left, right = node.children
        return f"({bracketed(left)} {BINARY_SPELLING[node.token]} {bracketed(right)})"
    return f"{node.token}({bracketed(node.children[0])})"


@given(trees)
def test_any_tree_written_with_brackets_reads_back_as_itself(tree):
    assert parse_ordinary(bracketed(tree), LEAVES) == tree
