"""Attention-variant benchmark on the CPU: training throughput and cached beam-search decoding.

Usage: ``python benchmarks/attention.py [--quick] [--threads N] [--json FILE] [--seed S]``

``--quick`` is a smoke run (< 30 s on 2 idle cores): 2 training rounds of one batch, one decoding
round of four variants (standard, tp, relative, tree_relative multiplicative) at the full length.
The default run (about 2 minutes on 2 idle cores) does 7 rounds of two batches and 3 decoding
rounds of every variant. The line "CPU use" says whether other jobs competed for the cores.

A script, not a test: it prints numbers and two targets with PASS / FAIL, and always exits 0
unless something breaks. Every variant is a Transformer of d_model 256, 4 heads, d_ff 1024,
3 encoder and 3 decoder layers, dropout 0, built through ``neuromath.models.build_model``.

1. Training: one step is forward + backward + Adam step on a batch of 32 synthetic pairs of random
   prefix expressions (20-40 tokens each side, both sides declared prefix trees, so the tree
   variants use their structure). The variants are measured round-robin, repeat after repeat, so
   that machine noise falls on all of them alike; reported is the median step time, the target
   tokens (non-pad) per second and the ratio to the standard attention's step time.
2. Decoding: beam 10 over 8 sources, with the cache and without it (``use_cache=False``, every step
   recomputes the whole prefix). The model is wrapped so that eos is impossible, which makes every
   search run exactly ``max_len`` = 30 steps.

Targets: cached decoding at least 3x faster than uncached (standard attention; the other
variants are listed too) and a TP-Attention training step within 1.3x the standard one.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from neuromath.config import ModelConfig
from neuromath.decoding.beam import beam_search
from neuromath.expr.grammar import TreeGrammar
from neuromath.models import ModelInputs, build_model
from neuromath.text import Vocabulary

PAD_ID, BOS_ID, EOS_ID = Vocabulary.pad_id, Vocabulary.bos_id, Vocabulary.eos_id
OPERATORS = {"+": 2, "-": 2, "*": 2, "/": 2, "^": 2, "neg": 1, "sin": 1, "exp": 1}
LEAVES = ["x", "y", "z", "1", "2", "3", "4", "5"]
TOKENS = ["<pad>", "<bos>", "<eos>", "<unk>", *OPERATORS, *LEAVES]
GRAMMAR = TreeGrammar(OPERATORS, notation="prefix")
TOKEN_ID = {token: i for i, token in enumerate(TOKENS)}

BASE_CONFIG = dict(d_model=256, n_heads=4, d_ff=1024, n_encoder_layers=3, n_decoder_layers=3, dropout=0.0)
VARIANTS = {
    "standard": dict(),
    "tp": dict(attention="tp"),  # with its default role embedding
    "learned": dict(positions="learned"),
    "relative": dict(attention="relative", relative_k=16),
    "tree_positions": dict(positions="tree"),
    "tree_relative_mult": dict(attention="tree_relative", tree_relative_form="multiplicative"),
    "tree_relative_add": dict(attention="tree_relative", tree_relative_form="additive"),
}

BATCH_SIZE = 32
MIN_LENGTH, MAX_LENGTH = 20, 40
DECODE_SOURCES, BEAM_SIZE, DECODE_LENGTH = 8, 10, 30
CACHED_SPEEDUP_TARGET = 3.0
TP_STEP_RATIO_TARGET = 1.3
BUSY_MACHINE_SHARE = 0.7  # below this share of its threads' CPU time the machine was busy with other jobs


# ---------------------------------------------------------------------------- synthetic data


def random_prefix_expression(rng: random.Random, length: int) -> list[str]:
    """A well-formed prefix expression of exactly ``length`` tokens, drawn token by token.

    ``open_slots`` counts the children still to be filled; a binary operator adds one slot, a unary
    operator none and a leaf closes one. A token is allowed only if the slots left afterwards can
    still be closed by the remaining tokens (at most one per token) and do not close too early.
    """
    binary = [token for token, arity in OPERATORS.items() if arity == 2]
    unary = [token for token, arity in OPERATORS.items() if arity == 1]
    tokens, open_slots = [], 1
    for position in range(length):
        remaining_after = length - position - 1
        choices = []
        if open_slots + 1 <= remaining_after:
            choices += binary
        if remaining_after >= open_slots and remaining_after > 0:
            choices += unary
        if open_slots - 1 <= remaining_after and (open_slots - 1 > 0 or remaining_after == 0):
            choices += LEAVES
        token = rng.choice(choices)
        tokens.append(token)
        open_slots += OPERATORS.get(token, 0) - 1
    assert open_slots == 0, tokens
    return tokens


def make_pairs(n: int, rng: random.Random) -> list[tuple[list[int], list[int]]]:
    """(source ids + eos, bos + target ids + eos) pairs of independent random expressions."""
    pairs = []
    for _ in range(n):
        source = random_prefix_expression(rng, rng.randint(MIN_LENGTH, MAX_LENGTH))
        target = random_prefix_expression(rng, rng.randint(MIN_LENGTH, MAX_LENGTH))
        pairs.append(([TOKEN_ID[t] for t in source] + [EOS_ID], [BOS_ID] + [TOKEN_ID[t] for t in target] + [EOS_ID]))
    return pairs


def collate(pairs: list[tuple[list[int], list[int]]]) -> dict:
    sources = torch.full((len(pairs), max(len(s) for s, _ in pairs)), PAD_ID, dtype=torch.long)
    targets = torch.full((len(pairs), max(len(t) for _, t in pairs)), PAD_ID, dtype=torch.long)
    for row, (source, target) in enumerate(pairs):
        sources[row, : len(source)] = torch.tensor(source)
        targets[row, : len(target)] = torch.tensor(target)
    return {"source": sources, "target_in": targets[:, :-1], "target_out": targets[:, 1:]}


# ---------------------------------------------------------------------------- models


def build_variant(name: str, fit_pairs) -> torch.nn.Module:
    config = ModelConfig(**BASE_CONFIG, **VARIANTS[name])
    classes = GRAMMAR.token_classes(TOKENS)
    model = build_model(
        config, ModelInputs(len(TOKENS), len(TOKENS), PAD_ID, source_classes=classes, target_classes=classes)
    )
    # Tree relative attention gives its relation ids to the most frequent relations, as training does.
    model.fit_structure([source for source, _ in fit_pairs], [target[:-1] for _, target in fit_pairs])
    return model


class NoEosModel:
    """Delegates to ``model`` but makes eos impossible, so beam search runs exactly ``max_len`` steps."""

    def __init__(self, model, eos_id: int = EOS_ID):
        self.model, self.eos_id = model, eos_id
        # What the model offers beam search passes on (absent in code before these parts of the contract).
        self.shares_memory_across_beams = getattr(model, "shares_memory_across_beams", False)
        self.fixed_shapes = getattr(model, "fixed_shapes", False)
        if hasattr(model, "reorder_cache"):
            self.reorder_cache = model.reorder_cache

    def encode(self, batch: dict) -> dict:
        return self.model.encode(batch)

    def decode_step(self, memory: dict, prefix: torch.Tensor, cache: dict | None):
        log_probs, cache = self.model.decode_step(memory, prefix, cache)
        log_probs = log_probs.clone()
        log_probs[:, self.eos_id] = float("-inf")
        return log_probs, cache


# ---------------------------------------------------------------------------- measurements


def training_step(model, optimizer, batch: dict) -> None:
    logits = model(batch)  # (B, T, V)
    loss = F.cross_entropy(logits.flatten(0, 1), batch["target_out"].flatten(), ignore_index=PAD_ID)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def measure_training(names, models, batches, warmup: int, repeats: int) -> dict:
    """Median seconds per step over ``repeats`` rounds; each round runs every batch once per variant."""
    optimizers = {name: torch.optim.Adam(models[name].parameters(), lr=1e-4) for name in names}
    for name in names:
        models[name].train()
        for step in range(warmup):
            training_step(models[name], optimizers[name], batches[step % len(batches)])
    seconds_per_step = {name: [] for name in names}
    for _ in range(repeats):
        for name in names:  # round-robin: every variant once per round
            start = time.perf_counter()
            for batch in batches:
                training_step(models[name], optimizers[name], batch)
            seconds_per_step[name].append((time.perf_counter() - start) / len(batches))
    target_tokens = sum(int(batch["target_out"].ne(PAD_ID).sum()) for batch in batches) / len(batches)
    results = {}
    for name in names:
        step = statistics.median(seconds_per_step[name])
        results[name] = {
            "step_seconds": step,
            "step_seconds_all": seconds_per_step[name],
            "target_tokens_per_step": target_tokens,
            "target_tokens_per_second": target_tokens / step,
        }
    standard = results["standard"]["step_seconds"]
    for name in names:
        results[name]["ratio_to_standard"] = results[name]["step_seconds"] / standard
    return results


def run_beam(model, batch: dict, use_cache: bool, max_len: int) -> tuple[float, list[list[int]]]:
    start = time.perf_counter()
    hypotheses = beam_search(NoEosModel(model), batch, BEAM_SIZE, max_len, nbest=1, use_cache=use_cache)
    seconds = time.perf_counter() - start
    best = [row[0].tokens for row in hypotheses]
    if any(len(tokens) != max_len for tokens in best):
        raise RuntimeError(f"beam search stopped early: lengths {[len(t) for t in best]}, expected {max_len}")
    return seconds, best


def measure_decoding(names, models, batch: dict, repeats: int, max_len: int) -> dict:
    """Median seconds of a whole beam search with and without the cache, round-robin over variants."""
    for name in names:
        models[name].eval()
        run_beam(models[name], batch, True, min(max_len, 3))  # warm-up
    seconds = {name: {"cached": [], "uncached": []} for name in names}
    agreement = {}
    for _ in range(repeats):
        for name in names:
            cached_seconds, cached_best = run_beam(models[name], batch, True, max_len)
            uncached_seconds, uncached_best = run_beam(models[name], batch, False, max_len)
            seconds[name]["cached"].append(cached_seconds)
            seconds[name]["uncached"].append(uncached_seconds)
            # The cache must not change the search: the best hypotheses should agree (ties aside).
            agreement[name] = sum(a == b for a, b in zip(cached_best, uncached_best)) / len(cached_best)
    results = {}
    for name in names:
        cached = statistics.median(seconds[name]["cached"])
        uncached = statistics.median(seconds[name]["uncached"])
        results[name] = {
            "cached_seconds": cached,
            "uncached_seconds": uncached,
            "cached_seconds_all": seconds[name]["cached"],
            "uncached_seconds_all": seconds[name]["uncached"],
            "speedup": uncached / cached,
            "same_best_hypotheses": agreement[name],
        }
    return results


class CpuUse:
    """The share of the torch threads' time this process got while the block ran: CPU time of the
    process over wall time x threads. Well below 1 means other jobs took the cores, and with
    several threads waiting on each other the timings then swell far more than that share says."""

    def __enter__(self) -> "CpuUse":
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc_info) -> None:
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        self.share = cpu / (wall * torch.get_num_threads()) if wall > 0 else 1.0


# ---------------------------------------------------------------------------- report


def pass_fail(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def print_report(environment: dict, settings: dict, training: dict, decoding: dict) -> dict:
    print(
        f"torch {environment['torch']} | threads {environment['threads']} | CPUs {environment['cpu_count']} "
        f"(usable {environment['usable_cpus']}) | {environment['machine']}"
    )
    print(
        f"model: {environment['model']} | training: batch {BATCH_SIZE}, {settings['train_batches']} batches per round, "
        f"{settings['train_repeats']} rounds after {settings['train_warmup']} warm-up steps | "
        f"decoding: beam {BEAM_SIZE}, {DECODE_SOURCES} sources, {settings['decode_length']} steps, "
        f"{settings['decode_repeats']} rounds"
        + (" | QUICK (smoke run, numbers are rough)" if settings["quick"] else "")
    )
    cpu_use = environment["cpu_use"]
    print(
        f"CPU use: training {cpu_use['training']:.0%}, decoding {cpu_use['decoding']:.0%} "
        f"of {environment['threads']} threads"
    )
    if min(cpu_use.values()) < BUSY_MACHINE_SHARE:
        print(
            f"WARNING: the process got less than {BUSY_MACHINE_SHARE:.0%} of its threads' time; other jobs were "
            "competing for the cores, so the timings are unreliable (rerun on a quiet machine or with --threads 1)"
        )
    print()
    print("## Training step (forward + backward + Adam)")
    print()
    print("| variant | ms / step | target tokens / s | step vs standard |")
    print("| --- | ---: | ---: | ---: |")
    for name, row in training.items():
        print(
            f"| {name} | {row['step_seconds'] * 1000:.1f} | {row['target_tokens_per_second']:.0f} "
            f"| {row['ratio_to_standard']:.2f}x |"
        )
    print()
    print(f"## Beam-{BEAM_SIZE} decoding, {settings['decode_length']} steps")
    print()
    print("| variant | cached s | uncached s | uncached / cached | same best hypotheses |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, row in decoding.items():
        print(
            f"| {name} | {row['cached_seconds']:.3f} | {row['uncached_seconds']:.3f} | {row['speedup']:.2f}x "
            f"| {row['same_best_hypotheses']:.0%} |"
        )
    print()
    tp_ratio = training["tp"]["ratio_to_standard"]
    standard_speedup = decoding["standard"]["speedup"]
    targets = {
        "cached_decoding_speedup": {
            "value": standard_speedup,
            "target": f">= {CACHED_SPEEDUP_TARGET}x",
            "pass": standard_speedup >= CACHED_SPEEDUP_TARGET,
            "per_variant": {name: row["speedup"] for name, row in decoding.items()},
        },
        "tp_training_step_ratio": {
            "value": tp_ratio,
            "target": f"<= {TP_STEP_RATIO_TARGET}x",
            "pass": tp_ratio <= TP_STEP_RATIO_TARGET,
        },
    }
    print("## Targets")
    print()
    print(
        f"- {pass_fail(standard_speedup >= CACHED_SPEEDUP_TARGET)}: cached beam decoding {standard_speedup:.2f}x "
        f"faster than uncached for standard attention (target >= {CACHED_SPEEDUP_TARGET}x)"
    )
    for name, row in decoding.items():
        if name != "standard":
            print(f"  - {name}: {row['speedup']:.2f}x ({pass_fail(row['speedup'] >= CACHED_SPEEDUP_TARGET)})")
    print(
        f"- {pass_fail(tp_ratio <= TP_STEP_RATIO_TARGET)}: TP-Attention training step {tp_ratio:.2f}x the standard "
        f"attention's (target <= {TP_STEP_RATIO_TARGET}x)"
    )
    if settings["quick"]:
        print("  (quick run: fewer rounds and fewer decoded variants, so the targets are indicative only)")
    return targets


def write_json(path: Path, payload: dict) -> None:
    """Written to a temporary file next to ``path`` and renamed, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as file:
            json.dump(payload, file, indent=2)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few rounds, four decoded variants: a smoke run (< 30 s)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's own)")
    parser.add_argument("--json", type=Path, default=None, help="also write every measurement to this JSON file")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data and the model weights")
    args = parser.parse_args(argv)
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be >= 1")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)

    if args.quick:
        settings = dict(train_batches=1, train_warmup=1, train_repeats=2, decode_repeats=1, decode_length=DECODE_LENGTH)
        decode_variants = ["standard", "tp", "relative", "tree_relative_mult"]
    else:
        settings = dict(train_batches=2, train_warmup=2, train_repeats=7, decode_repeats=3, decode_length=DECODE_LENGTH)
        decode_variants = list(VARIANTS)
    settings["quick"] = args.quick

    environment = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "machine": f"{platform.machine()} {platform.processor() or platform.system()}".strip(),
        "python": sys.version.split()[0],
        "model": ", ".join(f"{key} {value}" for key, value in BASE_CONFIG.items()),
    }

    fit_pairs = make_pairs(256, rng)
    train_batches = [collate(make_pairs(BATCH_SIZE, rng)) for _ in range(settings["train_batches"])]
    decode_batch = collate(make_pairs(DECODE_SOURCES, rng))

    started = time.perf_counter()
    models = {}
    for name in VARIANTS:
        torch.manual_seed(args.seed)
        models[name] = build_variant(name, fit_pairs)

    with CpuUse() as training_cpu:
        training = measure_training(
            list(VARIANTS), models, train_batches, settings["train_warmup"], settings["train_repeats"]
        )
    with CpuUse() as decoding_cpu:
        decoding = measure_decoding(
            decode_variants, models, decode_batch, settings["decode_repeats"], settings["decode_length"]
        )
    environment["cpu_use"] = {"training": training_cpu.share, "decoding": decoding_cpu.share}
    targets = print_report(environment, settings, training, decoding)
    elapsed = time.perf_counter() - started
    print(f"\nbenchmark took {elapsed:.1f} s")

    if args.json is not None:
        write_json(
            args.json,
            {
                "environment": environment,
                "settings": {
                    **settings,
                    "batch_size": BATCH_SIZE,
                    "beam_size": BEAM_SIZE,
                    "decode_sources": DECODE_SOURCES,
                },
                "variants": VARIANTS,
                "training": training,
                "decoding": decoding,
                "targets": targets,
                "seconds": elapsed,
            },
        )
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
