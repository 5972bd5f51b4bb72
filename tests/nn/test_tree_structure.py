import math

import pytest
import torch

from neuromath.expr.grammar import TreeGrammar
from neuromath.nn.tree_structure import TreePositions, TreeStructure

SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]
TOKENS = SPECIALS + ["*", "+", "neg", "a", "b", "c", "INT+", "1", "6"]
GRAMMAR = TreeGrammar({"*": 2, "+": 2, "neg": 1}, number_starts=frozenset({"INT+"}))


def parse(words, root_token, path_depth=6, n_relations=40):
    structure = TreeStructure(GRAMMAR.token_classes(TOKENS), root_token, path_depth, n_relations)
    ids = torch.tensor([[TOKENS.index(w) for w in words.split()]])
    info, state = structure(ids, relations=True)
    return structure, ids, info, state


def root_down(path_row):
    """The stored path (most recent step first, -1 padded) written root-down as a string."""
    return "".join(str(step) for step in reversed([s for s in path_row if s >= 0]))


def test_paths_and_depths_of_a_hand_worked_expression():
    # bos is the super-root; the expression  * (+ a b) (neg 16)  hangs below it, then eos.
    _, _, info, _ = parse("<bos> * + a b neg INT+ 1 6 <eos>", root_token=True)
    paths = [root_down(row) for row in info["paths"][0].tolist()]
    depths = info["depth"][0].tolist()
    assert paths == ["", "", "0", "00", "01", "1", "10", "100", "1000", ""]
    assert depths == [0, 1, 2, 3, 3, 2, 3, 4, 5, 1]  # digits hang below INT+ as a chain; eos starts a new tree


def test_relations_of_a_hand_worked_expression():
    # Encoder side (no bos): + (* a b) c.  a -> c goes up twice and down once: UUD.
    structure, _, _, state = parse("+ * a b c", root_token=False)
    ups, downs = structure.relation_steps(state["depth"], 0, 5)
    relation = {(i, j): (int(ups[0, i, j]), int(downs[0, i, j])) for i in range(5) for j in range(5)}
    assert relation[2, 4] == (2, 1)  # a -> c: U U D
    assert relation[2, 3] == (1, 1)  # a -> b: siblings
    assert relation[0, 2] == (0, 2)  # + -> a: D D
    assert relation[3, 0] == (2, 0)  # b -> +: U U
    assert relation[4, 1] == (1, 1)  # c -> *
    assert all(relation[i, i] == (0, 0) for i in range(5))
    assert all(relation[i, j] == tuple(reversed(relation[j, i])) for i in range(5) for j in range(5))


def test_an_incomplete_prefix_parses_and_the_next_token_lands_in_the_open_slot():
    structure = TreeStructure(GRAMMAR.token_classes(TOKENS), True, 6, 40)
    ids = torch.tensor([[TOKENS.index(w) for w in "<bos> + * a".split()]])
    info, state = structure(ids)
    assert [root_down(r) for r in info["paths"][0].tolist()] == ["", "", "0", "00"]
    for word, expected_path, expected_depth in [("b", "01", 3), ("c", "1", 2), ("<eos>", "", 1)]:
        info, state = structure(torch.tensor([[TOKENS.index(word)]]), state, relations=True)
        assert root_down(info["paths"][0, 0].tolist()) == expected_path
        assert int(info["depth"][0, 0]) == expected_depth
    assert info["relations"].shape == (1, 1, 7)


def test_incremental_parsing_equals_the_whole_sequence_also_for_malformed_input():
    structure = TreeStructure(GRAMMAR.token_classes(TOKENS), True, 3, 12)
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(4, len(TOKENS), (5, 14), generator=generator)
    ids[:, 0] = 1
    full, _ = structure(ids, relations=True)
    state = None
    for t in range(ids.size(1)):
        step, state = structure(ids[:, t : t + 1], state, relations=True)
        assert torch.equal(step["paths"][:, 0], full["paths"][:, t])
        assert torch.equal(step["relations"][:, 0], full["relations"][:, t, : t + 1])
    # Two tokens at a time, as a cache that receives a chunk would.
    state, chunks = None, []
    for t in range(0, 14, 2):
        step, state = structure(ids[:, t : t + 2], state)
        chunks.append(step["paths"])
    assert torch.equal(torch.cat(chunks, dim=1), full["paths"])


def test_paths_keep_the_most_recent_steps():
    structure, _, info, _ = parse("neg neg neg neg a", root_token=False, path_depth=2)
    assert info["paths"][0].tolist() == [[-1, -1], [0, -1], [0, 0], [0, 0], [0, 0]]
    assert info["depth"][0].tolist() == [1, 2, 3, 4, 5]


def test_relation_ids_default_fitted_and_shared_other():
    structure, _, info, _ = parse("+ * a b c", root_token=False, n_relations=4)
    # Before fitting: (0,0) -> 1, then (0,1) -> 2, (1,0) -> 3; everything else shares id 0.
    assert int(structure.relation_table[0, 0]) == 1 and int(structure.relation_table[0, 1]) == 2
    assert int(structure.relation_table[1, 0]) == 3 and int(structure.relation_table[1, 1]) == 0
    assert int(info["relations"][0, 2, 4]) == 0  # UUD is not among the first three
    sequences = [[TOKENS.index(w) for w in "+ * a b c".split()]] * 3
    ranking = structure.fit_relations(sequences, causal=True)
    counts = dict(ranking)
    # Causal pairs (query i, key j <= i) of + * a b c, depths 1 2 3 3 2: 5 self pairs; (1,0) four times
    # (* -> +, a -> *, b -> *, c -> +); (2,0): a -> +, b -> +; (1,1): b -> a, c -> *; (1,2): c -> a, c -> b.
    assert counts == {(0, 0): 15, (1, 0): 12, (2, 0): 6, (1, 1): 6, (1, 2): 6}
    # Ties broken by the default order (fewer steps first, then fewer ups): (1,1) before (2,0).
    assert [pair for pair, _ in ranking] == [(0, 0), (1, 0), (1, 1), (2, 0), (1, 2)]
    table = structure.relation_table
    assert [int(table[p]) for p in [(0, 0), (1, 0), (1, 1), (2, 0), (1, 2), (0, 1)]] == [1, 2, 3, 0, 0, 0]


def test_tree_positions_follow_shiv_and_quirk():
    positions = TreePositions(d_model=10, depth=2, width=2)  # 2 copies of a 2 x 2 stack, 2 zero dims
    p = torch.tanh(positions.decay.detach())
    scale = torch.sqrt((1 - p**2) * 10 / 2)
    # path root-down "1 0": most recent step 0 (level 0), then 1 (level 1).
    code = positions.encode(torch.tensor([[[0, 1], [-1, -1]]]))[0]
    expected = torch.zeros(10)
    for copy in range(2):
        expected[0 * 4 + copy * 2 + 0] = scale[copy]  # level 0, child 0
        expected[1 * 4 + copy * 2 + 1] = p[copy] * scale[copy]  # level 1, child 1
    torch.testing.assert_close(code[0], expected)
    assert torch.equal(code[1], torch.zeros(10))  # a root: no steps, zero encoding
    # child indices beyond the width are clipped to the last one
    torch.testing.assert_close(positions.encode(torch.tensor([[[5, -1]]])), positions.encode(torch.tensor([[[1, -1]]])))
    assert math.isclose(float(p[0]), 0.5, rel_tol=1e-5) and math.isclose(float(p[1]), 0.95, rel_tol=1e-5)
    with pytest.raises(ValueError, match="tree_depth"):
        TreePositions(d_model=4, depth=4, width=2)
