"""``train.compile`` against eager training steps, measured in one run, with dynamo's graph breaks and recompiles.

Usage: ``python benchmarks/compile.py [--presets P ...] [--batch 32] [--batches 6] [--rounds 2] [--threads 2]
[--json FILE]``

For each preset (the Transformer family: standard, TP, relative positions, tree positions; the goal-tree decoders of
GTS and Graph2Tree), the model is built as training builds it on generated data (``gpu_check.Workload``), and
``--batches`` batches of different lengths are cycled ``--rounds`` times: eagerly, then with the forward compiled as
``train.compile`` compiles it (``neuromath.nn.compiling.compile_in_place``: inductor, dynamic shapes). Printed per
preset: the compile time (the first step), the median eager and compiled steps and their ratio, the graphs and graph
breaks of one forward (``torch._dynamo.explain``) with the reasons, and the graphs compiled after the first step
(recompiles: batches of new lengths that did not reuse the first graph). Run it on an idle machine: inductor's CPU
kernels spin their threads and suffer more than eager code from a busy one.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
import torch._dynamo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_check import Workload, step  # noqa: E402  (the same workloads and step as the GPU check)

from neuromath.nn.compiling import compile_in_place  # noqa: E402

PRESETS = ("word_problems/transformer", "word_problems/tp_transformer", "symbolic/relative_positions",
           "symbolic/tree_positions", "word_problems/gts", "word_problems/graph2tree")


def timed_steps(workload: Workload, forward, rounds: int) -> tuple[float, list[float]]:
    """The first step's seconds (compilation included) and the seconds of every later step."""
    batches = workload.batches
    start = time.perf_counter()
    step(workload, forward, batches[0], "32-true")
    first = time.perf_counter() - start
    times = []
    for index in range(1, rounds * len(batches)):
        start = time.perf_counter()
        step(workload, forward, batches[index % len(batches)], "32-true")
        times.append(time.perf_counter() - start)
    return first, times


def graph_breaks(workload: Workload) -> dict:
    explained = torch._dynamo.explain(workload.model)(workload.batches[0])
    reasons = sorted({str(getattr(reason, "reason", reason)).splitlines()[0][:160]
                      for reason in explained.break_reasons})
    return {"graphs": explained.graph_count, "graph_breaks": explained.graph_break_count, "reasons": reasons}


def measure(preset: str, args) -> dict:
    eager = Workload(preset, torch.device("cpu"), args.batch, args.batches)
    lengths = sorted({tuple(batch["target_out"].shape) for batch in eager.batches})
    _, eager_times = timed_steps(eager, eager.model, args.rounds)
    torch._dynamo.reset()
    explained = graph_breaks(Workload(preset, torch.device("cpu"), args.batch, args.batches))
    torch._dynamo.reset()
    compiled = Workload(preset, torch.device("cpu"), args.batch, args.batches)
    compile_in_place(compiled.model)
    counters = torch._dynamo.utils.counters
    graphs_before = counters["stats"]["unique_graphs"]
    first, compiled_times = timed_steps(compiled, compiled.model, 1)
    graphs_after_first = counters["stats"]["unique_graphs"]
    _, compiled_times = timed_steps(compiled, compiled.model, args.rounds)
    eager_median, compiled_median = statistics.median(eager_times), statistics.median(compiled_times)
    return {"batch_shapes": [list(shape) for shape in lengths], "compile_seconds": round(first, 1),
            "eager_ms": round(1000 * eager_median, 1), "compiled_ms": round(1000 * compiled_median, 1),
            "speedup": round(eager_median / compiled_median, 2),
            "graphs_first_step": graphs_after_first - graphs_before,
            "recompiled_graphs_later": counters["stats"]["unique_graphs"] - graphs_after_first, **explained}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presets", nargs="*", default=list(PRESETS))
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--batches", type=int, default=6, help="batches of different lengths (default 6)")
    parser.add_argument("--rounds", type=int, default=2, help="passes over the batches (default 2)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    report = {"torch": torch.__version__, "threads": args.threads, "batch": args.batch, "presets": {}}
    print("| preset | compile s | eager ms | compiled ms | eager / compiled | graphs | breaks | recompiles |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for preset in args.presets:
        try:
            result = measure(preset, args)
        except Exception as error:  # noqa: BLE001 - a preset that does not compile is a finding, not a crash
            result = {"error": f"{type(error).__name__}: {error}"[:400]}
            print(f"| {preset} | error: {result['error'][:120]} |||||||", flush=True)
        else:
            print(f"| {preset} | {result['compile_seconds']} | {result['eager_ms']} | {result['compiled_ms']} | "
                  f"{result['speedup']}x | {result['graphs']} | {result['graph_breaks']} | "
                  f"{result['recompiled_graphs_later']} |", flush=True)
        report["presets"][preset] = result
    for preset, result in report["presets"].items():
        for reason in result.get("reasons", [])[:5]:
            print(f"{preset}: break: {reason}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
