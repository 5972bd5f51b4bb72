"""neuromath compare: two runs on the same data file, or two cross-validations over the same folds: both accuracies,
the paired difference with a bootstrap confidence interval, McNemar's exact test and the 2×2 table
(``neuromath.experiments.paired_compare``)."""

from __future__ import annotations

import argparse

from neuromath.cli.common import (
    MAX_BEAM,
    add_format_option,
    add_json_option,
    add_lenient_option,
    add_seed_option,
    bootstrap_samples,
    data_path,
    documented,
    finite_float,
    integer_in,
)


def confidence_level(text: str) -> float:
    """An argparse type: a confidence level strictly between 0 and 1."""
    value = finite_float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1 (exclusive), got {value}")
    return value


confidence_level.bounded = True


def command_compare(args: argparse.Namespace) -> int:
    # torch: loaded only by the commands that use it
    from neuromath.experiments.paired_compare import CompareRequest, compare_command

    request = CompareRequest(data=args.data, format=args.format, lenient=args.lenient, beam=args.beam,
                             samples=args.samples, seed=args.seed, confidence=args.confidence, json=args.json)
    return compare_command(args.a, args.b, request)


def register(commands) -> None:
    compare = commands.add_parser(
        "compare", help="is B better than A? paired bootstrap interval and McNemar's test on the same examples",
        **documented(
            "Compare two runs of one task on --data FILE (examples paired by position), or two cv output folders "
            "over the test problems of all their folds: both accuracies, the difference B - A with a paired "
            "bootstrap confidence interval, McNemar's exact test and the 2x2 table. Runs are decoded and scored as "
            "their task is evaluated; cv folders are read from each fold's predictions.jsonl. Writes nothing.",
            "neuromath compare runs/gts runs/g2t --data mawps-cv/fold0/dev.csv",
            "neuromath compare runs/cv_gts runs/cv_g2t",
            "neuromath compare runs/cv_gts runs/cv_g2t --samples 10000 --seed 0 --confidence 0.95 --json",
        ),
    )
    compare.add_argument("a", metavar="A", help="a run folder, or a neuromath cv output folder")
    compare.add_argument("b", metavar="B", help="a run folder of the same task, or a cv folder over the same folds")
    compare.add_argument("--data", type=data_path, default=None, metavar="FILE",
                         help="the examples two runs are scored on (not for cv folders: their test folds are used)")
    add_format_option(compare)
    add_lenient_option(compare, "rows")
    compare.add_argument("--beam", type=integer_in(1, MAX_BEAM), default=None, metavar="K",
                         help="beam width (default: each run's own decoding; symbolic: 1, right when any "
                              "hypothesis of the beam verifies)")
    compare.add_argument("--samples", type=bootstrap_samples, default=10_000,
                         help="bootstrap resamples (default 10000)")
    add_seed_option(compare, "seed of the bootstrap")
    compare.add_argument("--confidence", type=confidence_level, default=0.95,
                         help="confidence level of the interval (default 0.95)")
    add_json_option(compare)
    compare.set_defaults(handler=command_compare)
