"""A toy word-problem model in one module: its config, its network, its one registration."""

from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import nn

from neuromath.config import ModelConfig
from neuromath.config.rules import LENGTH, SEQUENCE, WIDTH
from neuromath.config.sections import ranged
from neuromath.models.contracts import SequenceModelParts


class ToySeq2Seq(SequenceModelParts, nn.Module):
    """A GRU reads the problem; its last state starts a GRU that writes the equation."""

    def __init__(self, config, inputs):
        super().__init__()
        self.config = config
        self.source = nn.Embedding(inputs.source_vocab_size, config.d_model, padding_idx=inputs.pad_id)
        self.target = nn.Embedding(inputs.target_vocab_size, config.d_model, padding_idx=inputs.pad_id)
        self.encoder = nn.GRU(config.d_model, config.d_model, batch_first=True)
        self.decoder = nn.GRU(config.d_model, config.d_model, batch_first=True)
        self.out = nn.Linear(config.d_model, inputs.target_vocab_size)

    def encode(self, batch):
        _, state = self.encoder(self.source(batch["source"]))
        return {"state": state.transpose(0, 1)}  # (B, 1, W): the batch first

    def decode_step(self, memory, prefix, cache):
        states, _ = self.decoder(self.target(prefix), memory["state"].transpose(0, 1).contiguous())
        return torch.log_softmax(self.out(states[:, -1]), dim=-1), {}

    def forward(self, batch):
        state = self.encode(batch)["state"].transpose(0, 1).contiguous()
        states, _ = self.decoder(self.target(batch["target_in"]), state)
        return self.out(states)


@ModelConfig.register("toy_seq2seq", build=ToySeq2Seq)
@dataclass(frozen=True)
class ToyConfig(ModelConfig):
    kind: ClassVar[str] = SEQUENCE
    name: str = "toy_seq2seq"
    d_model: int = ranged(64, WIDTH)
    max_len: int = ranged(256, LENGTH)  # the longest problem it reads
