"""A word-problem Transformer small enough to train in seconds through the command line, and a problem to ask it."""

from pathlib import Path

from neuromath.cli import main

TINY = [
    "--set", "model.d_model=32", "--set", "model.n_heads=2", "--set", "model.d_ff=64",
    "--set", "train.progress=false", "--set", "train.max_epochs=1", "--set", "train.patience=0",
    "--set", "data.generate_train=60", "--set", "data.generate_valid=10", "--set", "data.generate_test=0",
]
JERRY = "Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?"


def train_tiny(out: Path) -> Path:
    """``neuromath train`` of the tiny preset into ``out``; returns ``out``."""
    assert main(["train", "--config", "word_problems/transformer", *TINY, "--out", str(out)]) == 0
    return out
