"""Word-problem training speed on the CPU: seconds per epoch and examples/s of the tree decoders (gts, graph2tree)
against the sequence decoders (bilstm_seq2seq, group_attention) at the same batch, on one MAWPS fold.

Usage: ``python benchmarks/word_problems.py [--train FILE] [--threads N] [--rounds R] [--batches K] [--runs DIR ...]
[--stepped-rnn] [--unpack] [--float32] [--dropout] [--json FILE]``

Each model is built from its CPU preset ``word_problems/<model>`` (same batch size for all, ``--batch``) over
the vocabularies of ``--train`` (default: fold 0 of ``mawps-cv`` under the data root). A round times ``--batches``
training steps (forward, backward, Adam) of every model in turn, round-robin, so machine noise falls on all alike;
the median round gives seconds per step, which times the steps of one epoch gives seconds per epoch. Each model
runs in its preset's ``train.precision`` as training runs it (``auto``: bf16 autocast on a CPU with AVX512-BF16 or
AMX, float32 elsewhere; the "precision" column says which).

``--runs DIR ...`` (run folders or cv folders with ``fold*/``) adds, per run, the epoch of its best validation value
accuracy and the estimated time to reach it (epochs to best x the measured seconds per epoch of its model), which is
what "trains to its best validation in 15 minutes" is about.

``--unpack`` times every model twice per round: the stepped encoder's outputs brought back to the batch by
``pad_packed_sequence`` (whose backward copies the whole padded tensor once per time step) and by
``stepped_rnn.unpacked`` (one ``index_copy``; the default), and prints the speed-up of the second per model.

``--float32`` times every model twice per round, in float32 and in its preset's precision, and prints the speed-up
of the second per model (1.00x where the preset resolves to float32 on this CPU).

``--dropout`` times every model twice per round, its dropout masks drawn by ``F.dropout`` (``bernoulli_``) and by
``neuromath.nn.dropout`` (uniform draws compared with p; the default), and prints the speed-up of the second.

``--stepped-rnn`` times every model twice per round, its recurrent encoder run by PyTorch's packed CPU kernel and
step by step (``neuromath.nn.stepped_rnn``, the default on the CPU), and prints the speed-up of the second per model.

A script, not a test: it prints numbers and exits 0 unless something breaks. The "CPU use" line says how much of its
threads' time the process got; well below 100% means other jobs competed for the cores.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import resource
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.utils.rnn import PackedSequence, pad_packed_sequence

from neuromath.config import load_config
from neuromath.dataroot import data_root
from neuromath.models.batching import collate
from neuromath.nn import dropout, sequence_encoders, stepped_rnn
from neuromath.nn.precision import autocast, resolve_precision

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tree_decoder_training import task_model  # noqa: E402  (shared with that benchmark's baseline workers)

MODELS = ("gts", "graph2tree", "bilstm_seq2seq", "group_attention")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def build(name: str, train_file: str, batch_size: int, n_batches: int, read: dict):
    """A model of ``name``'s CPU preset, its optimiser, timed batches, steps per epoch and its precision resolved on
    the CPU; ``read`` keeps the training file's examples per task, so the file is read once for all models of a
    task."""
    config = load_config(f"word_problems/{name}")
    model, encoded = task_model(config, train_file, read)
    batches = [
        collate([encoded[i] for i in range(start, min(start + batch_size, len(encoded)))])
        for start in range(0, min(len(encoded), batch_size * n_batches), batch_size)
    ]
    optimizer = torch.optim.Adam(model.parameters(), lr=config.optim.lr)
    steps_per_epoch = math.ceil(len(encoded) * (1 - config.data.valid_fraction) / batch_size)
    return model, optimizer, batches, steps_per_epoch, resolve_precision(config.train.precision, "cpu")



def padded_unpack(data, packed, size: int, length: int):
    """What ``stepped_rnn.unpacked`` replaced: ``pad_packed_sequence``."""
    result = PackedSequence(data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
    return pad_packed_sequence(result, batch_first=True, total_length=length)[0]


def time_steps(model, optimizer, batches, precision: str = "32-true") -> float:
    start = time.perf_counter()
    for batch in batches:
        optimizer.zero_grad(set_to_none=True)
        with autocast(precision, "cpu"):  # the forward in the precision, as Lightning's mixed precision runs it
            logits = model(batch)
        loss = F.cross_entropy(logits.flatten(0, 1).float(), batch["target_out"].flatten(), ignore_index=0)
        loss.backward()
        optimizer.step()
    return (time.perf_counter() - start) / len(batches)


def best_epochs(folder: Path) -> list[tuple[str, str, int]]:
    """(run, model, epoch of the best validation value accuracy) of a run folder or every fold of a cv folder."""
    runs = sorted(folder.glob("fold*")) if not (folder / "metrics.csv").exists() else [folder]
    found = []
    for run in runs:
        metrics, config = run / "metrics.csv", run / "config.yaml"
        if not metrics.exists() or not config.exists():
            continue
        with metrics.open(newline="", encoding="utf-8") as stream:
            rows = [row for row in csv.DictReader(stream) if row.get("val_value_accuracy")]
        if rows:
            best = max(rows, key=lambda row: (float(row["val_value_accuracy"]), -int(row["epoch"])))
            found.append((str(run), load_config(config).model.name, int(best["epoch"]) + 1))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", default=str(data_root() / "mawps-cv/fold0/train.csv"))
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--batches", type=int, default=4, help="timed steps per model per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", nargs="*", default=[], help="run or cv folders: epochs to the best validation")
    parser.add_argument("--json", type=Path, default=None, help="also write the medians to this JSON file")
    parser.add_argument("--unpack", action="store_true",
                        help="time each model with pad_packed_sequence and with stepped_rnn.unpacked")
    parser.add_argument("--float32", action="store_true",
                        help="time each model in float32 and in its preset's precision")
    parser.add_argument("--dropout", action="store_true",
                        help="time each model with F.dropout's masks and with neuromath's (nn/dropout.py)")
    parser.add_argument("--stepped-rnn", action="store_true",
                        help="time each model with PyTorch's packed recurrent kernel and with the stepped loop")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if not Path(args.train).exists():
        print(f"{args.train}: not found (pass --train FILE)", file=sys.stderr)
        return 2

    read: dict = {}
    built = {name: build(name, args.train, args.batch, args.batches, read) for name in args.models}
    for model, optimizer, batches, _, precision in built.values():
        time_steps(model, optimizer, batches[:1], precision)  # warm-up
    seconds = {name: [] for name in built}
    kernel = {name: [] for name in built}  # --stepped-rnn: the same steps through PyTorch's packed kernel
    padded = {name: [] for name in built}  # --unpack: the same steps with pad_packed_sequence
    float32 = {name: [] for name in built}  # --float32: the same steps in float32
    torch_masks = {name: [] for name in built}  # --dropout: the same steps with F.dropout's bernoulli masks
    wall, cpu = time.perf_counter(), cpu_seconds()
    for _ in range(args.rounds):
        for name, (model, optimizer, batches, _, precision) in built.items():
            if args.stepped_rnn:
                sequence_encoders.STEPPED_ON_CPU = False
                kernel[name].append(time_steps(model, optimizer, batches, precision))
                sequence_encoders.STEPPED_ON_CPU = True
            if args.unpack:
                today, stepped_rnn.unpacked = stepped_rnn.unpacked, padded_unpack
                padded[name].append(time_steps(model, optimizer, batches, precision))
                stepped_rnn.unpacked = today
            if args.float32:
                float32[name].append(time_steps(model, optimizer, batches))
            if args.dropout:
                dropout.TORCH_MASKS = True
                torch_masks[name].append(time_steps(model, optimizer, batches, precision))
                dropout.TORCH_MASKS = False
            seconds[name].append(time_steps(model, optimizer, batches, precision))
    cpu_use = (cpu_seconds() - cpu) / (time.perf_counter() - wall) / args.threads
    print(f"threads {args.threads}, batch {args.batch}, {args.rounds} rounds of {args.batches} steps, "
          f"training file {args.train}")
    print(f"CPU use: {cpu_use:.0%} of {args.threads} threads")
    reference = "bilstm_seq2seq" if "bilstm_seq2seq" in built else None
    print(f"\n{'model':<18}{'precision':>11}{'s/step':>9}{'steps/epoch':>13}{'s/epoch':>9}{'examples/s':>12}"
          f"{'vs bilstm_seq2seq':>19}")
    per_epoch = {}
    for name, (_, _, _, steps, precision) in built.items():
        step = statistics.median(seconds[name])
        per_epoch[name] = step * steps
        ratio = f"{step / statistics.median(seconds[reference]):.2f}x" if reference else "-"
        print(f"{name:<18}{precision:>11}{step:>9.3f}{steps:>13}{per_epoch[name]:>9.1f}{args.batch / step:>12.0f}"
              f"{ratio:>19}")
    if args.float32:
        print(f"\n{'model':<18}{'float32 s/step':>16}{'preset s/step':>15}{'speed-up':>10}")
        for name in built:
            before, after = statistics.median(float32[name]), statistics.median(seconds[name])
            print(f"{name:<18}{before:>16.3f}{after:>15.3f}{before / after:>9.2f}x")
    if args.dropout:
        print(f"\n{'model':<18}{'F.dropout s/step':>18}{'neuromath s/step':>18}{'speed-up':>10}")
        for name in built:
            before, after = statistics.median(torch_masks[name]), statistics.median(seconds[name])
            print(f"{name:<18}{before:>18.3f}{after:>18.3f}{before / after:>9.2f}x")
    if args.stepped_rnn:
        print(f"\n{'model':<18}{'packed kernel s/step':>22}{'stepped s/step':>16}{'speed-up':>10}")
        for name in built:
            before, after = statistics.median(kernel[name]), statistics.median(seconds[name])
            print(f"{name:<18}{before:>22.3f}{after:>16.3f}{before / after:>9.2f}x")
    if args.unpack:
        print(f"\n{'model':<18}{'pad_packed s/step':>19}{'index_copy s/step':>19}{'speed-up':>10}")
        for name in built:
            before, after = statistics.median(padded[name]), statistics.median(seconds[name])
            print(f"{name:<18}{before:>19.3f}{after:>19.3f}{before / after:>9.2f}x")
    if args.json:
        report = {"torch": torch.__version__, "threads": args.threads, "batch": args.batch, "rounds": args.rounds,
                  "batches": args.batches, "train": args.train, "cpu_use": cpu_use,
                  "precision": {name: built[name][4] for name in built},
                  "seconds_per_step": {name: statistics.median(seconds[name]) for name in built}}
        if args.float32:
            report["float32_seconds_per_step"] = {name: statistics.median(float32[name]) for name in built}
            report["float32_speedup"] = {name: statistics.median(float32[name]) / statistics.median(seconds[name])
                                         for name in built}
        if args.dropout:
            report["torch_dropout_seconds_per_step"] = {name: statistics.median(torch_masks[name]) for name in built}
            report["dropout_speedup"] = {name: statistics.median(torch_masks[name]) / statistics.median(seconds[name])
                                         for name in built}
        if args.unpack:
            report["pad_packed_seconds_per_step"] = {name: statistics.median(padded[name]) for name in built}
            report["unpack_speedup"] = {name: statistics.median(padded[name]) / statistics.median(seconds[name])
                                        for name in built}
        if args.stepped_rnn:
            report["packed_kernel_seconds_per_step"] = {name: statistics.median(kernel[name]) for name in built}
            report["stepped_speedup"] = {name: statistics.median(kernel[name]) / statistics.median(seconds[name])
                                         for name in built}
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    rows = [row for folder in args.runs for row in best_epochs(Path(folder))]
    if rows:
        print(f"\n{'run':<48}{'model':<16}{'best epoch':>11}{'est. minutes to best':>22}")
        for run, name, epoch in rows:
            estimate = f"{epoch * per_epoch[name] / 60:.1f}" if name in per_epoch else "-"
            print(f"{run:<48}{name:<16}{epoch:>11}{estimate:>22}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
