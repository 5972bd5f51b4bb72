"""Training batches of about one length (``train.length_grouping``, ``LengthGroupedBatches``): every example once per
epoch, the processes' batches together the one-process batch, far less padding than random batches, the same batches
for the same (seed, epoch), and a config that refuses what it cannot group."""

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from neuromath.config import load_config
from neuromath.errors import ConfigError
from neuromath.models import batching
from neuromath.models.batching import EpochShuffleSampler, LengthGroupedBatches
from neuromath.training.module import SequenceModule


def lengths_of(count: int, seed: int) -> list[tuple[int, int]]:
    """(source, target) lengths skewed as generated integrals are: most short, a long tail."""
    rng = random.Random(seed)
    return [(min(200, int(rng.expovariate(1 / 20)) + 2), rng.randint(2, 30)) for _ in range(count)]


def padded_tokens(batches, lengths) -> int:
    """The source positions a model reads: each batch's rows times its longest source."""
    return sum(len(batch) * max(lengths[i][0] for i in batch) for batch in batches)


@given(size=st.integers(0, 90), world=st.integers(1, 4), batch_size=st.integers(1, 9), grouping=st.integers(1, 5),
       seed=st.integers(0, 5), epoch=st.integers(0, 3))
def test_the_processes_batches_together_are_the_one_process_batch_of_w_times_the_size(size, world, batch_size,
                                                                                       grouping, seed, epoch):
    lengths = lengths_of(size, seed)
    parts = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        for rank in range(world):
            monkeypatch.setattr(batching, "process_rank", lambda rank=rank: (rank, world))
            sampler = LengthGroupedBatches(lengths, batch_size, seed, grouping)
            sampler.set_epoch(epoch)
            parts.append(list(sampler))
            assert len(sampler) == len(parts[-1])
        together = LengthGroupedBatches(lengths, batch_size, seed, grouping)
        together.set_epoch(epoch)
        steps = together.batches(world)
    assert len({len(part) for part in parts}) <= 1  # the processes step together
    assert all(len({len(part[step]) for part in parts}) == 1 for step in range(len(parts[0])))
    for step, batch in enumerate(steps):
        assert sorted(i for part in parts for i in part[step]) == sorted(batch)
        assert len(batch) <= batch_size * world
    read = [i for batch in steps for i in batch]
    assert len(read) == len(set(read)) == size - size % world  # once each; fewer than W left out


def test_batches_hold_examples_of_about_one_length_and_far_less_padding_than_random_batches():
    lengths = lengths_of(3_000, 0)
    grouped = list(LengthGroupedBatches(lengths, 64, seed=1, grouping=20))
    shuffled = list(EpochShuffleSampler(len(lengths), 1))
    random_batches = [shuffled[i:i + 64] for i in range(0, len(shuffled), 64)]
    assert sorted(i for batch in grouped for i in batch) == list(range(len(lengths)))
    assert padded_tokens(grouped, lengths) < 0.6 * padded_tokens(random_batches, lengths)
    # one pool of every batch: the batches are consecutive runs of the sorted lengths, so their ranges do not overlap
    whole = list(LengthGroupedBatches(lengths, 64, seed=1, grouping=len(lengths)))
    ranges = sorted((min(lengths[i] for i in batch), max(lengths[i] for i in batch)) for batch in whole)
    assert all(high <= next_low for (_, high), (next_low, _) in zip(ranges, ranges[1:]))
    # ... read in a shuffled order, not shortest first
    firsts = [min(lengths[i] for i in batch) for batch in whole]
    assert firsts != sorted(firsts)


def test_the_same_seed_and_epoch_give_the_same_batches_and_a_new_epoch_new_ones():
    lengths = lengths_of(500, 3)
    first, again = LengthGroupedBatches(lengths, 16, 7, 4), LengthGroupedBatches(lengths, 16, 7, 4)
    assert list(first) == list(again)  # a resumed run reads what the interrupted one would have
    epoch0 = list(first)
    first.set_epoch(1)
    assert list(first) != epoch0
    assert sorted(map(sorted, LengthGroupedBatches(lengths, 16, 8, 4))) != sorted(map(sorted, epoch0))


def test_a_grouping_or_batch_below_one_is_refused():
    with pytest.raises(ValueError, match="at least one batch"):
        LengthGroupedBatches([(1, 1)], 4, 0, 0)


def test_the_config_refuses_grouping_a_stream_and_a_model_without_sequences():
    config = load_config("symbolic/learned_positions", ["train.length_grouping=8"], strict=True)
    assert config.train.length_grouping == 8
    with pytest.raises(ConfigError, match="data.streaming reads a stream"):
        load_config("mathematics_dataset/transformer", ["data.streaming=true", "train.length_grouping=8"], strict=True)
    with pytest.raises(ConfigError, match="does not apply to the tree_lstm model"):
        load_config("identities/tree_lstm", ["train.length_grouping=8"], strict=True)


def test_the_benchmark_times_both_batchings_and_finds_less_padding_in_grouped_ones(tmp_path):
    """``benchmarks/length_grouping.py --quick`` on a small file of integrals of many lengths: every setting timed,
    and the grouped batches' padding below the random batches'."""
    rng = random.Random(0)
    lines = []
    for _ in range(400):  # d/dx of a sum of k terms c*x^p: the sum of c*p*x^(p-1)
        terms = [(rng.randint(1, 5), rng.randint(2, 6)) for _ in range(rng.choice([1, 1, 1, 2, 2, 3, 6, 10]))]
        source = target = ""
        for c, p in terms:
            derivative = f"mul INT+ {c} mul INT+ {p} pow x INT+ {p - 1}"
            source = derivative if not source else f"add {derivative} {source}"
            target = f"mul INT+ {c} pow x INT+ {p}" if not target else f"add mul INT+ {c} pow x INT+ {p} {target}"
        lines.append(f"1|{source}\t{target}")
    train = tmp_path / "train.txt"
    train.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = tmp_path / "report.json"
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "length_grouping.py"
    done = subprocess.run([sys.executable, str(script), "--quick", "--train", str(train), "--presets",
                           "symbolic/learned_positions_fast", "--json", str(report)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(report.read_text())["presets"]["symbolic/learned_positions_fast"]
    assert {"32-true random", "32-true grouped"} <= set(result["settings"])
    assert all(entry["median"] > 0 for entry in result["settings"].values())
    random_pad, grouped_pad = result["padding_per_token"]["random"], result["padding_per_token"]["grouped"]
    assert grouped_pad[0] < random_pad[0] and grouped_pad[0] < 1.3


class TableModel(torch.nn.Module):
    """Logits (B, T, V) looked up from the target's input tokens: a model of the sequence contract with a gradient."""

    def __init__(self, vocabulary: int = 6):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(vocabulary, vocabulary, generator=torch.Generator().manual_seed(0)))

    def forward(self, batch: dict) -> torch.Tensor:
        return self.table[batch["target_in"]]


def batch_of(targets: list[list[int]]) -> dict:
    """A batch of targets (bos 1, then the tokens) with one-token sources: what ``collate`` makes of them."""
    return batching.collate([([3], [1, *target], index) for index, target in enumerate(targets)])


def table_gradient(module, batches) -> torch.Tensor:
    module.model.table.grad = None
    for batch in batches:
        module.training_step(batch, 0).backward()
    return module.model.table.grad.clone()


def test_with_the_average_denominator_every_token_weighs_the_same_whatever_its_batch():
    """Batches of one length hold short targets in some batches and long ones in others. Divided by their own tokens
    (batch, the default), a short batch's tokens weigh more; divided by the set's average (average) the two batches'
    gradients sum to that of the one batch holding both, over the same denominator, as random batches would weigh
    them."""
    short, long = batch_of([[2, 4]] * 2), batch_of([[5, 2, 4, 3, 2, 5, 4]] * 2)  # 2 x 3 and 2 x 7 target tokens
    both = batch_of([[2, 4]] * 2 + [[5, 2, 4, 3, 2, 5, 4]] * 2)
    average = SequenceModule(load_config("symbolic/learned_positions", ["optim.loss_denominator=average"]),
                             TableModel(), tokens_per_batch=10.0)
    by_batch = SequenceModule(load_config("symbolic/learned_positions", []), TableModel())
    whole = table_gradient(average, [both]) / 2  # one batch of 20 tokens: twice the average's
    assert torch.allclose(table_gradient(average, [short, long]) / 2, whole, atol=1e-6)
    assert not torch.allclose(table_gradient(by_batch, [short, long]) / 2, whole, atol=1e-3)
    loss = average.training_step(long, 0)  # the batch's sum over the average tokens per batch
    total = F.cross_entropy(average.model(long).flatten(0, 1), long["target_out"].flatten(), ignore_index=0,
                            reduction="sum")
    assert loss.item() == pytest.approx(total.item() / 10.0, rel=1e-5)
    assert by_batch.training_step(long, 0).item() == pytest.approx(total.item() / 14, rel=1e-5)


def test_the_average_denominator_needs_the_sets_tokens_and_a_sequence_model():
    config = load_config("symbolic/learned_positions", ["optim.loss_denominator=average"])
    with pytest.raises(ValueError, match="average target tokens"):
        SequenceModule(config, TableModel())
    with pytest.raises(ConfigError, match="loss_denominator"):
        load_config("identities/tree_lstm", ["optim.loss_denominator=average"], strict=True)
    with pytest.raises(ConfigError, match="loss_denominator"):
        load_config("symbolic/learned_positions", ["optim.loss_denominator=tokens"])
