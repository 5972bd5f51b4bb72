"""The TP-Transformer training step against the code of commit 6486a0a (which equals the official step), in one run.

Usage: ``python benchmarks/training_step.py [--baseline REV] [--threads N] [--rounds R] [--quick] [--json FILE]``

The shapes are those of ``precision.py`` (d_model 256, 8 heads, d_ff 1024, 3+3 layers, batch 64 of random sources of
60 tokens and targets of 20, dropout 0), with TP-Attention and, for comparison, standard attention. A step is
forward, cross-entropy, backward and an Adam step. ``--baseline`` is unpacked with ``git archive`` (as in
``decoding.py``) and each code base runs in its own worker process with the same Python, thread count and seeded
weights; the workers take turns, round after round. Compared with the baseline's float32 step:

- today's float32 step;
- today's step as ``train.precision: bf16-mixed`` trains it: bf16 autocast, the forward in
  ``neuromath.nn.precision.training_attention`` (the math attention kernel under bf16 on the CPU);
- the same without ``training_attention`` (bf16 with the fused attention kernel), to show what that choice is worth.

With ``--compile`` (meant for a GPU; each compile takes tens of seconds), three more settings of today's code:
float32 and bf16 through ``train.compile`` (``neuromath.nn.compiling.compile_in_place``), and bf16 compiled with
``mode="reduce-overhead"`` (CUDA graphs on CUDA). ``--device cuda`` runs both workers on the GPU (timed between
``torch.cuda.synchronize`` calls); ``--baseline-dir`` names a folder that already holds the baseline's ``neuromath``
(for a machine without the git history, such as a lent GPU: ``git archive 6486a0a neuromath | tar -x -C DIR``).

Printed: medians, speed-ups over the baseline, and the first step's loss of each setting against the baseline's.
A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decoding import BASELINE, REPOSITORY, Worker, unpack  # noqa: E402  (baseline workers as decoding.py's)

SETTINGS = (  # (code, precision, training_attention, compile: None, "default" or "reduce-overhead")
    ("baseline", "32-true", False, None), ("today", "32-true", True, None), ("today", "bf16-mixed", True, None),
    ("today", "bf16-mixed", False, None),
)
COMPILED = (("today", "32-true", True, "default"), ("today", "bf16-mixed", True, "default"),
            ("today", "bf16-mixed", True, "reduce-overhead"))


def setting_name(setting: tuple) -> str:
    code, precision, kernel, compiled = setting
    return " ".join(map(str, (code, precision, kernel))) + (f" compiled:{compiled}" if compiled else "")


def worker(threads: int, batch_size: int, device: str) -> None:
    """Answer one JSON line per request ``{"attention", "precision", "kernel", "compile"}``: the seconds and loss of
    one step."""
    import torch
    import torch.nn.functional as F
    from attention import collate
    from precision import build, random_pairs

    from neuromath.nn.precision import autocast

    try:
        from neuromath.nn.precision import training_attention
    except ImportError:  # the baseline has no such choice
        training_attention = None
    torch.set_num_threads(threads)
    batch = collate(random_pairs(batch_size, 60, 20, torch.Generator().manual_seed(0)))
    batch = {key: value.to(device) for key, value in batch.items()}
    kind = torch.device(device).type

    def synchronize():
        if kind == "cuda":
            torch.cuda.synchronize()

    models = {}
    for line in sys.stdin:
        request = json.loads(line)
        compiled = request.get("compile")
        key = (request["attention"], request["precision"], request["kernel"], compiled)
        if key not in models:
            model = build(request["attention"], 0).to(device)
            if compiled == "default":
                from neuromath.nn.compiling import compile_in_place

                compile_in_place(model, device)
            elif compiled:
                model.compile(dynamic=None, mode=compiled)
            models[key] = (model, torch.optim.Adam(model.parameters(), lr=1e-4))
        model, optimizer = models[key]
        kernels = training_attention if request["kernel"] and training_attention else None
        synchronize()
        start = time.perf_counter()
        if compiled == "reduce-overhead" and kind == "cuda":
            torch.compiler.cudagraph_mark_step_begin()
        with autocast(request["precision"], device):
            with kernels(kind) if kernels else contextlib.nullcontext():
                logits = model(batch)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), batch["target_out"].flatten(), ignore_index=0)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        synchronize()
        seconds = time.perf_counter() - start
        print(json.dumps({"seconds": seconds, "loss": float(loss.detach())}), flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help=f"git revision to compare with (default {BASELINE})")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads of each worker (default 2)")
    parser.add_argument("--rounds", type=int, default=7, help="measured steps per setting (default 7)")
    parser.add_argument("--attention", default="tp,standard", help="comma list of kernels (default tp,standard)")
    parser.add_argument("--quick", action="store_true", help="batch 8 and 2 rounds: a smoke run")
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements to this JSON file")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    parser.add_argument("--compile", action="store_true", help="also today's compiled steps (meant for a GPU)")
    parser.add_argument("--baseline-dir", type=Path, default=None,
                        help="a folder that holds the baseline's neuromath package (instead of git archive)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=64, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.batch, args.rounds = 8, 2
    if args.worker:
        worker(args.threads, args.batch, args.device)
        return 0
    settings = SETTINGS + (COMPILED if args.compile else ())
    report = {"baseline": args.baseline, "threads": args.threads, "rounds": args.rounds, "batch": args.batch,
              "device": args.device}
    with tempfile.TemporaryDirectory() as folder:
        size = ["--batch", str(args.batch), "--device", args.device]
        baseline_root = args.baseline_dir.resolve() if args.baseline_dir else unpack(args.baseline, Path(folder))
        workers = {"baseline": Worker(__file__, baseline_root, args.threads, size),
                   "today": Worker(__file__, REPOSITORY, args.threads, size)}
        print(f"training step on {args.device}, batch {args.batch} (source 60, target 20), d 256, 3+3 layers; "
              f"{args.threads} threads per worker; baseline {args.baseline}; medians of {args.rounds} rounds\n")
        print("| attention | " + " | ".join(setting_name(s) for s in settings) + " | first-step loss vs baseline |")
        print("|---|" + "---|" * (len(settings) + 1))
        for attention in args.attention.split(","):
            seconds = {setting: [] for setting in settings}
            first = {}
            for setting in settings:  # warm-up (and compiling); the first step's loss is the same weights' loss
                code, precision, kernel, compiled = setting
                for _ in range(3 if compiled else 1):  # CUDA graphs record at the second or third call
                    answer = workers[code].ask(attention=attention, precision=precision, kernel=kernel,
                                               compile=compiled)
                    first.setdefault(setting, answer["loss"])
            for _ in range(args.rounds):
                for setting in settings:
                    code, precision, kernel, compiled = setting
                    answer = workers[code].ask(attention=attention, precision=precision, kernel=kernel,
                                               compile=compiled)
                    seconds[setting].append(answer["seconds"])
            median = {setting: statistics.median(values) for setting, values in seconds.items()}
            base = median[settings[0]]
            cells = [f"{median[s]:.4f} s ({base / median[s]:.2f}x)" for s in settings[1:]]
            gaps = max(abs(first[s] - first[settings[0]]) for s in settings[1:])
            print(f"| {attention} | {base:.4f} s | " + " | ".join(cells) + f" | largest |diff| {gaps:.1e} |",
                  flush=True)
            report[attention] = {"seconds_median": {setting_name(s): median[s] for s in settings},
                                 "seconds_all": {setting_name(s): seconds[s] for s in settings},
                                 "speedup_over_baseline": {setting_name(s): base / median[s] for s in settings[1:]},
                                 "first_step_loss": {setting_name(s): first[s] for s in settings}}
            if args.json is not None:
                args.json.write_text(json.dumps(report, indent=1))
        for process in workers.values():
            process.close()
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
