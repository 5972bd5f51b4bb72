"""neuromath import: a model trained elsewhere as a neuromath run folder (today: the released Tree-SMU and Tree-LSTM
of Arabshahi et al.)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from neuromath.cli.common import add_cost_limits, add_json_option, cost_limits_of, data_path, documented


def command_import_released(args: argparse.Namespace) -> int:
    from neuromath.sharing.import_released import import_released  # torch: loaded only by the commands that use it

    # --json: stdout holds the one JSON object; anything else printed goes to stderr
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext(), cost_limits_of(args):
        files = import_released(args.checkpoint, args.model, args.out)  # --max-memory: checked before it is built
    if args.json:
        print(json.dumps(import_outcome(args, files)))
    else:
        print(f"imported {args.checkpoint} ({args.model}) to {args.out}: {', '.join(files)}")
    return 0


def import_outcome(args: argparse.Namespace, files: list[str]) -> dict:
    """What ``import --json`` prints: the run folder, the files written, and what its summary.json says of the model
    (its source checkpoint and digest, parameters, and scores: ``test`` where the summary has any, else None)."""
    from neuromath.safe_read import SUMMARY_LIMIT, read_json_file

    out = Path(args.out)
    summary = read_json_file(out / "summary.json", SUMMARY_LIMIT, "summary")
    return {"run_dir": str(out), "source": args.source, "model": args.model,
            "checkpoint": str(args.checkpoint), "checkpoint_sha256": summary.get("checkpoint_sha256"),
            "parameters": summary.get("parameters"), "test": summary.get("test"),
            "files": [str(out / name) for name in files]}


def register(commands) -> None:
    imports = commands.add_parser(
        "import", help="turn a model trained elsewhere into a neuromath run folder",
        **documented(
            "Turn a model trained by other code into a neuromath run folder, which neuromath solve, serve, "
            "complete, evaluate and neuromath.load then read like a run neuromath trained.",
            "neuromath import released exp_lstm_drop0.1_hidden50_12093-model-68.checkpoint --model tree_lstm \\\n"
            "    --out runs/released/tree_lstm",
        ),
    )
    sources = imports.add_subparsers(dest="source", required=True, metavar="SOURCE",
                                     help="where the model comes from: released")
    released = sources.add_parser(
        "released", help="a released Tree-SMU or Tree-LSTM of Arabshahi et al. (ForoughA/recursiveMemNet, MIT)",
        **documented(
            "Read a PyTorch state dict released by Arabshahi et al. in ForoughA/recursiveMemNet (checkpoints/, MIT "
            "licence) with torch.load(weights_only=True), map its weights and fixed leaf vocabulary onto "
            "neuromath's own cell, and write the run folder OUT: config.yaml, node_vocab.json, model.pt, "
            "summary.json and README.md, a model card naming the source and the licence. The imported model scores "
            "equations as the authors' code does, to float precision.\n\n"
            "--model names their model class: tree_smu for StackNNTreesMem2out (trained with --gate-push-pop "
            "--normalize-action --no-op --top-k 1 --stack-type stack, tanh activations, stack size 5), tree_lstm "
            "for LSTMTrees. A state dict of another model, or another size, is an error naming the first key or "
            "shape that differs. OUT must not exist, or be an empty folder. With --json, stdout holds one JSON "
            "object: the run folder, the files written, the checkpoint's digest, the parameters and the scores "
            "(test: null, as an import is not tested).",
            "neuromath import released exp_gatedpushpop_normalize_no_op_50_0.1_12345-model-97.checkpoint \\\n"
            "    --model tree_smu --out runs/released/tree_smu",
            'neuromath solve runs/released/tree_smu "sin(x)^2 + cos(x)^2 = 1"',
            "neuromath complete runs/released/tree_smu --blanks identities/40k_test_blank_0.json \\\n"
            "    --candidates identities/candidate_classes.json --threads 1",
        ),
    )
    released.add_argument("checkpoint", metavar="CHECKPOINT", type=data_path,
                          help="the released state dict (a *-model-EPOCH.checkpoint file of their checkpoints/), in "
                               "the working directory or under the data root (identities/released/...)")
    released.add_argument("--model", required=True, choices=("tree_smu", "tree_lstm"),
                          help="the model class the state dict is of: tree_smu (StackNNTreesMem2out with gated "
                               "push/pop/no-op) or tree_lstm (LSTMTrees)")
    released.add_argument("--out", required=True, metavar="RUN",
                          help="the run folder to write; must not exist, or be empty")
    add_json_option(released, "one JSON object (run_dir, files, checkpoint_sha256, parameters, test)")
    add_cost_limits(released, decoding=False)
    released.set_defaults(handler=command_import_released)
