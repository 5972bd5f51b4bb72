"""Batches of one length against random batches: symbolic-integration training steps, measured in one run.

Usage: ``python benchmarks/length_grouping.py [--train FILE] [--presets P ...] [--threads N] [--rounds R]
[--batches B] [--json FILE] [--quick]``

Each preset (default ``symbolic/learned_positions`` and ``symbolic/tree_relative``, the symbolic CPU presets) is built
over ``--train`` (a symbolic training file, ``neuromath generate symbolic``; without one, ``--generate`` pairs from the
built-in generator, which takes about a minute per 1,000) and trained for ``--batches`` steps per round in four
settings, round-robin so that machine noise falls on all of them:

- float32, random batches (``EpochShuffleSampler``): the 30-minute recipe of the first symbolic results;
- float32, batches of one length (``LengthGroupedBatches`` with the preset's ``train.length_grouping``);
- bf16-mixed with random batches, and bf16-mixed with batches of one length (the presets as shipped), where the CPU
  has native bf16 (``cpu_supports_bf16``).

Round r reads the first ``--batches`` batches of epoch r of each batching: a sample of the epoch's batches, the same
in every setting of one batching. A step is the forward (in the precision, as Lightning's mixed precision runs it),
the cross-entropy, backward and an Adam step, with the preset's dropout. Printed: median seconds per step, the ratio
to float32 with random batches (below 1: faster), and the padded source and target positions per real token of each
batching over a whole epoch. A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from neuromath.config import load_config
from neuromath.fileio import write_text_atomic
from neuromath.models import build_task_model
from neuromath.models.batching import EncodedExamples, EpochShuffleSampler, LengthGroupedBatches, collate
from neuromath.nn.precision import autocast, cpu_supports_bf16
from neuromath.tasks import get_task
from neuromath.text import Vocabulary

PRESETS = ("symbolic/learned_positions", "symbolic/tree_relative")


def generated_file(pairs: int, folder: Path) -> str:
    """A training file of ``pairs`` backward-integration pairs from the built-in generator (seed 1)."""
    path = folder / "train.txt"
    subprocess.run([sys.executable, "-m", "neuromath", "generate", "symbolic", "--method", "backward", "--n",
                    str(pairs), "--max-ops", "5", "--seed", "1", "--workers", "2", "--out", str(path)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return str(path)


def epoch_batches(kind: str, lengths: list[tuple[int, int]], batch_size: int, grouping: int, epoch: int):
    """The index lists of one epoch's batches: random (``EpochShuffleSampler``) or of one length."""
    if kind == "grouped":
        sampler = LengthGroupedBatches(lengths, batch_size, seed=0, grouping=grouping)
        sampler.set_epoch(epoch)
        return list(sampler)
    sampler = EpochShuffleSampler(len(lengths), 0)
    sampler.set_epoch(epoch)
    order = list(sampler)
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def padding(batches, lengths) -> tuple[float, float]:
    """Padded source and target positions per real token over ``batches``."""
    real = [sum(lengths[i][side] for batch in batches for i in batch) for side in (0, 1)]
    padded = [sum(len(batch) * max(lengths[i][side] for i in batch) for batch in batches) for side in (0, 1)]
    return padded[0] / real[0], padded[1] / real[1]


def build(preset: str, train_file: str, read: dict):
    """The preset's model in training mode over the file's vocabularies, and the file's examples encoded."""
    config = load_config(preset)
    task = get_task(config.data.task)
    if task.name not in read:
        read[task.name] = task.read(train_file, None)
    examples = read[task.name]
    source_vocab = Vocabulary.build((task.source_tokens(e) for e in examples), level=task.vocab_level)
    target_vocab = Vocabulary.build((task.target_tokens(e) for e in examples), level=task.vocab_level)
    encoded = EncodedExamples(examples, task, source_vocab, target_vocab)
    torch.manual_seed(0)
    model = build_task_model(config.model, task, source_vocab, target_vocab).train()
    if model.learns_structure:  # tree relations from the training data, as training fits them
        model.fit_structure([source for source, _ in encoded.items], [target[:-1] for _, target in encoded.items])
    return config, model, encoded


def time_steps(model, optimizer, batches, precision: str) -> float:
    start = time.perf_counter()
    for batch in batches:
        optimizer.zero_grad(set_to_none=True)
        with autocast(precision, "cpu"):
            logits = model(batch)
        loss = F.cross_entropy(logits.flatten(0, 1).float(), batch["target_out"].flatten(), ignore_index=0)
        loss.backward()
        optimizer.step()
    return (time.perf_counter() - start) / len(batches)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", help="a symbolic training file (default: --generate pairs from the generator)")
    parser.add_argument("--generate", type=int, default=1000, help="pairs to generate without --train")
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", type=int, default=40, help="timed steps per setting and round")
    parser.add_argument("--quick", action="store_true", help="smoke run: 300 generated pairs, 1 round of 4 steps")
    parser.add_argument("--json", help="write every measurement here")
    args = parser.parse_args()
    if args.quick:
        args.generate, args.rounds, args.batches = 300, 1, 4
    torch.set_num_threads(args.threads)
    precisions = ["32-true", *(["bf16-mixed"] if cpu_supports_bf16() else [])]
    if len(precisions) == 1:
        print("this CPU has no native bf16 (AVX512-BF16 or AMX): float32 only")
    with tempfile.TemporaryDirectory() as folder:
        train_file = args.train or generated_file(args.generate, Path(folder))
        read, report = {}, {"threads": args.threads, "rounds": args.rounds, "batches": args.batches,
                            "train": args.train or f"{args.generate} generated pairs", "presets": {}}
        for preset in args.presets:
            config, model, encoded = build(preset, train_file, read)
            lengths = [(len(source), len(target)) for source, target in encoded.items]
            size, grouping = config.train.batch_size, config.train.length_grouping or 50
            settings = [(precision, kind) for precision in precisions for kind in ("random", "grouped")]
            states = {setting: (model, torch.optim.Adam(model.parameters(), lr=1e-4)) for setting in settings[:1]}
            for setting in settings[1:]:  # every setting from the same weights, with its own optimiser
                copy = build(preset, train_file, read)[1]
                copy.load_state_dict(model.state_dict())
                states[setting] = (copy, torch.optim.Adam(copy.parameters(), lr=1e-4))
            seconds = {setting: [] for setting in settings}
            for round_ in range(args.rounds):
                batches = {kind: [collate([encoded[i] for i in batch])
                                  for batch in epoch_batches(kind, lengths, size, grouping, round_)[:args.batches]]
                           for kind in ("random", "grouped")}
                for setting in settings:
                    seconds[setting].append(time_steps(*states[setting], batches[setting[1]], setting[0]))
            base = statistics.median(seconds[("32-true", "random")])
            pads = {kind: padding(epoch_batches(kind, lengths, size, grouping, 0), lengths)
                    for kind in ("random", "grouped")}
            print(f"{preset}: {len(encoded)} pairs, batch {size}, grouping {grouping}, {args.threads} thread(s)")
            for kind in ("random", "grouped"):
                print(f"  {kind:8s} batches: {pads[kind][0]:.2f} source and {pads[kind][1]:.2f} target positions "
                      "per real token")
            entries = {}
            for precision, kind in settings:
                median = statistics.median(seconds[(precision, kind)])
                print(f"  {precision:10s} {kind:8s} {median:.4f} s/step  x{median / base:.2f} of float32 random")
                entries[f"{precision} {kind}"] = {"seconds_per_step": seconds[(precision, kind)], "median": median,
                                                  "ratio_to_float32_random": median / base}
            report["presets"][preset] = {"pairs": len(encoded), "batch_size": size, "grouping": grouping,
                                         "padding_per_token": pads, "settings": entries}
    if args.json:
        write_text_atomic(Path(args.json), json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
