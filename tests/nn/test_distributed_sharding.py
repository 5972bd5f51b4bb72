"""Sharding for several training processes: the processes' training batches together are the one-process batch, each
validation example is scored once, and the collective steps work in two real gloo processes."""

import subprocess
import sys
import textwrap

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from neuromath.models import batching
from neuromath.nn.distributed import interleave_shards, is_rank_zero, shard_positions


def orders(sampler_type, world: int, monkeypatch, *args, epoch: int = 0) -> list[list[int]]:
    """What each of ``world`` processes reads from a sampler of ``batching``, rank by rank."""
    result = []
    for rank in range(world):
        monkeypatch.setattr(batching, "process_rank", lambda rank=rank: (rank, world))
        sampler = sampler_type(*args)
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(epoch)
        result.append(list(sampler))
        assert len(sampler) == len(result[-1])
    return result


@given(size=st.integers(0, 60), world=st.integers(1, 5), seed=st.integers(0, 10), epoch=st.integers(0, 3),
       batch=st.integers(1, 7))
def test_the_processes_batches_together_are_the_one_process_batch(size, world, seed, epoch, batch):
    with pytest.MonkeyPatch.context() as monkeypatch:
        (alone,) = orders(batching.EpochShuffleSampler, 1, monkeypatch, size, seed, epoch=epoch)
        parts = orders(batching.EpochShuffleSampler, world, monkeypatch, size, seed, epoch=epoch)
    assert sorted(alone) == list(range(size))
    assert len({len(part) for part in parts}) <= 1  # as many batches on every process
    usable = size - size % world
    for step in range(0, usable // world, batch):
        together = sorted(index for part in parts for index in part[step:step + batch])
        assert together == sorted(alone[step * world:min(step + batch, usable // world) * world])
    # an epoch leaves out fewer than `world` examples, and a new epoch shuffles anew
    assert len({index for part in parts for index in part}) == usable


def test_an_epoch_shuffles_anew():
    sampler = batching.EpochShuffleSampler(50, 3)
    first = list(sampler)
    sampler.set_epoch(1)
    assert sorted(list(sampler)) == sorted(first) and list(sampler) != first


@given(size=st.integers(0, 40), world=st.integers(1, 6))
def test_validation_shards_cover_every_example_once_after_gathering(size, world):
    shards = [shard_positions(size, rank, world) for rank in range(world)]
    assert len({len(shard) for shard in shards}) == 1  # equal lengths: the processes step together
    assert {position for shard in shards for position in shard} == set(range(size))
    if size:
        # each process's results, here the positions themselves, come back in order, the padding dropped
        parts = [torch.tensor(shard) for shard in shards]
        assert interleave_shards(parts, size).tolist() == list(range(size))


def test_a_single_process_reads_the_validation_set_in_order(monkeypatch):
    (alone,) = orders(batching.ShardSampler, 1, monkeypatch, 7)
    assert alone == list(range(7))


@pytest.mark.parametrize("environment, zero", [
    ({}, True),
    ({"LOCAL_RANK": "1"}, False),  # a process Lightning's launcher started
    ({"LOCAL_RANK": "0", "NODE_RANK": "1"}, False),  # the first process of the second machine
    ({"RANK": "0", "LOCAL_RANK": "0"}, True),  # torchrun
    ({"RANK": "3", "LOCAL_RANK": "1"}, False),
])
def test_rank_zero_is_read_from_the_launchers_environment(monkeypatch, environment, zero):
    for name in ("RANK", "LOCAL_RANK", "NODE_RANK"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert is_rank_zero() is zero


WORKER = textwrap.dedent("""
    import os, sys
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from neuromath.nn.distributed import gather_shards, process_rank, shard_positions, sum_over_processes

    def work(rank, world, store):
        dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
        assert process_rank() == (rank, world)
        for size in (0, 1, 2, 7, 10):
            mine = torch.tensor([[position, 10 * position] for position in shard_positions(size, rank, world)],
                                dtype=torch.long).reshape(-1, 2)
            gathered = gather_shards(mine, size)
            assert gathered[:, 0].tolist() == list(range(size)), (size, gathered)
            assert gathered[:, 1].tolist() == [10 * p for p in range(size)]
        assert int(sum_over_processes(torch.tensor(rank + 1))) == world * (world + 1) // 2
        dist.destroy_process_group()

    if __name__ == "__main__":
        mp.spawn(work, args=(int(sys.argv[1]), sys.argv[2]), nprocs=int(sys.argv[1]))
        print("ok")
""")


@pytest.mark.parametrize("world", [2, 3])
def test_gathering_and_summing_in_real_gloo_processes(tmp_path, world):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    done = subprocess.run([sys.executable, str(script), str(world), str(tmp_path / "store")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]
