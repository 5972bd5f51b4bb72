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
from neuromath.evaluation.evaluate import percent
from neuromath.experiments.train_test import train

DEMO_PROBLEMS = ("Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?",)
DEMO_OVERRIDES = (
    "train.max_epochs=40",
    "train.patience=6",
    "train.max_time_minutes=3.5",
    "train.num_threads=2",
)


def run_demo(out: str | Path, seed: int = 0, config_path: str | None = None, overrides: Sequence[str] = (),
             progress: bool = True) -> dict:
    """Train the demo run in ``out`` (replaced on every demo run), print what it does; returns the test metrics."""
    started = time.perf_counter()
    overrides = [*DEMO_OVERRIDES, f"train.seed={seed}", f"train.progress={str(progress).lower()}", *overrides]
    config = load_config(config_path, overrides, strict=True)
    out = Path(out)
    if (out / "checkpoints").exists():
        shutil.rmtree(out)  # the demo's own folder: a fresh run every time
    print(f"demo: generating {config.data.generate_train} training problems and training a "
          f"{config.model.n_encoder_layers}+{config.model.n_decoder_layers}-layer Transformer on the CPU ...",
          flush=True)
    result = train(config, out)
    print(f"demo: trained {result.summary['epochs']} epochs in {time.perf_counter() - started:.0f} s "
          f"(best validation value accuracy {percent(result.summary['best_val_value_accuracy'])})", flush=True)
    solver = load(out)
    test, metrics = result.data.test, result.summary["test"]
    print(f"demo: equation accuracy {percent(metrics['equation_accuracy'])} on the held-out problems")
    samples = list(DEMO_PROBLEMS) + [example.text for example in random.Random(seed).sample(test, 2)]
    for text in samples:
        solution = solver.solve(text)
        print(f"\nproblem:  {text}\nequation: {solution.equation or '(none)'}\n"
              f"answer:   {solution.answer_text or '(none)'}")
    print(f"\ndemo: finished in {time.perf_counter() - started:.0f} s; run saved in {out} "
          f"(try: neuromath solve {out} \"...\")")
    print(f"demo: value accuracy {100 * metrics['value_accuracy']:.1f}% on {metrics['n']} held-out problems")
    return metrics
