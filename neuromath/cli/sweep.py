"""neuromath sweep: train every cell of a grid of config values, several seeds each and a few runs at a time, and
tabulate each cell's mean and standard deviation (``neuromath.experiments.sweep``)."""

from __future__ import annotations

import argparse

from neuromath.cli.common import positive_int


def command_sweep(args: argparse.Namespace) -> int:
    from neuromath.experiments.sweep import run_sweep  # torch: loaded only here

    return run_sweep(args.config, args.out, args.grid or [], args.set or [], args.seeds, args.jobs)


def register(commands) -> None:
    sweep = commands.add_parser("sweep", help="train a grid of config values (several seeds, a few runs at a "
                                              "time) and tabulate mean ± std per cell")
    sweep.add_argument("--config", required=True)
    sweep.add_argument("--grid", action="append", metavar="KEY=V1,V2,...", required=True,
                       help="values to sweep for one config key (repeatable: the cells are the product)")
    sweep.add_argument("--set", action="append", metavar="KEY=VALUE", help="a value of every run (repeatable)")
    sweep.add_argument("--out", required=True, help="folder of the sweep: OUT/<cell>/seed<S>, OUT/sweep.md")
    sweep.add_argument("--seeds", type=positive_int, default=1, help="runs per cell, seeds train.seed, +1, ...")
    sweep.add_argument("--jobs", type=positive_int, default=1,
                       help="runs at a time, each in its own process (default 1); without --set "
                            "train.num_threads=N each run gets cpus // jobs threads")
    sweep.set_defaults(handler=command_sweep)
