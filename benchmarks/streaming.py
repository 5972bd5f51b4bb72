"""Streaming a Mathematics Dataset tree too large for memory: peak memory and questions per second, measured in one run.

Usage: ``python benchmarks/streaming.py [--questions N] [--unique U] [--data DIR] [--batch B] [--window W]
[--in-memory M] [--json FILE]``

1. Data: ``--unique`` questions (default 20,000) are drawn with DeepMind's generator from the four default modules
   and written over and over into a release tree (``DIR/train-easy/<module>.txt``) until it holds ``--questions``
   (default 10,000,000), each file written as it goes. An existing tree at ``--data`` of that size is reused.
2. Streaming: the tree goes through the training pipeline of ``data.streaming`` (``neuromath.training.streaming``:
   interleaved lazy reading, one shard, shuffle windows of ``--window``, character vocabulary, collated batches of
   ``--batch``) for one full epoch, in this process. The resident memory (VmRSS) is sampled every 10% of the way;
   printed are questions per second, the peak (VmHWM) and how much the resident memory grew between the first
   sample and the last: flat means it does not grow with the file.
3. In memory, for contrast: a fresh process reads the first ``--in-memory`` questions (default 1,000,000) the way
   an ordinary run does (``read_examples`` and ``EncodedExamples``) and reports how much its resident memory grew;
   the script prints that growth, extrapolated to the streamed questions, over the streaming peak.

A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from neuromath.config import load_config
from neuromath.fileio import write_text_atomic
from neuromath.tasks import get_task
from neuromath.tasks import mathematics_dataset as md
from neuromath.text import Vocabulary, char_tokens


def memory_kib(field: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def write_tree(root: Path, questions: int, unique: int, seed: int) -> tuple[int, float]:
    """A release tree of ``questions`` questions tiled from ``unique`` generated ones; (bytes, seconds)."""
    started = time.perf_counter()
    pool = md.generate(unique, random.Random(seed))
    by_module: dict[str, list[str]] = {}
    for example in pool:
        by_module.setdefault(example.module, []).append(f"{example.question}\n{example.answer}\n")
    folder = root / "train-easy"
    folder.mkdir(parents=True, exist_ok=True)
    modules = sorted(by_module)
    size = 0
    for k, module in enumerate(modules):
        count = questions // len(modules) + (k < questions % len(modules))
        lines = by_module[module]
        path = folder / f"{module}.txt"
        with path.open("w", encoding="utf-8") as stream:
            for start in range(0, count, len(lines)):
                stream.write("".join(lines[: min(len(lines), count - start)]))
        size += path.stat().st_size
    (root / "COUNT").write_text(str(questions))
    return size, time.perf_counter() - started


def in_memory(path: str, questions: int) -> None:
    """Child process: read ``questions`` questions into memory as a run does, print the resident memory's growth."""
    from neuromath.models.batching import EncodedExamples

    task = get_task("mathematics_dataset")
    before = memory_kib()
    files = md.module_files(path)
    examples = []
    per_file = questions // len(files)
    for file in files:
        examples.extend(md.read_module_file(file, limit=per_file))
    vocab = Vocabulary.build((char_tokens(e.question + e.answer) for e in examples[:100_000]), level="char")
    encoded = EncodedExamples(examples, task, vocab, vocab)
    after = memory_kib()
    print(json.dumps({"questions": len(encoded), "grown_kib": after - before, "peak_kib": memory_kib("VmHWM")}))


def stream(path: Path, batch: int, window: int, samples: int) -> dict:
    from neuromath.training.run import build_vocabularies
    from neuromath.training.streaming import open_stream, streaming_loader

    config = load_config(None, ["data.task=mathematics_dataset", f"data.train={path}", "data.streaming=true",
                                "data.valid_max=1000", f"data.shuffle_window={window}", f"train.batch_size={batch}",
                                "data.stream_vocab_records=100000", "data.max_source_len=1000",
                                "data.max_target_len=1000"])
    task = get_task("mathematics_dataset")
    started = time.perf_counter()
    setup = open_stream(config, task)
    source_vocab, target_vocab = build_vocabularies(task, setup.vocab_sample, config)
    prepared = time.perf_counter() - started
    loader, _ = streaming_loader(setup, task, source_vocab, target_vocab, config)
    batches = len(loader)
    every = max(1, batches // samples)
    trace = [(0, memory_kib())]
    tokens = 0
    started = time.perf_counter()
    for number, item in enumerate(loader, start=1):
        tokens += int((item["source"] != 0).sum()) + int((item["target_out"] != 0).sum())
        if number % every == 0 or number == batches:
            trace.append((number * batch, memory_kib()))
    seconds = time.perf_counter() - started
    return {"records": setup.records, "questions": batches * batch, "seconds": seconds,
            "questions_per_s": batches * batch / seconds, "tokens_per_s": tokens / seconds,
            "count_and_vocab_s": prepared, "rss_trace_kib": trace, "peak_kib": memory_kib("VmHWM")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=10_000_000)
    parser.add_argument("--unique", type=int, default=20_000)
    parser.add_argument("--data", type=Path, help="where the tree is written (default: a temporary folder)")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--window", type=int, default=10_000)
    parser.add_argument("--in-memory", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child-in-memory", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_in_memory:
        in_memory(args.child_in_memory, args.in_memory)
        return 0

    with tempfile.TemporaryDirectory(prefix="neuromath-stream-") as scratch:
        root = args.data or Path(scratch) / "tree"
        count_file = root / "COUNT"
        if count_file.exists() and int(count_file.read_text()) == args.questions:
            print(f"reusing the tree at {root}")
        else:
            size, seconds = write_tree(root, args.questions, args.unique, args.seed)
            print(f"wrote {args.questions:,} questions ({size / 2**20:,.0f} MiB) tiled from {args.unique:,} generated "
                  f"ones in {seconds:.0f} s")
        result = stream(root, args.batch, args.window, args.samples)
        child = subprocess.run([sys.executable, __file__, "--child-in-memory", str(root),
                                "--in-memory", str(args.in_memory)], capture_output=True, text=True, check=True)
        memory = json.loads(child.stdout.strip().splitlines()[-1])

    trace = result["rss_trace_kib"]
    first, last = trace[1][1] if len(trace) > 1 else trace[0][1], trace[-1][1]
    print(f"\nstreaming {result['questions']:,} questions (one epoch, batch {args.batch}, window {args.window:,}):")
    print(f"  {result['questions_per_s']:,.0f} questions/s, {result['tokens_per_s']:,.0f} tokens/s "
          f"({result['seconds']:.0f} s; counting the files and building the vocabulary took "
          f"{result['count_and_vocab_s']:.1f} s)")
    print("  resident memory along the way (questions read: MiB): "
          + ", ".join(f"{q / 1e6:.1f}M: {kib / 1024:.0f}" for q, kib in trace))
    print(f"  peak {result['peak_kib'] / 1024:.0f} MiB; grew {(last - first) / 1024:+.1f} MiB from the first sample "
          f"({trace[1][0] if len(trace) > 1 else 0:,} questions) to the last ({trace[-1][0]:,})")
    per_question = memory["grown_kib"] * 1024 / max(1, memory["questions"])
    print(f"\nin memory (a fresh process, {memory['questions']:,} questions read and encoded): grew "
          f"{memory['grown_kib'] / 1024:,.0f} MiB, {per_question:,.0f} bytes per question; at that rate "
          f"{result['questions']:,} questions would take {per_question * result['questions'] / 2**30:,.1f} GiB and "
          f"the release's 112M {per_question * 112e6 / 2**30:,.0f} GiB")
    needed = per_question * result["questions"]
    print(f"memory for {result['questions']:,} questions, in memory (extrapolated) / streaming (peak): "
          f"{needed / (result['peak_kib'] * 1024):,.1f}x")
    if args.json:
        write_text_atomic(args.json, json.dumps({"streaming": result, "in_memory": memory}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
