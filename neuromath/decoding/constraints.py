"""Grammar-constrained decoding: mask every next token after which no well-formed expression fits.

A ``GrammarConstraint`` reads a vocabulary through ``TokenClasses`` (per-id arity, number-start
and digit tables, see ``neuromath.expr.grammar``) and keeps, for every decoded row, a small
parser state as a dict of batch-first tensors, so beam search can reorder it with the same
``index_select`` it applies to the model's cache:

  count         prefix: open slots still to fill (starts at 1); postfix: operands on the stack (starts at 0)
  digit_needed  the last token was a number start (``INT+``), so at least one digit must follow
  in_number     the last token was a digit of a number, so more digits may follow
  finished      eos has been emitted

``allowed(state, steps_left)`` answers which tokens may come next when, after that token, at most
``steps_left`` more tokens (eos included) may be emitted. The rules:

* pad, bos and unk are never allowed. After eos only eos is allowed.
* Node tokens (operators, plain leaves, number starts) in prefix: allowed only when a slot is
  open (count >= 1); a token of arity a turns count into count - 1 + a. In postfix: a token of
  arity a needs count >= a and turns it into count - a + 1 (leaves and number starts push one).
* Digits (``classes.digit``): right after a number start only digits are allowed; right after a
  digit more digits are allowed, as is anything that may follow a complete number (in prefix a
  node token when a slot is open, or eos when none is: the last number of an expression may
  have several digits). Anywhere else digits are not allowed. When the grammar has no number
  starts ``classes.digit`` is all False and digit-looking tokens are plain leaves.
* eos is allowed only when the expression is complete: prefix count == 0, postfix count == 1,
  and not right after a number start.
* A token is allowed only if the expression can still be completed afterwards within
  ``steps_left`` tokens. The fewest tokens that complete a state are
  ``completion_cost(count) + digit_needed + 1`` (the 1 is eos), where filling one slot or pushing
  one operand costs ``leaf_cost`` tokens: 1 with a plain leaf in the vocabulary, else 2 (a number
  start and a digit). In prefix ``completion_cost(count) = count * leaf_cost``. In postfix it is
  the shortest way back to one operand on the stack, found once by a shortest-path search over
  stack sizes using pushes and the vocabulary's operators (with a binary operator it is
  ``count - 1`` for count >= 1; with no operator of arity >= 2 a stack above 1 can never be
  reduced, so it is never allowed).
* If for some row nothing would be allowed (``max_len`` too small for any expression, or a
  state the constraint never produced), eos is allowed for that row so decoding always ends.

Following these masks every sequence ends in eos within the length budget and, whenever the
budget allowed any expression at the start, the tokens before eos form one complete expression.
"""

from __future__ import annotations

import heapq

import torch

from neuromath.expr.grammar import TokenClasses

IMPOSSIBLE = 1 << 30  # completion cost of a state that can never become a complete expression


class GrammarConstraint:
    def __init__(self, classes: TokenClasses, pad_id: int = 0, bos_id: int = 1, eos_id: int = 2, unk_id: int = 3):
        if classes.notation not in ("prefix", "postfix"):
            raise ValueError(f"notation must be prefix or postfix, not {classes.notation!r}")
        vocab_size = len(classes.arity)
        if not len(classes.number_start) == len(classes.digit) == vocab_size:
            raise ValueError("TokenClasses tables must all have one entry per vocabulary id")
        if not 0 <= eos_id < vocab_size:
            raise ValueError(f"eos id {eos_id} is outside the vocabulary of {vocab_size} tokens")
        self.notation = classes.notation
        self.vocab_size = vocab_size
        self.eos_id = eos_id

        special = torch.zeros(vocab_size, dtype=torch.bool)
        special[[i for i in (pad_id, bos_id, eos_id, unk_id) if 0 <= i < vocab_size]] = True
        arity = torch.tensor(classes.arity, dtype=torch.long)
        digit = torch.tensor(classes.digit, dtype=torch.bool) & ~special
        number_start = torch.tensor(classes.number_start, dtype=torch.bool) & ~special & ~digit
        node = ~special & ~digit  # operators, plain leaves and number starts: each takes one node of the tree
        if self.notation == "prefix":
            count_change = torch.where(node, arity - 1, 0)
        else:
            count_change = torch.where(node, 1 - arity, 0)
        self.cpu_tables = {
            "arity": arity,
            "node": node,
            "digit": digit,
            "number_start": number_start,
            "count_change": count_change,
        }
        self.tables_by_device: dict[torch.device, dict[str, torch.Tensor]] = {}

        plain_leaf = node & ~number_start & arity.eq(0)
        number_leaf = number_start & arity.eq(0)
        if bool(plain_leaf.any()):
            self.leaf_cost = 1
        elif bool(number_leaf.any()) and bool(digit.any()):
            self.leaf_cost = 2
        else:
            self.leaf_cost = IMPOSSIBLE
        self.operator_arities = sorted({int(a) for a in arity[node & arity.gt(0)].tolist()})
        self.max_reduction = max([a - 1 for a in self.operator_arities] + [0])  # stack shrink of one operator
        self.postfix_costs = torch.zeros(0, dtype=torch.long)  # grown on demand, see postfix_completion_costs

    # ---- state ---------------------------------------------------------------------------------

    def start(self, batch_size: int, device: torch.device | str | None = None) -> dict[str, torch.Tensor]:
        start_count = 1 if self.notation == "prefix" else 0
        return {
            "count": torch.full((batch_size,), start_count, dtype=torch.long, device=device),
            "digit_needed": torch.zeros(batch_size, dtype=torch.bool, device=device),
            "in_number": torch.zeros(batch_size, dtype=torch.bool, device=device),
            "finished": torch.zeros(batch_size, dtype=torch.bool, device=device),
        }

    def advance(self, state: dict[str, torch.Tensor], token_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """The state after each row emits ``token_ids`` (N,); the input state is left unchanged."""
        tables = self.tables(token_ids.device)
        finished = state["finished"]
        return {
            "count": state["count"] + tables["count_change"][token_ids].masked_fill(finished, 0),
            "digit_needed": tables["number_start"][token_ids] & ~finished,
            "in_number": tables["digit"][token_ids] & ~finished,
            "finished": finished | token_ids.eq(self.eos_id),
        }

    # ---- masks ---------------------------------------------------------------------------------

    def allowed(self, state: dict[str, torch.Tensor], steps_left: int) -> torch.Tensor:
        """(N, V) bool: tokens that may come next with at most ``steps_left`` tokens after them."""
        count = state["count"]
        tables = self.tables(count.device)
        count_column = count[:, None]  # (N, 1)
        new_count = count_column + tables["count_change"][None, :]  # (N, V)
        tokens_to_finish = (
            self.completion_cost(new_count, steps_left) + tables["number_start"].long()[None, :] + 1
        )  # (N, V), eos included
        fits = tokens_to_finish <= steps_left

        digit_needed = state["digit_needed"][:, None]  # (N, 1)
        in_number = state["in_number"][:, None]
        if self.notation == "prefix":
            has_room = count_column >= 1  # (N, 1)
            complete = count.eq(0)
        else:
            has_room = count_column >= tables["arity"][None, :]  # (N, V)
            complete = count.eq(1)
        node_allowed = tables["node"][None, :] & has_room & ~digit_needed & fits
        digit_allowed = tables["digit"][None, :] & (digit_needed | in_number) & fits
        allowed = (node_allowed | digit_allowed) & ~state["finished"][:, None]

        eos_allowed = (complete & ~state["digit_needed"]) | state["finished"]
        stuck = ~allowed.any(dim=1) & ~eos_allowed
        allowed[:, self.eos_id] = eos_allowed | stuck
        return allowed

    def completion_cost(self, count: torch.Tensor, steps_left: int) -> torch.Tensor:
        """Fewest tokens (eos excluded) that turn ``count`` into a complete expression, exact up to
        ``steps_left``; larger values only say "more than ``steps_left``"."""
        if self.notation == "prefix":
            return torch.where(count >= 0, count.clamp(min=0) * self.leaf_cost, IMPOSSIBLE)
        # Each token shrinks the stack by at most max_reduction, so larger stacks cannot finish in time.
        largest = 1 + max(steps_left, 0) * self.max_reduction
        costs = self.postfix_completion_costs(largest + 1).to(count.device)
        reachable = (count >= 0) & (count <= largest)
        return torch.where(reachable, costs[count.clamp(0, largest)], IMPOSSIBLE)

    def postfix_completion_costs(self, size: int) -> torch.Tensor:
        """(size,) fewest tokens that take a postfix stack of s operands, s < size, to exactly one.

        Dijkstra from s = 1 over reversed moves: a push (leaf_cost tokens) s -> s + 1, an
        operator of arity a (1 token) s -> s - a + 1 for s >= a. Stack sizes up to 2 * size + the
        largest arity are searched, so every cost up to ``size`` tokens is exact.
        """
        if self.postfix_costs.numel() >= size:
            return self.postfix_costs[:size]
        limit = 2 * size + max(self.operator_arities + [1])
        costs = [IMPOSSIBLE] * (limit + 1)
        costs[1] = 0
        frontier = [(0, 1)]
        while frontier:
            cost, stack = heapq.heappop(frontier)
            if cost > costs[stack]:
                continue
            predecessors = []
            if stack >= 1 and self.leaf_cost < IMPOSSIBLE:
                predecessors.append((stack - 1, self.leaf_cost))  # push a leaf onto stack - 1
            for arity in self.operator_arities:
                if arity >= 2 and stack >= 1 and stack + arity - 1 <= limit:
                    predecessors.append((stack + arity - 1, 1))  # apply the operator to a larger stack
            for previous, step_cost in predecessors:
                if cost + step_cost < costs[previous]:
                    costs[previous] = cost + step_cost
                    heapq.heappush(frontier, (cost + step_cost, previous))
        self.postfix_costs = torch.tensor(costs[:size], dtype=torch.long)
        return self.postfix_costs

    def tables(self, device: torch.device) -> dict[str, torch.Tensor]:
        device = torch.device(device)
        if device not in self.tables_by_device:
            self.tables_by_device[device] = {name: table.to(device) for name, table in self.cpu_tables.items()}
        return self.tables_by_device[device]
