"""neuromath train: train a model from a config (one run, or several seeds with their mean and deviation)."""

from __future__ import annotations

import argparse

from neuromath.cli.common import positive_int
from neuromath.config import load_config


def command_train(args: argparse.Namespace) -> int:
    from neuromath.experiments.train_test import (
        train_seeds,  # torch and lightning: loaded only by the commands that train
    )

    train_seeds(load_config(args.config, args.set or [], strict=True), args.out, args.seeds, args.resume)
    return 0


def register(commands) -> None:
    train = commands.add_parser("train", help="train a model from a config")
    train.add_argument("--config", required=True)
    train.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    train.add_argument("--out", required=True, help="run directory")
    train.add_argument("--resume", action="store_true", help="continue from RUN_DIR/checkpoints/last.ckpt")
    train.add_argument("--seeds", type=positive_int, default=1,
                       help="train N runs with seeds train.seed, train.seed+1, ... in RUN_DIR/seed<S> and report "
                            "the test scores' mean and standard deviation")
    train.set_defaults(handler=command_train)
