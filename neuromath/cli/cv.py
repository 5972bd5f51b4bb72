"""neuromath cv: k-fold cross-validation of a word-problem model or retrieval baseline, over given fold folders or a
seeded random split of one file."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from neuromath.cli.common import (
    MAX_FOLDS,
    MAX_SEEDS,
    add_json_option,
    add_protocol_option,
    add_seed_option,
    data_path,
    documented,
    integer_in,
    protocol_overrides,
    worker_count,
)
from neuromath.config import load_config
from neuromath.errors import NeuromathError
from neuromath.experiments.folds import find_folds
from neuromath.fileio import locked


def command_cv(args: argparse.Namespace) -> int:
    """k-fold cross-validation: given fold folders (--folds) or a seeded random split of one file (--data, --k)."""
    from neuromath.experiments.cross_validation import (  # torch and lightning: loaded only by the commands that train
        read_data_file,
        run_cross_validation,
        run_seeded_cross_validation,
        write_random_folds,
    )
    from neuromath.experiments.cv_reports import format_report
    from neuromath.training.run_folder import check_run_folder

    check_run_folder(args.out, cv=True)  # not a link, nor a folder of files the cross-validation did not write
    config = load_config(args.config, protocol_overrides(args), strict=True)
    if not args.progress:
        config = dataclasses.replace(config, train=dataclasses.replace(config.train, progress=False))
    out = Path(args.out)
    if (args.folds is None) == (args.data is None):
        raise NeuromathError("give either --folds DIR (fold0/, fold1/, ... with train.csv and dev.csv) "
                             "or --data FILE with --k and --seed")
    if args.folds is not None:
        if args.k is not None or args.seed is not None:
            raise NeuromathError("--k and --seed split a --data file; they do not apply to --folds")
        folds = find_folds(args.folds)
    else:
        examples, skipped = read_data_file(config, args.data)
        for error in skipped:
            print(f"skipped: {error}", file=sys.stderr)
    with locked(out):  # the random folds and every fold's run: one writer at a time
        if args.data is not None:
            k = 5 if args.k is None else args.k
            folds = write_random_folds(examples, k, 0 if args.seed is None else args.seed, out / "folds")
            # the folds are this project's JSON Lines, whatever format the source file had
            config = dataclasses.replace(config, data=dataclasses.replace(config.data, format="jsonl"))
        if args.jobs > 1 and not config.train.num_threads:
            print(f"note: --jobs {args.jobs} with train.num_threads 0: every fold takes all of torch's threads; "
                  "--set train.num_threads=T with jobs x T at most the cores is faster", file=sys.stderr)
        if args.seeds is None:
            report = run_cross_validation(config, folds, out, progress=args.progress, refit=args.refit,
                                          jobs=args.jobs)
        else:
            report = run_seeded_cross_validation(config, folds, out, args.seeds, progress=args.progress,
                                                 refit=args.refit, jobs=args.jobs)
    if args.json:
        print(json.dumps(report))
    else:
        print(format_report(report), end="")
        print(f"report written to {out / 'report.md'} and {out / 'report.json'}")
    return 0


def register(commands) -> None:
    cv = commands.add_parser(
        "cv", help="k-fold cross-validation of a word-problem model or retrieval baseline",
        **documented(
            "k-fold cross-validation of a word-problem model or retrieval baseline, over given fold folders "
            "(--folds DIR with fold<k>/train.csv and fold<k>/dev.csv) or a seeded random split of one file "
            "(--data FILE, --k, --seed). Each fold trains in OUT/fold<k>, chooses its epoch on a validation part "
            "carved out of the training fold (--protocol literature: on the test fold, as the published k-fold "
            "numbers were chosen), and scores its test fold once (OUT/fold<k>/predictions.jsonl); "
            "finished folds are reused when the command runs again. OUT/report.md and OUT/report.json hold a row per "
            "fold and the mean ± std of value accuracy, equation accuracy, BLEU and the unknown-token rate.",
            "neuromath cv --config word_problems/graph2tree --folds mawps-cv --out runs/cv_g2t",
            "neuromath cv --config word_problems/jaccard --folds asdiv-a-cv --out runs/cv_jaccard",
            "neuromath cv --config word_problems/gts --folds mawps-cv --protocol literature --out runs/cv_gts_lit",
            "neuromath cv --config word_problems/group_attention --data math23k/testset.json \\\n"
            "    --set data.lenient=true --k 5 --seed 0 --out runs/cv_math23k",
        ),
    )
    cv.add_argument("--config", required=True,
                    help="the run config, a preset named <task>/<model> or a YAML file (model.name jaccard or "
                         "cosine: a retrieval baseline, no training)")
    cv.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    cv.add_argument("--folds", type=data_path, default=None, metavar="DIR",
                    help="folder of fold0/, fold1/, ... each with train.csv and dev.csv (the test fold)")
    cv.add_argument("--data", type=data_path, default=None, metavar="FILE",
                    help="split this file into --k random folds instead (written to OUT/folds)")
    cv.add_argument("--k", type=integer_in(2, MAX_FOLDS), default=None, help="folds of a --data split (default 5)")
    add_seed_option(cv, "shuffle seed of a --data split", default=None)
    add_protocol_option(cv)
    cv.add_argument("--out", required=True,
                    help="folder: a run per fold in OUT/fold<k> (finished ones are reused), OUT/report.md, .json")
    cv.add_argument("--refit", action="store_true",
                    help="after each fold's run has chosen its epoch count on the validation carve-out, train again "
                         "on the whole training fold for that many epochs and score the test fold with the last "
                         "weights (OUT/fold<k>/refit); the report gives the refit's scores")
    cv.add_argument("--seeds", type=integer_in(2, MAX_SEEDS), default=None, metavar="N",
                    help="cross-validate with N training seeds (train.seed .. train.seed + N - 1, each in "
                         "OUT/seed<S>, finished folds reused) and report their majority vote on every test problem "
                         "(OUT/fold<k>/predictions.jsonl; ties go to the lowest seed) beside each seed's scores")
    cv.add_argument("--jobs", type=worker_count, default=1, metavar="N",
                    help="train up to N folds at once, each in a process of its own (default 1); every fold's run is "
                         "the one a sequential cv makes. Give each train.num_threads=T with N x T at most the cores")
    add_json_option(cv, "the report as one JSON object")
    cv.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                    help="a line per fold on stderr (--no-progress also hides the training progress bars)")
    cv.set_defaults(handler=command_cv)
