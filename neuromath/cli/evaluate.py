"""neuromath evaluate: evaluate one or more runs on a data file or folder, side by side; each run's task says how
(``neuromath.experiments.evaluate_runs``)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from neuromath.cli.common import (
    MAX_BEAM,
    MAX_EXAMPLES,
    add_cost_limits,
    add_decode_options,
    add_format_option,
    add_json_option,
    add_lenient_option,
    add_seed_option,
    cost_limits_of,
    data_path,
    documented,
    integer_in,
    integer_list,
)


def command_evaluate(args: argparse.Namespace) -> int:
    # torch: loaded only by the commands that use it
    from neuromath.api import DECODE_OPTIONS
    from neuromath.experiments.evaluate_runs import EvaluateRequest, evaluate_runs
    from neuromath.models.hub import hub_id_of, model_folder

    fields = {field.name for field in dataclasses.fields(EvaluateRequest)} - {"decode", "output_dirs"}
    decode = {name: getattr(args, name) for name in DECODE_OPTIONS if getattr(args, name) is not None}
    request = EvaluateRequest(**{name: getattr(args, name) for name in fields}, decode=decode)
    hub_ids = [hub_id_of(run) for run in args.run_dirs]
    run_dirs = [str(model_folder(run)) for run in args.run_dirs]  # a hub id: its folder in the Hugging Face cache
    outputs = {folder: hub_id.folder_name for folder, hub_id in zip(run_dirs, hub_ids) if hub_id is not None}
    request = dataclasses.replace(request, output_dirs=outputs)  # a hub model's outputs go to ./org--name
    if len(run_dirs) == 1 and hub_ids[0] is not None and not request.report:
        request = dataclasses.replace(request, report=str(Path(hub_ids[0].folder_name) / "report"))
    with cost_limits_of(args):  # --max-memory, --max-decode-len: each run checked before its model is built
        return evaluate_runs(run_dirs, request)


def register(commands) -> None:
    evaluate = commands.add_parser(
        "evaluate", help="evaluate one or more runs on a data file or folder",
        **documented(
            "Score one or more trained runs on the examples of --data, side by side; each run's task says how. Word "
            "problems: value accuracy, equation accuracy and BLEU, the predictions written to "
            "RUN_DIR/evaluations/<data>.jsonl (never over the test predictions train wrote). Mathematics Dataset: "
            "exact match per module with a report folder; "
            "identities: accuracy, precision and recall by depth beside a numeric checker; symbolic: verified "
            "accuracy for each width of --beams on the full and the deduplicated test set. Decoding follows each "
            "run's config unless --beam, --nbest, --length-penalty, --constrained or --verify say otherwise.",
            "neuromath evaluate runs/g2t --data mawps-cv/fold0/dev.csv",
            "neuromath evaluate runs/g2t --data mawps-cv/fold0/dev.csv --beam 5 --nbest 3 --json",
            "neuromath evaluate runs/g2t --data mawps-cv/fold0/dev.csv --robustness",
            "neuromath evaluate runs/tp runs/plain --data md4-test --per-module 1000 --report runs/md_report",
        ),
    )
    evaluate.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                          help="runs to evaluate (compared side by side): run or exported folders, or models on the "
                               "Hugging Face Hub by id, org/name[@revision] (one alone writes its predictions and "
                               "report under ./org--name)")
    evaluate.add_argument("--data", type=data_path, required=True,
                          help="the examples to score: a data file, or for Mathematics Dataset runs a release "
                               "folder, a split folder or a module file")
    add_format_option(evaluate)
    add_lenient_option(evaluate, "rows")
    add_json_option(evaluate)
    evaluate.add_argument("--predictions", default=None,
                          help="where to write predictions (default RUN_DIR/evaluations/<the data path's last "
                               "parts>.jsonl, e.g. mawps-cv.fold0.dev.jsonl; the run's own predictions.jsonl refused)")
    evaluate.add_argument("--modules", default=None, help="module globs to evaluate (default: the run's data.modules)")
    evaluate.add_argument("--splits", default=None, help="test splits to read (default: the run's data.test_splits)")
    evaluate.add_argument("--per-module", dest="per_module", type=integer_in(0, MAX_EXAMPLES), default=None,
                          help="at most this many questions per module file (0: all)")
    evaluate.add_argument("--report", default=None,
                          help="folder for the report (Mathematics Dataset: per-module report.md, .csv, .json, "
                               "accuracy.png; identities: report.md, .json, accuracy_by_depth.png); "
                               "default RUN_DIR/report of the first run")
    evaluate.add_argument("--beams", type=integer_list(1, MAX_BEAM), default=None, metavar="K,K,...",
                          help="symbolic: beam widths to decode with (default 1,10,50); solved when any hypothesis "
                               "of the beam verifies")
    evaluate.add_argument("--train", default=None, metavar="FILE",
                          help="symbolic: the training pairs the deduplicated test set is checked against "
                               "(default: the run's data.train)")
    evaluate.add_argument("--robustness", action="store_true",
                          help="word problems: also score each run on rule-made variations of --data (the question "
                               "removed, an irrelevant sentence added, the sentences reordered, the numbers drawn "
                               "again) beside the plain accuracy on the same problems; written to --report (default "
                               "RUN_DIR/robustness)")
    add_seed_option(evaluate, "--robustness: the seed of the variations' draws")
    add_decode_options(evaluate)
    add_cost_limits(evaluate)
    evaluate.set_defaults(handler=command_evaluate)
