"""Tests of neuromath/nn/tree_engine.py: the flattened forest, and the level-batched engine against plain recursion."""

from __future__ import annotations

import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neuromath.errors import ExpressionError
from neuromath.nn.tree_engine import TreeEncoder, make_tree_batch  # registers every tree cell
from neuromath.registry import TREE_CELLS

CELL_NAMES = TREE_CELLS.names()
ALL_CELLS = {"tree_rnn", "tree_lstm", "second_order_tree_rnn", "mtree_lstm", "mi_tree_lstm",
             "stack_mtree_lstm", "stack_mi_tree_lstm", "tree_smu", "tree_smu_lstm"}


def test_every_cell_of_the_issue_is_registered():
    assert ALL_CELLS <= set(CELL_NAMES)


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

# leaf tokens x=0, y=1, z=2, w=4; operators Add=1, Mul=2, sin=3 (unary)
X, Y, Z, W = (0, ()), (1, ()), (2, ()), (4, ())
TREE_A = (1, (X, (2, (Y, Z))))  # Add(x, Mul(y, z))
TREE_B = (3, (X,))  # sin(x)
TREE_C = W  # a single leaf
TREE_D = (2, ((1, (X, Y)), (3, (Z,))))  # Mul(Add(x, y), sin(z))


def test_make_tree_batch_matches_hand_built_forest():
    batch = make_tree_batch([TREE_A, TREE_B, TREE_C, TREE_D])
    # leaves in (tree, pre-order) order: x y z (A), x (B), w (C), x y z (D)
    # height 1 sorted by operator: Add(x,y) of D, Mul(y,z) of A, sin(x) of B, sin(z) of D
    # height 2: Add of A, Mul of D
    assert batch.level_starts == [0, 8, 12, 14]
    assert batch.node_ids.tolist() == [0, 1, 2, 0, 4, 0, 1, 2, 1, 2, 3, 3, 1, 2]
    assert batch.left.tolist() == [-1] * 8 + [5, 1, 3, 7, 0, 8]
    assert batch.right.tolist() == [-1] * 8 + [6, 2, -1, -1, 9, 11]
    assert batch.segments == [[], [(1, 0, 1), (2, 1, 2), (3, 2, 4)], [(1, 0, 1), (2, 1, 2)]]
    assert batch.roots.tolist() == [12, 10, 4, 13]
    assert batch.tree_index.tolist() == [0, 0, 0, 1, 2, 3, 3, 3, 3, 0, 1, 3, 0, 3]
    assert (batch.n_levels, batch.n_nodes, batch.n_trees) == (3, 14, 4)
    moved = batch.to("cpu")
    assert moved.left.tolist() == batch.left.tolist() and moved.segments == batch.segments


def test_make_tree_batch_of_single_leaf():
    batch = make_tree_batch([(3, ())])
    assert batch.level_starts == [0, 1]
    assert batch.segments == [[]]
    assert batch.node_ids.tolist() == [3]
    assert batch.left.tolist() == [-1] and batch.right.tolist() == [-1]
    assert batch.roots.tolist() == [0]


def test_make_tree_batch_of_deep_tree_needs_no_recursion():
    depth = 2000
    tree = (0, ())
    for level in range(depth):  # alternate unary sin(...) and binary Add(..., leaf)
        tree = (3, (tree,)) if level % 2 == 0 else (1, (tree, (1, ())))
    batch = make_tree_batch([tree])
    assert batch.n_levels == depth + 1
    assert batch.n_nodes == 1 + depth + depth // 2
    assert batch.roots.tolist() == [batch.n_nodes - 1]
    # every internal node's left child is the single node one level down
    internal_starts = batch.level_starts[1:-1]
    left_of_level = batch.left[internal_starts].tolist()
    assert left_of_level[0] in range(0, batch.level_starts[1])
    assert left_of_level[1:] == internal_starts[:-1]
    assert batch.level_starts[1] == 1 + depth // 2  # leaves
    rights = batch.right[internal_starts].tolist()
    assert all(right == -1 for right in rights[0::2])  # sin
    assert all(0 <= right < batch.level_starts[1] for right in rights[1::2])  # Add(..., leaf)


@pytest.mark.parametrize("bad", [[], [(1, (X, Y, Z))], [("a", ())], [(-1, ())], [(1, 2, 3)]])
def test_make_tree_batch_rejects_malformed_trees(bad):
    with pytest.raises(ExpressionError):
        make_tree_batch(bad)


def random_tree(rng: random.Random, height: int, n_leaf_tokens: int, n_operators: int):
    """A random tree of at most this height; operator 0 is unary, the others binary."""
    if height == 0 or rng.random() < 0.25:
        return (rng.randrange(n_leaf_tokens), ())
    operator_id = rng.randrange(n_operators)
    if operator_id == 0:
        return (operator_id, (random_tree(rng, height - 1, n_leaf_tokens, n_operators),))
    return (operator_id, tuple(random_tree(rng, height - 1, n_leaf_tokens, n_operators) for _ in range(2)))


def small_forest(seed: int) -> list:
    rng = random.Random(seed)
    trees = [random_tree(rng, 4, 5, 4) for _ in range(4)]
    trees.append((0, ((2, ((1, ()), (0, ((3, ()),)))),)))  # a unary root over a binary node with a unary child
    trees.append((2, ()))  # a single leaf
    return trees


@pytest.mark.parametrize("cell", CELL_NAMES)
def test_level_batched_forward_equals_recursion(cell):
    torch.manual_seed(0)
    encoder = TreeEncoder(cell, n_leaf_tokens=5, n_operators=4, hidden_size=6).double()
    trees = small_forest(seed=1)
    batch = make_tree_batch(trees)
    states = encoder(batch)
    assert states[0].shape == (batch.n_nodes, 6) and states[0].dtype == torch.float64
    for tree_index, tree in enumerate(trees):
        reference = torch.stack(encoder.recursive_forward(tree))  # (nodes of the tree, hidden)
        batched = states[0][batch.tree_index == tree_index]  # same relative order: (height, operator, pre-order)
        torch.testing.assert_close(batched, reference, rtol=0, atol=1e-6)
        assert int(batch.roots[tree_index]) == int((batch.tree_index == tree_index).nonzero()[-1])


@pytest.mark.parametrize("cell", CELL_NAMES)
def test_level_batched_gradients_equal_recursion(cell):
    torch.manual_seed(0)
    encoder = TreeEncoder(cell, n_leaf_tokens=5, n_operators=4, hidden_size=6).double()
    trees = small_forest(seed=2)
    readout = torch.randn(len(trees), 6, dtype=torch.float64)
    parameters = [parameter for parameter in encoder.parameters() if parameter.requires_grad]

    batch = make_tree_batch(trees)
    batched_value = (encoder(batch)[0][batch.roots] * readout).sum()
    batched_grads = torch.autograd.grad(batched_value, parameters, allow_unused=True)
    recursive_value = sum((encoder.recursive_forward(tree)[-1] * readout[i]).sum() for i, tree in enumerate(trees))
    recursive_grads = torch.autograd.grad(recursive_value, parameters, allow_unused=True)

    torch.testing.assert_close(batched_value, recursive_value, rtol=0, atol=1e-6)
    n_nonzero = 0
    for parameter, batched, recursive in zip(parameters, batched_grads, recursive_grads):
        batched = torch.zeros_like(parameter) if batched is None else batched
        recursive = torch.zeros_like(parameter) if recursive is None else recursive
        torch.testing.assert_close(batched, recursive, rtol=0, atol=1e-6)
        n_nonzero += int(batched.abs().sum() > 0)
    assert n_nonzero >= len(parameters) - 1  # the gradients reach (nearly) every parameter


@pytest.mark.parametrize("cell", CELL_NAMES)
def test_one_node_call_per_level(cell):
    encoder = TreeEncoder(cell, n_leaf_tokens=5, n_operators=4, hidden_size=4)
    calls = {"leaf": 0, "node": []}
    leaf, node = encoder.cell.leaf, encoder.cell.node

    def counting_leaf(embedded):
        calls["leaf"] += 1
        return leaf(embedded)

    def counting_node(operator_ids, *rest):
        calls["node"].append(operator_ids.shape[0])
        return node(operator_ids, *rest)

    encoder.cell.leaf, encoder.cell.node = counting_leaf, counting_node
    batch = make_tree_batch(small_forest(seed=3))
    encoder(batch)
    assert calls["leaf"] == 1
    assert calls["node"] == [batch.level_starts[k + 1] - batch.level_starts[k] for k in range(1, batch.n_levels)]


@pytest.mark.parametrize("cell", CELL_NAMES)
def test_unary_node_keeps_its_child(cell):
    """Changing the single child of a unary node changes the node's h (no product term wipes it out)."""
    torch.manual_seed(0)
    encoder = TreeEncoder(cell, n_leaf_tokens=5, n_operators=4, hidden_size=6).double()
    first = encoder(make_tree_batch([(0, ((1, ()),))]))[0][-1]
    second = encoder(make_tree_batch([(0, ((2, ()),))]))[0][-1]
    assert (first - second).abs().max() > 1e-3


def test_single_leaf_forward_is_the_leaf_state():
    torch.manual_seed(0)
    encoder = TreeEncoder("tree_lstm", n_leaf_tokens=5, n_operators=4, hidden_size=3)
    states = encoder(make_tree_batch([(4, ())]))
    expected = encoder.cell.leaf(encoder.leaf_embedding.weight[4:5])
    assert len(states) == 2
    for state, reference in zip(states, expected):
        torch.testing.assert_close(state, reference)


# ------------------------------------------------------------------------------------ numbers as evidence


def test_leaf_values_follow_the_leaves_node_order_and_mark_the_others_nan():
    # Add(x, Mul(2.5, z)) and sin(-0.25): leaves in (tree, pre-order) order x, 2.5, z, -0.25
    trees = [(1, (X, (2, ((5, (), 2.5), Z)))), (3, ((5, (), -0.25),))]
    batch = make_tree_batch(trees)
    assert batch.level_starts[1] == 4 and batch.leaf_values.shape == (4,)
    values = batch.leaf_values.tolist()
    assert torch.isnan(batch.leaf_values[[0, 2]]).all() and values[1] == 2.5 and values[3] == -0.25
    assert batch.node_ids[:4].tolist() == [0, 5, 2, 5]
    assert make_tree_batch([TREE_A]).leaf_values is None  # no value anywhere: nothing to carry
    assert batch.to("cpu").leaf_values is not None


@pytest.mark.parametrize("bad", [[(1, (X, Y), 2.0)], [(5, (), "two")], [(5, (), 1.0, 2.0)]])
def test_a_value_belongs_to_a_leaf_and_is_a_number(bad):
    with pytest.raises(ExpressionError, match="value"):
        make_tree_batch(bad)


def valued_forest(seed: int) -> list:
    """small_forest with a value on some leaves (token 4 stands for every decimal, like FLOAT_TOKEN)."""
    rng = random.Random(seed)

    def add_values(node):
        node_id, children = node[0], node[1]
        if not children:
            return (4, (), round(rng.uniform(-5, 5), 2)) if rng.random() < 0.5 else node
        return (node_id, tuple(add_values(child) for child in children))

    return [add_values(tree) for tree in small_forest(seed)]


@pytest.mark.parametrize("cell", ["tree_lstm", "tree_rnn", "stack_mtree_lstm", "tree_smu"])
def test_number_encoder_batched_equals_recursion_and_reads_the_values(cell):
    torch.manual_seed(0)
    encoder = TreeEncoder(cell, n_leaf_tokens=5, n_operators=4, hidden_size=6, number_encoder=True).double()
    trees = valued_forest(seed=3)
    batch = make_tree_batch(trees)
    states = encoder(batch)[0]
    for tree_index, tree in enumerate(trees):
        reference = torch.stack(encoder.recursive_forward(tree))
        torch.testing.assert_close(states[batch.tree_index == tree_index], reference, rtol=0, atol=1e-6)
    # the same tokens with other values give other leaf states; a plain encoder cannot tell them apart
    moved = make_tree_batch([(4, (), 1.25), (4, (), 1.5), (4, ())])
    leaves = encoder(moved)[0]
    assert not torch.allclose(leaves[0], leaves[1])
    torch.testing.assert_close(leaves[2], encoder.cell.leaf(encoder.leaf_embedding.weight[4:5])[0][0])
    plain = TreeEncoder(cell, n_leaf_tokens=5, n_operators=4, hidden_size=6).double()
    torch.testing.assert_close(plain(moved)[0][0], plain(moved)[0][1])


def test_number_encoder_features_separate_close_and_far_values_and_zero_nan():
    from neuromath.nn.tree_engine import NumberEncoder

    encoder = NumberEncoder(8)
    features = encoder.features(torch.tensor([0.5, 0.51, 50.0, float("nan"), float("inf")]))
    assert features.shape == (5, 2 + 2 * len(NumberEncoder.frequencies))
    assert (features[3] == 0).all() and (features[4] == 0).all()  # not a (finite) number: no evidence
    near = (features[0] - features[1]).norm()
    far = (features[0] - features[2]).norm()
    assert 0 < near < far
    assert (encoder(torch.tensor([float("nan")])) == 0).all()


def _valued_trees():
    from hypothesis import strategies as st

    value = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
    leaf = st.one_of(st.tuples(st.integers(0, 4), st.just(())), st.tuples(st.just(4), st.just(()), value))
    return st.recursive(
        leaf,
        lambda child: st.one_of(st.tuples(st.just(0), st.tuples(child)),
                                st.tuples(st.integers(1, 3), st.tuples(child, child))),
        max_leaves=12,
    )


def test_property_leaf_values_stay_with_their_leaves_and_batching_equals_recursion():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    torch.manual_seed(0)
    encoder = TreeEncoder("tree_lstm", n_leaf_tokens=5, n_operators=4, hidden_size=5, number_encoder=True).double()

    def leaves_in_preorder(tree):
        pending, found = [tree], []
        while pending:
            node = pending.pop()
            if not node[1]:
                found.append(node[2] if len(node) == 3 else None)
            pending.extend(reversed(node[1]))
        return found

    @settings(max_examples=40, deadline=None)
    @given(st.lists(_valued_trees(), min_size=1, max_size=4))
    def check(trees):
        batch = make_tree_batch(trees)
        expected = [value for tree in trees for value in leaves_in_preorder(tree)]  # leaves: (tree, pre-order)
        got = batch.leaf_values.tolist() if batch.leaf_values is not None else [None] * len(expected)
        assert len(got) == len(expected)
        for value, stored in zip(expected, got):
            assert (value is None and (stored is None or stored != stored)) or stored == pytest.approx(value)
        states = encoder(batch)[0]
        for tree_index, tree in enumerate(trees):
            reference = torch.stack(encoder.recursive_forward(tree))
            torch.testing.assert_close(states[batch.tree_index == tree_index], reference, rtol=0, atol=1e-6)

    check()


tree_shapes = st.recursive(
    st.integers(0, 4).map(lambda token: (token, ())),
    lambda children: st.one_of(
        children.map(lambda child: (0, (child,))),  # operator 0 is unary
        st.tuples(st.integers(1, 3), st.tuples(children, children)),
    ),
    max_leaves=12,
)


@settings(max_examples=25, deadline=None)
@given(trees=st.lists(tree_shapes, min_size=1, max_size=6), cell=st.sampled_from(["tree_lstm", "stack_mtree_lstm"]))
def test_property_the_level_buffers_give_the_states_and_gradients_of_recursion(trees, cell):
    """Any forest (unary and binary nodes, any mix of heights, single leaves): the engine's per-level gathers from
    its state buffers, written in place level by level, give recursion's root states and gradients."""
    torch.manual_seed(0)
    encoder = TreeEncoder(cell, n_leaf_tokens=5, n_operators=4, hidden_size=4).double()
    batch = make_tree_batch(trees)
    parameters = [parameter for parameter in encoder.parameters() if parameter.requires_grad]
    batched_value = encoder(batch)[0][batch.roots].sin().sum()
    recursive_value = sum(encoder.recursive_forward(tree)[-1].sin().sum() for tree in trees)
    torch.testing.assert_close(batched_value, recursive_value, rtol=0, atol=1e-9)
    for batched, recursive in zip(torch.autograd.grad(batched_value, parameters, allow_unused=True),
                                  torch.autograd.grad(recursive_value, parameters, allow_unused=True)):
        if batched is None or recursive is None:
            assert batched is None or not batched.any()
            assert recursive is None or not recursive.any()
        else:
            torch.testing.assert_close(batched, recursive, rtol=0, atol=1e-9)


@pytest.mark.parametrize("cell", ["tree_lstm", "mtree_lstm", "tree_smu"])
def test_a_graph_kept_for_a_second_backward_gives_the_same_gradients_and_every_node_state_carries_its_own(cell):
    """The level loop's shared gradient buffers start afresh at each backward (``_ReadRows``), and a loss on inner
    nodes' states (not only the roots') reaches the parameters as recursion's does."""
    torch.manual_seed(0)
    encoder = TreeEncoder(cell, n_leaf_tokens=5, n_operators=4, hidden_size=6).double()
    trees = small_forest(seed=3)
    batch = make_tree_batch(trees)
    parameters = [parameter for parameter in encoder.parameters() if parameter.requires_grad]
    states = encoder(batch)
    weights = torch.randn(states[0].shape, dtype=torch.float64)
    value = (states[0] * weights).sum() + sum(part.pow(2).sum() for part in states[1:2])
    first = torch.autograd.grad(value, parameters, retain_graph=True, allow_unused=True)
    second = torch.autograd.grad(value, parameters, allow_unused=True)
    for one, other in zip(first, second):
        assert (one is None) == (other is None)
        if one is not None:
            torch.testing.assert_close(one, other, rtol=0, atol=0)
    # a loss on every node's h, by recursion node at a time (make_tree_batch's order within each tree)
    hidden = torch.cat([torch.stack(encoder.recursive_forward(tree)) for tree in trees])
    order = torch.cat([(batch.tree_index == index).nonzero().squeeze(1) for index in range(len(trees))])
    got = torch.autograd.grad((encoder(batch)[0] * weights).sum(), parameters, allow_unused=True)
    want = torch.autograd.grad((hidden * weights[order]).sum(), parameters, allow_unused=True)
    for one, other in zip(got, want):
        assert (one is None) == (other is None)
        if one is not None:
            torch.testing.assert_close(one, other, rtol=0, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(trees=st.lists(_valued_trees(), min_size=1, max_size=6), flat=st.lists(st.booleans(), min_size=6, max_size=6))
def test_property_trees_flattened_once_batch_as_their_nested_tuples(trees, flat):
    """A dataset keeps its trees flat (``flatten_tree``); any mix of flat and nested trees makes the same batch."""
    from neuromath.nn.tree_batch import flatten_tree

    nested = make_tree_batch(trees)
    mixed = make_tree_batch([flatten_tree(tree) if pick else tree for tree, pick in zip(trees, flat)])
    for name in ("node_ids", "left", "right", "roots", "tree_index"):
        assert torch.equal(getattr(mixed, name), getattr(nested, name)), name
    assert mixed.level_starts == nested.level_starts and mixed.segments == nested.segments
    assert (mixed.leaf_values is None) == (nested.leaf_values is None)
    if nested.leaf_values is not None:
        assert torch.equal(mixed.leaf_values.isnan(), nested.leaf_values.isnan())
        assert torch.equal(mixed.leaf_values.nan_to_num(), nested.leaf_values.nan_to_num())
        assert nested.leaf_values.dtype == torch.get_default_dtype()
