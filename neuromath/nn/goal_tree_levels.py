"""Teacher forcing of the goal-driven tree decoder one tree level at a time (``model.tree_forcing: levels``).

Under teacher forcing the whole target tree is known before the decoder runs, and the decoder's state of
``neuromath.nn.goal_tree`` splits into two passes that do not wait on each other node by node:

- a subtree's embedding (eq. 10-12) reads only its leaves and operators, never a goal, so every subtree a right goal
  needs is merged bottom-up, all subtrees of one height in one step;
- a node's goal (eq. 6-9) reads only its parent's goal, context and operator, and for a right child the embedding of
  its left sibling, so the goals are built top-down, all nodes of one depth in one step (the contexts of eq. 2-3 of
  that depth with them).

The token scores of every node (eq. 4-5) then come from one call over all nodes. The decoder computes the same
function as node-by-node forcing (``GoalDrivenTreeDecoder.apply``), in tree-depth steps instead of target-length
steps, with fewer and larger operations; each use of dropout draws its own mask, as there.

``plan_levels`` reads the targets once on the host (the only synchronisation of the forward); a target that is not
one complete prefix tree followed by eos gives no plan, and the caller forces it node by node.

On a GPU these steps wait on the host, one launch per op, so the plan also holds every index the passes need,
worked out on the host in the same pass: the passes compute no index, gather the encoder's memory for all nodes
in one call per tensor (each depth then reads its piece, a view), and keep the nodes in the order their goals are
built, so no permutation puts them back (``benchmarks/tree_step_ops.py`` counts the ops of a step).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from neuromath.nn.goal_tree import GoalDrivenTreeDecoder, gated

OPERATOR, LEAF = 1, 2  # the kinds of target ids in ``neuromath.models.tree_decoders``


@dataclass
class LevelPlan:
    """The nodes of a batch's target trees, numbered 0..N-1 in the batch's row-major prefix order, and the order in
    which the two passes visit them (every tensor on the targets' device). The goals are built in depth order: the
    nodes of depth 0, then those of depth 1, ...; ``order`` lists them so."""

    row: torch.Tensor  # (N,) the batch row of each node
    flat: torch.Tensor  # (N,) its position in the flattened (B * T) targets
    op: torch.Tensor  # (N,) its operator index, -1 for a leaf
    leaf: torch.Tensor  # (N,) its leaf index (into the row's leaves), -1 for an operator
    leaves: torch.Tensor  # (M,) the nodes that are leaves and whose embedding a merge or a right goal reads
    leaf_row: torch.Tensor  # (M,) the batch row of each of those leaves
    leaf_slot: torch.Tensor  # (M,) and its leaf index
    # bottom-up, one entry per height 1, 2, ...: (operators merged at that height; their first and second children
    # interleaved, N for a unary operator's missing one: the embeddings have a row of zeros after the nodes')
    merges: list[tuple[torch.Tensor, torch.Tensor]]
    merge_ops: torch.Tensor  # the merged operators' operator indices, height after height
    # top-down, one entry per depth 0, 1, ...: the nodes at that depth, in the order their goals are built
    depths: list[torch.Tensor]
    sizes: list[int]  # the number of nodes at each depth
    # for each depth but the last: (the operators at that depth, as positions in its node list; the binary ones, as
    # positions among those operators)
    children: list[tuple[torch.Tensor, torch.Tensor]]
    parent_ops: torch.Tensor  # the operator indices of those operators, depth after depth
    parent_sizes: list[int]  # how many there are at each depth
    siblings: torch.Tensor  # the first children of the binary ones (whose subtrees right goals read), depth after depth
    sibling_sizes: list[int]  # how many there are at each depth
    order: torch.Tensor  # (N,) the nodes in depth order: depths[0], then depths[1], ...
    order_row: torch.Tensor  # (N,) their batch rows
    order_flat: torch.Tensor  # (N,) their positions in the flattened targets


def plan_levels(target: torch.Tensor, kind: Sequence[int] | torch.Tensor, op_index: Sequence[int] | torch.Tensor,
                leaf_index: Sequence[int] | torch.Tensor, op_arity: Sequence[int] | torch.Tensor, eos_id: int,
                needs_subtrees: bool = True) -> LevelPlan | None:
    """The plan of ``target`` (B, T) (prefix ids, eos, padding), with ``kind`` / ``op_index`` / ``leaf_index`` by
    target id and ``op_arity`` by operator (lists, or tensors read here: a caller that plans every step passes lists
    and reads no device tensor but the targets); None when a row is not exactly one complete tree followed by eos.
    ``needs_subtrees`` False (the ablation whose right goals read zeros) plans no merge."""
    ids = target.tolist()
    kinds, ops, leaf_of, arity = (table.tolist() if isinstance(table, torch.Tensor) else table
                                  for table in (kind, op_index, leaf_index, op_arity))
    length = target.size(1)
    row, position, op, leaf, parent, slot = [], [], [], [], [], []
    first, second = [], []  # children by node, -1 where none
    for r, tokens in enumerate(ids):
        open_nodes: list[int] = []  # operators still missing a child
        done = False
        for t, token in enumerate(tokens):
            if done:
                if token != eos_id:
                    return None
                break
            k = kinds[token] if 0 <= token < len(kinds) else 0
            if k not in (OPERATOR, LEAF):
                return None
            node = len(row)
            row.append(r)
            position.append(t)
            op.append(ops[token] if k == OPERATOR else -1)
            leaf.append(leaf_of[token] if k == LEAF else -1)
            first.append(-1)
            second.append(-1)
            if open_nodes:
                up = open_nodes[-1]
                parent.append(up)
                if first[up] < 0:
                    first[up], child = node, 0
                else:
                    second[up], child = node, 1
                slot.append(child)
                if child + 1 == arity[op[up]]:
                    open_nodes.pop()
            else:
                parent.append(-1)
                slot.append(0)
            if k == OPERATOR:
                open_nodes.append(node)
            done = not open_nodes
        else:
            return None  # the row ended before its tree (or its eos)
    count = len(row)
    if count == 0:
        return None

    # the subtrees some right goal reads: the left child of a binary operator and everything below it
    needed = [False] * count
    if needs_subtrees:
        for node in range(count):
            up = parent[node]
            needed[node] = up >= 0 and (needed[up] or (slot[node] == 0 and second[up] >= 0))
    height = [0] * count
    by_height: dict[int, list[int]] = {}
    for node in reversed(range(count)):  # children come after their parent in prefix order
        if op[node] >= 0:
            height[node] = 1 + max(height[child] for child in (first[node], second[node]) if child >= 0)
            if needed[node]:
                by_height.setdefault(height[node], []).append(node)

    needed_leaves = [n for n in range(count) if needed[n] and leaf[n] >= 0]
    lists: list[list[int]] = [row, [r * length + t for r, t in zip(row, position, strict=True)], op, leaf,
                              needed_leaves, [row[n] for n in needed_leaves], [leaf[n] for n in needed_leaves]]
    merge_nodes = [sorted(by_height[h]) for h in sorted(by_height)]
    for nodes in merge_nodes:
        lists += [nodes, [child for n in nodes for child in (first[n], second[n] if second[n] >= 0 else count)]]
    lists.append([op[n] for nodes in merge_nodes for n in nodes])
    levels: list[list[int]] = [[node for node in range(count) if parent[node] < 0]]
    parent_ops: list[list[int]] = []
    siblings: list[list[int]] = []
    while True:
        nodes = levels[-1]
        parents = [i for i, n in enumerate(nodes) if op[n] >= 0]
        if not parents:
            break
        lefts = [first[nodes[i]] for i in parents]
        binary = [j for j, i in enumerate(parents) if second[nodes[i]] >= 0]
        lists += [parents, binary]
        parent_ops.append([op[nodes[i]] for i in parents])
        siblings.append([lefts[j] for j in binary])
        levels.append(lefts + [second[nodes[parents[j]]] for j in binary])
    links = len(parent_ops)
    order = [node for nodes in levels for node in nodes]
    lists += levels + [order, [row[n] for n in order], [lists[1][n] for n in order],
                       [o for ops in parent_ops for o in ops], [n for nodes in siblings for n in nodes]]
    # one copy to the device for the whole plan, then views of it
    parts = list(torch.tensor([v for values in lists for v in values], dtype=torch.long)
                 .to(target.device, non_blocking=True).split([len(values) for values in lists]))
    row_t, flat_t, op_t, leaf_t, leaves_t, leaf_row_t, leaf_slot_t = parts[:7]
    heights = len(merge_nodes)
    merges = [tuple(parts[7 + 2 * i: 9 + 2 * i]) for i in range(heights)]
    start = 8 + 2 * heights
    children = [tuple(parts[start + 2 * i: start + 2 * i + 2]) for i in range(links)]
    start += 2 * links
    depths = parts[start:start + len(levels)]
    order_t, order_row_t, order_flat_t, parent_ops_t, siblings_t = parts[start + len(levels):]
    return LevelPlan(row=row_t, flat=flat_t, op=op_t, leaf=leaf_t, leaves=leaves_t, leaf_row=leaf_row_t,
                     leaf_slot=leaf_slot_t, merges=merges, merge_ops=parts[7 + 2 * heights], depths=depths,
                     sizes=[len(nodes) for nodes in levels], children=children, parent_ops=parent_ops_t,
                     parent_sizes=[len(ops) for ops in parent_ops], siblings=siblings_t,
                     sibling_sizes=[len(nodes) for nodes in siblings], order=order_t, order_row=order_row_t,
                     order_flat=order_flat_t)


def subtree_embeddings(decoder: GoalDrivenTreeDecoder, plan: LevelPlan, leaves: torch.Tensor) -> torch.Tensor:
    """The embedding (N + 1, H) of every subtree a right goal reads (zeros elsewhere, and in the last row, which a
    unary operator's missing second child reads), merged bottom-up a height at a time; ``leaves`` (B, L, H) are the
    rows' leaf embeddings."""
    count, hidden = plan.row.numel(), leaves.size(-1)
    embedding = leaves.new_zeros(count + 1, hidden)
    if plan.leaves.numel():
        embedding = embedding.index_copy(0, plan.leaves, leaves[plan.leaf_row, plan.leaf_slot])
    if plan.merges:
        operators = decoder.op_embedding(plan.merge_ops).split([nodes.numel() for nodes, _ in plan.merges])
        for (nodes, children), operator in zip(plan.merges, operators, strict=True):
            pairs = embedding.index_select(0, children).view(nodes.numel(), 2 * hidden)  # [first; second] per node
            merged = gated(decoder.merge(decoder.dropout(torch.cat([operator, pairs], dim=-1))))
            embedding = embedding.index_copy(0, nodes, merged.to(embedding.dtype))
    return embedding


def goals_and_contexts(decoder: GoalDrivenTreeDecoder, plan: LevelPlan, memory: dict,
                       embedding: torch.Tensor) -> torch.Tensor:
    """Every node's goal and context side by side (N, 2H), in depth order (``plan.order``), built top-down a depth
    at a time from the rows' ``memory`` (``root``, ``states``, ``keys``, ``valid``) and the subtree ``embedding``.

    What does not wait on the depth above is computed for all depths at once and split (one autograd node, so
    the backward joins the pieces in one op): each node's rows of the encoder's memory, the parents' operator
    embeddings, and the right goals' terms from their left siblings' subtrees."""
    states, keys, valid = (memory[key].index_select(0, plan.order_row).split(plan.sizes)
                           for key in ("states", "keys", "valid"))
    operators = decoder.op_embedding(plan.parent_ops).split(plan.parent_sizes)
    from_left = None
    if decoder.subtree_embedding and plan.siblings.numel():
        sibling = embedding.index_select(0, plan.siblings)
        from_left = decoder.right_from_left(decoder.dropout(sibling)).split(plan.sibling_sizes)
    goal = memory["root"].index_select(0, plan.order_row[:plan.sizes[0]])  # the roots' goals: the encoder's summaries
    pieces = []
    for depth in range(len(plan.sizes)):
        context = decoder.context(goal, states[depth], keys[depth], valid[depth])
        goal_context = torch.cat([goal, context], dim=-1)  # the wider of the two dtypes, as the scores read them
        pieces.append(goal_context)
        if depth == len(plan.children):
            break
        parents, binary = plan.children[depth]
        parent = decoder.dropout(torch.cat([goal_context.index_select(0, parents), operators[depth]], dim=-1))
        left_goal = gated(decoder.left_goal(parent))
        next_goals = [left_goal]
        if binary.numel():
            right_pre = decoder.right_goal(parent.index_select(0, binary))
            # without subtree embeddings (an ablation) the left sibling's term is zero
            next_goals.append(gated(right_pre if from_left is None else right_pre + from_left[depth]))
        goal = torch.cat([g.to(left_goal.dtype) for g in next_goals])
    return torch.cat(pieces)
