"""Training in several processes (DDP through Lightning: ``train.devices``, ``train.num_nodes``, ``train.strategy``).

This process's rank, and the collective steps that make W processes of batch B compute what one process of batch
W·B computes:

- each process trains on every W-th example of the epoch's shuffle from its rank on (``EpochShuffleSampler`` in
  ``neuromath.models.batching``);
- a sequence loss is a mean over the global batch's target tokens (``sum_over_processes`` of the counts): DDP
  averages gradients, and a mean of per-process means would overweight a process with few tokens;
- validation reads shards padded to equal length (``ShardSampler``); ``gather_shards`` restores order and drops the
  padding, so every example counts once.

The identity in a single process. Uses ``torch.distributed`` directly (not Lightning), so ``models``' samplers can
reach it from this low layer.
"""

from __future__ import annotations

import os

import torch


def process_rank() -> tuple[int, int]:
    """(rank, world size) of this training process: from torch.distributed when a process group is up, else (0, 1)."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


def is_rank_zero() -> bool:
    """Whether this process writes the run folder. Before the process group is up: ``RANK`` (torchrun, SLURM), else
    ``NODE_RANK`` and ``LOCAL_RANK`` (Lightning's launcher sets it for the processes it starts, not for itself);
    none of them: a single-process run, rank zero."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank() == 0
    if "RANK" in os.environ:
        return int(os.environ["RANK"]) == 0
    return int(os.environ.get("NODE_RANK", 0)) == 0 and int(os.environ.get("LOCAL_RANK", 0)) == 0


def sum_over_processes(value: torch.Tensor) -> torch.Tensor:
    """``value`` summed over the processes (a new tensor; ``value`` itself in a single process). Collective: every
    process calls it at the same point."""
    if process_rank()[1] == 1:
        return value
    total = value.clone()
    torch.distributed.all_reduce(total, op=torch.distributed.ReduceOp.SUM)
    return total


def shard_positions(size: int, rank: int, world: int) -> list[int]:
    """Positions of 0 .. size-1 read by process ``rank`` of ``world``: ``rank, rank + world, ...``, wrapped round to
    ``ceil(size / world)`` so every process reads as many."""
    length = -(-size // world)
    return [(rank + step * world) % size for step in range(length)] if size else []


def gather_shards(values: torch.Tensor, size: int) -> torch.Tensor:
    """Every process's per-example ``values`` (dim 0: its ``shard_positions``) in position order 0 .. size-1, padding
    dropped (one process: ``values[:size]``). Collective: every process calls it with the same shapes."""
    world = process_rank()[1]
    if world == 1:
        return values[:size]
    parts = [torch.empty_like(values) for _ in range(world)]
    torch.distributed.all_gather(parts, values.contiguous())
    return interleave_shards(parts, size)


def interleave_shards(parts: list[torch.Tensor], size: int) -> torch.Tensor:
    """``parts[r][k]`` (position ``r + k * world``) as one tensor in position order 0 .. size-1, padding dropped."""
    return torch.stack(parts, dim=1).flatten(0, 1)[:size]
