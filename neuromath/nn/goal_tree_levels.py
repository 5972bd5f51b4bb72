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
    which the two passes visit them (every tensor on the targets' device)."""

    row: torch.Tensor  # (N,) the batch row of each node
    flat: torch.Tensor  # (N,) its position in the flattened (B * T) targets
    op: torch.Tensor  # (N,) its operator index, -1 for a leaf
    leaf: torch.Tensor  # (N,) its leaf index (into the row's leaves), -1 for an operator
    leaves: torch.Tensor  # (M,) the nodes that are leaves and whose embedding a merge or a right goal reads
    # bottom-up, one entry per height 1, 2, ...: (operators merged at that height, their first, their second child or
    # -1 for a unary operator)
    merges: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
    # top-down, one entry per depth 0, 1, ...: the nodes at that depth, in the order their goals are built
    depths: list[torch.Tensor]
    # for each depth but the last: (the operators at that depth, as positions in its node list; their first children;
    # the binary ones, as positions among those operators; their second children; their first children again)
    children: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]


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

    lists: list[list[int]] = [row, [r * length + t for r, t in zip(row, position, strict=True)], op, leaf,
                              [n for n in range(count) if needed[n] and leaf[n] >= 0]]
    heights = sorted(by_height)
    for h in heights:
        nodes = sorted(by_height[h])
        lists += [nodes, [first[n] for n in nodes], [second[n] for n in nodes]]
    levels: list[list[int]] = [[node for node in range(count) if parent[node] < 0]]
    links = 0
    while True:
        nodes = levels[-1]
        parents = [i for i, n in enumerate(nodes) if op[n] >= 0]
        if not parents:
            break
        lefts = [first[nodes[i]] for i in parents]
        binary = [j for j, i in enumerate(parents) if second[nodes[i]] >= 0]
        rights = [second[nodes[parents[j]]] for j in binary]
        lists += [parents, lefts, binary, rights, [lefts[j] for j in binary]]
        links += 1
        levels.append(lefts + rights)
    lists += levels
    # one copy to the device for the whole plan, then views of it
    parts = list(torch.tensor([v for values in lists for v in values], dtype=torch.long)
                 .to(target.device, non_blocking=True).split([len(values) for values in lists]))
    row_t, flat_t, op_t, leaf_t, leaves_t = parts[:5]
    merges = [tuple(parts[5 + 3 * i: 8 + 3 * i]) for i in range(len(heights))]
    start = 5 + 3 * len(heights)
    children = [tuple(parts[start + 5 * i: start + 5 * i + 5]) for i in range(links)]
    return LevelPlan(row=row_t, flat=flat_t, op=op_t, leaf=leaf_t, leaves=leaves_t, merges=merges,
                     depths=parts[start + 5 * links:], children=children)


def subtree_embeddings(decoder: GoalDrivenTreeDecoder, plan: LevelPlan, leaves: torch.Tensor) -> torch.Tensor:
    """The embedding (N, H) of every subtree a right goal reads (zeros elsewhere), merged bottom-up a height at a
    time; ``leaves`` (B, L, H) are the rows' leaf embeddings."""
    count = plan.row.numel()
    embedding = leaves.new_zeros(count, leaves.size(-1))
    if plan.leaves.numel():
        values = leaves.flatten(0, 1).index_select(0, plan.row[plan.leaves] * leaves.size(1) + plan.leaf[plan.leaves])
        embedding = embedding.index_copy(0, plan.leaves, values)
    for nodes, left, right in plan.merges:
        right_embedding = torch.where(right.ge(0)[:, None], embedding.index_select(0, right.clamp(min=0)), 0.0)
        parts = torch.cat([decoder.op_embedding(plan.op[nodes]), embedding.index_select(0, left), right_embedding],
                          dim=-1)
        merged = gated(decoder.merge(decoder.dropout(parts)))
        embedding = embedding.index_copy(0, nodes, merged.to(embedding.dtype))
    return embedding


def goals_and_contexts(decoder: GoalDrivenTreeDecoder, plan: LevelPlan, memory: dict,
                       embedding: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Every node's goal and context (N, H) each, in node order, built top-down a depth at a time from the rows'
    ``memory`` (``root``, ``states``, ``keys``, ``valid``) and the subtree ``embedding``."""
    goal = memory["root"].index_select(0, plan.row[plan.depths[0]])  # the roots' goals: the encoder's summaries
    goals, contexts = [], []
    for depth, nodes in enumerate(plan.depths):
        rows = plan.row[nodes]
        context = decoder.context(goal, *(memory[key].index_select(0, rows) for key in ("states", "keys", "valid")))
        goals.append(goal)
        contexts.append(context)
        if depth == len(plan.children):
            break
        parents, lefts, binary, rights, siblings = plan.children[depth]
        operator = decoder.op_embedding(plan.op[nodes[parents]])
        parent = decoder.dropout(torch.cat([goal.index_select(0, parents), context.index_select(0, parents), operator],
                                           dim=-1))
        left_goal = gated(decoder.left_goal(parent))
        next_goals = [left_goal]
        if binary.numel():
            sibling = embedding.index_select(0, siblings)
            if not decoder.subtree_embedding:
                sibling = torch.zeros_like(sibling)
            right_pre = decoder.right_goal(parent.index_select(0, binary))
            next_goals.append(gated(right_pre + decoder.right_from_left(decoder.dropout(sibling))))
        goal = torch.cat([g.to(left_goal.dtype) for g in next_goals])
    order = torch.cat(plan.depths)
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(order.numel(), device=order.device)
    dtype = torch.promote_types(goals[0].dtype, goals[-1].dtype)
    all_goals = torch.cat([g.to(dtype) for g in goals]).index_select(0, inverse)
    all_contexts = torch.cat([c.to(dtype) for c in contexts]).index_select(0, inverse)
    return all_goals, all_contexts
