"""Greedy decoding through the model contract (encode / decode_step), batched."""

from __future__ import annotations

import torch

from neuromath.models.contracts import SequenceModel
from neuromath.text import Vocabulary


@torch.no_grad()
def greedy_decode(
    model: SequenceModel,
    batch: dict,
    max_len: int,
    bos_id: int = Vocabulary.bos_id,
    eos_id: int = Vocabulary.eos_id,
    constraint=None,
) -> list[list[int]]:
    """Return, for each source in the batch, the ids of the most likely next token at every step, up to eos.

    ``max_len`` counts the generated tokens, eos included. With a ``constraint`` (e.g. a
    ``GrammarConstraint``) the tokens it does not allow are masked to -inf before the argmax.
    """
    memory = model.encode(batch)
    batch_size = batch["source"].size(0)
    device = batch["source"].device
    prefix = torch.full((batch_size, 1), bos_id, dtype=torch.long, device=device)  # (B, 1)
    finished = torch.zeros(batch_size, dtype=torch.bool, device=device)
    state = constraint.start(batch_size, device) if constraint is not None else None
    cache = None
    for step in range(max_len):
        log_probs, cache = model.decode_step(memory, prefix, cache)  # (B, V)
        if constraint is not None:
            allowed = constraint.allowed(state, steps_left=max_len - step - 1)  # (B, V)
            log_probs = log_probs.masked_fill(~allowed, float("-inf"))
        next_ids = log_probs.argmax(dim=-1).masked_fill(finished, eos_id)  # (B,)
        if constraint is not None:
            state = constraint.advance(state, next_ids)
        prefix = torch.cat([prefix, next_ids[:, None]], dim=1)  # (B, t + 1)
        finished |= next_ids.eq(eos_id)
        if bool(finished.all()):
            break
    outputs = []
    for row in prefix[:, 1:].tolist():
        outputs.append(row[: row.index(eos_id)] if eos_id in row else row)
    return outputs
