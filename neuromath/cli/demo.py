"""neuromath demo: generate word problems, train a small Transformer, evaluate, solve."""

from __future__ import annotations

import argparse

from neuromath.cli.common import add_seed_option, documented


def command_demo(args: argparse.Namespace) -> int:
    from neuromath.experiments.demo_run import run_demo  # torch and lightning: loaded only by the commands that train
    from neuromath.training.run_folder import check_run_folder

    check_run_folder(args.out)  # the demo replaces its own run folder only: never a link, nor a folder of other files
    run_demo(args.out, args.seed, args.config, args.set or [], args.progress)
    return 0


def register(commands) -> None:
    demo = commands.add_parser(
        "demo", help="generate word problems, train a small Transformer, evaluate, solve",
        **documented(
            "Generate word problems from the built-in templates, train a small Transformer on them on the CPU "
            "(at most 40 epochs, early stopping after 6 without progress, one or two threads), test it on held-out "
            "problems and solve three of them. Needs no data files. The run is written to --out, which is replaced "
            "on every demo run; it is a run folder like any other, for neuromath solve, evaluate and serve.",
            "neuromath demo",
            "neuromath demo --seed 1 --out runs/demo1 --no-progress",
            "neuromath demo --set train.max_epochs=10 --out runs/demo_short",
        ),
    )
    demo.add_argument("--out", default="runs/demo",
                      help="run directory (replaced on every demo run; a link, or a folder of other files, is refused)")
    add_seed_option(demo, "training seed (train.seed), also choosing the held-out problems solved at the end")
    demo.add_argument("--config", default=None, help="start from this config instead of the defaults")
    demo.add_argument("--set", action="append", metavar="KEY=VALUE",
                      help="override a config value (repeatable; applied after the demo's own settings)")
    demo.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                      help="progress bars (--progress) or a line per epoch (--no-progress); by default bars on a "
                           "terminal and lines when the output goes to a file")
    demo.set_defaults(handler=command_demo)
