"""Recording what the attention layers of a model computed in a forward pass: every head's weights, and the role
vectors of TP-Attention (Schlag et al. 2019, eq. 3), for attention maps (``neuromath solve --attention``) and the
role analysis (``neuromath analyze roles``).

A layer that can be recorded mixes in ``Recorded`` and, after its own computation, calls ``self.record(...)`` when
``self.recorder`` is set; outside ``recording(model)`` that check is the only cost. The weights recorded are the
softmax the layer multiplied its values with (before dropout; in eval mode there is none), so a layer's output can
be recomputed from them (tests/nn/test_recording.py does so for every kernel).

``recording(model)`` sets a fresh ``AttentionRecorder`` on every such layer of ``model`` for the ``with`` block and
takes it away afterwards, also when the block raises:

    with recording(model) as recorder:
        model(batch)
    for record in recorder.records.values(): ...   # in the order the layers first ran

A layer that runs once per decoded token (a decoder's attention during step-by-step decoding, GTS's goal attention
during teacher forcing) adds one query row per call; its rows are joined along the query axis.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import torch

# which tokens label the axes of a record: the source, the target fed to the decoder (bos, y1, y2, ...) or the
# target it predicts (y1, y2, ..., eos)
SIDES = ("source", "target_in", "target_out")
PLACES = {  # place -> (what it is called, query side, key side)
    "encoder": ("encoder self-attention", "source", "source"),
    "decoder": ("decoder self-attention", "target_in", "target_in"),
    "cross": ("cross-attention", "target_in", "source"),
}


@dataclass
class AttentionRecord:
    """The attention of one layer in one forward pass."""

    name: str  # the layer's name in the model (``decoder_layers.1.cross_attention``)
    title: str  # in words: ``cross-attention, layer 2``
    place: str  # encoder, decoder or cross (see PLACES)
    query_side: str  # which tokens the rows are (SIDES)
    key_side: str  # which tokens the columns are
    weights: torch.Tensor  # (B, H, Tq, Tk) float32; each row sums to 1 over the keys it may see, the others are 0
    head_labels: tuple[str, ...]  # one per head: ``head 1``, ... or the group's name for group attention
    roles: torch.Tensor | None = None  # (B, H, Tq, Dh) TP-Attention's role (relation) vector of each query, per head


class AttentionRecorder:
    """The records of the layers that ran while it was set (``records``: name -> AttentionRecord, in order)."""

    def __init__(self):
        self.records: dict[str, AttentionRecord] = {}

    def add(self, name: str, place: str, weights: torch.Tensor, head_labels=None, roles=None, title=None,
            query_side=None, key_side=None) -> None:
        weights = weights.detach().float()
        roles = roles.detach().float() if roles is not None else None
        previous = self.records.get(name)
        if previous is not None:  # one more query row (or rows) of a layer that runs step by step
            previous.weights = join_rows(previous.weights, weights)
            if roles is not None and previous.roles is not None:
                previous.roles = torch.cat([previous.roles, roles], dim=2)
            return
        what, default_query, default_key = PLACES.get(place, (place, "source", "source"))
        heads = weights.size(1)
        self.records[name] = AttentionRecord(
            name=name,
            title=title or layer_title(what, name),
            place=place,
            query_side=query_side or default_query,
            key_side=key_side or default_key,
            weights=weights,
            head_labels=tuple(head_labels) if head_labels is not None else tuple(f"head {h + 1}" for h in range(heads)),
            roles=roles,
        )


def join_rows(earlier: torch.Tensor, later: torch.Tensor) -> torch.Tensor:
    """Rows (B, H, Tq1, Tk1) and (B, H, Tq2, Tk2) of one layer joined along the queries; a decoder's self-attention
    sees one more key at every step, so the shorter rows are padded with zeros (keys they could not see)."""
    width = max(earlier.size(3), later.size(3))
    earlier = torch.nn.functional.pad(earlier, (0, width - earlier.size(3)))
    later = torch.nn.functional.pad(later, (0, width - later.size(3)))
    return torch.cat([earlier, later], dim=2)


def layer_title(what: str, name: str) -> str:
    """``what`` with the layer number found in ``name`` (``encoder_layers.0.self_attention`` -> layer 1)."""
    index = re.search(r"\.(\d+)\.", f".{name}.")
    return f"{what}, layer {int(index[1]) + 1}" if index else what


class Recorded:
    """Mixed into a layer whose attention can be recorded (see the module docstring)."""

    recorder: AttentionRecorder | None = None
    recorded_name: str = ""

    def record(self, place: str, weights: torch.Tensor, **details) -> None:
        self.recorder.add(self.recorded_name, place, weights, **details)


@contextmanager
def recording(model: torch.nn.Module) -> Iterator[AttentionRecorder]:
    """Record the attention of every ``Recorded`` layer of ``model`` during the block (see the module docstring)."""
    recorder = AttentionRecorder()
    layers = [(name, module) for name, module in model.named_modules() if isinstance(module, Recorded)]
    try:
        for name, module in layers:
            module.recorder, module.recorded_name = recorder, name or type(module).__name__
        yield recorder
    finally:
        for _, module in layers:
            for attribute in ("recorder", "recorded_name"):
                module.__dict__.pop(attribute, None)  # back to the class's None / ""
