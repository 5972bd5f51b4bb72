"""The demo: generate word problems, train a small Transformer on the CPU, test it on held-out problems and solve
three examples (the README's first command)."""

from __future__ import annotations

import random
import shutil
import time
from pathlib import Path
from typing import Sequence

from neuromath.api import load
from neuromath.config import load_config
from neuromath.environment import usable_cpus
from neuromath.evaluation.scoring import counted, percent
from neuromath.experiments.fit_then_test import stop_lines, train

DEMO_PROBLEMS = ("Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?",)
# Bounded by epochs, not by wall-clock time: a time limit made the demo's result depend on how busy the machine
# was (beside a test run it stopped after one epoch at 11.4% value accuracy, against 99.6% alone).
DEMO_OVERRIDES = (
    "train.max_epochs=40",
    "train.patience=6",
)
MAX_DEMO_THREADS = 2  # the small Transformer gains nothing measurable from more


def busy_cores(interval: float = 0.5) -> float | None:
    """How many cores other work kept busy over ``interval`` seconds (this process sleeps meanwhile), from
    /proc/stat; None where that file cannot be read (not Linux)."""
    def sample():
        with open("/proc/stat", encoding="ascii") as stream:
            fields = [int(value) for value in stream.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and iowait
        return sum(fields) - idle, sum(fields)
    try:
        busy_before, total_before = sample()
        time.sleep(interval)
        busy_after, total_after = sample()
    except (OSError, ValueError, IndexError):
        return None
    if total_after <= total_before:
        return None
    return (busy_after - busy_before) / (total_after - total_before) * usable_cpus()


def demo_threads(cores: int, busy: float | None) -> int:
    """Torch threads for the demo: up to ``MAX_DEMO_THREADS`` on the cores no other work holds, at least one
    (threads sharing a core with busy work wait on each other at every operation)."""
    free = cores - round(busy or 0.0)
    return max(1, min(MAX_DEMO_THREADS, free))


def run_demo(out: str | Path, seed: int = 0, config_path: str | None = None, overrides: Sequence[str] = (),
             progress: bool | None = None) -> dict:
    """Train the demo run in ``out`` (replaced on every demo run), print what it does; returns the test metrics."""
    started = time.perf_counter()
    threads = demo_threads(usable_cpus(), busy_cores())
    shown = "null" if progress is None else str(progress).lower()  # null: bars on a terminal, lines otherwise
    overrides = [*DEMO_OVERRIDES, f"train.num_threads={threads}", f"train.seed={seed}", f"train.progress={shown}",
                 *overrides]  # the caller's overrides come last and win
    config = load_config(config_path, overrides, strict=True)
    out = Path(out)
    if (out / "checkpoints").exists():
        shutil.rmtree(out)  # the demo's own folder: a fresh run every time
    print(f"demo: generating {config.data.generate_train} training problems and training a "
          f"{config.model.n_encoder_layers}+{config.model.n_decoder_layers}-layer Transformer on the CPU "
          f"({config.train.num_threads} thread{'s' if config.train.num_threads > 1 else ''}) ...", flush=True)
    result = train(config, out)
    print(f"demo: trained {counted(result.summary['epochs'], 'epoch')} in {time.perf_counter() - started:.0f} s "
          f"(best validation value accuracy {percent(result.summary['best_val_value_accuracy'])})", flush=True)
    for line in stop_lines(result.summary):
        print(f"demo: {line}", flush=True)
    solver = load(out)
    test, metrics = result.data.test, result.summary["test"]
    print(f"demo: equation accuracy {percent(metrics['equation_accuracy'])} on the held-out problems", flush=True)
    samples = list(DEMO_PROBLEMS) + [example.text for example in random.Random(seed).sample(test, 2)]
    for text in samples:
        solution = solver.solve(text)
        print(f"\nproblem:  {text}\nequation: {solution.equation or '(none)'}\n"
              f"answer:   {solution.answer_text or '(none)'}", flush=True)  # in order with stderr's notes
    print(f"\ndemo: finished in {time.perf_counter() - started:.0f} s; run saved in {out} "
          f"(try: neuromath solve {out} \"...\")", flush=True)
    print(f"demo: value accuracy {100 * metrics['value_accuracy']:.1f}% on {metrics['n']} held-out problems",
          flush=True)
    return metrics
