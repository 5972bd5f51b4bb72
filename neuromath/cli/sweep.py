"""neuromath sweep: train every cell of a grid of config values, several seeds each and a few runs at a time, and
tabulate each cell's mean and standard deviation (``neuromath.experiments.grid_sweep``)."""

from __future__ import annotations

import argparse

from neuromath.cli.common import add_json_option, documented, seed_runs, worker_count


def command_sweep(args: argparse.Namespace) -> int:
    from neuromath.experiments.grid_sweep import run_sweep  # torch: loaded only here
    from neuromath.training.run_folder import not_a_link

    not_a_link(args.out)  # the runs of the cells are written into OUT, never through a link
    return run_sweep(args.config, args.out, args.grid or [], args.set or [], args.seeds, args.jobs, args.json)


def register(commands) -> None:
    sweep = commands.add_parser(
        "sweep", help="train a grid of config values (several seeds, a few runs at a time) and tabulate mean ± std "
                      "per cell",
        **documented(
            "Train every cell of a grid of config values (the product of the --grid lists), --seeds runs per cell "
            "and --jobs runs at a time, each in its own process; every cell's config is checked before anything "
            "trains. Runs go to OUT/<cell>/seed<S> (their output in train.log there), and one row per cell, the "
            "mean ± std of epochs, best validation and test scores, to OUT/sweep.md and OUT/sweep.json. The same "
            "command continues an interrupted sweep (finished runs are skipped, a run with a last.ckpt resumes); a "
            "failed run is named with its log, the others go on, and the exit status is 1.",
            "neuromath sweep --config identities/tree_lstm --grid model.d_model=50,100 \\\n"
            "    --grid model.dropout=0,0.1,0.2 --seeds 3 --jobs 2 --out runs/sweep",
            "neuromath sweep --config word_problems/graph2tree --grid optim.lr=0.001,0.0005 \\\n"
            "    --set train.max_epochs=40 --out runs/sweep_lr",
        ),
    )
    sweep.add_argument("--config", required=True,
                       help="the config every run starts from: a preset named <task>/<model> or a YAML file")
    sweep.add_argument("--grid", action="append", metavar="KEY=V1,V2,...", required=True,
                       help="values to sweep for one config key (repeatable: the cells are the product)")
    sweep.add_argument("--set", action="append", metavar="KEY=VALUE", help="a value of every run (repeatable)")
    sweep.add_argument("--out", required=True, help="folder of the sweep: OUT/<cell>/seed<S>, OUT/sweep.md")
    sweep.add_argument("--seeds", type=seed_runs, default=1, help="runs per cell, seeds train.seed, +1, ...")
    sweep.add_argument("--jobs", type=worker_count, default=1,
                       help="runs at a time, each in its own process (default 1); without --set "
                            "train.num_threads=N each run gets cpus // jobs threads")
    add_json_option(sweep, "one JSON object at the end (what OUT/sweep.json holds, and the failed runs' logs); "
                           "progress goes to stderr")
    sweep.set_defaults(handler=command_sweep)
