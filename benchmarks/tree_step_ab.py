"""The goal-tree solvers' training step on a GPU against an earlier code base, in one run.

Usage: ``python benchmarks/tree_step_ab.py --baseline DIR [--rounds 5] [--steps 40] [--device cuda] [--json FILE]``
or ``python benchmarks/tree_step_ab.py --from-log LOG --json FILE``.

``--baseline`` is a folder holding an earlier ``neuromath`` package, made where git is, for instance with
``mkdir base && git archive 5dc633f neuromath | tar -x -C base`` (a device machine gets the working tree without its
history). Three sides take turns, one fresh process each, round after round, so the machine's noise falls on all:

- ``base``: the package under ``--baseline``;
- ``packed``: today's package with its bidirectional GRUs run packed, as before (``REALIGNED_ON_CUDA`` off);
- ``new``: today's package as it ships.

Each process builds ``word_problems/graph2tree`` and ``word_problems/gts`` with ``model.tree_forcing: levels`` on
generated problems (``gpu_check.Workload``: batch 64, four batches, fused Adam) and reports, per preset, the median
of 40 training steps (forward, loss, backward, Adam; after three warm-up steps) in float32 and in bf16-mixed, and the
median forward and backward of the encoder alone (20 after three). It prints one line per process, ``ROUND SIDE
{json}``; the summary gives each side's median over the rounds, the range, and the ratios ``base / new`` and ``packed
/ new``. ``--from-log`` rebuilds the summary from such lines (a log brought back from a device machine). ``--quick``
is a smoke run on the CPU: one round, Graph2Tree in float32, two steps.

A script, not a test: it prints numbers and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIDES = ("base", "packed", "new")
PRESETS = ("word_problems/graph2tree", "word_problems/gts")
PRECISIONS = ("32-true", "bf16-mixed")


def worker(device_name: str, steps: int, encoder_steps: int, quick: bool = False) -> dict:
    """One side's measurements in this process (the package on ``sys.path`` decides the side)."""
    import torch

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gpu_check import Workload, step, synchronize

    if os.environ.get("NEUROMATH_AB_PACKED"):
        import neuromath.nn.sequence_encoders as sequence_encoders

        sequence_encoders.REALIGNED_ON_CUDA = False
    device = torch.device(device_name)
    results = {}
    for preset in PRESETS[:1] if quick else PRESETS:
        workload = Workload(preset, device, 64, 4, sets=["model.tree_forcing=levels"])
        model, name = workload.model, preset.split("/")[1]
        for precision in PRECISIONS[:1] if quick else PRECISIONS:
            for index in range(3):
                step(workload, model, workload.batches[index % 4], precision)
            times = []
            for index in range(steps):
                synchronize(device)
                start = time.perf_counter()
                step(workload, model, workload.batches[index % 4], precision)
                synchronize(device)
                times.append(time.perf_counter() - start)
            results[f"{name} levels {precision}"] = round(1000 * statistics.median(times), 2)
        times = []
        for index in range(encoder_steps + 3):
            synchronize(device)
            start = time.perf_counter()
            memory = model.encode(workload.batches[index % 4])
            (memory["states"].sum() + memory["root"].sum()).backward()
            model.zero_grad()
            synchronize(device)
            times.append(time.perf_counter() - start)
        results[f"{name} encoder"] = round(1000 * statistics.median(times[3:]), 2)
    return results


def gpu_name(device: str) -> str | None:
    import torch

    return torch.cuda.get_device_name(device) if device.startswith("cuda") and torch.cuda.is_available() else None


def summary(rounds: list[dict]) -> dict:
    """Per measurement: each side's median over the rounds, its range, and the ratios to ``new``."""
    names = list(dict.fromkeys(name for entry in rounds for name in entry["results"]))
    table = {}
    for name in names:
        values = {side: [entry["results"][name] for entry in rounds if entry["side"] == side] for side in SIDES}
        medians = {side: statistics.median(found) for side, found in values.items() if found}
        row = {side: {"median_ms": medians[side], "min_ms": min(values[side]), "max_ms": max(values[side])}
               for side in medians}
        for side in ("base", "packed"):
            if side in medians and "new" in medians:
                row[f"{side}_over_new"] = round(medians[side] / medians["new"], 3)
        table[name] = row
    return table


def parse_log(path: Path) -> tuple[list[dict], list[str]]:
    """The worker lines of a log as rounds, and its other lines (what the run printed about its machine)."""
    rounds, other = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[0].isdigit() and parts[1] in SIDES and parts[2].startswith("{"):
            rounds.append({"round": int(parts[0]), "side": parts[1], "results": json.loads(parts[2])})
        elif line.strip():
            other.append(line.strip())
    if not rounds:
        raise SystemExit(f"{path}: no 'ROUND SIDE {{json}}' lines")
    return rounds, other


def print_summary(table: dict) -> None:
    print("| measurement | base ms | packed ms | new ms | base / new | packed / new |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, row in table.items():
        cells = [f"{row[side]['median_ms']:.1f}" if side in row else "" for side in SIDES]
        ratios = [f"{row[key]:.2f}x" if key in row else "" for key in ("base_over_new", "packed_over_new")]
        print(f"| {name} | {' | '.join(cells)} | {' | '.join(ratios)} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="folder holding the earlier neuromath package")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40, help="timed steps per setting (default 40)")
    parser.add_argument("--from-log", dest="from_log", type=Path, help="summarise the worker lines of a log")
    parser.add_argument("--quick", action="store_true", help="one round of two steps on the CPU: a smoke run")
    parser.add_argument("--json", type=Path, help="also write the rounds and the summary to this JSON file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    encoder_steps = 20
    if args.quick:
        args.device, args.rounds, args.steps, encoder_steps = "cpu", 1, 2, 2
    if args.worker:
        print(json.dumps(worker(args.device, args.steps, encoder_steps, args.quick)), flush=True)
        return 0
    if args.from_log:
        rounds, header = parse_log(args.from_log)
        settings = {"from_log": args.from_log.name, "log_header": header}
    else:
        if not args.baseline or not (Path(args.baseline) / "neuromath" / "__init__.py").is_file():
            parser.error(f"--baseline must be a folder with a neuromath package in it, got {args.baseline!r}")
        rounds, settings = [], {"device": args.device, "rounds": args.rounds, "steps": args.steps}
        for number in range(1, args.rounds + 1):
            for side in SIDES:
                env = dict(os.environ, PYTHONUNBUFFERED="1")
                path = [str(Path(args.baseline).resolve())] if side == "base" else []
                env["PYTHONPATH"] = os.pathsep.join(path + [str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
                env.pop("NEUROMATH_AB_PACKED", None)
                if side == "packed":
                    env["NEUROMATH_AB_PACKED"] = "1"
                command = [sys.executable, __file__, "--worker", "--device", args.device, "--steps", str(args.steps)]
                if args.quick:
                    command.append("--quick")
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
                if done.returncode:
                    raise SystemExit(f"round {number} {side} failed:\n{done.stderr[-3000:]}")
                results = json.loads(done.stdout.strip().splitlines()[-1])
                print(f"{number} {side} {json.dumps(results)}", flush=True)
                rounds.append({"round": number, "side": side, "results": results})
    table = summary(rounds)
    print_summary(table)
    if args.json:
        report = {"settings": settings, "tree_ab": {"rounds": rounds, "summary": table}}
        if not args.from_log:  # the machine that measured (a log's header says what it printed about its own)
            report["environment"] = {"python": platform.python_version(), "host": platform.node(),
                                     "device": args.device, "gpu": gpu_name(args.device)}
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
