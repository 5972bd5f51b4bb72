"""neuromath export: a trained run as a self-contained folder to share (safetensors weights, config, vocabularies,
summary and model card), which neuromath.load, solve, serve and complete read like the run itself."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from neuromath.cli.common import add_cost_limits, add_json_option, cost_limits_of, documented


def command_export(args: argparse.Namespace) -> int:
    from neuromath.sharing.export_run import export_run  # torch: loaded only by the commands that use it

    # --json: stdout holds the one JSON object; anything else printed goes to stderr
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext(), cost_limits_of(args):
        files = export_run(args.run_dir, args.out)  # --max-memory: the run is checked before its model is built
    if args.json:
        print(json.dumps({"run_dir": str(args.run_dir), "out": str(args.out),
                          "files": [str(Path(args.out) / name) for name in files]}))
    else:
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
            "whole and checked: it loads, and holds exactly the run's weights. With --json, stdout holds one JSON "
            "object: the run, the export folder and the files written.",
            "neuromath export runs/g2t exports/g2t",
            'neuromath solve exports/g2t "Jerry had 135 pens. John took 19 pens from him. How many pens does '
            'Jerry have left?"',
        ),
    )
    export.add_argument("run_dir", metavar="RUN_DIR",
                        help="a trained run folder (written by neuromath train, demo, or a fold of cv)")
    export.add_argument("out", metavar="OUT", help="the folder to write; must not exist, or be empty")
    add_json_option(export, "one JSON object (run_dir, out, files: the paths written)")
    add_cost_limits(export)
    export.set_defaults(handler=command_export)
