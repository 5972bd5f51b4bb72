"""bf16-mixed against float32 on the CPU: Transformer training steps and beam search, measured in one run.

Usage: ``python benchmarks/precision.py [--quick] [--threads N] [--json FILE] [--seed S]``

The shapes are those of the TP-Transformer's training step measured in the speed issue: d_model 256, 8 heads,
d_ff 1024, 3 encoder and 3 decoder layers, batch 64 of random sources of 60 tokens and targets of 20, dropout 0,
built through ``neuromath.models.build_model``; once with standard attention and once with TP-Attention. A step
is forward, cross-entropy, backward and an Adam step; under bf16 the forward and loss run in
``neuromath.nn.precision.autocast("bf16-mixed")``, as Lightning's ``bf16-mixed`` plugin does (weights and the
optimiser stay float32). Beam search (width 10, 16 sources of 40 tokens, 30 forced steps) runs the same way.

The two precisions are measured round-robin, repeat after repeat, so that machine noise falls on both; reported
are medians and the ratio bf16 / fp32 (below 1: bf16 is faster), and how far bf16's first-batch logits and beam
outputs are from fp32's. A script, not a test: it prints numbers and exits 0 unless something breaks.
``cpu_supports_bf16`` says whether this CPU has native bf16 (AVX512-BF16 or AMX); without it bf16 is emulated
and the ratio is above 1, which is why ``train.precision: auto`` keeps float32 there.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from attention import NoEosModel, collate  # noqa: E402  (the benchmarks share their synthetic data)

from neuromath.config import ModelConfig  # noqa: E402
from neuromath.decoding.beam import beam_search  # noqa: E402
from neuromath.models import ModelInputs, build_model  # noqa: E402
from neuromath.nn.precision import autocast, cpu_supports_bf16  # noqa: E402

try:
    from neuromath.nn.precision import training_attention
except ImportError:  # an older neuromath: the baseline workers of decoding.py and training_step.py import this file
    training_attention = None
from neuromath.text import Vocabulary  # noqa: E402
from neuromath.text.vocabulary import SPECIALS  # noqa: E402

VOCAB = 40
SHAPE = dict(d_model=256, n_heads=8, d_ff=1024, n_encoder_layers=3, n_decoder_layers=3, dropout=0.0, max_len=128)
COMPARED = ("32-true", "bf16-mixed")


def random_pairs(n: int, source_length: int, target_length: int, generator: torch.Generator) -> list:
    low = len(SPECIALS)  # ordinary tokens only
    pairs = []
    for _ in range(n):
        source = torch.randint(low, VOCAB, (source_length,), generator=generator).tolist()
        target = torch.randint(low, VOCAB, (target_length,), generator=generator).tolist()
        pairs.append((source + [Vocabulary.eos_id], [Vocabulary.bos_id] + target + [Vocabulary.eos_id]))
    return pairs


def build(attention: str, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    config = ModelConfig(**SHAPE, **({"attention": attention} if attention != "standard" else {}))
    return build_model(config, ModelInputs(VOCAB, VOCAB, Vocabulary.pad_id))


def step(model, optimizer, batch: dict, precision: str) -> float:
    with autocast(precision, "cpu"):
        # as training runs it: the math attention kernel under bf16 on the CPU
        with training_attention("cpu") if training_attention else contextlib.nullcontext():
            logits = model(batch)
        loss = F.cross_entropy(logits.flatten(0, 1).float(), batch["target_out"].flatten(),
                               ignore_index=Vocabulary.pad_id)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return float(loss.detach())


def measure_training(attention: str, batch: dict, seed: int, warmup: int, repeats: int) -> dict:
    """Median step seconds per precision; both models start from the same weights."""
    models = {name: build(attention, seed) for name in COMPARED}
    with torch.no_grad(), autocast("bf16-mixed", "cpu"):
        bf16_logits = models["bf16-mixed"](batch).float()
    with torch.no_grad():
        fp32_logits = models["32-true"](batch)
    optimizers = {name: torch.optim.Adam(models[name].parameters(), lr=1e-4) for name in COMPARED}
    for name in COMPARED:
        for _ in range(warmup):
            step(models[name], optimizers[name], batch, name)
    seconds = {name: [] for name in COMPARED}
    for _ in range(repeats):
        for name in COMPARED:
            start = time.perf_counter()
            step(models[name], optimizers[name], batch, name)
            seconds[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "step_seconds": medians,
        "ratio_bf16_to_fp32": medians["bf16-mixed"] / medians["32-true"],
        "first_batch_logits_max_abs_difference": float((bf16_logits - fp32_logits).abs().max()),
        "first_batch_logits_scale": float(fp32_logits.abs().max()),
        "step_seconds_all": seconds,
    }


def measure_beam(attention: str, batch: dict, seed: int, repeats: int, max_len: int) -> dict:
    model = build(attention, seed).eval()
    wrapped = NoEosModel(model)
    seconds = {name: [] for name in COMPARED}
    outputs = {}
    for _ in range(repeats):
        for name in COMPARED:
            start = time.perf_counter()
            with autocast(name, "cpu"):
                hypotheses = beam_search(wrapped, batch, 10, max_len, nbest=1)
            seconds[name].append(time.perf_counter() - start)
            outputs[name] = [row[0] for row in hypotheses]
    same = sum(a.tokens == b.tokens for a, b in zip(outputs["32-true"], outputs["bf16-mixed"]))
    score_gap = max(abs(a.normalized - b.normalized) for a, b in zip(outputs["32-true"], outputs["bf16-mixed"]))
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "seconds": medians,
        "ratio_bf16_to_fp32": medians["bf16-mixed"] / medians["32-true"],
        "same_best_hypothesis": f"{same} of {len(outputs['32-true'])}",
        "best_score_max_abs_difference": score_gap,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="batch 8 and 2 rounds: a smoke run")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's own)")
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements to this JSON file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(args.seed)
    batch_size, repeats, warmup = (8, 2, 1) if args.quick else (64, 7, 2)
    train_batch = collate(random_pairs(batch_size, 60, 20, generator))
    decode_batch = collate(random_pairs(4 if args.quick else 16, 40, 1, generator))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, cpu_supports_bf16: {cpu_supports_bf16()}")
    print(f"shapes: {SHAPE}; training batch {batch_size} (source 60, target 20); beam 10 over "
          f"{decode_batch['source'].shape[0]} sources of 40, 30 steps\n")
    report = {"cpu_supports_bf16": cpu_supports_bf16(), "threads": torch.get_num_threads(), "quick": args.quick}
    print("| model | what | fp32 (s) | bf16 (s) | bf16 / fp32 | bf16 vs fp32 |")
    print("|---|---|---|---|---|---|")
    for attention in ("standard", "tp"):
        training = measure_training(attention, train_batch, args.seed, warmup, repeats)
        beam = measure_beam(attention, decode_batch, args.seed, max(1, repeats // 2), 30)
        report[attention] = {"training": training, "beam": beam}
        difference = (f"logits max |diff| {training['first_batch_logits_max_abs_difference']:.3f} "
                      f"(scale {training['first_batch_logits_scale']:.2f})")
        print(f"| {attention} | training step | {training['step_seconds']['32-true']:.3f} | "
              f"{training['step_seconds']['bf16-mixed']:.3f} | {training['ratio_bf16_to_fp32']:.2f} | {difference} |")
        print(f"| {attention} | beam 10 | {beam['seconds']['32-true']:.3f} | {beam['seconds']['bf16-mixed']:.3f} | "
              f"{beam['ratio_bf16_to_fp32']:.2f} | same best {beam['same_best_hypothesis']}, score |diff| "
              f"{beam['best_score_max_abs_difference']:.1e} |")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
