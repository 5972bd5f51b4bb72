import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neuromath.errors import ExpressionError
from neuromath.expr.notation import format_infix, from_postfix, from_prefix, parse_infix, to_postfix, to_prefix
from neuromath.expr.numbers import NUMBER_REGEX
from neuromath.expr.tree import BINARY_OPERATORS, Node, node_paths


def leaf(value):
    return Node(value)


def as_node(operand):
    return operand if isinstance(operand, Node) else leaf(operand)


def binary(operator, left, right):
    return Node(operator, (as_node(left), as_node(right)))


def neg(operand):
    return Node("neg", (as_node(operand),))


# ---------------------------------------------------------------- infix parsing, hand-made cases


@pytest.mark.parametrize(
    "text, tree",
    [
        ("1 + 2 * 3", binary("+", "1", binary("*", "2", "3"))),
        ("(1 + 2) * 3", binary("*", binary("+", "1", "2"), "3")),
        ("1 - 2 - 3", binary("-", binary("-", "1", "2"), "3")),
        ("1 - (2 - 3)", binary("-", "1", binary("-", "2", "3"))),
        ("8 / 4 / 2", binary("/", binary("/", "8", "4"), "2")),
        ("8 / 4 * 2", binary("*", binary("/", "8", "4"), "2")),
        ("2 ^ 3 ^ 2", binary("^", "2", binary("^", "3", "2"))),
        ("2 * 3 ^ 2", binary("*", "2", binary("^", "3", "2"))),
        ("-x^2", neg(binary("^", "x", "2"))),
        ("(-x)^2", binary("^", neg("x"), "2")),
        ("2*-3", binary("*", "2", neg("3"))),
        ("2 - -3", binary("-", "2", neg("3"))),
        ("2^-3^2", binary("^", "2", neg(binary("^", "3", "2")))),
        ("-2 * 3", binary("*", neg("2"), "3")),
        ("--x", neg(neg("x"))),
        ("+x - +2", binary("-", "x", "2")),
        ("  n0\t+n1 ", binary("+", "n0", "n1")),
        ("2.50 + .5", binary("+", "2.50", ".5")),
        ("(2/5)", leaf("(2/5)")),
        ("(2 / 5)", binary("/", "2", "5")),
        ("((2/5))", leaf("(2/5)")),
        ("30% * 1(1/2)", binary("*", "30%", "1(1/2)")),
        ("2 × 3 ÷ 4", binary("/", binary("*", "2", "3"), "4")),
        ("5 − 1", binary("-", "5", "1")),
        ("2 ** 3", binary("^", "2", "3")),
        ("[1 + 2] * {3 - 4}", binary("*", binary("+", "1", "2"), binary("-", "3", "4"))),
        ("（1+2）*3", binary("*", binary("+", "1", "2"), "3")),
        ("pi * r_1 ^ 2", binary("*", "pi", binary("^", "r_1", "2"))),
    ],
)
def test_parse_infix(text, tree):
    assert parse_infix(text) == tree


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "position 0: empty expression"),
        ("   ", "position 0: empty expression"),
        ("(1 + 2", "position 0: unclosed '\\('"),
        ("1 + 2)", "position 5: unmatched '\\)'"),
        ("((1)", "position 0: unclosed"),
        ("(1 + 2]", "position 6: '\\]' does not match the '\\(' at position 0"),
        ("1 + * 2", "position 4: stray operator '\\*'"),
        ("* 2", "position 0: stray operator"),
        ("1 +", "position 3: incomplete expression"),
        ("2 ^", "position 3: incomplete expression"),
        ("()", "position 1: expected a number, identifier or '\\(' but found '\\)'"),
        ("2 3", "position 2: missing operator before '3'"),
        ("2x", "position 1: missing operator before 'x'"),
        ("2(3 + 1)", "position 1: missing operator before '\\('"),
        ("(2 3)", "position 3: missing operator before '3'"),
        ("x=2+3", "position 1: unknown character '='"),
        ("30 %", "position 3: unknown character '%'"),
        ("2 # 3", "position 2: unknown character '#'"),
        ("neg x", "position 0: 'neg' is reserved"),
    ],
)
def test_parse_infix_errors_name_position_and_reason(text, message):
    with pytest.raises(ExpressionError, match=message):
        parse_infix(text)


def test_deep_nesting_is_an_expression_error():
    with pytest.raises(ExpressionError, match="nested too deeply"):
        parse_infix("(" * 5000 + "1" + ")" * 5000)


# ---------------------------------------------------------------- infix formatting, hand-made cases


@pytest.mark.parametrize(
    "tree, text",
    [
        (binary("-", "135", "19"), "135 - 19"),
        (binary("-", "a", binary("-", "b", "c")), "a - (b - c)"),
        (binary("-", binary("-", "a", "b"), "c"), "a - b - c"),
        (binary("+", "a", binary("+", "b", "c")), "a + (b + c)"),
        (binary("/", "a", binary("*", "b", "c")), "a / (b * c)"),
        (binary("*", "a", binary("/", "b", "c")), "a * (b / c)"),
        (binary("*", binary("+", "a", "b"), "c"), "(a + b) * c"),
        (binary("-", "a", binary("*", "b", "c")), "a - b * c"),
        (neg(binary("+", "a", "b")), "-(a + b)"),
        (neg(binary("*", "a", "b")), "-(a * b)"),
        (neg(neg("a")), "--a"),
        (neg(binary("^", "a", "2")), "-a ^ 2"),
        (binary("+", "a", neg("b")), "a + -b"),
        (binary("*", neg("a"), "b"), "-a * b"),
        (binary("^", binary("^", "a", "b"), "c"), "(a ^ b) ^ c"),
        (binary("^", "a", binary("^", "b", "c")), "a ^ b ^ c"),
        (binary("^", "a", neg("2")), "a ^ -2"),
        (binary("^", neg("a"), "2"), "(-a) ^ 2"),
        (binary("^", binary("*", "a", "b"), binary("+", "c", "d")), "(a * b) ^ (c + d)"),
        (binary("/", "(2/5)", "1(1/2)"), "(2/5) / 1(1/2)"),
    ],
)
def test_format_infix(tree, text):
    assert format_infix(tree) == text
    assert parse_infix(text) == tree


@pytest.mark.parametrize(
    "tree, message",
    [
        (leaf("two words"), "neither a number literal nor an identifier"),
        (leaf("-2"), "neither a number literal nor an identifier"),
        (Node("+", (leaf("a"),)), "needs 2"),
        (Node("sin", (leaf("a"),)), "unknown operator"),
    ],
)
def test_format_infix_rejects_malformed_trees(tree, message):
    with pytest.raises(ExpressionError, match=message):
        format_infix(tree)


# ---------------------------------------------------------------- prefix and postfix, hand-made cases

SUM_OF_PRODUCT = binary("+", "a", binary("*", "b", "c"))


def test_prefix_and_postfix_tokens():
    assert to_prefix(SUM_OF_PRODUCT) == ["+", "a", "*", "b", "c"]
    assert to_postfix(SUM_OF_PRODUCT) == ["a", "b", "c", "*", "+"]
    tree = binary("-", neg("n0"), "(1/2)")
    assert to_prefix(tree) == ["-", "neg", "n0", "(1/2)"]
    assert to_postfix(tree) == ["n0", "neg", "(1/2)", "-"]


def test_from_prefix_and_postfix():
    assert from_prefix(["+", "a", "*", "b", "c"]) == SUM_OF_PRODUCT
    assert from_prefix("+ a * b c") == SUM_OF_PRODUCT
    assert from_postfix(["a", "b", "c", "*", "+"]) == SUM_OF_PRODUCT
    # operand order of non-commutative operators
    assert from_prefix(["-", "a", "b"]) == binary("-", "a", "b")
    assert from_postfix(["a", "b", "/"]) == binary("/", "a", "b")
    # any non-operator token is a leaf
    assert from_prefix(["*", "INT+", "sin"]) == binary("*", "INT+", "sin")


@pytest.mark.parametrize(
    "convert, tokens, message",
    [
        (from_prefix, ["+", "a"], "operator '\\+' at position 0 has 1 of its 2 operands"),
        (from_prefix, ["neg"], "has 0 of its 1 operands"),
        (from_prefix, ["a", "b"], "form 2 expressions"),
        (from_prefix, ["+", "a", "b", "c"], "form 2 expressions"),
        (from_prefix, [], "empty"),
        (from_postfix, ["a", "+"], "operator '\\+' at position 1 has 1 of its 2 operands"),
        (from_postfix, ["a", "b"], "form 2 expressions"),
        (from_postfix, "", "empty"),
    ],
)
def test_incomplete_prefix_and_postfix(convert, tokens, message):
    with pytest.raises(ExpressionError, match=message):
        convert(tokens)


def test_to_prefix_rejects_operator_with_wrong_arity():
    with pytest.raises(ExpressionError, match="needs 2"):
        to_prefix(binary("+", "a", Node("*", (leaf("b"),))))
    with pytest.raises(ExpressionError, match="needs 1"):
        to_postfix(leaf("neg"))


# ---------------------------------------------------------------- properties on random trees

identifiers = st.one_of(
    st.sampled_from(["x", "n0", "n12", "pi", "π", "_t"]),
    st.from_regex(r"[a-z][a-z0-9_]{0,3}", fullmatch=True).filter(lambda name: name != "neg"),
)
digits = st.from_regex(r"[0-9]{1,4}", fullmatch=True)  # leading zeros allowed: "007" stays "007"
decimals = st.one_of(
    st.builds(lambda whole, part: f"{whole}.{part}", digits, digits),
    digits.map(lambda part: f".{part}"),
)
fractions = st.builds(lambda top, bottom: f"({top}/{bottom})", digits, digits)
number_literals = st.one_of(
    digits,
    decimals,
    fractions,
    st.one_of(digits, decimals).map(lambda number: number + "%"),
    st.builds(lambda whole, fraction: whole + fraction, digits, fractions),
)
leaves = st.one_of(identifiers, number_literals).map(Node)
trees = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.builds(
            lambda operator, left, right: Node(operator, (left, right)),
            st.sampled_from(BINARY_OPERATORS),
            children,
            children,
        ),
        children.map(lambda operand: Node("neg", (operand,))),
    ),
    max_leaves=12,
)


def grouping_parenthesis_pairs(text):
    """Positions of matching parentheses in formatted infix, skipping those inside number literals."""
    pairs, open_positions, position = [], [], 0
    while position < len(text):
        literal = NUMBER_REGEX.match(text, position)
        if literal:
            position = literal.end()
            continue
        if text[position] == "(":
            open_positions.append(position)
        elif text[position] == ")":
            pairs.append((open_positions.pop(), position))
        position += 1
    return pairs


@settings(max_examples=200, deadline=None)
@given(trees)
def test_infix_round_trip_with_minimal_parentheses(tree):
    text = format_infix(tree)
    assert parse_infix(text) == tree
    assert " ".join(text.split()) == text  # single spaces, none at the ends
    for opening, closing in grouping_parenthesis_pairs(text):
        without_pair = text[:opening] + text[opening + 1 : closing] + text[closing + 1 :]
        try:
            assert parse_infix(without_pair) != tree, f"parentheses in {text!r} are not needed"
        except ExpressionError:
            pass


@settings(max_examples=200, deadline=None)
@given(trees)
def test_prefix_and_postfix_round_trips(tree):
    prefix = to_prefix(tree)
    assert from_prefix(prefix) == tree
    assert from_prefix(" ".join(prefix)) == tree
    assert from_postfix(to_postfix(tree)) == tree
    # prefix -> tree -> postfix -> tree
    assert from_postfix(to_postfix(from_prefix(prefix))) == tree
    assert to_prefix(from_prefix(prefix)) == prefix


@settings(max_examples=200, deadline=None)
@given(trees)
def test_node_paths_follow_prefix_order(tree):
    prefix = to_prefix(tree)
    paths = node_paths(tree)
    assert len(paths) == len(prefix)
    for path, token in zip(paths, prefix):
        node = tree
        for index in path:
            node = node.children[index]
        assert node.value == token


@settings(max_examples=200, deadline=None)
@given(trees)
def test_dropping_one_token_breaks_prefix_and_postfix(tree):
    prefix = to_prefix(tree)
    if len(prefix) > 1:
        with pytest.raises(ExpressionError):
            from_prefix(prefix[:-1])
        with pytest.raises(ExpressionError):
            from_postfix(to_postfix(tree)[1:])
