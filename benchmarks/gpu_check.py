"""The GPU check: run it whenever a device machine is lent. One script, one JSON, at most about 8 minutes on one GPU.

Usage: ``python benchmarks/gpu_check.py [--device cuda] [--steps 20] [--json FILE] [--quick] [--skip SECTION ...]``

Sections (each runs on its own: one that fails is recorded with its error and the others still run):

1. ``steps``: the shipped presets of each task family (``word_problems/transformer``, ``word_problems/graph2tree``,
   ``mathematics_dataset/tp_transformer``, ``identities/tree_lstm``), built as training builds them, on generated
   data; ``--steps`` training steps (forward, loss, backward, Adam) after two warm-up steps, in float32 and in
   bf16-mixed (``neuromath.nn.precision.autocast``), eager and compiled as ``train.compile`` compiles them
   (``neuromath.nn.compiling``; sequence models only: the Tree-LSTM did not compile in 290 s on the first lent H100).
   Reported: the median step in ms and target tokens per second (trees per second for the tree classifier), and the
   compile time of the first compiled steps. The step settings run last, eager ones first, and none starts after
   ``--budget`` seconds of the check; the JSON is written after every section and setting.
2. ``agreement``: the same weights' forward pass on the CPU and on the device, float32: the largest absolute
   difference of the logits (each preset of section 1).
3. ``ddp``: ``neuromath train`` with ``train.accelerator=gpu train.devices=1 train.strategy=ddp`` for 30 steps of
   the word-problem Transformer preset, through the same launcher as on the CPU: its return code and seconds.
4. ``train_compiled``: ``neuromath train`` of the same preset for ``--train-steps`` steps, eager float32 and bf16
   compiled with CUDA graphs (``train.compile_mode: reduce-overhead``, ``train.length_multiple: 8``): return codes,
   seconds and the last validation loss of each. The steps section adds the same CUDA-graph setting to its table.
5. ``mfu``: the model FLOPs utilisation of the TP-Transformer at the paper's size
   (``mathematics_dataset/tp_transformer_paper``): the batch doubles from 64 while a bf16-mixed training step fits in
   memory (at most ``--mfu-max-batch``, none past ``--budget``; float32 on a CPU without bf16); at the largest that
   fits, the FLOPs of one step are counted by ``torch.utils.flop_counter`` and divided by the median step time and
   the device's dense bf16 peak (``PEAK_TFLOPS`` by device name, or ``--peak-tflops``). Batches repeat generated
   problems, so every row has their lengths.
6. ``tree_forcing``: the goal-tree solvers' training step (``word_problems/graph2tree`` and ``word_problems/gts``,
   batch ``--batch``) with teacher forcing one node per step (``model.tree_forcing: nodes``, the default) and one
   tree depth per step (``levels``), float32 and bf16-mixed, eager; and the encoder alone (forward and backward of
   ``encode``, float32), the floor a faster decoder approaches. The issue's bar: at most 20 ms per batch-64
   Graph2Tree step on an H100 or H200.
7. ``serve``: the batched throughput of ``Solver.solve_many`` on the device (problems per second, one by one and in
   batches of 64), the way ``neuromath serve`` answers.

``--device cpu --quick`` is a smoke run of every section on a CPU: two steps, small batches, two presets and no
compile (compiling the four presets takes minutes on a CPU; ``--compile`` keeps it). The numbers come from a lent
GPU; every number is measured in this one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from neuromath.api import Solver
from neuromath.config import load_config, save_config, why_not_applicable
from neuromath.models import build_task_model
from neuromath.models.batching import EncodedExamples, collate, move_batch
from neuromath.models.classifiers import EncodedEquations, build_classifier, make_collate, node_vocabulary
from neuromath.nn.compiling import begin_graph_step, compile_in_place
from neuromath.nn.precision import autocast, cpu_supports_bf16, training_attention
from neuromath.tasks import get_task
from neuromath.text import Vocabulary

# dense bf16 tensor-core peaks (TFLOPS) by a part of the device's name; the first that matches counts
PEAK_TFLOPS = (("H200", 989.0), ("H100 PCIe", 756.0), ("H100", 989.0), ("A100", 312.0), ("L4", 121.0))
MFU_PRESET = "mathematics_dataset/tp_transformer_paper"
# graph2tree last: its goal-tree decoder recompiles under torch.compile until dynamo's limit, the slowest setting
PRESETS = ("word_problems/transformer", "mathematics_dataset/tp_transformer", "identities/tree_lstm",
           "word_problems/graph2tree")
PRECISIONS = ("32-true", "bf16-mixed")
# quick sections first; compiled steps take longest
SECTIONS = ("agreement", "ddp", "train_compiled", "serve", "tree_forcing", "mfu", "steps")
TREE_PRESETS = ("word_problems/graph2tree", "word_problems/gts")
FORCINGS = ("nodes", "levels")


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Workload:
    """A preset's model, its optimiser and a list of batches on the device, with the loss of one step."""

    def __init__(self, preset: str, device: torch.device, batch_size: int, n_batches: int, seed: int = 0,
                 sets: list[str] | None = None):
        self.preset, self.device = preset, device
        self.config = load_config(preset, sets or [], strict=True)
        task = get_task(self.config.data.task)
        rng = random.Random(seed)
        torch.manual_seed(seed)
        if self.config.data.task == "identities":
            examples = task.generate(batch_size * n_batches, rng, max_depth=7)
            vocab = node_vocabulary(examples)
            self.model = build_classifier(self.config.model, vocab)
            encoded = EncodedEquations(examples, vocab, self.model.input_kind)
            join = make_collate(self.model.input_kind)
            self.unit = "trees"
        else:
            task = task.configured(self.config.data)
            examples = task.generate(batch_size * n_batches, rng, **task.generate_options(self.config.data, "train"))
            source = Vocabulary.build((task.source_tokens(e) for e in examples), level=task.vocab_level)
            target = Vocabulary.build((task.target_tokens(e) for e in examples), level=task.vocab_level)
            self.model = build_task_model(self.config.model, task, source, target)
            encoded = EncodedExamples(examples, task, source, target)
            join = collate
            self.unit = "target tokens"
        self.batches = [move_batch(join([encoded[i] for i in range(start, min(start + batch_size, len(encoded)))]),
                                   device) for start in range(0, len(encoded), batch_size)]
        self.model.to(device).train()
        # fused, as training's ``neuromath.training.module.adam`` runs it wherever every parameter is a float tensor
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4,
                                          fused=all(p.is_floating_point() for p in self.model.parameters()) or None)

    def units(self, batch: dict) -> int:
        if "labels" in batch:
            return int(batch["labels"].shape[0] * 2)  # two sides (trees) per equation
        return int(batch["target_out"].ne(0).sum())

    def loss(self, forward, batch: dict) -> torch.Tensor:
        output = forward(batch)
        if "labels" in batch:
            return F.binary_cross_entropy_with_logits(output.float(), batch["labels"])
        return F.cross_entropy(output.flatten(0, 1).float(), batch["target_out"].flatten(), ignore_index=0)


def time_steps(workload: Workload, precision: str, compiled: str | None, steps: int) -> dict:
    """``compiled``: None (eager) or ``train.compile_mode`` (default, or reduce-overhead for CUDA graphs)."""
    forward = compile_in_place(workload.model, workload.device, compiled) if compiled else workload.model
    batches = workload.batches
    started = time.perf_counter()
    for index in range(2 if compiled != "reduce-overhead" else 2 * len(batches)):  # warm-up (compiling; CUDA graphs
        # are recorded at a shape's second or third step)
        step(workload, forward, batches[index % len(batches)], precision)
    synchronize(workload.device)
    warmup = time.perf_counter() - started
    times, units = [], 0
    for index in range(steps):
        batch = batches[index % len(batches)]
        synchronize(workload.device)
        start = time.perf_counter()
        step(workload, forward, batch, precision)
        synchronize(workload.device)
        times.append(time.perf_counter() - start)
        units += workload.units(batch)
    median = statistics.median(times)
    return {"median_ms": round(1000 * median, 2), "per_second": round(units / sum(times), 1),
            "unit": workload.unit, "warmup_s": round(warmup, 2)}


def step(workload: Workload, forward, batch: dict, precision: str) -> None:
    workload.optimizer.zero_grad(set_to_none=True)
    begin_graph_step(forward, workload.device)  # as SequenceModule.loss does under CUDA graphs
    with autocast(precision, workload.device), training_attention(workload.device):  # as training runs it
        loss = workload.loss(forward, batch)
    loss.backward()
    workload.optimizer.step()


def section_steps(args, device: torch.device) -> dict:
    """Every preset eager first (both precisions), then compiled: compiling is the slow part, and a setting that would
    start after ``--budget`` seconds of the whole check is recorded as skipped, so the check ends inside its lease."""
    results = {preset: {} for preset in args.presets}
    settings = [(precision, None) for precision in PRECISIONS]
    if args.compile:
        settings += [(precision, "default") for precision in PRECISIONS] + [("bf16-mixed", "reduce-overhead")]
    # train.compile is for sequence models: the tree classifiers' level loop did not compile in 290 s
    configs = {preset: load_config(preset, strict=True) for preset in args.presets}
    compilable = {preset: why_not_applicable("train.compile", config.data.task, config.model.name) is None
                  for preset, config in configs.items()}
    for precision, compiled in settings:
        for preset in args.presets:
            name = precision + {None: "", "default": " compiled", "reduce-overhead": " compiled, CUDA graphs"}[compiled]
            if compiled and not compilable[preset]:
                results[preset][name] = {"skipped": "train.compile does not apply to this model"}
            elif time.perf_counter() - args.started > args.budget:
                results[preset][name] = {"skipped": f"past the time budget of {args.budget} s"}
            else:
                try:
                    workload = Workload(preset, device, args.batch, args.batches)
                    results[preset][name] = time_steps(workload, precision, compiled, args.steps)
                except Exception as error:  # noqa: BLE001 - recorded, the check goes on
                    results[preset][name] = {"error": f"{type(error).__name__}: {error}"[:500]}
            print(f"steps {preset} {name}: {results[preset][name]}", flush=True)
            args.save({"steps": results})
    return results


def section_agreement(args, device: torch.device) -> dict:
    results = {}
    for preset in args.presets:
        try:
            workload = Workload(preset, torch.device("cpu"), args.batch, 1)
            workload.model.eval()
            batch = workload.batches[0]
            with torch.no_grad():
                on_cpu = workload.model(batch).float()
                workload.model.to(device)
                on_device = workload.model(move_batch(batch, device)).float().cpu()
            results[preset] = {"max_abs_difference": float((on_cpu - on_device).abs().max()),
                               "max_abs_logit": float(on_cpu.abs().max())}
        except Exception as error:  # noqa: BLE001
            results[preset] = {"error": f"{type(error).__name__}: {error}"[:500]}
        print(f"agreement {preset}: {results[preset]}", flush=True)
    return results


def section_ddp(args, device: torch.device) -> dict:
    accelerator = "gpu" if device.type == "cuda" else "cpu"
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "neuromath", "train", "--config", "word_problems/transformer",
                   "--out", str(Path(folder) / "run"), "--set", f"train.accelerator={accelerator}",
                   "--set", "train.devices=1", "--set", "train.strategy=ddp", "--set", "train.max_steps=30",
                   "--set", "train.max_epochs=-1", "--set", "train.val_every_steps=30", "--set", "train.progress=false",
                   "--set", "data.generate_train=2000", "--set", "data.generate_valid=100",
                   "--set", "data.generate_test=100"]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.ddp_timeout)
        seconds = time.perf_counter() - started
        summary_path = Path(folder) / "run" / "summary.json"
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    result = {"returncode": done.returncode, "seconds": round(seconds, 1), "steps": summary.get("steps"),
              "processes": summary.get("processes"), "stderr_tail": done.stderr[-800:] if done.returncode else ""}
    print(f"ddp: {result}", flush=True)
    return result


def section_train_compiled(args, device: torch.device) -> dict:
    """``neuromath train`` of the word-problem Transformer for 200 steps, eager float32 and then bf16 compiled with CUDA
    graphs (``train.compile_mode: reduce-overhead``, ``train.length_multiple: 8``): return codes, seconds (start-up and
    compiling included) and the last validation loss of each."""
    accelerator = "gpu" if device.type == "cuda" else "cpu"
    results = {}
    settings = {"eager": [], "compiled": ["--set", "train.compile=true", "--set", "train.compile_mode=reduce-overhead",
                                         "--set", "train.length_multiple=8", "--set", "train.precision=bf16-mixed"]}
    for name, extra in settings.items():
        with tempfile.TemporaryDirectory() as folder:
            command = [sys.executable, "-m", "neuromath", "train", "--config", "word_problems/transformer",
                       "--out", str(Path(folder) / "run"), "--set", f"train.accelerator={accelerator}",
                       "--set", f"train.max_steps={args.train_steps}", "--set", "train.max_epochs=-1",
                       "--set", f"train.val_every_steps={args.train_steps}", "--set", "train.progress=false",
                       "--set", "data.generate_train=4000", "--set", "data.generate_valid=200",
                       "--set", "data.generate_test=100", *extra]
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.ddp_timeout)
            seconds = time.perf_counter() - started
            metrics = Path(folder) / "run" / "metrics.csv"
            losses = [row.split(",") for row in metrics.read_text().splitlines()] if metrics.exists() else []
            header = losses[0] if losses else []
            val = [float(row[header.index("val_loss")]) for row in losses[1:]
                   if "val_loss" in header and row[header.index("val_loss")]]
        results[name] = {"returncode": done.returncode, "seconds": round(seconds, 1),
                         "last_val_loss": val[-1] if val else None,
                         "stderr_tail": done.stderr[-800:] if done.returncode else ""}
        print(f"train_compiled {name}: {results[name]}", flush=True)
    return results



def tiled(batch: dict, size: int) -> dict:
    """``batch`` with its rows repeated to ``size`` rows (every tensor whose first dimension is the batch's)."""
    rows = batch["target_out"].size(0)
    repeats = -(-size // rows)
    return {key: value.repeat(repeats, *([1] * (value.dim() - 1)))[:size]
            if torch.is_tensor(value) and value.dim() and value.size(0) == rows else value
            for key, value in batch.items()}


def peak_tflops(args, device: torch.device) -> float | None:
    if args.peak_tflops:
        return args.peak_tflops
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    return next((peak for part, peak in PEAK_TFLOPS if part in name), None)


def section_mfu(args, device: torch.device) -> dict:
    """The TP-Transformer at the paper's size: the largest batch whose bf16-mixed step fits, its step time, FLOPs
    and model FLOPs utilisation (see the module docstring)."""
    if time.perf_counter() - args.started > args.budget:
        return {"skipped": f"past the time budget of {args.budget} s"}
    # bf16 where the device computes it; a CPU without it (a smoke run) would emulate it, minutes a step
    precision = "bf16-mixed" if device.type == "cuda" or cpu_supports_bf16() else "32-true"
    workload = Workload(MFU_PRESET, device, 64 if not args.quick else 4, 1)
    base = workload.batches[0]
    fits, size, tried = None, base["target_out"].size(0), []
    while size <= args.mfu_max_batch and (fits is None or time.perf_counter() - args.started <= args.budget):
        workload.batches = [tiled(base, size)]
        try:
            step(workload, workload.model, workload.batches[0], precision)
            synchronize(device)
            fits = size
            tried.append({"batch": size, "fits": True})
        except torch.OutOfMemoryError:
            tried.append({"batch": size, "fits": False})
            break
        finally:
            workload.optimizer.zero_grad(set_to_none=True)
            if device.type == "cuda":
                torch.cuda.empty_cache()
        size *= 2
    if fits is None:
        return {"preset": MFU_PRESET, "tried": tried, "error": "not even the smallest batch fits"}
    workload.batches = [tiled(base, fits)]
    with FlopCounterMode(display=False) as counter:
        step(workload, workload.model, workload.batches[0], precision)
    flops = counter.get_total_flops()
    timed = time_steps(workload, precision, "default" if args.compile else None, args.steps)
    seconds = timed["median_ms"] / 1000
    peak = peak_tflops(args, device)
    return {"preset": MFU_PRESET, "tried": tried, "batch": fits, "precision": precision, "compiled": bool(args.compile),
            "parameters": sum(p.numel() for p in workload.model.parameters()),
            "flops_per_step": flops, "achieved_tflops": round(flops / seconds / 1e12, 2), "peak_tflops": peak,
            "mfu": round(flops / seconds / (peak * 1e12), 4) if peak else None, **timed}


def time_encoder(workload: Workload, steps: int) -> dict:
    """The median forward and backward of the model's ``encode`` alone (float32)."""
    model, times = workload.model, []
    for index in range(steps + 2):
        batch = workload.batches[index % len(workload.batches)]
        synchronize(workload.device)
        start = time.perf_counter()
        memory = model.encode(batch)
        (memory["states"].float().sum() + memory["root"].float().sum()).backward()
        model.zero_grad(set_to_none=True)
        synchronize(workload.device)
        times.append(time.perf_counter() - start)
    return {"median_ms": round(1000 * statistics.median(times[2:]), 2)}


def section_tree_forcing(args, device: torch.device) -> dict:
    """The goal-tree presets' step with node-by-node and level-by-level teacher forcing (module docstring)."""
    results = {}
    for preset in TREE_PRESETS:
        results[preset] = {}
        for forcing in FORCINGS:
            for precision in PRECISIONS:
                name = f"{forcing} {precision}"
                if time.perf_counter() - args.started > args.budget:
                    results[preset][name] = {"skipped": f"past the time budget of {args.budget} s"}
                    continue
                try:
                    workload = Workload(preset, device, args.batch, args.batches,
                                        sets=[f"model.tree_forcing={forcing}"])
                    results[preset][name] = time_steps(workload, precision, None, args.steps)
                except Exception as error:  # noqa: BLE001 - recorded, the check goes on
                    results[preset][name] = {"error": f"{type(error).__name__}: {error}"[:500]}
                print(f"tree_forcing {preset} {name}: {results[preset][name]}", flush=True)
                args.save({"tree_forcing": results})
        encoder = "encoder only 32-true"
        if time.perf_counter() - args.started > args.budget:
            results[preset][encoder] = {"skipped": f"past the time budget of {args.budget} s"}
        else:
            try:
                results[preset][encoder] = time_encoder(Workload(preset, device, args.batch, args.batches), args.steps)
            except Exception as error:  # noqa: BLE001 - recorded, the check goes on
                results[preset][encoder] = {"error": f"{type(error).__name__}: {error}"[:500]}
        print(f"tree_forcing {preset} encoder only: {results[preset][encoder]}", flush=True)
    return results


def section_serve(args, device: torch.device) -> dict:
    config = load_config("word_problems/transformer", strict=True)
    task = get_task(config.data.task)
    examples = task.generate(2000, random.Random(1))
    source = Vocabulary.build((task.source_tokens(e) for e in examples), level=task.vocab_level)
    target = Vocabulary.build((task.target_tokens(e) for e in examples), level=task.vocab_level)
    texts = [example.text for example in task.generate(args.serve_problems, random.Random(2))]
    with tempfile.TemporaryDirectory() as folder:
        run = Path(folder)
        save_config(config, run / "config.yaml")
        source.save(run / "source_vocab.json")
        target.save(run / "target_vocab.json")
        torch.manual_seed(0)
        torch.save(build_task_model(config.model, task, source, target).state_dict(), run / "model.pt")
        solver = Solver(run, device=str(device))
        result = {}
        for batch in (1, 64):
            solver.solve_many(texts[:batch])  # warm-up
            synchronize(device)
            start = time.perf_counter()
            for offset in range(0, len(texts), batch):
                solver.solve_many(texts[offset:offset + batch])
            synchronize(device)
            result[f"batch_{batch}"] = {"problems_per_second": round(len(texts) / (time.perf_counter() - start), 1)}
    print(f"serve: {result}", flush=True)
    return result


def environment(device: torch.device) -> dict:
    info = {"python": platform.python_version(), "torch": torch.__version__, "device": str(device),
            "cpu_count": os.cpu_count(), "threads": torch.get_num_threads()}
    if device.type == "cuda":
        info.update({"gpu": torch.cuda.get_device_name(device), "cuda": torch.version.cuda,
                     "bf16": torch.cuda.is_bf16_supported()})
    return info


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int, default=20, help="timed training steps per setting (default 20)")
    parser.add_argument("--batch", type=int, default=64, help="examples per batch (default 64)")
    parser.add_argument("--batches", type=int, default=4, help="distinct batches cycled through (default 4)")
    parser.add_argument("--serve-problems", dest="serve_problems", type=int, default=512)
    parser.add_argument("--ddp-timeout", dest="ddp_timeout", type=int, default=240)
    parser.add_argument("--train-steps", dest="train_steps", type=int, default=200,
                        help="steps of each train_compiled run (default 200)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 2 steps, small batches, 32 problems, two presets, no compile")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                        help="also time the steps under torch.compile (default: yes, except with --quick)")
    parser.add_argument("--skip", nargs="*", default=[], choices=SECTIONS, help="sections to leave out")
    parser.add_argument("--presets", nargs="*", default=None, choices=PRESETS, help="presets (default: all four)")
    parser.add_argument("--budget", type=float, default=400,
                        help="seconds after which no further step setting starts (default 400)")
    parser.add_argument("--mfu-max-batch", dest="mfu_max_batch", type=int, default=4096,
                        help="the largest batch the mfu section tries (default 4096)")
    parser.add_argument("--peak-tflops", dest="peak_tflops", type=float, default=None,
                        help="the device's dense bf16 peak, where its name is not in PEAK_TFLOPS")
    parser.add_argument("--json", default=None, help="where to write the JSON (default $OUT/gpu_check.json, else "
                                                     "benchmarks/gpu_check.json)")
    args = parser.parse_args(argv)
    args.presets = tuple(args.presets) if args.presets else PRESETS
    if args.quick:
        args.steps, args.batch, args.batches, args.serve_problems, args.train_steps = 2, 8, 2, 32, 10
        args.mfu_max_batch = 8
        args.presets = ("word_problems/transformer", "identities/tree_lstm")
    if args.compile is None:
        args.compile = not args.quick
    device = torch.device(args.device)
    report = {"environment": environment(device), "settings": {k: v for k, v in vars(args).items() if k != "json"}}
    out = Path(args.json) if args.json else (Path(os.environ["OUT"]) / "gpu_check.json" if os.environ.get("OUT")
                                             else Path(__file__).resolve().parent / "gpu_check.json")
    out.parent.mkdir(parents=True, exist_ok=True)

    def save(partial: dict | None = None) -> None:  # after each section and step setting: a killed check keeps its part
        report.update(partial or {})
        report["seconds"] = round(time.perf_counter() - args.started, 1)
        out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    args.started, args.save = time.perf_counter(), save
    sections = {"agreement": section_agreement, "ddp": section_ddp, "train_compiled": section_train_compiled,
                "serve": section_serve, "tree_forcing": section_tree_forcing, "mfu": section_mfu,
                "steps": section_steps}
    for name, run in sections.items():
        if name in args.skip:
            continue
        try:
            report[name] = run(args, device)
        except Exception as error:  # noqa: BLE001 - one section's failure is part of the report
            report[name] = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()[-2000:]}
            print(f"{name} failed: {error}", flush=True)
        save()
    print(f"written to {out} in {report['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
