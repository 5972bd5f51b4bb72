"""Tree-cell training speed against the code of an earlier commit, measured in one run (the level-batched engine).

Usage: ``python benchmarks/tree_speed.py [--baseline REV] [--cells tree_lstm ...] [--rounds 7] [--threads 2]
[--hidden 50] [--batch 128] [--batches 6] [--batching] [--json FILE]``

The trees and the step are ``trees.py``'s: random equation-like trees (14 operators, heights 1..10, 16 nodes on
average), batches of ``--batch`` trees already flattened by ``make_tree_batch``, forward and backward of the mean
square of the roots' h. ``--baseline`` (default 77ac508, the commit where the speed issue's work began) is unpacked
with ``git archive`` as in ``decoding.py``; it and today's code each run in a worker process of their own (the same
Python, threads, seeds and trees), taking turns round after round. Printed: trees per second of each, median over
the rounds, and today / baseline.

``--batching`` also times ``make_tree_batch`` alone over the same trees, the work a data loader does per batch: the
baseline's of nested tuples, today's of nested tuples, and today's of trees ``flatten_tree`` flattened once (what
``models.classifiers.EncodedEquations`` keeps, so that training flattens each equation once, not once per epoch).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decoding import REPOSITORY, Worker, unpack  # noqa: E402  (baseline workers as decoding.py's)

BASELINE = "77ac508"


def worker(args) -> None:
    """Answer one JSON line per request ``{"cell"}``: seconds per tree of one round over the batches."""
    import torch
    from trees import N_LEAF_TOKENS, N_OPERATORS, random_forest, time_level_batched

    from neuromath.nn.tree_engine import TreeEncoder, make_tree_batch

    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    forests = [random_forest(rng, args.batch) for _ in range(args.batches)]
    batches = [make_tree_batch(forest) for forest in forests]
    encoders, flat = {}, None
    for line in sys.stdin:
        request = json.loads(line)
        if "batching" in request:  # make_tree_batch alone, of nested trees or of trees flattened once before
            if request["batching"] == "flat" and flat is None:
                from neuromath.nn.tree_batch import flatten_tree

                flat = [[flatten_tree(tree) for tree in forest] for forest in forests]
            inputs = flat if request["batching"] == "flat" else forests
            start = time.perf_counter()
            for forest in inputs:
                make_tree_batch(forest)
            seconds = (time.perf_counter() - start) / sum(len(forest) for forest in inputs)
            print(json.dumps({"seconds_per_tree": seconds}), flush=True)
            continue
        cell = request["cell"]
        if cell not in encoders:
            torch.manual_seed(args.seed)
            encoders[cell] = TreeEncoder(cell, N_LEAF_TOKENS, N_OPERATORS, args.hidden)
            time_level_batched(encoders[cell], batches[:1])  # warm-up
        print(json.dumps({"seconds_per_tree": time_level_batched(encoders[cell], batches)}), flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help=f"git revision to compare with (default {BASELINE})")
    parser.add_argument("--cells", nargs="+", default=["tree_lstm"])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=50)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--batching", action="store_true",
                        help="also time make_tree_batch: the baseline's against today's, of nested and of flat trees")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    shared = ["--hidden", str(args.hidden), "--batch", str(args.batch), "--batches", str(args.batches),
              "--seed", str(args.seed)]
    report = {"baseline": args.baseline, "threads": args.threads, "hidden": args.hidden, "batch": args.batch,
              "rounds": args.rounds, "cells": {}}
    with tempfile.TemporaryDirectory() as folder:
        workers = {"baseline": Worker(__file__, unpack(args.baseline, Path(folder)), args.threads, shared),
                   "today": Worker(__file__, REPOSITORY, args.threads, shared)}
        print(f"{args.batch} trees per batch, {args.batches} batches per round, hidden {args.hidden}, {args.threads} "
              f"threads per worker; baseline {args.baseline}; medians of {args.rounds} rounds\n")
        print("| cell | baseline trees/s | today trees/s | today / baseline |")
        print("|---|---:|---:|---:|")
        for cell in args.cells:
            seconds = {name: [] for name in workers}
            for _ in range(args.rounds):
                for name, process in workers.items():
                    seconds[name].append(process.ask(cell=cell)["seconds_per_tree"])
            rate = {name: 1 / statistics.median(values) for name, values in seconds.items()}
            print(f"| {cell} | {rate['baseline']:,.0f} | {rate['today']:,.0f} | "
                  f"**{rate['today'] / rate['baseline']:.2f}x** |", flush=True)
            report["cells"][cell] = {"trees_per_second": rate, "speedup": rate["today"] / rate["baseline"],
                                     "seconds_per_tree_all": seconds}
        if args.batching:  # the baseline's make_tree_batch of nested trees against today's, nested and flat
            settings = (("baseline", "nested"), ("today", "nested"), ("today", "flat"))
            seconds = {setting: [] for setting in settings}
            for _ in range(args.rounds):
                for code, kind in settings:
                    seconds[(code, kind)].append(workers[code].ask(batching=kind)["seconds_per_tree"])
            rate = {" ".join(setting): 1 / statistics.median(values) for setting, values in seconds.items()}
            base = rate["baseline nested"]
            print(f"\nmake_tree_batch, trees/s: baseline {base:,.0f}, today nested {rate['today nested']:,.0f} "
                  f"({rate['today nested'] / base:.2f}x), today of trees flattened once {rate['today flat']:,.0f} "
                  f"({rate['today flat'] / base:.2f}x)")
            report["make_tree_batch"] = {"trees_per_second": rate,
                                         "seconds_per_tree_all": {" ".join(k): v for k, v in seconds.items()}}
        for process in workers.values():
            process.close()
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
