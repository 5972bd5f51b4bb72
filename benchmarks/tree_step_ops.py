"""Ops per goal-tree training step, counted on the CPU against an earlier code base: what a launch-bound GPU step pays.

Usage: ``python benchmarks/tree_step_ops.py [--baseline REV_OR_DIR] [--presets P ...] [--forcings nodes levels]
[--batches K] [--quick] [--json FILE]``

On a GPU the goal-tree training steps wait on the host, not on the device: on an H200 a batch-64 Graph2Tree step
spent 42 ms of host time against 5.8 ms of kernels (``results/gpu-check/h200-2026-12-04-profile-5dc633f.log``).
Every aten op that is not a view costs a kernel launch and its dispatch and autograd bookkeeping, so the number of
those ops per step is what a change to the step's launches has to lower. Counting them needs no GPU, and the count
is the same on every machine and in every run, so a change can be checked here before a device is lent.

A ``TorchDispatchMode`` counts the ops of training steps as the GPU check runs them (``gpu_check.Workload`` and
``gpu_check.step``: generated problems, batch 64, float32, cross-entropy, backward, fused Adam), per phase: forward
(with the loss and the gradient that starts the backward), backward (ops run by an autograd node) and optimiser.
Only aten ops count, and not views (nor ``_unsafe_view``, a reshape), tensors made without being written
(``empty``), or the profiler's markers.

The encoder's recurrent network is replaced by one product with the same output shapes, on both sides: on a GPU it
is a few cuDNN calls a layer, while on the CPU it runs as a loop of ops a GPU never runs, which would drown the rest.
Dropout on the CPU draws its masks in several ops where CUDA runs one fused kernel; both sides count them alike. An
op is not a launch: a fused optimiser or a cuDNN call is one op and several kernels. The count is per step over
``--batches`` batches (each batch's tree shapes differ; both sides see the same ones), after one step that is not
counted (Adam makes its state then).

``--baseline`` is a revision (unpacked with ``git archive``) or a folder that holds a ``neuromath`` package; each
side runs in a process of its own. Printed per preset and forcing: the ops per step of both sides, per phase, and
baseline / today. A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from decoding import unpack  # noqa: E402  (an earlier revision's package, as the other baseline benchmarks unpack it)

PRESETS = ("word_problems/graph2tree", "word_problems/gts")
FORCINGS = ("nodes", "levels")
PHASES = ("forward", "backward", "optimizer")


def count_ops(step, optimizer) -> tuple[collections.Counter, collections.Counter]:
    """Run ``step()`` and count its ops that are neither views nor unwritten allocations: per phase, and per
    ``phase op`` name."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    uncounted = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "lift_fresh", "_unsafe_view"}
    in_optimizer = [False]

    class Counter(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.phases, self.names = collections.Counter(), collections.Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func.overloadpacket.__name__
            if func.namespace == "aten" and not func.is_view and name not in uncounted:
                if in_optimizer[0]:
                    phase = "optimizer"
                elif torch._C._current_autograd_node() is not None:
                    phase = "backward"
                else:
                    phase = "forward"
                self.phases[phase] += 1
                self.names[f"{phase} {name}"] += 1
            return func(*args, **(kwargs or {}))

    before = optimizer.register_step_pre_hook(lambda *_: in_optimizer.__setitem__(0, True))
    after = optimizer.register_step_post_hook(lambda *_: in_optimizer.__setitem__(0, False))
    try:
        with Counter() as counter:
            step()
    finally:
        before.remove()
        after.remove()
    return counter.phases, counter.names


def stand_in_for_the_encoder_rnn(model) -> None:
    """Replace ``run_packed`` in the model's module by one product of the recurrent network's output shapes."""
    import torch

    module = sys.modules[type(model).__module__]
    if not hasattr(module, "run_packed"):
        raise SystemExit(f"tree_step_ops.py: {module.__name__} has no run_packed to stand in for")

    def one_product(rnn, embedded, valid):
        directions = 2 if rnn.bidirectional else 1
        weight = torch.full((embedded.size(-1), directions * rnn.hidden_size), 0.01, dtype=embedded.dtype)
        states = embedded @ weight  # (B, S, directions * H)
        final = states[:, 0].reshape(-1, directions, rnn.hidden_size).transpose(0, 1)
        return states, final.repeat(rnn.num_layers, 1, 1)  # (layers * directions, B, H)

    module.run_packed = one_product


def worker(presets: list[str], forcings: list[str], batches: int) -> dict:
    """This process's counts (the ``neuromath`` on its path decides the side)."""
    import torch
    from gpu_check import Workload, step

    torch.set_num_threads(1)
    results = {}
    for preset in presets:
        for forcing in forcings:
            workload = Workload(preset, torch.device("cpu"), 64, batches + 1, sets=[f"model.tree_forcing={forcing}"])
            stand_in_for_the_encoder_rnn(workload.model)
            step(workload, workload.model, workload.batches[0], "32-true")  # Adam makes its state: not counted
            phases, names = collections.Counter(), collections.Counter()
            for batch in workload.batches[1: batches + 1]:
                counted, named = count_ops(lambda: step(workload, workload.model, batch, "32-true"),
                                           workload.optimizer)
                phases.update(counted)
                names.update(named)
            results[f"{preset.split('/')[1]} {forcing}"] = {
                "per_step": {phase: phases[phase] / batches for phase in PHASES},
                "per_step_total": sum(phases.values()) / batches,
                "ops": {name: count / batches for name, count in names.most_common()},
            }
    return results


def run_side(package_root: Path, args) -> dict:
    """``worker`` in a process whose ``neuromath`` is the one under ``package_root``."""
    environment = {**os.environ, "PYTHONPATH": str(package_root), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--batches", str(args.batches),
               "--presets", *args.presets, "--forcings", *args.forcings]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False, cwd=package_root)
    if done.returncode:
        raise SystemExit(f"tree_step_ops.py: the worker of {package_root} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def baseline_package(baseline: str, folder: Path) -> Path:
    """A folder holding the baseline's ``neuromath``: ``baseline`` itself when it is one, else the revision unpacked
    (``decoding.unpack``)."""
    if (Path(baseline) / "neuromath" / "__init__.py").is_file():
        return Path(baseline).resolve()
    return unpack(baseline, folder)


def summary(base: dict, today: dict) -> dict:
    """Per setting: each side's ops per step and baseline / today, overall and per phase."""
    rows = {}
    for setting, new in today.items():
        old = base.get(setting)
        if old is None:
            continue
        rows[setting] = {
            "baseline": old["per_step_total"], "today": new["per_step_total"],
            "baseline_over_today": round(old["per_step_total"] / new["per_step_total"], 3),
            "phases": {phase: {"baseline": old["per_step"][phase], "today": new["per_step"][phase]}
                       for phase in PHASES},
        }
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="HEAD", help="revision or folder with a neuromath package (default HEAD)")
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--forcings", nargs="+", default=list(FORCINGS), choices=FORCINGS)
    parser.add_argument("--batches", type=int, default=4, help="counted steps per setting (default 4)")
    parser.add_argument("--quick", action="store_true", help="graph2tree only, one counted step")
    parser.add_argument("--json", type=Path, default=None, help="also write the counts to this JSON file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.presets, args.forcings, args.batches)))
        return 0
    if args.quick:
        args.presets, args.batches = [PRESETS[0]], 1
    with tempfile.TemporaryDirectory() as folder:
        base = run_side(baseline_package(args.baseline, Path(folder)), args)
    today = run_side(ROOT, args)
    rows = summary(base, today)
    print(f"ops per training step (batch 64, float32, encoder RNN as one product), {args.batches} counted steps; "
          f"baseline {args.baseline}\n")
    print("| setting | baseline | today | baseline / today | forward | backward | optimizer |")
    print("|---|---:|---:|---:|---|---|---|")
    for setting, row in rows.items():
        phases = " | ".join(f"{row['phases'][p]['baseline']:.0f} -> {row['phases'][p]['today']:.0f}" for p in PHASES)
        print(f"| {setting} | {row['baseline']:.0f} | {row['today']:.0f} | {row['baseline_over_today']:.2f}x | "
              f"{phases} |")
    if args.json:
        args.json.write_text(json.dumps({"baseline": args.baseline, "batches": args.batches, "summary": rows,
                                         "baseline_counts": base, "today_counts": today}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
