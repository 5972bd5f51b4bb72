import pytest

from neuromath.errors import ExpressionError
from neuromath.expr.notation import from_postfix, from_prefix, parse_infix
from neuromath.expr.tree import (
    ARITY,
    MAX_DEPTH,
    OPERATORS,
    Node,
    check_arity,
    check_depth,
    depth,
    node_paths,
    preorder,
    substitute,
)


def leaf(value):
    return Node(value)


# + a * b c
SUM_OF_PRODUCT = Node("+", (leaf("a"), Node("*", (leaf("b"), leaf("c")))))


def test_operator_tables():
    assert OPERATORS == ("+", "-", "*", "/", "^", "neg")
    assert ARITY == {"+": 2, "-": 2, "*": 2, "/": 2, "^": 2, "neg": 1}


def test_node_is_hashable_and_list_children_become_a_tuple():
    node = Node("+", [leaf("a"), leaf("b")])
    assert node.children == (leaf("a"), leaf("b"))
    assert node == Node("+", (leaf("a"), leaf("b")))
    assert len({node, Node("+", (leaf("a"), leaf("b")))}) == 1
    assert not node.is_leaf and leaf("a").is_leaf


def test_node_paths_pre_order():
    assert node_paths(SUM_OF_PRODUCT) == [(), (0,), (1,), (1, 0), (1, 1)]
    assert node_paths(leaf("x")) == [()]


def test_node_paths_with_unary_and_left_deep_tree():
    # neg (- (- a b) c): paths follow child indices from the root
    tree = Node("neg", (Node("-", (Node("-", (leaf("a"), leaf("b"))), leaf("c"))),))
    assert node_paths(tree) == [(), (0,), (0, 0), (0, 0, 0), (0, 0, 1), (0, 1)]


def test_depth():
    assert depth(leaf("x")) == 1
    assert depth(SUM_OF_PRODUCT) == 3
    assert depth(Node("neg", (SUM_OF_PRODUCT,))) == 4
    # depth counts the longest branch, not the first one
    assert depth(Node("+", (SUM_OF_PRODUCT, leaf("d")))) == 4
    assert depth(Node("+", (leaf("d"), SUM_OF_PRODUCT))) == 4


def test_substitute_replaces_leaves_by_value_only():
    tree = Node("+", (leaf("n0"), Node("*", (leaf("n1"), leaf("n0")))))
    result = substitute(tree, {"n0": "3", "n1": Node("neg", (leaf("x"),)), "+": "oops"})
    assert result == Node("+", (leaf("3"), Node("*", (Node("neg", (leaf("x"),)), leaf("3")))))


def test_check_arity():
    check_arity(SUM_OF_PRODUCT)
    check_arity(leaf("x"))
    with pytest.raises(ExpressionError, match="needs 2"):
        check_arity(Node("+", (leaf("a"),)))
    with pytest.raises(ExpressionError, match="needs 1"):
        check_arity(leaf("neg"))
    with pytest.raises(ExpressionError, match="unknown operator 'sin'"):
        check_arity(Node("sin", (leaf("x"),)))


def test_preorder_visits_parents_before_children_left_to_right():
    tree = Node("+", (Node("*", (Node("a"), Node("b"))), Node("neg", (Node("c"),))))
    assert [node.value for node in preorder(tree)] == ["+", "*", "a", "b", "neg", "c"]
    deep = Node("x")
    for _ in range(5000):  # no recursion limit
        deep = Node("neg", (deep,))
    assert sum(1 for _ in preorder(deep)) == 5001


def test_check_depth_refuses_a_tree_deeper_than_max_depth():
    deep = Node("x")
    for _ in range(MAX_DEPTH - 1):
        deep = Node("neg", (deep,))
    check_depth(deep)  # MAX_DEPTH levels
    with pytest.raises(ExpressionError, match=f"expression nested too deeply: 101 levels, at most {MAX_DEPTH}"):
        check_depth(Node("neg", (deep,)))


@pytest.mark.parametrize(
    "read",
    [
        lambda: from_prefix(["neg"] * 2000 + ["n0"]),
        lambda: from_postfix(["n0"] + ["neg"] * 2000),
        lambda: from_prefix(["+"] * 2000 + ["1"] * 2001),
        lambda: parse_infix("+".join(["1"] * 2000)),  # a long chain is deep without any bracket
        lambda: parse_infix("-" * 2000 + "1"),
        lambda: parse_infix("2^" * 2000 + "2"),
        lambda: parse_infix("(" * 2000 + "1" + ")" * 2000),
    ],
)
def test_trees_read_from_text_deeper_than_max_depth_are_an_expression_error(read):
    # Formatting, normalising and comparing trees recurse: deeper trees are refused where they are read.
    with pytest.raises(ExpressionError, match="nested too deeply"):
        read()
