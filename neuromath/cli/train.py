"""neuromath train: train a model from a config (one run, or several seeds with their mean and deviation)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

from neuromath.cli.common import (
    MAX_MEMORY_GB,
    MAX_SEEDS,
    add_json_option,
    add_protocol_option,
    documented,
    float_in,
    protocol_overrides,
    seed_runs,
)
from neuromath.config import load_config


def command_train(args: argparse.Namespace) -> int:
    from neuromath.experiments.fit_then_test import (
        train_seeds,  # torch and lightning: loaded only by the commands that train
    )
    from neuromath.nn.distributed import is_rank_zero
    from neuromath.training.run_folder import check_run_folder

    check_run_folder(args.out)  # not a link, nor a folder of files the run did not write
    overrides = [*protocol_overrides(args), *([f"train.init_from={args.init_from}"] if args.init_from else [])]
    config = load_config(args.config, overrides, strict=True)
    if args.resume:  # the model the run folder holds, checked before it is built (--max-memory)
        from neuromath.models.cost import check_resume_cost

        check_resume_cost(config, args.out, args.max_memory)
    # --json: what training prints goes to stderr; stdout gets the one JSON object
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        summaries = train_seeds(config, args.out, args.seeds, args.resume)
    if args.json and is_rank_zero():  # the other processes of a multi-process run have no summary
        print(json.dumps(train_outcome(args.out, summaries)))
    return 0


# what --json reports of a run's summary.json, where the summary has it
SUMMARY_KEYS = ("run_dir", "protocol", "epochs", "steps", "stopped_by", "best_val_value_accuracy", "best_val_accuracy",
                "best_val_completion", "train_examples", "valid_examples", "parameters", "wall_seconds")


def run_outcome(summary: dict) -> dict:
    """One run for ``--json``: its folder, epochs, best epoch (that of checkpoints/best.ckpt, counted from 1; None
    without one), best validation score, test scores (None without a test split) and the path of its summary."""
    from neuromath.training.run_folder import read_checkpoint

    outcome = {key: summary[key] for key in SUMMARY_KEYS if key in summary}
    best = summary.get("best_checkpoint")
    outcome["best_epoch"] = int(read_checkpoint(Path(best))["epoch"]) + 1 if best and Path(best).is_file() else None
    outcome["test"] = summary.get("test")
    if "run_dir" in summary:
        outcome["summary"] = str(Path(summary["run_dir"]) / "summary.json")
    return outcome


def train_outcome(out: str, summaries: list[dict]) -> dict:
    """What ``train --json`` prints: one run's ``run_outcome``; with --seeds N, the folder, every seed's run and
    the mean and standard deviation of their test scores (OUT/seeds.json; None without a test split)."""
    if len(summaries) == 1:
        return run_outcome(summaries[0])
    seeds = Path(out) / "seeds.json"
    return {"run_dir": str(out), "runs": [run_outcome(summary) for summary in summaries],
            "seeds": json.loads(seeds.read_text(encoding="utf-8")) if seeds.is_file() else None}


def register(commands) -> None:
    train = commands.add_parser(
        "train", help="train a model from a config",
        **documented(
            "Train a model from a config, a preset named <task>/<model> (e.g. word_problems/graph2tree) or a YAML "
            "file, with --set overrides; the config names the data files (data.train, data.valid, data.test; with "
            "data.train null the task's generator makes the problems). The run folder OUT receives config.yaml, the "
            "vocabularies, checkpoints/best.ckpt and last.ckpt, model.pt, metrics.csv, data.json and summary.json. "
            "After training, the test split is scored with the best weights (its records in OUT/predictions.jsonl). "
            "With --seeds N the runs go to OUT/seed<S> and the mean and standard deviation of their test scores to "
            "OUT/seeds.json. With --json, stdout holds one JSON object when training ends (the run folder, epochs, "
            "best epoch, best validation score and test scores; with --seeds, every seed's and their mean and "
            "deviation), and what training prints goes to stderr.",
            "neuromath train --config word_problems/graph2tree --out runs/g2t",
            "neuromath train --config word_problems/transformer --set data.train=data/train.jsonl \\\n"
            "    --set model.d_model=256 --set train.max_epochs=50 --out runs/wp256",
            "neuromath train --config identities/tree_lstm --set data.train=data/identities.train.json \\\n"
            "    --set data.valid=data/identities.valid.json --set data.test=data/identities.test.json \\\n"
            "    --seeds 3 --out runs/tree_lstm",
        ),
    )
    train.add_argument("--config", required=True,
                       help="the config: a preset named <task>/<model> (e.g. word_problems/graph2tree) or a YAML file")
    train.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    add_protocol_option(train)
    train.add_argument("--init-from", dest="init_from", metavar="RUN",
                       help="start from the weights of a trained identities run (train.init_from): a run folder, "
                            "an export or a hub id")
    train.add_argument("--out", required=True,
                       help="run directory (with --seeds: the folder of OUT/seed<S>): absent, empty or a run folder "
                            "of its own; a link, or a folder of other files, is refused")
    train.add_argument("--resume", action="store_true", help="continue from RUN_DIR/checkpoints/last.ckpt")
    train.add_argument("--max-memory", dest="max_memory", type=float_in(0.0, MAX_MEMORY_GB, low_open=True),
                       default=None, metavar="GB",
                       help="--resume: refuse a run whose weights, gradients, optimizer state and one batch of "
                            "validation decoding are estimated to need more than GB gigabytes (default: half of "
                            "this machine's memory)")
    train.add_argument("--seeds", type=seed_runs, default=1, metavar="N",
                       help=f"train N runs (at most {MAX_SEEDS}) with seeds train.seed, train.seed+1, ... in "
                            "RUN_DIR/seed<S> and report the test scores' mean and standard deviation")
    add_json_option(train, "one JSON object at the end (run folder, epochs, best epoch, test scores); progress and "
                           "logs go to stderr")
    train.set_defaults(handler=command_train)
