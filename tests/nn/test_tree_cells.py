"""Tests of neuromath/nn/tree_cells.py: per-operator products, each cell's equations, and that every cell learns."""

from __future__ import annotations

import random

import pytest
import torch
import torch.nn.functional as F

from neuromath.config import load_config
from neuromath.errors import ConfigError
from neuromath.models.classifiers import build_classifier
from neuromath.nn.operator_products import (
    operator_bilinear,
    operator_linear,
    operator_slices_per_batch,
    per_operator,
)
from neuromath.nn.tree_engine import TreeEncoder, make_tree_batch  # registers every tree cell
from neuromath.registry import TREE_CELLS

CELL_NAMES = TREE_CELLS.names()


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def runs_of(operator_ids: list[int]) -> list[tuple[int, int, int]]:
    runs, start = [], 0
    for index in range(1, len(operator_ids) + 1):
        if index == len(operator_ids) or operator_ids[index] != operator_ids[start]:
            runs.append((operator_ids[start], start, index))
            start = index
    return runs


@pytest.mark.parametrize("operator_ids", [[0, 0, 1, 3, 3, 3, 4], [2, 2, 2]])
@pytest.mark.parametrize("with_bias", [True, False])
def test_operator_linear_equals_row_loop(operator_ids, with_bias):
    torch.manual_seed(0)
    inputs = torch.randn(len(operator_ids), 3, dtype=torch.float64, requires_grad=True)
    weight = torch.randn(5, 3, 4, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(5, 4, dtype=torch.float64, requires_grad=True) if with_bias else None
    result = operator_linear(inputs, weight, bias, runs_of(operator_ids))
    expected = torch.stack([
        inputs[row] @ weight[op] + (bias[op] if with_bias else 0.0) for row, op in enumerate(operator_ids)
    ])
    torch.testing.assert_close(result, expected)
    direction = torch.randn_like(expected)
    tensors = [inputs, weight] + ([bias] if with_bias else [])
    for got, want in zip(torch.autograd.grad((result * direction).sum(), tensors),
                         torch.autograd.grad((expected * direction).sum(), tensors)):
        torch.testing.assert_close(got, want)


def test_operator_bilinear_equals_row_loop():
    torch.manual_seed(0)
    operator_ids = [0, 1, 1, 2, 2]
    left = torch.randn(5, 3, dtype=torch.float64)
    right = torch.randn(5, 2, dtype=torch.float64)
    weight = torch.randn(3, 3, 2, 4, dtype=torch.float64)
    result = operator_bilinear(left, right, weight, runs_of(operator_ids))
    expected = torch.zeros(5, 4, dtype=torch.float64)
    for row, op in enumerate(operator_ids):
        for i in range(3):
            for j in range(2):
                expected[row] += left[row, i] * weight[op, i, j] * right[row, j]
    torch.testing.assert_close(result, expected)


def lstm_update(pre, left_memory, right_memory):
    """The Tree-LSTM memory update written out for one node; pre ordered [i, f_l, f_r, o, u]."""
    i, f_l, f_r, o, u = pre.chunk(5, dim=-1)
    memory = torch.sigmoid(i) * torch.tanh(u) + torch.sigmoid(f_l) * left_memory + torch.sigmoid(f_r) * right_memory
    return torch.sigmoid(o) * torch.tanh(memory), memory


def one_node_reference(cell_name, cell, op, h_l, c_l, h_r, c_r, has_right):
    """Each cell's equation for a single node, from its parameters, without the batched helpers."""
    if cell_name == "tree_rnn":
        return (torch.tanh(torch.cat([h_l, h_r]) @ cell.weight[op] + cell.bias[op]),)
    if cell_name == "tree_lstm":
        return lstm_update(torch.cat([h_l, h_r]) @ cell.weight[op] + cell.bias[op], c_l, c_r)
    if cell_name == "second_order_tree_rnn":
        second_order = torch.einsum("i,ijk,j->k", h_l, cell.tensor_weight[op], h_r)
        return (torch.tanh(second_order + torch.cat([h_l, h_r]) @ cell.weight[op] + cell.bias[op]),)
    if cell_name == "mtree_lstm":
        right_factor = h_r @ cell.right_weight[op] if has_right else torch.ones_like(h_l)
        intermediate = (h_l @ cell.left_weight[op]) * right_factor
        first_order = torch.cat([h_l, h_r]) @ cell.child_weight[op]
        return lstm_update(intermediate @ cell.weight[op] + first_order + cell.bias[op], c_l, c_r)
    if cell_name == "mi_tree_lstm":
        left_projected, right_projected = h_l @ cell.left_weight[op], h_r @ cell.right_weight[op]
        product = cell.alpha[op] * left_projected * (right_projected if has_right else 1.0)
        pre = product + cell.beta_left[op] * left_projected + cell.beta_right[op] * right_projected + cell.bias[op]
        return lstm_update(pre, c_l, c_r)
    raise AssertionError(cell_name)


@pytest.mark.parametrize("cell_name", ["tree_rnn", "tree_lstm", "second_order_tree_rnn", "mtree_lstm", "mi_tree_lstm"])
def test_cell_node_follows_its_equations(cell_name):
    torch.manual_seed(0)
    hidden, n_operators = 4, 3
    cell = TREE_CELLS.get(cell_name)(hidden, n_operators).double()
    with torch.no_grad():  # move the multiplicative-integration scalars off their initial values
        for name in ("alpha", "beta_left", "beta_right"):
            if hasattr(cell, name):
                getattr(cell, name).normal_()
    operator_ids = [0, 2, 2, 2]
    has_right = torch.tensor([[1.0], [1.0], [0.0], [1.0]], dtype=torch.float64)
    n = len(operator_ids)
    left = (torch.randn(n, hidden, dtype=torch.float64), torch.randn(n, hidden, dtype=torch.float64))
    right = (torch.randn(n, hidden, dtype=torch.float64) * has_right,
             torch.randn(n, hidden, dtype=torch.float64) * has_right)  # the empty state (zeros) where unary
    is_lstm = len(cell.empty_state(1, left[0])) == 2
    left, right = (left, right) if is_lstm else ((left[0],), (right[0],))
    state = cell.node(torch.tensor(operator_ids), runs_of(operator_ids), left, right, has_right)
    for row, op in enumerate(operator_ids):
        c_l, c_r = (left[1][row], right[1][row]) if is_lstm else (None, None)
        expected = one_node_reference(cell_name, cell, op, left[0][row], c_l, right[0][row], c_r,
                                      bool(has_right[row, 0]))
        for got, want in zip(state, expected):
            torch.testing.assert_close(got[row], want)


@pytest.mark.parametrize("cell_name", CELL_NAMES)
def test_empty_state_has_the_structure_of_a_leaf_state(cell_name):
    cell = TREE_CELLS.get(cell_name)(5, 3)
    embedded = torch.randn(2, 5)
    leaf_state = cell.leaf(embedded)
    empty = cell.empty_state(3, embedded)
    assert len(empty) == len(leaf_state)
    for empty_part, leaf_part in zip(empty, leaf_state):
        assert empty_part.shape[1:] == leaf_part.shape[1:] and empty_part.shape[0] == 3
        assert not empty_part.any()


def test_unknown_cell_option_is_a_config_error():
    with pytest.raises(ConfigError):
        TREE_CELLS.get("tree_lstm")(4, 2, no_such_option=1)


@pytest.mark.parametrize("cell_name", ["tree_rnn", "second_order_tree_rnn"])
def test_tree_rnn_cells_take_the_sigmoid_activation(cell_name):
    """activation="sigmoid" applies sigmoid where the default applies tanh, to the same pre-activation."""
    torch.manual_seed(0)
    hidden, operator_ids = 4, [0, 1, 1]
    default = TREE_CELLS.get(cell_name)(hidden, 2).double()
    sigmoid = TREE_CELLS.get(cell_name)(hidden, 2, activation="sigmoid").double()
    sigmoid.load_state_dict(default.state_dict())
    left, right = (torch.randn(3, hidden, dtype=torch.float64),), (torch.randn(3, hidden, dtype=torch.float64),)
    has_right = torch.ones(3, 1, dtype=torch.float64)
    args = (torch.tensor(operator_ids), runs_of(operator_ids), left, right, has_right)
    with torch.no_grad():
        tanh_h, sigmoid_h = default.node(*args)[0], sigmoid.node(*args)[0]
    assert (tanh_h < 0).any() and (sigmoid_h > 0).all()
    torch.testing.assert_close(sigmoid_h, torch.sigmoid(torch.atanh(tanh_h)))
    with pytest.raises(ConfigError, match="tree_activation must be one of tanh, sigmoid; got 'relu'"):
        TREE_CELLS.get(cell_name)(hidden, 2, activation="relu")


def test_the_classifier_passes_model_tree_activation_to_the_cells_that_take_it():
    vocab = [str(index) for index in range(6)]
    for name in ("tree_rnn", "second_order_tree_rnn"):
        config = load_config(None, ["data.task=identities", f"model.name={name}", "model.tree_activation=sigmoid"])
        assert build_classifier(config.model, vocab).encoder.cell.activation is torch.sigmoid
    config = load_config(None, ["data.task=identities", "model.name=tree_rnn"])
    assert build_classifier(config.model, vocab).encoder.cell.activation is torch.tanh


def test_second_order_unary_node_is_first_order():
    """With no right child the product term vanishes and the first-order term carries the child."""
    torch.manual_seed(0)
    cell = TREE_CELLS.get("second_order_tree_rnn")(3, 2).double()
    h_l = torch.randn(1, 3, dtype=torch.float64)
    (h,) = cell.node(torch.tensor([1]), [(1, 0, 1)], (h_l,), cell.empty_state(1, h_l),
                     torch.zeros(1, 1, dtype=torch.float64))
    torch.testing.assert_close(h[0], torch.tanh(h_l[0] @ cell.weight[1][:3] + cell.bias[1]))


# --- learning: every cell must learn a task that needs composition through the tree ---

def random_tree(rng: random.Random, height: int):
    """Leaf tokens 0/1; operators 0 (unary), 1 and 2 (binary)."""
    if height == 0 or (height < 3 and rng.random() < 0.3):
        return (rng.randrange(2), ())
    operator_id = rng.randrange(3)
    if operator_id == 0:
        return (0, (random_tree(rng, height - 1),))
    return (operator_id, (random_tree(rng, height - 1), random_tree(rng, height - 1)))


def outermost_leaves(tree) -> tuple[int, int]:
    leftmost = rightmost = tree
    while leftmost[1]:
        leftmost = leftmost[1][0]
    while rightmost[1]:
        rightmost = rightmost[1][-1]
    return leftmost[0], rightmost[0]


def labelled_trees(rng: random.Random, n: int):
    trees = [random_tree(rng, 3) for _ in range(n)]
    labels = torch.tensor([float(len(set(outermost_leaves(tree))) == 1) for tree in trees])
    return make_tree_batch(trees), labels


@pytest.mark.parametrize("cell_name", CELL_NAMES)
def test_cell_learns_whether_outermost_leaves_are_equal(cell_name):
    """Label: the left-most leaf token equals the right-most one, which needs both subtrees' information at the
    root. Trained on 1024 trees, judged on 256 others (the majority class is below 60%)."""
    torch.manual_seed(0)
    rng = random.Random(0)
    batch, labels = labelled_trees(rng, 1024)
    held_out_batch, held_out_labels = labelled_trees(rng, 256)
    encoder = TreeEncoder(cell_name, n_leaf_tokens=2, n_operators=3, hidden_size=12)
    readout = torch.nn.Linear(12, 1)
    optimizer = torch.optim.Adam([*encoder.parameters(), *readout.parameters()], lr=0.03)
    losses = []
    for _ in range(60):
        logits = readout(encoder(batch)[0][batch.roots]).squeeze(1)
        loss = F.binary_cross_entropy_with_logits(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        held_out_logits = readout(encoder(held_out_batch)[0][held_out_batch.roots]).squeeze(1)
    accuracy = ((held_out_logits > 0).float() == held_out_labels).float().mean().item()
    assert max(held_out_labels.mean().item(), 1 - held_out_labels.mean().item()) < 0.6
    assert losses[-1] < 0.3 * losses[0], losses[::10]
    assert accuracy > 0.8, accuracy


def test_a_stacked_weight_is_cut_into_operators_once_per_batch_and_only_inside_one():
    weight = torch.randn(3, 4, 2, requires_grad=True)
    assert per_operator(weight) is not per_operator(weight)  # outside a batch: cut at every call
    with operator_slices_per_batch():
        first = per_operator(weight)
        assert per_operator(weight) is first and len(first) == 3
        assert per_operator(weight.view(3, 8)) is not first  # another shape is another cut
        assert per_operator(weight.view(3, 8)) is per_operator(weight.view(3, 8))  # operator_bilinear's reshape
        with operator_slices_per_batch():
            assert per_operator(weight) is not first  # a nested batch (another forward) cuts its own
    with operator_slices_per_batch():
        assert per_operator(weight) is not first  # and so does the next batch, after an optimiser step


@pytest.mark.parametrize("with_bias", [True, False])
def test_inside_a_batch_the_weight_gradient_summed_once_per_operator_equals_autograd_per_run(with_bias):
    """Three levels read one stacked weight; inside ``operator_slices_per_batch`` its gradient is computed once at the
    end from every level's rows (``_DeferredWeightGradient``), and must equal the per-run products of autograd."""
    torch.manual_seed(0)
    weight = torch.randn(4, 3, 3, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(4, 3, dtype=torch.float64, requires_grad=True) if with_bias else None
    leaves = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    levels = [[0, 0, 2, 3, 3], [1, 1, 2], [3]]  # operator 1 only in the middle level, every level a run of 3

    def forward():
        states, outputs = leaves, []
        for operator_ids in levels:
            states = torch.tanh(operator_linear(states[: len(operator_ids)], weight, bias, runs_of(operator_ids)))
            outputs.append(states.sum(0))
        return torch.stack(outputs)

    direction = torch.randn(3, 3, dtype=torch.float64)
    tensors = [leaves, weight] + ([bias] if with_bias else [])
    expected = forward()
    want = torch.autograd.grad((expected * direction).sum(), tensors)
    with operator_slices_per_batch():
        result = forward()
        one_level = operator_linear(leaves, weight, bias, runs_of([0, 0, 2, 3, 3]))
    assert type(one_level.grad_fn).__name__ == "_OperatorProductBackward"  # the deferred path ran
    torch.testing.assert_close(result, expected)
    loss = (result * direction).sum()
    for _ in range(2):  # a second backward of the same graph collects its own rows
        got = torch.autograd.grad(loss, tensors, retain_graph=True)
        for one, other in zip(got, want):
            torch.testing.assert_close(one, other)
    weight.grad = None  # .backward reaches the parameter through autograd, as optimisers and DDP's hooks need
    loss.backward()
    torch.testing.assert_close(weight.grad, want[1])
