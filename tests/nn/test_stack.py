"""Tests of neuromath/nn/stack.py (the soft stack) and neuromath/nn/tree_stack_cells.py (the stack tree cells)."""

import random

import pytest
import torch
from torch import nn

from neuromath.errors import ConfigError
from neuromath.nn.stack import StackController, empty_stack, soft_stack_update, stack_top
from neuromath.nn.tree_engine import TreeEncoder, make_tree_batch
from neuromath.registry import TREE_CELLS


def column(*values):
    return torch.tensor(values, dtype=torch.float64).unsqueeze(-1)  # (n, 1)


def test_soft_update_matches_hand_computed_values():
    stack = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]], dtype=torch.float64)  # (1, 3, 2)
    pushed = torch.tensor([[7.0, 8.0]], dtype=torch.float64)
    new = soft_stack_update(stack, column(0.5), column(0.3), column(0.2), pushed)
    # new[0] = .5*[7,8] + .3*[3,4] + .2*[1,2]; new[1] = .5*[1,2] + .3*[5,6] + .2*[3,4];
    # new[2] = .5*[3,4] + .3*0 (below the bottom) + .2*[5,6]
    expected = torch.tensor([[[4.6, 5.6], [2.6, 3.6], [2.5, 3.2]]], dtype=torch.float64)
    torch.testing.assert_close(new, expected)


def test_rows_use_their_own_actions():
    stack = torch.tensor([[[1.0], [2.0]], [[3.0], [4.0]]], dtype=torch.float64)  # (2, 2, 1)
    pushed = torch.tensor([[9.0], [8.0]], dtype=torch.float64)
    new = soft_stack_update(stack, column(1.0, 0.0), column(0.0, 0.25), column(0.0, 0.75), pushed)
    # row 0: hard push of 9 (the bottom 2 falls off); row 1: .25 * pop ([4, 0]) + .75 * [3, 4]
    expected = torch.tensor([[[9.0], [1.0]], [[3.25], [3.0]]], dtype=torch.float64)
    torch.testing.assert_close(new, expected)


def test_one_hot_actions_behave_like_a_bounded_list_stack():
    depth = 3
    operations = [("push", 1.0), ("push", 2.0), ("noop", None), ("push", 3.0), ("push", 4.0), ("pop", None),
                  ("pop", None), ("push", 5.0), ("pop", None), ("pop", None), ("pop", None)]
    reference: list[float] = []  # top first, bounded to depth
    stack = empty_stack(1, depth, 1, like=torch.zeros(1, dtype=torch.float64))
    for operation, value in operations:
        push, pop, noop = (column(float(operation == name)) for name in ("push", "pop", "noop"))
        pushed = torch.tensor([[value if value is not None else -1.0]], dtype=torch.float64)
        stack = soft_stack_update(stack, push, pop, noop, pushed)
        if operation == "push":
            reference = ([value] + reference)[:depth]
        elif operation == "pop":
            reference = reference[1:]
        padded = reference + [0.0] * (depth - len(reference))
        assert stack[0, :, 0].tolist() == padded
        assert stack_top(stack)[0, 0].item() == padded[0]


def test_gradients_are_those_of_the_mixture():
    generator = torch.Generator().manual_seed(0)
    stack = torch.randn(3, 4, 2, generator=generator, dtype=torch.float64, requires_grad=True)
    logits = torch.randn(3, 3, generator=generator, dtype=torch.float64, requires_grad=True)
    pushed = torch.randn(3, 2, generator=generator, dtype=torch.float64, requires_grad=True)

    def update(stack, logits, pushed):
        push, pop, noop = torch.softmax(logits, dim=-1).split(1, dim=-1)
        return soft_stack_update(stack, push, pop, noop, pushed)

    assert torch.autograd.gradcheck(update, (stack, logits, pushed))


def test_actions_may_be_chosen_per_coordinate():
    """(n, width) actions: each coordinate of the stack is its own mixture, as a loop over coordinates computes."""
    generator = torch.Generator().manual_seed(3)
    stack = torch.randn(2, 3, 4, generator=generator, dtype=torch.float64)
    pushed = torch.randn(2, 4, generator=generator, dtype=torch.float64)
    push, pop, noop = torch.softmax(torch.randn(3, 2, 4, generator=generator, dtype=torch.float64), dim=0)
    new = soft_stack_update(stack, push, pop, noop, pushed)
    for k in range(4):
        expected = soft_stack_update(stack[:, :, k: k + 1], push[:, k: k + 1], pop[:, k: k + 1],
                                     noop[:, k: k + 1], pushed[:, k: k + 1])
        torch.testing.assert_close(new[:, :, k: k + 1], expected)


def test_bad_shapes_are_rejected():
    stack = torch.zeros(2, 3, 4)
    ones = torch.ones(2, 1)
    with pytest.raises(ValueError, match="push"):
        soft_stack_update(stack, torch.ones(2), ones, ones, torch.zeros(2, 4))
    with pytest.raises(ValueError, match="push"):
        soft_stack_update(stack, torch.ones(2, 3), ones, ones, torch.zeros(2, 4))
    with pytest.raises(ValueError, match="pushed"):
        soft_stack_update(stack, ones, ones, ones, torch.zeros(2, 5))
    with pytest.raises(ConfigError):
        StackController(0, 4)


def test_controller_gives_a_softmax_and_a_sigmoid_push():
    controller = StackController(hidden_size=2, width=3).double()
    with torch.no_grad():
        controller.action.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]))
        controller.action.bias.zero_()
        controller.push_value.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
        controller.push_value.bias.copy_(torch.tensor([0.0, 0.0, -1.0]))
    hidden = torch.tensor([[2.0, -1.0]], dtype=torch.float64)
    push, pop, noop, pushed = controller(hidden)
    total = torch.exp(torch.tensor(2.0)) + torch.exp(torch.tensor(-1.0)) + 1.0
    torch.testing.assert_close(push, column(float(torch.exp(torch.tensor(2.0)) / total)))
    torch.testing.assert_close(pop, column(float(torch.exp(torch.tensor(-1.0)) / total)))
    torch.testing.assert_close(noop, column(float(1.0 / total)))
    torch.testing.assert_close(pushed, torch.sigmoid(torch.tensor([[2.0, -1.0, 0.0]], dtype=torch.float64)))


# ---------------------------------------------------------------------------------------------------------------
# The stack-augmented tree cells (neuromath/nn/tree_stack_cells.py), checked row by row against their equations
# written out with plain loops, and by learning a tiny task through the level-batched engine.

STACK_CELLS = ["stack_mtree_lstm", "stack_mi_tree_lstm", "tree_smu_lstm"]  # (h, c, stack) states
HIDDEN, DEPTH, N_OPERATORS = 3, 4, 3


def randomised_cell(name, seed=0):
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        cell = TREE_CELLS.get(name)(HIDDEN, N_OPERATORS, stack_depth=DEPTH).double()
    with torch.no_grad():
        for parameter in cell.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator, dtype=torch.float64) * 0.6)
    return cell


def children_states(generator, n, has_right):
    """Random (h, c, stack) of n left and n right children; a missing right child is the empty state (zeros)."""
    def state():
        return (torch.randn(n, HIDDEN, generator=generator, dtype=torch.float64),
                torch.randn(n, HIDDEN, generator=generator, dtype=torch.float64),
                torch.randn(n, DEPTH, HIDDEN, generator=generator, dtype=torch.float64))
    left, right = state(), state()
    right = tuple(part * has_right.view(-1, *[1] * (part.dim() - 1)) for part in right)
    return left, right


def reference_stack_update(stack, push, pop, noop, pushed):
    """One row's soft stack update with an explicit loop over the depth."""
    new = torch.zeros_like(stack)
    for i in range(stack.shape[0]):
        above = pushed if i == 0 else stack[i - 1]
        below = stack[i + 1] if i + 1 < stack.shape[0] else torch.zeros_like(stack[i])
        new[i] = push * above + pop * below + noop * stack[i]
    return new


def reference_lstm(pre, left_memory, right_memory):
    i, f_left, f_right, o = (torch.sigmoid(pre[k * HIDDEN: (k + 1) * HIDDEN]) for k in range(4))
    memory = i * torch.tanh(pre[4 * HIDDEN:]) + f_left * left_memory + f_right * right_memory
    return o * torch.tanh(memory), memory


def reference_mali_node(cell, op, left, right, has_right):
    """One node of stack_mtree_lstm / stack_mi_tree_lstm, from the module docstring's equations."""
    h_left, c_left, s_left = left
    h_right, c_right, s_right = right
    if cell.__class__.__name__ == "StackMTreeLSTMCell":
        right_factor = h_right @ cell.right_weight[op] if has_right else torch.ones(HIDDEN, dtype=torch.float64)
        m = (h_left @ cell.left_weight[op]) * right_factor
        base = m @ cell.weight[op] + torch.cat([h_left, h_right]) @ cell.child_weight[op] + cell.bias[op]
    else:
        left_projected = h_left @ cell.left_weight[op]
        right_projected = h_right @ cell.right_weight[op]
        right_factor = right_projected if has_right else torch.ones(5 * HIDDEN, dtype=torch.float64)
        base = (cell.alpha[op] * left_projected * right_factor + cell.beta_left[op] * left_projected
                + cell.beta_right[op] * right_projected + cell.bias[op])
    gate = torch.sigmoid(torch.cat([h_left, h_right]) @ cell.mix_weight[op] + cell.mix_bias[op])
    if not has_right:
        gate = torch.ones(HIDDEN, dtype=torch.float64)
    mixed = torch.stack([gate * s_left[i] + (1 - gate) * s_right[i] for i in range(DEPTH)])
    hidden, memory = reference_lstm(base + mixed[0] @ cell.read_weight[op], c_left, c_right)
    push, pop, noop = torch.softmax(cell.controller.action.weight @ hidden + cell.controller.action.bias, dim=0)
    pushed = torch.sigmoid(cell.controller.push_value.weight @ hidden + cell.controller.push_value.bias)
    return hidden, memory, reference_stack_update(mixed, push, pop, noop, pushed)


def reference_smu_lstm_node(cell, op, left, right, has_right):
    """One node of tree_smu_lstm, from the module docstring's equations."""
    h_left, c_left, s_left = left
    h_right, c_right, s_right = right
    children = torch.cat([h_left, h_right])
    gates = torch.sigmoid(children @ cell.stack_gate_weight[op] + cell.stack_gate_bias[op])
    gate_left, gate_right = gates[:HIDDEN], gates[HIDDEN:] * has_right
    gated = torch.stack([gate_left * s_left[i] + gate_right * s_right[i] for i in range(DEPTH)])
    hidden, memory = reference_lstm(torch.cat([children, gated[0]]) @ cell.weight[op] + cell.bias[op], c_left, c_right)
    push, pop = torch.softmax(children @ cell.action_weight[op] + cell.action_bias[op], dim=0)
    return hidden, memory, reference_stack_update(gated, push, pop, 0.0, hidden)


@pytest.mark.parametrize("name", STACK_CELLS)
def test_stack_cell_node_follows_its_equations_row_by_row(name):
    cell = randomised_cell(name)
    generator = torch.Generator().manual_seed(5)
    operator_ids = torch.tensor([0, 0, 1, 2, 2, 2])  # rows sorted by operator, as the engine gives them
    segments = [(0, 0, 2), (1, 2, 3), (2, 3, 6)]
    has_right = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0], dtype=torch.float64)
    left, right = children_states(generator, 6, has_right)
    state = cell.node(operator_ids, segments, left, right, has_right.unsqueeze(1))
    assert cell.uses_stack
    assert [tuple(part.shape) for part in state] == [(6, HIDDEN), (6, HIDDEN), (6, DEPTH, HIDDEN)]
    reference_node = reference_smu_lstm_node if name == "tree_smu_lstm" else reference_mali_node
    for row in range(6):
        expected = reference_node(cell, int(operator_ids[row]), tuple(part[row] for part in left),
                                  tuple(part[row] for part in right), bool(has_right[row]))
        for part, expected_part in zip(state, expected):
            torch.testing.assert_close(part[row], expected_part)


@pytest.mark.parametrize("name", STACK_CELLS)
def test_stack_cell_leaves_and_empty_state_have_empty_stacks(name):
    cell = randomised_cell(name)
    embedded = torch.randn(4, HIDDEN, dtype=torch.float64)
    leaf = cell.leaf(embedded)
    empty = cell.empty_state(2, like=embedded)
    assert len(leaf) == len(empty) == 3
    assert leaf[2].shape == (4, DEPTH, HIDDEN) and not leaf[2].any()
    assert all(not part.any() for part in empty) and empty[2].shape == (2, DEPTH, HIDDEN)


def test_stack_cells_reject_a_bad_depth_and_unknown_options():
    with pytest.raises(ConfigError):
        TREE_CELLS.get("tree_smu")(4, 3, stack_depth=0)
    with pytest.raises(ConfigError):
        TREE_CELLS.get("tree_smu_lstm")(4, 3, stack_depth=0)
    with pytest.raises(ConfigError):
        TREE_CELLS.get("stack_mtree_lstm")(4, 3, stack_size=2)


def stack_paths(cell, name):
    """(the weights by which operator 1 reads its children's h, the weights by which it reads the stack's top)."""
    if name == "stack_mtree_lstm":
        return [cell.weight[1], cell.child_weight[1]], cell.read_weight[1]
    if name == "stack_mi_tree_lstm":
        return [cell.left_weight[1], cell.right_weight[1]], cell.read_weight[1]
    return [cell.weight[1][: 2 * HIDDEN]], cell.weight[1][2 * HIDDEN:]


def always_push(cell, name):
    if name == "tree_smu_lstm":
        cell.action_weight.zero_()
        cell.action_bias.copy_(torch.tensor([30.0, 0.0]).expand_as(cell.action_bias))
    else:
        cell.controller.action.weight.zero_()
        cell.controller.action.bias.copy_(torch.tensor([30.0, 0.0, 0.0]))


@pytest.mark.parametrize("name", STACK_CELLS)
def test_the_stack_carries_a_leaf_past_nodes_that_ignore_their_child(name):
    """op1(op1(op0(leaf))): operator 1 ignores its child's h and forgets its c, so the leaf reaches the root only
    through the stack that op0 pushed onto; with operator 1's stack read cut off the root no longer sees the leaf."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        encoder = TreeEncoder(name, n_leaf_tokens=2, n_operators=2, hidden_size=HIDDEN, stack_depth=DEPTH).double()
    cell = encoder.cell
    children_weights, read_weight = stack_paths(cell, name)
    with torch.no_grad():
        for weight in children_weights:
            weight.zero_()
        cell.bias[1, HIDDEN: 3 * HIDDEN] = -50.0  # both forget gates of operator 1 closed
        always_push(cell, name)

    def root_hidden(leaf_token):
        tree = (1, ((1, ((0, ((leaf_token, ()),)),)),))
        return encoder(make_tree_batch([tree]))[0][-1]

    assert (root_hidden(0) - root_hidden(1)).abs().max() > 1e-6  # small (gates at random weights), but not zero
    with torch.no_grad():
        read_weight.zero_()
    assert (root_hidden(0) - root_hidden(1)).abs().max() < 1e-12



def boolean_expressions(n, seed):
    """Random trees over the leaves False (0) and True (1) with NOT (0, unary), AND (1), OR (2); label: the value."""
    rng = random.Random(seed)

    def expression(height):
        if height == 0 or rng.random() < 0.2:
            value = rng.randrange(2)
            return (value, ()), bool(value)
        operator_id = rng.randrange(3)
        if operator_id == 0:
            child, value = expression(height - 1)
            return (0, (child,)), not value
        (left, left_value), (right, right_value) = expression(height - 1), expression(height - 1)
        value = (left_value and right_value) if operator_id == 1 else (left_value or right_value)
        return (operator_id, (left, right)), value

    items = [expression(3) for _ in range(n)]
    return make_tree_batch([tree for tree, _ in items]), torch.tensor([float(value) for _, value in items])


@pytest.mark.parametrize("name", [*STACK_CELLS, "tree_smu"])
def test_stack_cell_learns_to_evaluate_boolean_expressions(name, one_thread):
    train, train_labels = boolean_expressions(192, seed=0)
    test, test_labels = boolean_expressions(192, seed=1)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        encoder = TreeEncoder(name, n_leaf_tokens=2, n_operators=3, hidden_size=8, stack_depth=4)
        head = nn.Linear(8, 1)
    optimizer = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=0.05)
    for _ in range(50):
        logits = head(encoder(train)[0][train.roots]).squeeze(-1)
        loss = nn.functional.binary_cross_entropy_with_logits(logits, train_labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        predictions = head(encoder(test)[0][test.roots]).squeeze(-1) > 0
    accuracy = (predictions == test_labels.bool()).float().mean().item()
    assert accuracy > 0.9, f"{name} reached only {accuracy:.2f}"


# ---------------------------------------------------------------------------------------------------------------
# tree_smu, the Tree-SMU as Arabshahi et al.'s public code defines it: (h, stack) states, no LSTM memory.

def reference_published_smu_node(cell, op, left, right, has_right):
    """One node of tree_smu from the module docstring's equations, one coordinate and one stack slot at a time."""
    (h_left, s_left), (h_right, s_right) = left, right
    x = torch.cat([h_left, h_right])
    pre = x @ cell.weight[op] + cell.bias[op]
    block = [pre[k * HIDDEN: (k + 1) * HIDDEN] for k in range(7)]  # push, pop, no-op, g_l, g_r, pushed, output
    gated_stack = torch.zeros(DEPTH, HIDDEN, dtype=torch.float64)
    new = torch.zeros(DEPTH, HIDDEN, dtype=torch.float64)
    for j in range(HIDDEN):
        weights = [torch.sigmoid(block[a][j]) for a in range(3)]
        total = sum(torch.exp(w) for w in weights)
        push, pop, noop = (torch.exp(w) / total for w in weights)
        assert 1 / (1 + 2 * torch.e) - 1e-9 <= min(push, pop, noop) and max(push, pop, noop) <= torch.e / (torch.e + 2)
        for i in range(DEPTH):
            gated_stack[i, j] = torch.sigmoid(block[3][j]) * s_left[i, j] + torch.sigmoid(block[4][j]) * s_right[i, j]
        for i in range(DEPTH):
            above = torch.tanh(block[5][j]) if i == 0 else gated_stack[i - 1, j]
            below = gated_stack[i + 1, j] if i + 1 < DEPTH else 0.0
            new[i, j] = push * above + pop * below + noop * gated_stack[i, j]
    return torch.sigmoid(block[6]) * torch.tanh(new[0]), new


def test_published_smu_node_follows_its_equations_row_by_row():
    cell = randomised_cell("tree_smu")
    generator = torch.Generator().manual_seed(7)
    operator_ids = torch.tensor([0, 1, 1, 2, 2])
    segments = [(0, 0, 1), (1, 1, 3), (2, 3, 5)]
    has_right = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0], dtype=torch.float64)
    left = (torch.randn(5, HIDDEN, generator=generator, dtype=torch.float64),
            torch.randn(5, DEPTH, HIDDEN, generator=generator, dtype=torch.float64))
    right = tuple(torch.randn(part.shape, generator=generator, dtype=torch.float64)
                  * has_right.view(-1, *[1] * (part.dim() - 1)) for part in left)  # missing: the empty state
    state = cell.node(operator_ids, segments, left, right, has_right.unsqueeze(1))
    assert cell.uses_stack and [tuple(part.shape) for part in state] == [(5, HIDDEN), (5, DEPTH, HIDDEN)]
    for row in range(5):
        expected = reference_published_smu_node(cell, int(operator_ids[row]), tuple(part[row] for part in left),
                                                 tuple(part[row] for part in right), bool(has_right[row]))
        for part, expected_part in zip(state, expected):
            torch.testing.assert_close(part[row], expected_part)


def test_published_smu_leaf_is_its_embedding_with_an_empty_stack():
    cell = randomised_cell("tree_smu")
    embedded = torch.randn(4, HIDDEN, dtype=torch.float64) * 3.0
    hidden, stack = cell.leaf(embedded)
    assert torch.equal(hidden, embedded)  # unbounded, as published: no activation on a symbol's embedding
    assert stack.shape == (4, DEPTH, HIDDEN) and not stack.any()
    empty = cell.empty_state(2, like=embedded)
    assert len(empty) == 2 and not any(part.any() for part in empty)


def test_published_smu_remembers_only_through_its_stack():
    """op1(op1(op0(leaf))) where operator 1 does not read its child's h (its weights are zero): the leaf reaches
    the root only through the stacks op0 pushed onto and op1 merged; with op1's stack gates shut it cannot."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        encoder = TreeEncoder("tree_smu", n_leaf_tokens=2, n_operators=2, hidden_size=HIDDEN,
                              stack_depth=DEPTH).double()
    cell = encoder.cell
    with torch.no_grad():
        cell.weight[1].zero_()

    def root_hidden(leaf_token):
        tree = (1, ((1, ((0, ((leaf_token, ()),)),)),))
        return encoder(make_tree_batch([tree]))[0][-1]

    assert (root_hidden(0) - root_hidden(1)).abs().max() > 1e-3
    with torch.no_grad():
        cell.bias[1, 3 * HIDDEN: 5 * HIDDEN] = -50.0  # g_l, g_r of operator 1 shut
    assert (root_hidden(0) - root_hidden(1)).abs().max() < 1e-12
