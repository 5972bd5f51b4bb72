"""neuromath export: a trained run as a self-contained folder to share (safetensors weights, config, vocabularies,
summary and model card), which neuromath.load, solve, serve and complete read like the run itself."""

from __future__ import annotations

import argparse

from neuromath.cli.common import add_cost_limits, cost_limits_of, documented


def command_export(args: argparse.Namespace) -> int:
    from neuromath.experiments.export_run import export_run  # torch: loaded only by the commands that use it

    with cost_limits_of(args):  # --max-memory: the run is checked before its model is built to check the export
        files = export_run(args.run_dir, args.out)
    print(f"exported {args.run_dir} to {args.out}: {', '.join(files)}")
    return 0


def register(commands) -> None:
    export = commands.add_parser(
        "export", help="write a trained run as a self-contained folder to share (safetensors and a model card)",
        **documented(
            "Write a trained run as a new, self-contained folder OUT: the best weights as model.safetensors "
            "(tensors only, nothing that can run code), config.yaml, the vocabularies, summary.json, "
            "environment.json when the run has one, and README.md, the model card (the run's own, or written from "
            "its files). No checkpoints, logs or pickles. neuromath solve, serve, complete and neuromath.load read "
            "OUT as they read the run. The folder is the layout the Hugging Face Hub takes (a card with a YAML "
            "header, safetensors weights, a config); export itself uses no network.\n\n"
            "OUT must not exist, or be an empty folder. It is written beside its final place and renamed when "
            "whole and checked: it loads, and holds exactly the run's weights.",
            "neuromath export runs/g2t exports/g2t",
            'neuromath solve exports/g2t "Jerry had 135 pens. John took 19 pens from him. How many pens does '
            'Jerry have left?"',
        ),
    )
    export.add_argument("run_dir", metavar="RUN_DIR",
                        help="a trained run folder (written by neuromath train, demo, or a fold of cv)")
    export.add_argument("out", metavar="OUT", help="the folder to write; must not exist, or be empty")
    add_cost_limits(export)
    export.set_defaults(handler=command_export)
