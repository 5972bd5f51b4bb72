"""neuromath demo: generate word problems, train a small Transformer, evaluate, solve."""

from __future__ import annotations

import argparse


def command_demo(args: argparse.Namespace) -> int:
    from neuromath.experiments.demo import run_demo  # torch and lightning: loaded only by the commands that train

    run_demo(args.out, args.seed, args.config, args.set or [], args.progress)
    return 0


def register(commands) -> None:
    demo = commands.add_parser("demo", help="generate word problems, train a small Transformer, evaluate, solve")
    demo.add_argument("--out", default="runs/demo", help="run directory (replaced on every demo run)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--config", default=None, help="start from this config instead of the defaults")
    demo.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value")
    demo.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    demo.set_defaults(handler=command_demo)
