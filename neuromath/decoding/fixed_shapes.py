"""Fixed-shape decoding and ``decode.compile``: every decoding step with the same tensor shapes, so that one compiled
graph (and on CUDA one captured CUDA graph) serves every step of greedy and beam search.

``decode_step`` of the model contract attends over a key cache that grows by one position a step, and reads how many
positions it holds as a Python int: each step has new shapes, which a compiler must either recompile or treat as
symbolic, and a CUDA graph cannot replay. ``FixedShapeDecoder`` wraps a model that offers fixed-shape steps
(``Transformer.fixed_step``) and presents the same contract (``encode``, ``decode_step``, ``reorder_cache``,
``shares_memory_across_beams``) to ``greedy_decode`` and ``beam_search``, which run unchanged:

- the self-attention keys and values live in buffers of a fixed capacity (``decode.max_len`` positions: bos and every
  generated token a later step reads), written in place at the step's position; positions not written yet are
  masked, so they add exact zeros;
- the step's position is a 0-d tensor on the device, not a Python int, so no step specialises the graph;
- the cross-attention keys and values are computed once at ``encode``;
- the target's tree parse, where the decoder reads it, lives in buffers of the same capacity.

With ``compile=True`` the step goes through ``torch.compile`` (inductor), with ``mode="reduce-overhead"`` (CUDA graphs)
on CUDA. The buffers and the position tensor keep their addresses for a whole batch (beam search's reorders copy into
them), which is what a captured graph needs. A new batch size (the last batch, or beam rows that finish and leave)
compiles once more; after the second, PyTorch's automatic dynamic shapes make the batch symbolic.

A decoder that reads its target's tree (tree positions, tree relative attention) parses each token inside the step,
into parse buffers of the same capacity (``TreeStructure.fixed_step``). Models without fixed-shape steps (the
recurrent and goal-tree decoders) are refused with the reason. ``benchmarks/decode_compile.py`` measures the speed,
counts graph breaks and recompiles, and checks that the hypotheses are the eager ones.
"""

from __future__ import annotations

import torch

from neuromath.errors import ConfigError
from neuromath.nn.attention import copy_rows_in_place, moved_rows
from neuromath.nn.compiling import has_cpu_compiler
from neuromath.nn.precision import device_kind


def fixed_shape_problem(model) -> str | None:
    """Why ``model`` cannot decode in fixed shapes, or None when it can."""
    if not hasattr(model, "fixed_step"):
        return f"{type(model).__name__} has no fixed-shape decoding step (only the Transformer family has one)"
    return None


class FixedShapeDecoder:
    """The sequence-model contract of ``model`` through fixed-shape steps of at most ``capacity`` positions (bos and
    the generated tokens), compiled when ``compile`` is true."""

    fixed_shapes = True  # beam search then runs its first step at B * K rows too, the shape of all its steps

    def __init__(self, model, capacity: int, compile: bool = False):
        problem = fixed_shape_problem(model)
        if problem is not None:
            raise ConfigError(f"decode.compile: {problem}")
        self.model = model
        self.capacity = capacity
        self.shares_memory_across_beams = model.shares_memory_across_beams
        self.device = next(model.parameters()).device
        self.cuda_graphs = compile and self.device.type == "cuda"
        step = model.fixed_step
        if compile:
            if device_kind(self.device) == "cpu" and not has_cpu_compiler():
                raise ConfigError("decode.compile: torch.compile builds CPU kernels with a C++ compiler, and none "
                                  "(g++, c++ or clang++) is on the PATH; install one or leave decode.compile false")
            step = torch.compile(step, dynamic=None, mode="reduce-overhead" if self.cuda_graphs else None)
        self.step = step

    def __getattr__(self, name):  # everything else (config, pad_id, training state) is the model's
        if name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)

    def encode(self, batch: dict) -> dict:
        return self.model.fixed_memory(self.model.encode(batch))

    def new_cache(self, rows: int) -> dict:
        kind = self.device.type
        dtype = torch.get_autocast_dtype(kind) if torch.is_autocast_enabled(kind) else self.model_dtype()
        buffers = self.model.fixed_cache(rows, self.capacity, dtype, self.device)
        position = torch.zeros((), dtype=torch.long, device=self.device)
        if self.cuda_graphs:
            for tensor in (*buffers.values(), position):
                torch._dynamo.mark_static_address(tensor)
        return {"buffers": buffers, "position": position, "consumed": 0}

    def model_dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

    @torch.no_grad()
    def decode_step(self, memory: dict, prefix: torch.Tensor, cache: dict | None) -> tuple[torch.Tensor, dict]:
        """Log-probabilities (B, V) of the token after ``prefix`` (B, t); the tokens not yet in ``cache`` are fed one
        step each (all of them when ``cache`` is None)."""
        if prefix.size(1) > self.capacity:
            raise ValueError(f"fixed-shape decoding holds {self.capacity} positions; the prefix has {prefix.size(1)}")
        cache = self.new_cache(prefix.size(0)) if cache is None else cache
        log_probs = None
        for position in range(cache["consumed"], prefix.size(1)):
            cache["position"].fill_(position)
            if self.cuda_graphs:
                torch.compiler.cudagraph_mark_step_begin()
            tokens = prefix[:, position].clone()[:, None]  # (B, 1), the same strides at every step
            log_probs = self.step(memory, tokens, cache["buffers"], cache["position"])
            if self.cuda_graphs:
                log_probs = log_probs.clone()  # a CUDA graph's output is overwritten by its next replay
        cache["consumed"] = prefix.size(1)
        return log_probs, cache

    def reorder_cache(self, cache: dict, index: torch.Tensor) -> dict:
        """The rows ``index`` of the cache (beam search's parents): copied into the same buffers while the row count
        stays, so a captured graph reads them where it expects them; new buffers when rows leave."""
        buffers = cache["buffers"]
        rows = next(iter(buffers.values())).size(0)
        if index.numel() == rows:
            moved, sources = moved_rows(index)  # only the rows whose parent is another row are copied
            for buffer in buffers.values():
                copy_rows_in_place(buffer, moved, sources)
            return cache
        reordered = {name: buffer.index_select(0, index) for name, buffer in buffers.items()}
        if self.cuda_graphs:
            for tensor in reordered.values():
                torch._dynamo.mark_static_address(tensor)
        return {**cache, "buffers": reordered}
