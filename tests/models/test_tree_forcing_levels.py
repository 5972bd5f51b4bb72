"""Teacher forcing of the goal-tree solvers one tree depth per step (``model.tree_forcing: levels``,
neuromath/nn/goal_tree_levels.py): the same logits, loss and gradients as node-by-node forcing on any batch of
prefix trees (unary operators, leaves at the root, deep left and right spines), the plan's levels and the fallback
for targets that are not one complete tree. Learning under both forcings: test_tree_decoders."""

import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neuromath.errors import ConfigError
from neuromath.expr.grammar import WORD_PROBLEM_GRAMMAR
from neuromath.nn.goal_tree_levels import plan_levels
from neuromath.text import Vocabulary
from tests.models.test_tree_decoders import MODELS, batch_of, pointing_task, small_model

WORDS = ["tom", "has", "n0", "n1", "n2", "n3", "apples", "pears", ",", ".", "plus", "minus", "times", "the", "first",
         "last", "two", "?", "red", "big", "old", "sells", "buys"]
TARGETS = ["+", "-", "*", "/", "neg", "n0", "n1", "n2", "n3", "1", "100"]
ARITY = {"+": 2, "-": 2, "*": 2, "/": 2, "neg": 1}
LEAVES = ["n0", "n1", "n2", "1", "100"]  # n3 is not in the problems below: a masked leaf


def vocabularies():
    return Vocabulary(WORDS), Vocabulary(TARGETS)


def random_tree(rng: random.Random, depth: int) -> list[str]:
    """A prefix tree of at most ``depth`` operator levels, unary and binary operators mixed."""
    if depth == 0 or rng.random() < 0.3:
        return [rng.choice(LEAVES)]
    op = rng.choice(sorted(ARITY))
    children = [random_tree(rng, depth - 1) for _ in range(ARITY[op])]
    return [op] + [token for child in children for token in child]


def forced(name, batch, forcing, subtree_embedding=True):
    """Logits, loss and named gradients of one teacher-forced pass, from the same seeded weights."""
    source_vocab, target_vocab = vocabularies()
    torch.manual_seed(0)
    model = small_model(name, source_vocab, target_vocab, tree_forcing=forcing,
                        subtree_embedding=subtree_embedding).train()  # dropout 0: nothing drawn
    logits = model(batch)
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["target_out"].flatten(), ignore_index=0)
    loss.backward()
    grads = {key: p.grad.clone() for key, p in model.named_parameters() if p.grad is not None}
    return logits.detach(), loss.detach(), grads


def assert_same(a, b):
    assert a[0].shape == b[0].shape
    assert torch.allclose(a[0], b[0], atol=1e-5)  # padding and eos positions too: a complete tree's logits
    assert torch.allclose(a[1], b[1], atol=1e-6)
    # a weight one pass never uses has no gradient there; node forcing computes both sub-goals of every node, so
    # its gradient is zeros
    for key in a[2].keys() | b[2].keys():
        mine = a[2].get(key, torch.zeros_like(b[2].get(key, torch.zeros(()))))
        theirs = b[2].get(key, torch.zeros_like(mine))
        assert torch.allclose(mine, theirs, atol=1e-6), key


def batch_of_trees(trees):
    source_vocab, target_vocab = vocabularies()
    text = pointing_task(1, random.Random(2))[0][0]
    return batch_of([(text, tree, [3.0, 5.0, 2.0]) for tree in trees], source_vocab, target_vocab)


SPINES = [["n2"], ["+", "n0", "n1"], ["neg", "n1"], ["*", "+", "-", "n0", "n1", "n2", "1"],
          ["*", "n0", "+", "n1", "-", "n2", "1"], ["neg", "neg", "/", "n0", "neg", "100"],
          ["+", "neg", "*", "n0", "n1", "-", "n2", "neg", "1"]]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("subtree_embedding", [True, False])
def test_level_forcing_gives_the_logits_loss_and_gradients_of_node_forcing(name, subtree_embedding):
    batch = batch_of_trees(SPINES)
    assert_same(forced(name, batch, "levels", subtree_embedding), forced(name, batch, "nodes", subtree_embedding))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), size=st.integers(1, 6), depth=st.integers(0, 5))
def test_property_level_forcing_equals_node_forcing_on_random_trees(seed, size, depth):
    rng = random.Random(seed)
    batch = batch_of_trees([random_tree(rng, depth) for _ in range(size)])
    assert_same(forced("gts", batch, "levels"), forced("gts", batch, "nodes"))


def test_the_plan_has_one_goal_level_per_tree_depth_and_merges_only_what_a_right_goal_reads():
    source_vocab, target_vocab = vocabularies()
    model = small_model("gts", source_vocab, target_vocab)
    batch = batch_of_trees([["*", "+", "n0", "n1", "-", "n2", "1"], ["n1"], ["neg", "+", "n0", "n1"]])
    plan = plan_levels(batch["target_out"], model.target_kind, model.op_index, model.leaf_index,
                       model.decoder.op_arity, Vocabulary.eos_id)
    assert plan.row.tolist() == [0] * 7 + [1] + [2] * 4  # nodes in row-major prefix order
    length = batch["target_out"].size(1)
    assert plan.flat.tolist() == [0, 1, 2, 3, 4, 5, 6, length, 2 * length, 2 * length + 1, 2 * length + 2,
                                  2 * length + 3]
    # a depth's nodes: the left children of the depth above in order, then its right children
    assert [d.tolist() for d in plan.depths] == [[0, 7, 8], [1, 9, 4], [2, 10, 5, 3, 11, 6]]
    # right goals read the left subtree "+ n0 n1" of row 0 (merged at height 1, from both its leaves) and the left
    # leaves of "+" in row 2 and of "-"; what the unary neg holds feeds no goal
    assert [m[0].tolist() for m in plan.merges] == [[1]]
    assert sorted(plan.leaves.tolist()) == [2, 3, 5, 10]
    # what the passes read, worked out on the host: the merged node's children side by side (no second child would
    # read row N, the zeros), the parents' operators and the left siblings of right goals depth after depth, and
    # the nodes in the order their goals are built
    assert plan.merges[0][1].tolist() == [2, 3]
    assert plan.merge_ops.tolist() == [plan.op[1].item()]
    assert plan.sizes == [3, 3, 6]
    assert plan.parent_sizes == [2, 3] and plan.parent_ops.tolist() == plan.op[[0, 8, 1, 9, 4]].tolist()
    assert plan.sibling_sizes == [1, 3] and plan.siblings.tolist() == [1, 2, 10, 5]
    assert plan.order.tolist() == [0, 7, 8, 1, 9, 4, 2, 10, 5, 3, 11, 6]
    assert plan.order_row.tolist() == plan.row[plan.order].tolist()
    assert plan.order_flat.tolist() == plan.flat[plan.order].tolist()
    assert plan.leaf_row.tolist() == plan.row[plan.leaves].tolist()
    assert plan.leaf_slot.tolist() == plan.leaf[plan.leaves].tolist()
    without = plan_levels(batch["target_out"], model.target_kind, model.op_index, model.leaf_index,
                          model.decoder.op_arity, Vocabulary.eos_id, needs_subtrees=False)
    assert without.merges == [] and without.leaves.numel() == 0


@pytest.mark.parametrize("target", [["+", "n0"], ["n0", "n1"], ["+", "n0", "n1", "n2"]])
def test_a_target_that_is_not_one_complete_tree_has_no_plan_and_is_forced_node_by_node(target):
    source_vocab, target_vocab = vocabularies()
    model = small_model("gts", source_vocab, target_vocab)
    batch = batch_of_trees([["+", "n0", "n1"], target])
    assert plan_levels(batch["target_out"], model.target_kind, model.op_index, model.leaf_index,
                       model.decoder.op_arity, Vocabulary.eos_id) is None
    assert_same(forced("gts", batch, "levels"), forced("gts", batch, "nodes"))


def test_level_forcing_runs_under_bf16_autocast_close_to_float32():
    batch = batch_of_trees(SPINES)
    source_vocab, target_vocab = vocabularies()
    torch.manual_seed(0)
    model = small_model("graph2tree", source_vocab, target_vocab, tree_forcing="levels").train()
    full = model(batch)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        half = model(batch)
    real = batch["target_out"].ne(0)
    assert torch.allclose(half.float()[real], full[real], atol=0.1, rtol=0.05)


def test_an_unknown_tree_forcing_is_refused():
    source_vocab, target_vocab = vocabularies()
    with pytest.raises(ConfigError, match="tree_forcing"):
        small_model("gts", source_vocab, target_vocab, tree_forcing="depths")


def test_wordproblem_grammar_arity_matches_the_test_operators():
    arity = WORD_PROBLEM_GRAMMAR.token_classes(TARGETS).arity
    assert {token: arity[i] for i, token in enumerate(TARGETS) if arity[i]} == ARITY
