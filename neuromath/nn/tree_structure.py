"""Tree structure of prefix token sequences: positions (Shiv & Quirk 2019) and tree relations.

``TreeStructure`` parses a batch of token sequences written in prefix notation, one token at a
time and vectorised over the batch, so the same code serves teacher forcing (a whole sequence)
and incremental decoding (one new token, the parser state kept in the decoder cache). A prefix
of an incomplete expression parses too: every token's place in the tree is fixed by the tokens
before it.

Conventions (documented in docs/guides/transformers.md and tested in tests/nn/test_tree.py):

* The sequence hangs under a *super-root*. In the decoder the super-root is the ``bos`` token
  (position 0, depth 0); in the encoder it is virtual. The expression's root is the super-root's
  child 0 and has depth 1; tokens after a complete expression (``eos``, or a malformed
  continuation) start further trees under the super-root (child 1, 2, ...).
* A token's *path* is the list of child indices from its tree's root down to it (the root's path
  is empty; in ``* + a b c`` the token ``b`` has path ``0 1``: child 0 of the root, then child 1).
  It is stored most recent step first and truncated to ``path_depth`` steps, which is what the
  tree positional encoding of Shiv & Quirk reads.
* Multi-digit numbers (``INT+ 1 6`` for 16, Lample & Charton): the number-start token is the leaf
  of the expression tree, its first digit is its child 0 and each further digit is child 0 of
  the previous digit, so a number is a chain hanging below its sign and the digits never take a
  slot of an operator.
* The *relation* of token i to token j is the path from i up to their lowest common ancestor and
  down to j, written as (ups, downs): ``UUD`` is (2, 1). For pre-order sequences the lowest
  common ancestor of i < j has depth min(depth[i+1..j]) - 1 (the nodes strictly after i up to j
  all lie in the ancestor's subtree, and its child on the way to j is the shallowest), so all
  relations come from the depths alone, batched as cumulative minima.
* Relations are mapped to ids by a table: id 0 is shared by every relation outside the table
  (and by paths of ``max_steps`` or more steps); the others are the most frequent relations of
  the training data (``fit_relations``), or before fitting the shortest ones.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import torch
from torch import nn

from neuromath.expr.grammar import TokenClasses
from neuromath.registry import POSITIONS

UNBOUNDED_ARITY = 1 << 30  # the super-root takes any number of children


class TreeStructure(nn.Module):
    """Paths, depths and relation ids of the tokens of a batch of prefix sequences."""

    def __init__(self, classes: TokenClasses, root_token: bool, path_depth: int, n_relations: int, max_steps: int = 16):
        super().__init__()
        if classes.notation != "prefix":
            raise ValueError("tree positions and tree relations need targets in prefix notation")
        if n_relations < 2:
            raise ValueError("tree_relations must be at least 2 (one id is shared by the rare relations)")
        self.root_token, self.path_depth = root_token, path_depth
        self.n_relations, self.max_steps = n_relations, max_steps
        self.register_buffer("arity", torch.tensor(classes.arity, dtype=torch.long), persistent=False)
        self.register_buffer("number_start", torch.tensor(classes.number_start, dtype=torch.bool), persistent=False)
        self.register_buffer("digit", torch.tensor(classes.digit, dtype=torch.bool), persistent=False)
        # relation_table[ups, downs] -> id; index max_steps stands for "max_steps or more".
        self.register_buffer("relation_table", self.default_relation_table())

    # ----------------------------------------------------------------------------------- parsing
    def initial_state(self, batch_size: int, device: torch.device) -> dict:
        root = 0 if self.root_token else -1
        return {
            "stack_node": torch.full((batch_size, 1), root, dtype=torch.long, device=device),  # (N, S)
            "stack_next": torch.zeros(batch_size, 1, dtype=torch.long, device=device),  # (N, S)
            "stack_arity": torch.full((batch_size, 1), UNBOUNDED_ARITY, dtype=torch.long, device=device),  # (N, S)
            "stack_size": torch.ones(batch_size, dtype=torch.long, device=device),  # (N,)
            "in_number": torch.zeros(batch_size, dtype=torch.bool, device=device),  # (N,)
            "paths": torch.empty(batch_size, 0, self.path_depth, dtype=torch.long, device=device),  # (N, T, L)
            "depth": torch.empty(batch_size, 0, dtype=torch.long, device=device),  # (N, T)
        }

    def forward(self, ids: torch.Tensor, state: dict | None = None, relations: bool = False) -> tuple[dict, dict]:
        """Parse the new tokens ``ids`` (N, Tq) after those already in ``state``.

        Returns ``info`` with ``paths`` (N, Tq, L) and ``depth`` (N, Tq) of the new tokens and, when
        ``relations``, ``relations`` (N, Tq, T) ids of every new token to every token so far; and
        the new state (a dict of batch-first tensors).
        """
        batch_size, new = ids.shape
        state = dict(self.initial_state(batch_size, ids.device) if state is None else state)
        start = state["depth"].size(1)
        # Room for every token to open a node: the stack never holds more than start + new + 1.
        room = start + new + 1 - state["stack_node"].size(1)
        if room > 0:
            for key in ("stack_node", "stack_next", "stack_arity"):
                state[key] = torch.cat([state[key], state[key].new_zeros(batch_size, room)], dim=1)
        paths = torch.cat([state["paths"], ids.new_full((batch_size, new, self.path_depth), -1)], dim=1)  # (N, T, L)
        depth = torch.cat([state["depth"], ids.new_zeros(batch_size, new)], dim=1)  # (N, T)
        stack_node, stack_next, stack_arity = (
            state["stack_node"].clone(), state["stack_next"].clone(), state["stack_arity"].clone()
        )
        stack_size, in_number = state["stack_size"].clone(), state["in_number"].clone()
        rows = torch.arange(batch_size, device=ids.device)
        for offset in range(new):
            t = start + offset
            token = ids[:, offset]  # (N,)
            if self.root_token and t == 0:
                continue  # the super-root itself: depth 0, empty path, already on the stack
            arity = self.arity[token]
            chain = self.digit[token] & in_number  # a further digit of the number being written
            top = stack_size - 1
            parent = torch.where(chain, torch.full_like(token, t - 1), stack_node[rows, top])
            child = torch.where(chain, torch.zeros_like(token), stack_next[rows, top])
            has_parent_node = parent >= 0
            safe_parent = parent.clamp(min=0)
            parent_depth = torch.where(has_parent_node, depth[rows, safe_parent], torch.zeros_like(token))
            parent_path = paths[rows, safe_parent]  # (N, L)
            # The super-root's children are tree roots: their path is empty, so is the bos's.
            under_root = parent_depth.eq(0)
            parent_path = torch.where(under_root[:, None], torch.full_like(parent_path, -1), parent_path)
            new_path = torch.cat([child[:, None], parent_path[:, :-1]], dim=1)  # (N, L), most recent step first
            paths[:, t] = torch.where(under_root[:, None], torch.full_like(new_path, -1), new_path)
            depth[:, t] = parent_depth + 1
            # The parent's slot is filled; a full parent leaves the stack; an operator is pushed.
            fills_slot = ~chain
            stack_next[rows, top] += fills_slot.long()
            full = fills_slot & stack_next[rows, top].ge(stack_arity[rows, top])
            stack_size = stack_size - full.long()
            push = fills_slot & arity.gt(0)
            slot = stack_size.clamp(max=stack_node.size(1) - 1)
            stack_node[rows, slot] = torch.where(push, torch.full_like(token, t), stack_node[rows, slot])
            stack_next[rows, slot] = torch.where(push, torch.zeros_like(token), stack_next[rows, slot])
            stack_arity[rows, slot] = torch.where(push, arity, stack_arity[rows, slot])
            stack_size = stack_size + push.long()
            in_number = self.number_start[token] | chain
        new_state = {
            "stack_node": stack_node,
            "stack_next": stack_next,
            "stack_arity": stack_arity,
            "stack_size": stack_size,
            "in_number": in_number,
            "paths": paths,
            "depth": depth,
        }
        info = {"paths": paths[:, start:], "depth": depth[:, start:]}
        if relations:
            info["relations"] = self.relation_ids(*self.relation_steps(depth, start, new))
        return info, new_state

    # ------------------------------------------------------------------------ fixed-shape parsing
    # The parse of ``forward`` one token at a time over buffers of a fixed capacity, the position a 0-d tensor, so that
    # every decoding step has the same shapes (``neuromath.decoding.fixed_shapes``). Positions not parsed yet hold
    # depth 0 and empty paths; only keys that attention masks read them.

    def fixed_state(self, batch_size: int, capacity: int, device: torch.device) -> dict:
        """The empty parse of ``capacity`` tokens: the stacks have room for every token to open a node."""
        width = capacity + 1
        stack_node = torch.zeros(batch_size, width, dtype=torch.long, device=device)
        stack_node[:, 0] = 0 if self.root_token else -1
        stack_arity = torch.zeros(batch_size, width, dtype=torch.long, device=device)
        stack_arity[:, 0] = UNBOUNDED_ARITY
        return {
            "stack_node": stack_node,  # (N, capacity + 1)
            "stack_next": torch.zeros(batch_size, width, dtype=torch.long, device=device),
            "stack_arity": stack_arity,
            "stack_size": torch.ones(batch_size, dtype=torch.long, device=device),  # (N,)
            "in_number": torch.zeros(batch_size, dtype=torch.bool, device=device),  # (N,)
            "paths": torch.full((batch_size, capacity, self.path_depth), -1, dtype=torch.long, device=device),
            "depth": torch.zeros(batch_size, capacity, dtype=torch.long, device=device),  # (N, capacity)
        }

    def fixed_step(self, ids: torch.Tensor, state: dict, position: torch.Tensor, relations: bool = False) -> dict:
        """Parse the token ``ids`` (N, 1) at ``position`` (0-d tensor) into ``state`` (``fixed_state``), in place, as
        ``forward`` parses it. Returns ``paths`` (N, 1, L), ``depth`` (N, 1) and, with ``relations``, ``relations``
        (N, 1, capacity) of the token to every position (those after it are masked by the caller)."""
        token = ids[:, 0]  # (N,)
        stack_node, stack_next, stack_arity = state["stack_node"], state["stack_next"], state["stack_arity"]
        stack_size, in_number, paths, depth = state["stack_size"], state["in_number"], state["paths"], state["depth"]
        at = position.view(1)
        # the super-root itself (root_token, position 0): depth 0, an empty path, already on the stack
        skip = position.eq(0) if self.root_token else torch.zeros((), dtype=torch.bool, device=ids.device)

        def read(buffer: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
            return buffer.gather(1, index[:, None]).squeeze(1)  # buffer[rows, index]

        arity = self.arity[token]
        chain = self.digit[token] & in_number  # a further digit of the number being written
        top = stack_size - 1
        parent = torch.where(chain, (position - 1).expand_as(token), read(stack_node, top))
        child = torch.where(chain, torch.zeros_like(token), read(stack_next, top))
        safe_parent = parent.clamp(min=0)
        parent_depth = torch.where(parent >= 0, read(depth, safe_parent), torch.zeros_like(token))
        parent_path = paths.gather(1, safe_parent[:, None, None].expand(-1, 1, paths.size(2))).squeeze(1)  # (N, L)
        under_root = parent_depth.eq(0)[:, None]
        parent_path = torch.where(under_root, torch.full_like(parent_path, -1), parent_path)
        new_path = torch.cat([child[:, None], parent_path[:, :-1]], dim=1)  # (N, L), most recent step first
        new_path = torch.where(under_root, torch.full_like(new_path, -1), new_path)
        paths.index_copy_(1, at, torch.where(skip, paths.index_select(1, at).squeeze(1), new_path)[:, None])
        depth.index_copy_(1, at, torch.where(skip, depth.index_select(1, at).squeeze(1), parent_depth + 1)[:, None])
        # The parent's slot is filled; a full parent leaves the stack; an operator is pushed.
        fills_slot = ~chain & ~skip
        filled = read(stack_next, top) + fills_slot.long()
        stack_next.scatter_(1, top[:, None], filled[:, None])
        full = fills_slot & filled.ge(read(stack_arity, top))
        size = stack_size - full.long()
        push = fills_slot & arity.gt(0)
        slot = size.clamp(max=stack_node.size(1) - 1)
        for buffer, pushed in ((stack_node, position.expand_as(token)), (stack_next, torch.zeros_like(token)),
                               (stack_arity, arity)):
            buffer.scatter_(1, slot[:, None], torch.where(push, pushed, read(buffer, slot))[:, None])
        stack_size.copy_(size + push.long())
        in_number.copy_(torch.where(skip, in_number, self.number_start[token] | chain))
        info = {"paths": paths.index_select(1, at), "depth": depth.index_select(1, at)}
        if relations:
            info["relations"] = self.relation_ids(*self.relation_steps(depth, position, 1))
        return info

    # --------------------------------------------------------------------------------- relations
    @staticmethod
    def relation_steps(depth: torch.Tensor, query_start: int | torch.Tensor,
                       n_queries: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(ups, downs), each (N, Tq, T), from the queries at ``query_start ..`` (an int, or a 0-d tensor in
        fixed-shape decoding) to every token."""
        length = depth.size(1)
        query_position = (torch.arange(n_queries, device=depth.device) + query_start)[:, None]  # (Tq, 1)
        key_position = torch.arange(length, device=depth.device)[None, :]  # (1, T)
        big = torch.iinfo(torch.long).max
        keys = depth[:, None, :].expand(-1, n_queries, -1)  # (N, Tq, T)
        # j > i: min(depth[i+1 .. j]), a running minimum to the right of the query.
        after = keys.masked_fill(~(key_position > query_position), big).cummin(dim=2).values
        # j < i: min(depth[j+1 .. i]), a running minimum to the left, shifted by one.
        upto = keys.masked_fill(~(key_position <= query_position), big).flip(2).cummin(dim=2).values.flip(2)
        before = torch.cat([upto[:, :, 1:], upto.new_full((*upto.shape[:2], 1), big)], dim=2)
        query_depth = depth.index_select(1, query_position[:, 0])[:, :, None]  # (N, Tq, 1)
        ancestor = torch.where(
            key_position > query_position,
            after - 1,
            torch.where(key_position < query_position, before - 1, query_depth),
        )  # (N, Tq, T) depth of the lowest common ancestor
        return query_depth - ancestor, depth[:, None, :] - ancestor

    def relation_ids(self, ups: torch.Tensor, downs: torch.Tensor) -> torch.Tensor:
        return self.relation_table[ups.clamp(0, self.max_steps), downs.clamp(0, self.max_steps)]

    def default_relation_table(self) -> torch.Tensor:
        """Before fitting: the shortest relations get ids 1 .. n-1, ordered by (ups + downs, ups)."""
        order = sorted(
            ((ups, downs) for ups in range(self.max_steps) for downs in range(self.max_steps)),
            key=lambda pair: (pair[0] + pair[1], pair[0]),
        )
        return self.table_from_ranking(order)

    def table_from_ranking(self, ranking: Sequence[tuple[int, int]]) -> torch.Tensor:
        table = torch.zeros(self.max_steps + 1, self.max_steps + 1, dtype=torch.long)  # id 0: every other relation
        for relation_id, (ups, downs) in enumerate(ranking[: self.n_relations - 1], start=1):
            table[ups, downs] = relation_id
        return table

    @torch.no_grad()
    def count_relations(self, sequences: Iterable[Sequence[int]], causal: bool, batch_size: int = 256) -> Counter:
        """How often each (ups, downs) occurs between the token pairs attention sees."""
        counts: Counter = Counter()
        sequences = [list(s) for s in sequences]
        for begin in range(0, len(sequences), batch_size):
            chunk = sequences[begin : begin + batch_size]
            length = max(len(s) for s in chunk)
            ids = torch.zeros(len(chunk), length, dtype=torch.long, device=self.arity.device)  # (N, T)
            valid = torch.zeros(len(chunk), length, dtype=torch.bool, device=ids.device)  # (N, T)
            for row, sequence in enumerate(chunk):
                ids[row, : len(sequence)] = torch.tensor(sequence, dtype=torch.long)
                valid[row, : len(sequence)] = True
            _, state = self(ids)
            ups, downs = self.relation_steps(state["depth"], 0, length)
            seen = valid[:, :, None] & valid[:, None, :]  # (N, T, T)
            if causal:
                seen &= torch.ones(length, length, dtype=torch.bool, device=ids.device).tril()
            ups, downs = ups[seen].clamp(max=self.max_steps), downs[seen].clamp(max=self.max_steps)
            codes = torch.bincount(ups * (self.max_steps + 1) + downs, minlength=(self.max_steps + 1) ** 2)
            for code in codes.nonzero().flatten().tolist():
                counts[divmod(code, self.max_steps + 1)] += int(codes[code])
        return counts

    def fit_relations(self, sequences: Iterable[Sequence[int]], causal: bool) -> list[tuple[tuple[int, int], int]]:
        """Give ids 1 .. n-1 to the most frequent relations in ``sequences``; returns the ranking."""
        counts = self.count_relations(sequences, causal)
        default_rank = {pair: rank for rank, pair in enumerate(sorted(counts, key=lambda p: (p[0] + p[1], p[0])))}
        ranking = sorted(
            (pair for pair in counts if pair[0] < self.max_steps and pair[1] < self.max_steps),
            key=lambda pair: (-counts[pair], default_rank[pair]),
        )
        self.relation_table.copy_(self.table_from_ranking(ranking))
        return [(pair, counts[pair]) for pair in ranking]


@POSITIONS.register("tree")
class TreePositions(nn.Module):
    """Tree positional encodings of Shiv & Quirk 2019 ("Novel positional encodings to enable
    tree-based transformers", section 3): a token's path from its tree's root is a stack of
    one-hot child indices (width n, most recent step first, at most k steps), and each of the
    d_model // (n k) copies of that stack is weighted per level l by p^l sqrt((1 - p^2) d_model / 2)
    with its own learned decay p = tanh(raw). Remaining dimensions are zero."""

    needs_tree = True

    @classmethod
    def build(cls, config) -> "TreePositions":
        return cls(config.d_model, config.tree_depth, config.tree_width)

    def __init__(self, d_model: int, depth: int = 16, width: int = 2):
        super().__init__()
        self.d_model, self.depth, self.width = d_model, depth, width
        self.n_copies = d_model // (depth * width)
        if self.n_copies < 1:
            raise ValueError(
                "tree positions need d_model >= tree_depth * tree_width; "
                f"got d_model {d_model}, depth {depth}, width {width}"
            )
        self.decay = nn.Parameter(torch.zeros(self.n_copies))
        self.init_parameters()

    def init_parameters(self) -> None:
        with torch.no_grad():  # decays spread over (0.5, 0.95), from fast to slow forgetting of the deep steps
            self.decay.copy_(torch.atanh(torch.linspace(0.5, 0.95, self.n_copies)))

    def level_weights(self) -> torch.Tensor:
        p = torch.tanh(self.decay)  # (M,)
        levels = torch.arange(self.depth, device=p.device, dtype=p.dtype)[:, None]  # (L, 1)
        return p[None, :] ** levels * torch.sqrt((1 - p**2) * self.d_model / 2)[None, :]  # (L, M)

    def encode(self, paths: torch.Tensor) -> torch.Tensor:
        """paths: (N, T, L) child indices, -1 for no step -> encodings (N, T, d_model)."""
        steps = paths[..., : self.depth]
        one_hot = torch.nn.functional.one_hot(steps.clamp(0, self.width - 1), self.width)  # (N, T, L, n)
        one_hot = one_hot * steps.ge(0)[..., None]
        weights = self.level_weights().to(one_hot.device)  # (L, M)
        code = one_hot.to(weights.dtype)[..., None, :] * weights[:, :, None]  # (N, T, L, M, n)
        code = code.flatten(2)  # (N, T, L*M*n)
        return torch.nn.functional.pad(code, (0, self.d_model - code.size(-1)))  # (N, T, D)

    def forward(self, embeddings: torch.Tensor, start: int = 0, tree: dict | None = None) -> torch.Tensor:
        if tree is None or "paths" not in tree:
            raise ValueError("tree positions need the parsed tree of the tokens (the model supplies it)")
        return embeddings + self.encode(tree["paths"]).to(embeddings.dtype)
