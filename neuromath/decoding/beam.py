"""Beam search through the model contract (encode / decode_step), batched over batch x beam.

Candidate selection follows fairseq's sequence generator (Ott et al. 2019, "fairseq: A Fast,
Extensible Toolkit for Sequence Modeling"): at every step the 2K best of the K x V continuations
of a row are taken; eos candidates among the first K ranks become finished hypotheses, and the
K best non-eos candidates become the next beams. A row is done once it has K finished
hypotheses; done rows leave the active batch (memory and cache are cut down to the live rows),
and the search stops when every row is done or ``max_len`` tokens were generated, when the
live beams are kept as unfinished hypotheses.

Scores are sums of log-probabilities (the eos included); hypotheses are ranked by
``score / length ** length_penalty`` with ``length`` the generated tokens, eos included.
Finished hypotheses rank before unfinished ones.

Two parts of the model contract (``neuromath.models.contracts.SequenceModel``) make the search cheaper without
changing its results: a model that ``shares_memory_across_beams`` keeps one memory row per source (told the beam count
as ``memory["beam_group"]``) instead of one per beam, and ``reorder_cache(cache, index)`` lets a model reorder its own
cache (the Transformer reorders its key and value buffers in place, copying only the rows whose parent is another
row: each beam's first child is kept in its parent's slot, ``keep_children_in_place``); the plain form
(``SequenceModelParts``) index-selects it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from neuromath.models.contracts import SequenceModel, select_rows
from neuromath.text import Vocabulary


@dataclass
class Hypothesis:
    tokens: list[int]  # generated ids, without bos and eos
    score: float  # sum of the log-probabilities of the generated tokens, eos included
    normalized: float  # score / length ** length_penalty, length = generated tokens incl. eos
    finished: bool  # False when max_len was reached before eos


def keep_children_in_place(parents: torch.Tensor) -> torch.Tensor:
    """A permutation (A, K) of each row's K kept candidates, whose parent beams are ``parents`` (A, K) in rank
    order: slot ``s`` takes candidate ``order[:, s]``. The first candidate (by rank) of each parent goes to the
    parent's own slot; the others fill the slots left free, in rank order. Beam search then reorders the cache
    with parent ``s`` for most slots ``s``, which an in-place reorder does not copy."""
    beam = parents.size(1)
    slots = torch.arange(beam, device=parents.device)
    same_parent = parents[:, :, None].eq(parents[:, None, :])  # (A, K, K)
    earlier = torch.ones(beam, beam, dtype=torch.bool, device=parents.device).tril(-1)  # [k, j]: j ranks before k
    first = ~(same_parent & earlier).any(2)  # (A, K) the best candidate of its parent
    taken = parents[:, :, None].eq(slots).any(1)  # (A, K) slots some first candidate takes
    free_slots = torch.argsort(taken.int(), dim=1, stable=True)  # free slots first, ascending
    others = torch.argsort(first.int(), dim=1, stable=True)  # later children first, in rank order
    n_others = (~first).sum(1, keepdim=True)  # (A, 1) as many as free slots
    slot = parents.clone()
    slot.scatter_(1, others, torch.where(slots < n_others, free_slots, parents.gather(1, others)))
    return torch.empty_like(slot).scatter_(1, slot, slots.expand_as(slot).contiguous())


@torch.no_grad()
def beam_search(
    model: SequenceModel,
    batch: dict,
    beam_size: int,
    max_len: int,
    nbest: int = 1,
    length_penalty: float = 1.0,
    constraint=None,
    use_cache: bool = True,
    bos_id: int = Vocabulary.bos_id,
    eos_id: int = Vocabulary.eos_id,
) -> list[list[Hypothesis]]:
    """The ``nbest`` best hypotheses of each source in the batch, best first.

    ``max_len`` counts the generated tokens, eos included. With ``use_cache=False`` every step
    passes ``cache=None`` so the model recomputes the whole prefix. With a ``constraint`` (e.g. a
    ``GrammarConstraint``) the tokens it does not allow get log-probability -inf.
    """
    if beam_size < 1 or nbest < 1 or max_len < 1:
        raise ValueError(f"beam_size, nbest and max_len must be >= 1, got {beam_size}, {nbest}, {max_len}")
    beam = beam_size
    source = batch["source"]
    device = source.device
    batch_size = source.size(0)

    memory = model.encode(batch)
    # A model whose memory serves all beams of a source (``shares_memory_across_beams``) keeps one row per source
    # and is told the beam count; any other memory is repeated for every beam.
    per_source = model.shares_memory_across_beams

    def for_every_beam(memory: dict) -> dict:
        if per_source:
            return {**memory, "beam_group": beam}  # every tensor (B, ...)
        return {
            name: value.repeat_interleave(beam, dim=0) if isinstance(value, torch.Tensor) else value
            for name, value in memory.items()
        }  # every tensor (B * K, ...)

    cache = None
    first_log_probs = None
    if use_cache and beam > 1 and not getattr(model, "fixed_shapes", False):
        # The first step is the same for the K beams of a source (bos alone): it runs on one row per source, and its
        # cache is then copied to every beam; the memory is widened after it, with what the step kept in it (the
        # Transformer keeps its cross-attention keys and values there). A fixed-shape decoder (decode.compile) runs
        # every step at B * K rows instead: one more batch shape would cost it one more compiled graph.
        memory = {**memory, "beam_group": 1} if per_source else dict(memory)
        bos = torch.full((batch_size, 1), bos_id, dtype=torch.long, device=device)
        first_log_probs, cache = model.decode_step(memory, bos, None)  # (B, V)
        first_log_probs = first_log_probs.repeat_interleave(beam, dim=0)  # (B * K, V)
        cache = model.reorder_cache(cache, torch.arange(batch_size, device=device).repeat_interleave(beam))
    memory = for_every_beam(memory)
    state = constraint.start(batch_size * beam, device) if constraint is not None else None

    active_rows = torch.arange(batch_size, device=device)  # (A,) batch row of each live row
    tokens = torch.zeros(batch_size * beam, 0, dtype=torch.long, device=device)  # (A * K, t)
    # Only the first beam of each row is live at the start, so the K beams do not duplicate it.
    scores = torch.full((batch_size, beam), float("-inf"), device=device)  # (A, K)
    scores[:, 0] = 0.0
    finished: list[list[Hypothesis]] = [[] for _ in range(batch_size)]

    for step in range(max_len):
        n_active = active_rows.numel()
        prefix = torch.cat(
            [torch.full((n_active * beam, 1), bos_id, dtype=torch.long, device=device), tokens], dim=1
        )  # (A * K, t + 1)
        if step == 0 and first_log_probs is not None:
            log_probs = first_log_probs
        else:
            log_probs, cache = model.decode_step(memory, prefix, cache if use_cache else None)  # (A * K, V)
        log_probs = log_probs.float()
        vocab_size = log_probs.size(-1)
        if constraint is not None:
            allowed = constraint.allowed(state, steps_left=max_len - step - 1)  # (A * K, V)
            log_probs = log_probs.masked_fill(~allowed, float("-inf"))

        continuations = (scores.view(-1, 1) + log_probs).view(n_active, beam * vocab_size)  # (A, K * V)
        n_candidates = min(2 * beam, beam * vocab_size)
        candidate_scores, candidate_index = continuations.topk(n_candidates, dim=1)  # (A, 2K)
        candidate_beam = torch.div(candidate_index, vocab_size, rounding_mode="floor")  # (A, 2K)
        candidate_token = candidate_index % vocab_size
        candidate_is_eos = candidate_token.eq(eos_id)

        # eos among the first K ranks: finished hypotheses, in rank order, until a row has K.
        to_finish = candidate_is_eos[:, :beam] & torch.isfinite(candidate_scores[:, :beam])  # (A, K)
        if bool(to_finish.any()):
            rows, ranks = to_finish.nonzero(as_tuple=True)
            parent = rows * beam + candidate_beam[rows, ranks]
            finished_tokens = tokens.index_select(0, parent).tolist()
            finished_scores = candidate_scores[rows, ranks].tolist()
            batch_rows = active_rows[rows].tolist()
            length = step + 1
            for row, row_tokens, score in zip(batch_rows, finished_tokens, finished_scores):
                if len(finished[row]) < beam:
                    finished[row].append(Hypothesis(row_tokens, score, score / length**length_penalty, True))

        # The K best non-eos candidates continue: rank eos candidates after all the others.
        order = candidate_is_eos.long() * n_candidates + torch.arange(n_candidates, device=device)  # (A, 2K)
        kept = order.topk(beam, dim=1, largest=False).indices  # (A, K), in rank order
        # Each beam's first child takes its parent's slot, so a cache reorder moves few rows (the order of a row's
        # beams is otherwise free: candidates are ranked by score, and eos candidates finish in rank order).
        kept = kept.gather(1, keep_children_in_place(candidate_beam.gather(1, kept)))
        next_scores = candidate_scores.gather(1, kept)
        next_beam = candidate_beam.gather(1, kept)
        next_token = candidate_token.gather(1, kept)

        row_done = torch.tensor([len(finished[row]) >= beam for row in active_rows.tolist()], device=device)
        if bool(row_done.all()):
            active_rows = active_rows[:0]
            break
        live = (~row_done).nonzero().squeeze(1)  # (A',) positions among the active rows
        parent = (live[:, None] * beam + next_beam[live]).view(-1)  # (A' * K,) row of each new beam
        new_token = next_token[live].view(-1)  # (A' * K,)

        tokens = torch.cat([tokens.index_select(0, parent), new_token[:, None]], dim=1)  # (A' * K, t + 1)
        scores = next_scores[live]  # (A', K)
        if use_cache:
            cache = model.reorder_cache(cache, parent)
        if live.numel() < n_active:
            # Beams of one row share its memory, so reordering within rows leaves memory unchanged.
            memory = select_rows(memory, live if per_source else parent)
        if constraint is not None:
            state = constraint.advance(select_rows(state, parent), new_token)
        active_rows = active_rows[live]

    # Rows still searching after max_len tokens keep their live beams as unfinished hypotheses.
    if active_rows.numel() > 0:
        length = tokens.size(1)
        live_tokens = tokens.tolist()
        live_scores = scores.view(-1).tolist()
        for position, row in enumerate(active_rows.tolist()):
            for k in range(beam):
                score = live_scores[position * beam + k]
                if score != float("-inf"):
                    normalized = score / length**length_penalty
                    finished[row].append(Hypothesis(live_tokens[position * beam + k], score, normalized, False))

    return [
        sorted(hypotheses, key=lambda h: (h.finished, h.normalized), reverse=True)[:nbest]
        for hypotheses in finished
    ]
