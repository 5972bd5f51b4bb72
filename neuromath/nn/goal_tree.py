"""The goal-driven tree decoder of GTS (Xie & Sun 2019, "A Goal-Driven Tree-Structured Neural Model for Math Word
Problems", Sec. 3.2), run one tree node at a time across a whole batch, with its state in batch-first tensors so that
teacher forcing, greedy decoding and beam search all use the same two operations.

The expression tree is built in prefix order. Every node has a goal vector q:

- the root's goal is the encoder's summary of the problem (Sec. 3.1);
- context (eq. 2-3): c = sum_s a_s h_s, a_s = softmax_s(v_a^T tanh(W_a [q; h_s])) over the problem's encoder states;
- token scores (eq. 4-5): a leaf y (a constant of the training equations, or a number of *this* problem, whose
  embedding e(y|P) is the encoder state at that number's position) scores s(y) = w_n^T tanh(W_s [q; c; e(y|P)]);
  operators are scored by a linear map of [q; c] (one score vector per operator, as in the authors' public code);
  one softmax covers operators, constants and the problem's numbers; numbers the problem does not have are masked;
- left sub-goal (eq. 6-7), after an operator y: q_l = sigma(W_ol [q; c; e(y)]) * tanh(W_cl [q; c; e(y)]);
- right sub-goal (eq. 8-9), once the left subtree is complete with embedding t_l:
  q_r = sigma(W_or [q; c; e(y); t_l]) * tanh(W_cr [q; c; e(y); t_l]); the part without t_l is computed when the
  operator is chosen and kept on the goal stack, the t_l part is added when the goal is reached (W [a; b] = W_a a +
  W_b b, so this is the same map);
- subtree embedding (eq. 10-12), bottom-up: a leaf's t is its embedding e(y|P); an operator's
  t = sigma(W_gt [e(y); t_l; t_r]) * tanh(W_ct [e(y); t_l; t_r]), merged as soon as its right subtree is complete.

Unary operators (``neg``) are an extension: one (left) sub-goal, merged with t_r = 0.

The state of a partial tree for each row (``TreeState``, a dict of batch-first tensors):

  goal_pre (N, D, 2H), goal_right (N, D), goal_depth (N,)   the stack of goals still to expand; a left goal (and
      the root) is stored ready in the first H columns, a right goal as its pre-activation without the t_l term
  emb (N, D, H), emb_op (N, D, E), emb_kind (N, D), emb_depth (N,)   the stack of the bottom-up pass: an operator
      waiting for children (kind 1: binary, 2: unary, with its embedding) or a finished left subtree (kind 3)
  q, c (N, H)   the goal and context of the node being predicted (what ``apply`` builds children from)

A tree is complete when its goal stack is empty; the decoder then allows only eos, and before that never eos, so
every hypothesis that ends is one complete tree.
"""

from __future__ import annotations

import torch
from torch import nn

from neuromath.nn.dropout import Dropout
from neuromath.nn.recording import Recorded

NEG_INF = float("-inf")
MASKED_LOGIT = -1.0e4  # teacher forcing: a token the state does not allow (finite, so a loss stays finite)

WAITING_BINARY, WAITING_UNARY, LEFT_DONE = 1, 2, 3  # emb_kind values (0: empty slot)


def gated(pre: torch.Tensor) -> torch.Tensor:
    """sigma(first half) * tanh(second half) of the last dimension: (..., 2H) -> (..., H)."""
    gate, candidate = pre.chunk(2, dim=-1)
    return torch.sigmoid(gate) * torch.tanh(candidate)


def write(stack: torch.Tensor, position: torch.Tensor, value: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``stack`` (N, D, ...) with ``value`` (N, ...) written at ``position`` (N,) in the rows where ``mask``; the stack
    grows along D when a position is past its end. Not in place, so autograd sees every version."""
    depth = stack.size(1)
    needed = int(position.masked_fill(~mask, 0).max()) + 1 if bool(mask.any()) else 0
    if needed > depth:
        extra = stack.new_zeros((stack.size(0), needed - depth, *stack.shape[2:]))
        stack = torch.cat([stack, extra], dim=1)
        depth = needed
    hit = (torch.arange(depth, device=stack.device)[None, :] == position[:, None]) & mask[:, None]  # (N, D)
    hit = hit.view(*hit.shape, *([1] * (stack.dim() - 2)))  # (N, D, 1...)
    value = value.unsqueeze(1)  # (N, 1, ...)
    return torch.where(hit, value, stack)


def read(stack: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
    """``stack[n, position[n]]`` for every row (positions below 0 read slot 0; callers mask those rows)."""
    index = position.clamp(min=0, max=stack.size(1) - 1)
    rows = torch.arange(stack.size(0), device=stack.device)
    return stack[rows, index]


class GoalDrivenTreeDecoder(Recorded, nn.Module):
    """GTS's decoder over ``n_ops`` operators (arities in ``op_arity``) and ``n_constants`` learned constants; numbers
    come from the encoder per problem. ``hidden`` is H (goals, contexts, subtrees, encoder states), ``embed`` the
    operator embedding size."""

    def __init__(self, hidden: int, embed: int, op_arity: list[int], n_constants: int, dropout: float,
                 subtree_embedding: bool = True):
        super().__init__()
        self.subtree_embedding = subtree_embedding  # False (an ablation): right goals read zeros, not t_l
        if any(arity not in (1, 2) for arity in op_arity):
            raise ValueError(f"operators must be unary or binary, got arities {op_arity}")
        self.hidden = hidden
        self.register_buffer("op_arity", torch.tensor(op_arity, dtype=torch.long), persistent=False)
        self.op_embedding = nn.Embedding(max(1, len(op_arity)), embed)
        self.constant_embedding = nn.Parameter(torch.randn(n_constants, hidden) * hidden**-0.5)
        self.dropout = Dropout(dropout)
        # context attention, eq. 2-3
        self.attention_goal = nn.Linear(hidden, hidden)
        self.attention_state = nn.Linear(hidden, hidden, bias=False)
        self.attention_score = nn.Linear(hidden, 1, bias=False)
        # scores, eq. 4-5
        self.op_score = nn.Linear(2 * hidden, max(1, len(op_arity)))
        self.leaf_goal = nn.Linear(2 * hidden, hidden)
        self.leaf_embedding = nn.Linear(hidden, hidden, bias=False)
        self.leaf_score = nn.Linear(hidden, 1, bias=False)
        # sub-goals, eq. 6-9 (gate and candidate side by side)
        self.left_goal = nn.Linear(2 * hidden + embed, 2 * hidden)
        self.right_goal = nn.Linear(2 * hidden + embed, 2 * hidden)
        self.right_from_left = nn.Linear(hidden, 2 * hidden, bias=False)
        # subtree embedding, eq. 10-12
        self.merge = nn.Linear(embed + 2 * hidden, 2 * hidden)

    # -- state -----------------------------------------------------------------------------------------------------
    def start(self, root: torch.Tensor) -> dict:
        """The state before the root is predicted: one ready goal, the encoder's summary ``root`` (N, H)."""
        n, hidden = root.shape
        goal_pre = torch.cat([root, torch.zeros_like(root)], dim=-1).unsqueeze(1)  # (N, 1, 2H)
        zeros = torch.zeros(n, dtype=torch.long, device=root.device)
        return {
            "goal_pre": goal_pre,
            "goal_right": torch.zeros(n, 1, dtype=torch.bool, device=root.device),
            "goal_depth": zeros + 1,
            "emb": root.new_zeros(n, 1, hidden),
            "emb_op": root.new_zeros(n, 1, self.op_embedding.embedding_dim),
            "emb_kind": torch.zeros(n, 1, dtype=torch.long, device=root.device),
            "emb_depth": zeros,
        }

    # -- predicting one node ---------------------------------------------------------------------------------------
    def goal(self, state: dict) -> torch.Tensor:
        """The goal q (N, H) of the node to predict: the top of the goal stack, a right goal finished with the
        embedding of its left sibling (the top of the subtree stack)."""
        top = read(state["goal_pre"], state["goal_depth"] - 1)  # (N, 2H)
        is_right = read(state["goal_right"], state["goal_depth"] - 1)  # (N,)
        left_sibling = read(state["emb"], state["emb_depth"] - 1)  # (N, H)
        if not self.subtree_embedding:
            left_sibling = torch.zeros_like(left_sibling)
        right = gated(top + self.right_from_left(self.dropout(left_sibling)))
        return torch.where(is_right[:, None], right, top[:, : self.hidden])

    def attention_keys(self, states: torch.Tensor) -> torch.Tensor:
        """The state half of eq. 2's W_a [q; h_s] for encoder ``states`` (N, S, H), computed once per problem."""
        return self.attention_state(states)

    def context(self, goal: torch.Tensor, states: torch.Tensor, keys: torch.Tensor,
                valid: torch.Tensor) -> torch.Tensor:
        """Eq. 2-3: attention of ``goal`` (N, H) over encoder ``states`` (N, S, H) with their ``attention_keys``,
        padding excluded -> (N, H)."""
        energy = torch.tanh(self.attention_goal(goal)[:, None, :] + keys)  # (N, S, H)
        scores = self.attention_score(energy).squeeze(-1).masked_fill(~valid, NEG_INF)  # (N, S)
        weights = torch.softmax(scores, dim=-1)  # (N, S)
        if self.recorder is not None:  # one row per node: the goal that predicts target token t attends
            self.record("cross", weights[:, None, None, :], head_labels=["goal"], title="goal attention",
                        query_side="target_out", key_side="source")
        return (weights.unsqueeze(1) @ states).squeeze(1)  # (N, H)

    def scores(self, goal: torch.Tensor, context: torch.Tensor, leaves: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Eq. 4-5: operator scores (N, n_ops) and leaf scores (N, L) for leaf embeddings ``leaves`` (N, L, H)."""
        return self.scores_of(torch.cat([goal, context], dim=-1), leaves)

    def scores_of(self, goal_context: torch.Tensor, leaves: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``scores`` of goals and contexts already side by side, ``goal_context`` (N, 2H)."""
        goal_context = self.dropout(goal_context)
        op_scores = self.op_score(goal_context)
        energy = torch.tanh(self.leaf_goal(goal_context)[:, None, :] + self.leaf_embedding(self.dropout(leaves)))
        return op_scores, self.leaf_score(energy).squeeze(-1)  # (N, n_ops), (N, L)

    # -- taking one token ------------------------------------------------------------------------------------------
    def apply(self, state: dict, goal: torch.Tensor, context: torch.Tensor, op: torch.Tensor, leaf: torch.Tensor,
              leaves: torch.Tensor) -> dict:
        """The state after the node predicted at ``goal`` / ``context`` became operator ``op`` (N,) (index among the
        operators, -1: not an operator) or leaf ``leaf`` (N,) (index into ``leaves`` (N, L, H), -1: not a leaf);
        rows with neither (eos, padding) keep their state."""
        is_op, is_leaf = op.ge(0), leaf.ge(0)
        arity = self.op_arity[op.clamp(min=0)]  # (N,)
        embedded = self.op_embedding(op.clamp(min=0))  # (N, E)
        parent = self.dropout(torch.cat([goal, context, embedded], dim=-1))  # (N, 2H + E)
        left_goal = gated(self.left_goal(parent))  # (N, H)
        right_pre = self.right_goal(parent)  # (N, 2H)

        # top-down: the expanded goal leaves the stack; an operator pushes its right goal, then its left one
        depth = state["goal_depth"] - (is_op | is_leaf).long()
        push_right = is_op & arity.eq(2)
        goal_pre = write(state["goal_pre"], depth, right_pre, push_right)
        goal_right = write(state["goal_right"], depth, torch.ones_like(push_right), push_right)
        depth = depth + push_right.long()
        goal_pre = write(goal_pre, depth, torch.cat([left_goal, torch.zeros_like(left_goal)], dim=-1), is_op)
        goal_right = write(goal_right, depth, torch.zeros_like(is_op), is_op)
        depth = depth + is_op.long()

        # bottom-up: an operator waits for its children; a leaf completes subtrees, merged while they complete
        emb, emb_op, emb_kind, emb_depth = state["emb"], state["emb_op"], state["emb_kind"], state["emb_depth"]
        kind = torch.where(arity.eq(2), WAITING_BINARY, WAITING_UNARY)
        emb_op = write(emb_op, emb_depth, embedded, is_op)
        emb_kind = write(emb_kind, emb_depth, kind, is_op)
        emb = write(emb, emb_depth, torch.zeros_like(goal), is_op)
        emb_depth = emb_depth + is_op.long()

        subtree = read(leaves, leaf)  # (N, H)
        carrying = is_leaf
        while bool(carrying.any()):
            top_kind = read(emb_kind, emb_depth - 1).masked_fill(emb_depth.eq(0), 0)
            binary_done = carrying & top_kind.eq(LEFT_DONE)  # the finished left sibling, its operator below it
            unary_done = carrying & top_kind.eq(WAITING_UNARY)
            settles = carrying & top_kind.eq(WAITING_BINARY)  # a finished left child: it waits for its sibling
            operator_at = emb_depth - 1 - binary_done.long()
            left = torch.where(binary_done[:, None], read(emb, emb_depth - 1), subtree)
            right = torch.where(binary_done[:, None], subtree, torch.zeros_like(subtree))
            merged = gated(self.merge(self.dropout(torch.cat([read(emb_op, operator_at), left, right], dim=-1))))
            subtree = torch.where((binary_done | unary_done)[:, None], merged, subtree)
            emb_depth = emb_depth - 2 * binary_done.long() - unary_done.long()
            emb = write(emb, emb_depth, subtree, settles)
            emb_kind = write(emb_kind, emb_depth, torch.full_like(emb_depth, LEFT_DONE), settles)
            emb_depth = emb_depth + settles.long()
            carrying = carrying & ~settles & emb_depth.gt(0)
        return {
            "goal_pre": goal_pre, "goal_right": goal_right, "goal_depth": depth,
            "emb": emb, "emb_op": emb_op, "emb_kind": emb_kind, "emb_depth": emb_depth,
        }
