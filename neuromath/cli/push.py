"""neuromath push: upload a trained run (exported on the way) or an exported folder to the Hugging Face Hub as the
model REPO_ID, with its model card, so that ``neuromath.load("org/name")``, ``solve``, ``serve`` and ``evaluate``
fetch it by name (``neuromath.models.hub``)."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from neuromath.cli.common import add_cost_limits, add_json_option, cost_limits_of, documented
from neuromath.extras import require


def repo_id(text: str) -> str:
    """An argparse type: a model repository of the hub, ``org/name``."""
    from neuromath.models.hub import parse_hub_id  # torch: the models package; only when the command runs

    hub_id = parse_hub_id(text, revision=False)
    if hub_id is None:
        raise argparse.ArgumentTypeError(f"must be a hub id org/name (letters, digits, '-', '_' and '.'; a branch "
                                         f"goes in --revision), got {text[:100]!r}")
    return hub_id.repo_id


def branch(text: str) -> str:
    """An argparse type: a branch name the hub takes (letters, digits, '-', '_', '.' and '/', no '..')."""
    from neuromath.models.hub import parse_hub_id

    if parse_hub_id(f"org/name@{text}") is None:
        raise argparse.ArgumentTypeError(f"must be a branch name (letters, digits, '-', '_', '.' and '/'), got "
                                         f"{text[:100]!r}")
    return text


repo_id.bounded = branch.bounded = True  # texts of at most a few hundred characters (the hub id's pattern)


def command_push(args: argparse.Namespace) -> int:
    require("huggingface_hub", "neuromath push")  # before the export: a missing extra stops at once
    from neuromath.models.hub import push_folder
    from neuromath.sharing.export_run import export_for_hub  # torch: loaded only by the commands that use it

    with tempfile.TemporaryDirectory(prefix="neuromath-push-") as staging, cost_limits_of(args):
        folder = Path(staging) / "model"
        files = export_for_hub(args.run_dir, folder, args.repo_id)
        message = args.message or f"neuromath push of {Path(args.run_dir).name}"
        url, commit = push_folder(folder, args.repo_id, args.revision, args.private, message)
    if args.json:
        print(json.dumps({"run": str(args.run_dir), "repo_id": args.repo_id, "revision": args.revision or "main",
                          "commit": commit, "url": url, "files": list(files)}, indent=2))
        return 0
    print(f"pushed {args.run_dir} to {args.repo_id} (commit {commit[:12]}): {', '.join(files)}")
    print(url)
    return 0


def register(commands) -> None:
    push = commands.add_parser(
        "push", help="upload a trained run to the Hugging Face Hub, to load it by name (org/name)",
        **documented(
            "Upload a trained run, or a folder written by neuromath export, to the Hugging Face Hub as the model "
            "REPO_ID (org/name), in one commit: the files of neuromath export (safetensors weights, config, "
            "vocabularies, summary, environment) and the model card, which keeps the evidence of the run (the "
            "command, the data files with their sha256, the test scores, the software) and says how to load the "
            "model by its id. The repository is created when it does not exist. Needs the 'hub' extra and a token "
            "that may write to org (hf auth login, or HF_TOKEN); HF_ENDPOINT names another hub.\n\n"
            "Afterwards neuromath.load(\"org/name\"), neuromath solve org/name TEXT, serve and evaluate fetch the "
            "model by name (org/name@BRANCH for --revision BRANCH) into the Hugging Face cache. Prints the model's "
            "page.",
            "neuromath push runs/g2t my-org/graph2tree-mawps",
            "neuromath push exports/g2t my-org/graph2tree-mawps --revision v1 --message 'seed 0 of the recipe'",
            'neuromath solve my-org/graph2tree-mawps "Jerry had 135 pens. John took 19 pens from him. How many pens '
            'does Jerry have left?"',
        ),
    )
    push.add_argument("run_dir", metavar="RUN",
                      help="a trained run folder (written by neuromath train, demo, or a fold of cv), or a folder "
                           "written by neuromath export")
    push.add_argument("repo_id", metavar="REPO_ID", type=repo_id, help="the model on the hub: org/name")
    push.add_argument("--revision", metavar="BRANCH", type=branch, default=None,
                      help="the branch to commit to, made from main when it is new (default main)")
    push.add_argument("--private", action="store_true",
                      help="create the repository private (an existing one keeps its visibility)")
    push.add_argument("--message", metavar="MSG", default=None,
                      help="the commit message (default: neuromath push of RUN's folder name)")
    add_json_option(push, "one JSON object: the repository, revision, commit, page and files pushed")
    add_cost_limits(push)
    push.set_defaults(handler=command_push)
