"""``decode.compile``: greedy and beam decoding, eager against fixed-shape steps, eager and compiled, in one run.

Usage: ``python benchmarks/decode_compile.py [--device cpu|cuda] [--precisions 32-true,bf16-mixed] [--quick]
[--threads N] [--repeats R] [--json FILE]``

The shapes are ``decoding.py``'s (``precision.py``'s ``build``: d_model 256, 8 heads, d_ff 1024, 3 + 3 layers,
target vocabulary 40): 16 random sources of 40 tokens, eos forbidden so that every search runs exactly 30 steps;
standard attention and TP-Attention. Three decoders of the same weights:

- ``eager``: the model's own ``decode_step`` (a cache that grows by a position a step);
- ``fixed``: ``neuromath.decoding.fixed_shapes.FixedShapeDecoder`` without compiling;
- ``compiled``: the same through ``torch.compile`` (``decode.compile``; CUDA graphs on CUDA).

Each decodes greedily and with beam 10; the settings take turns, repeat after repeat, and medians are reported, with
beam / greedy per decoder and the compiled decoder's speed against the eager one. The first compiled call of each
search is timed apart (compiling). Printed besides: how many best hypotheses equal the eager decoder's (all must in
float32: the script exits 1 otherwise), and dynamo's graph breaks, distinct graphs and recompiles.
A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from attention import NoEosModel, collate  # noqa: E402
from precision import build, random_pairs  # noqa: E402

from neuromath.decoding.beam import beam_search  # noqa: E402
from neuromath.decoding.fixed_shapes import FixedShapeDecoder  # noqa: E402
from neuromath.decoding.greedy import greedy_decode  # noqa: E402
from neuromath.nn.precision import autocast  # noqa: E402

BEAM, SOURCES, SOURCE_LENGTH, STEPS = 10, 16, 40, 30
QUICK = dict(sources=4, steps=8)
DECODERS = ("eager", "fixed", "compiled")
SEARCHES = ("greedy", "beam")


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def search(decoder, batch: dict, what: str, steps: int) -> list[list[int]]:
    if what == "greedy":
        return greedy_decode(decoder, batch, steps)
    return [hypotheses[0].tokens for hypotheses in beam_search(decoder, batch, BEAM, steps, nbest=1)]


def timed(decoder, batch, what, steps, precision, device) -> tuple[float, list]:
    synchronize(device)
    start = time.perf_counter()
    with autocast(precision, device):
        best = search(decoder, batch, what, steps)
    synchronize(device)
    return time.perf_counter() - start, best


def dynamo_counts() -> dict:
    from torch._dynamo.utils import counters

    return {"graph_breaks": sum(counters["graph_break"].values()),
            "graph_break_reasons": sorted(counters["graph_break"])[:5],
            "unique_graphs": counters["stats"].get("unique_graphs", 0),
            "calls_captured": counters["stats"].get("calls_captured", 0),
            "recompiles": max(0, counters["stats"].get("unique_graphs", 0) - 2),  # a graph per search's batch shape
            "cudagraph_skips": counters["inductor"].get("cudagraph_skips", 0)}


def measure(attention: str, precision: str, device: torch.device, sources: int, steps: int, repeats: int) -> dict:
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    model = build(attention, 0).to(device).eval()
    batch = collate(random_pairs(sources, SOURCE_LENGTH, 1, torch.Generator().manual_seed(0)))
    batch = {key: value.to(device) for key, value in batch.items()}
    capacity = steps + 1
    decoders = {
        "eager": NoEosModel(model),
        "fixed": NoEosModel(FixedShapeDecoder(model, capacity)),
        "compiled": NoEosModel(FixedShapeDecoder(model, capacity, compile=True)),
    }
    first, best = {}, {}
    for name, decoder in decoders.items():  # the first call of each: compiling, for the compiled decoder
        for what in SEARCHES:
            first[name, what], best[name, what] = timed(decoder, batch, what, steps, precision, device)
    seconds = {key: [] for key in best}
    for _ in range(repeats):
        for name, decoder in decoders.items():
            for what in SEARCHES:
                elapsed, _ = timed(decoder, batch, what, steps, precision, device)
                seconds[name, what].append(elapsed)
    median = {key: statistics.median(values) for key, values in seconds.items()}
    agree = {f"{name}/{what}": sum(a == b for a, b in zip(best[name, what], best["eager", what]))
             for name in DECODERS for what in SEARCHES}
    return {
        "attention": attention, "precision": precision,
        "median_s": {f"{name}/{what}": median[name, what] for name in DECODERS for what in SEARCHES},
        "first_call_s": {f"{name}/{what}": first[name, what] for name in DECODERS for what in SEARCHES},
        "beam_over_greedy": {name: median[name, "beam"] / median[name, "greedy"] for name in DECODERS},
        "compiled_speedup": {what: median["eager", what] / median["compiled", what] for what in SEARCHES},
        "fixed_speedup": {what: median["eager", what] / median["fixed", what] for what in SEARCHES},
        "best_equal_to_eager": agree, "sources": sources, "dynamo": dynamo_counts(),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precisions", default="32-true,bf16-mixed")
    parser.add_argument("--attentions", default="standard,tp")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help=f"{QUICK['sources']} sources, {QUICK['steps']} steps")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    sources, steps = (QUICK["sources"], QUICK["steps"]) if args.quick else (SOURCES, STEPS)
    rows, failed = [], False
    environment = {"torch": torch.__version__, "device": args.device, "threads": torch.get_num_threads(),
                   "gpu": torch.cuda.get_device_name() if device.type == "cuda" else None,
                   "sources": sources, "steps": steps, "beam": BEAM, "repeats": args.repeats}
    print(json.dumps(environment))
    print("| model | precision | greedy eager / fixed / compiled (ms) | beam eager / fixed / compiled (ms) | "
          "beam/greedy eager, compiled | compiled speed-up greedy, beam | best = eager (of N) | compile s | "
          "graphs, breaks |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for attention in args.attentions.split(","):
        for precision in args.precisions.split(","):
            row = measure(attention, precision, device, sources, steps, args.repeats)
            rows.append(row)
            m, agree = row["median_s"], row["best_equal_to_eager"]
            if precision == "32-true" and min(agree.values()) < sources:
                failed = True
            compile_s = row["first_call_s"]["compiled/greedy"] + row["first_call_s"]["compiled/beam"]
            print(f"| {attention} | {precision} | "
                  + " / ".join(f"{1000 * m[f'{d}/greedy']:.1f}" for d in DECODERS) + " | "
                  + " / ".join(f"{1000 * m[f'{d}/beam']:.1f}" for d in DECODERS) + " | "
                  + f"{row['beam_over_greedy']['eager']:.2f}, {row['beam_over_greedy']['compiled']:.2f} | "
                  + f"{row['compiled_speedup']['greedy']:.2f}x, {row['compiled_speedup']['beam']:.2f}x | "
                  + " ".join(f"{key}:{value}" for key, value in agree.items() if not key.startswith("eager"))
                  + f" (of {sources}) | {compile_s:.0f} | "
                  + f"{row['dynamo']['unique_graphs']}, {row['dynamo']['graph_breaks']} |", flush=True)
            if args.json:
                args.json.parent.mkdir(parents=True, exist_ok=True)
                args.json.write_text(json.dumps({"environment": environment, "rows": rows}, indent=1) + "\n")
    if failed:
        print("FAILED: a float32 fixed-shape or compiled decoder found another best hypothesis than the eager one")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
