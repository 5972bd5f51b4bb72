"""Training in several processes (DDP through Lightning: ``train.devices``, ``train.num_nodes``, ``train.strategy``).

Which process this is, before and after the process group is up, and the collective steps the training modules and
samplers need so that W processes of batch B compute what one process of batch W·B computes:

- each process trains on every W-th example of the epoch's shuffle from its rank on (``EpochShuffleSampler`` in
  ``neuromath.models.batching``), so the W batches of a step together are the one-process batch of W·B;
- a sequence loss is a mean over the target tokens of the whole global batch (``sum_over_processes`` of the token
  counts), since DDP averages the processes' gradients and a mean of per-process means would weigh a process's
  tokens by how few it has;
- validation reads its examples in shards padded to equal length (``ShardSampler``), and ``gather_shards`` puts the
  per-example results back in order and drops the padding, so a score counts every example exactly once.

Everything here is the identity in a single process. The helpers use ``torch.distributed`` directly (not Lightning),
so this module sits with the lowest torch layer and the samplers of ``models`` reach it.
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
    """Whether this process is the one that writes a run folder. Before the process group is up, the launcher's
    environment says: ``RANK`` (torchrun, SLURM through Lightning's environments), else ``NODE_RANK`` and
    ``LOCAL_RANK`` (Lightning's own launcher sets ``LOCAL_RANK`` for the processes it starts; the one that starts
    them has none). A process with none of them is a single-process run: rank zero."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank() == 0
    if "RANK" in os.environ:
        return int(os.environ["RANK"]) == 0
    return int(os.environ.get("NODE_RANK", 0)) == 0 and int(os.environ.get("LOCAL_RANK", 0)) == 0


def sum_over_processes(value: torch.Tensor) -> torch.Tensor:
    """``value`` summed over the processes (a new tensor; ``value`` itself in a single process). Every process must
    call it at the same point, as with any collective step."""
    if process_rank()[1] == 1:
        return value
    total = value.clone()
    torch.distributed.all_reduce(total, op=torch.distributed.ReduceOp.SUM)
    return total


def shard_positions(size: int, rank: int, world: int) -> list[int]:
    """The positions 0 .. size-1 that process ``rank`` of ``world`` reads when every process must read as many:
    ``rank, rank + world, ...``, padded by wrapping round to the start up to ``ceil(size / world)``."""
    length = -(-size // world)
    return [(rank + step * world) % size for step in range(length)] if size else []


def gather_shards(values: torch.Tensor, size: int) -> torch.Tensor:
    """The per-example results ``values`` (first dimension: this process's ``shard_positions`` in order) of every
    process, put back in the order of positions 0 .. size-1, the padding dropped (in a single process, ``values``
    cut to ``size``). A collective step: every process calls it with the same shapes."""
    world = process_rank()[1]
    if world == 1:
        return values[:size]
    parts = [torch.empty_like(values) for _ in range(world)]
    torch.distributed.all_gather(parts, values.contiguous())
    return interleave_shards(parts, size)


def interleave_shards(parts: list[torch.Tensor], size: int) -> torch.Tensor:
    """Per-process results in ``shard_positions`` order (``parts[r][k]`` is position ``r + k * world``) as one
    tensor in the order of positions 0 .. size-1, the padding dropped."""
    return torch.stack(parts, dim=1).flatten(0, 1)[:size]
