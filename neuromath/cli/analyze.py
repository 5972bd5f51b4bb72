"""neuromath analyze: look inside a trained run. ``analyze roles RUN --data FILE``: cluster the TP-Transformer's role
vectors of every head and layer and compare the clusters with token classes against a shuffled baseline
(``neuromath.experiments.analyze``). ``analyze edits RUN [RUN ...] --data FILE``: how often equation classifiers
call a file's false equations false, by how deep their edit lies. ``analyze seeds RUN [RUN ...]``: the mean and
standard deviation of runs' recorded scores, the runs named ``seed<S>`` under one folder making one row (seeds
trained in parallel, one process each, combined as ``train --seeds`` would)."""

from __future__ import annotations

import argparse
import json

from neuromath.cli.common import nonnegative_int, positive_int


def command_analyze_roles(args: argparse.Namespace) -> int:
    from neuromath.experiments.analyze import RolesRequest, analyze_roles  # torch, scikit-learn: loaded only here

    request = RolesRequest(data=args.data, out=args.out, k=args.k, max_examples=args.max_examples,
                           max_vectors=args.max_vectors, seed=args.seed, shuffles=args.shuffles,
                           batch_size=args.batch_size, head_row=args.head, format=args.format, json=args.json)
    return analyze_roles(args.run_dir, request)


def command_analyze_edits(args: argparse.Namespace) -> int:
    from neuromath.experiments.analyze import analyze_edits  # torch: loaded only here

    return analyze_edits(args.run_dirs, args.data, args.json, args.batch_size)


def command_analyze_seeds(args: argparse.Namespace) -> int:
    from neuromath.experiments.train_test import combine_runs, combined_runs_table
    from neuromath.fileio import write_text_atomic

    combined = combine_runs(args.run_dirs)
    text = json.dumps(combined, indent=2) if args.json else combined_runs_table(combined)
    print(text, end="" if text.endswith("\n") else "\n")
    if args.out:
        write_text_atomic(args.out, json.dumps(combined, indent=2) + "\n")
    return 0


def register(commands) -> None:
    analyze = commands.add_parser("analyze", help="look inside a trained run (roles: TP-Attention role vectors; "
                                                 "edits: equation classifiers by the depth of the edit; "
                                                 "seeds: mean ± std of runs trained apart)")
    kinds = analyze.add_subparsers(dest="analysis", required=True)
    roles = kinds.add_parser("roles", help="k-means of the TP-Attention role vectors of every head and layer "
                                           "against token classes, with a shuffled baseline and a PCA plot")
    roles.add_argument("run_dir", metavar="RUN_DIR")
    roles.add_argument("--data", required=True, help="examples to run the model on (teacher-forced)")
    roles.add_argument("--out", required=True, help="folder for report.md, report.json and roles_pca.png")
    roles.add_argument("--k", type=positive_int, default=20, help="clusters per head (default 20)")
    roles.add_argument("--max-examples", dest="max_examples", type=nonnegative_int, default=2000,
                       help="the first this many examples of the data (0: all; default 2000)")
    roles.add_argument("--max-vectors", dest="max_vectors", type=nonnegative_int, default=20000,
                       help="per head, a seeded sample of at most this many token occurrences (0: all; default 20000)")
    roles.add_argument("--shuffles", type=positive_int, default=20,
                       help="shuffles of the token classes for the chance baseline (default 20)")
    roles.add_argument("--head", type=positive_int, default=None, metavar="ROW",
                       help="the row of the printed table whose clusters and PCA plot the report shows "
                            "(default: the head with the largest NMI)")
    roles.add_argument("--seed", type=int, default=0)
    roles.add_argument("--batch-size", dest="batch_size", type=positive_int, default=64)
    roles.add_argument("--format", default=None, help="data format (default: detected from the file)")
    roles.add_argument("--json", action="store_true", help="print the report as one JSON object")
    roles.set_defaults(handler=command_analyze_roles)
    edits = kinds.add_parser("edits", help="equation classifiers: the share of false equations called false, by "
                                           "how far below the root the edit that made each one lies")
    edits.add_argument("run_dirs", metavar="RUN_DIR", nargs="+")
    edits.add_argument("--data", required=True, help="an identities file with true and false equations")
    edits.add_argument("--batch-size", dest="batch_size", type=positive_int, default=512)
    edits.add_argument("--json", action="store_true", help="print the result as one JSON object")
    edits.set_defaults(handler=command_analyze_edits)
    seeds = kinds.add_parser("seeds", help="mean ± std of the epochs, best validation accuracy and test scores "
                                           "(by depth for equation classifiers) in runs' summary.json; runs named "
                                           "seed<S> under one folder are one row")
    seeds.add_argument("run_dirs", metavar="RUN_DIR", nargs="+")
    seeds.add_argument("--json", action="store_true", help="print the result as one JSON object")
    seeds.add_argument("--out", default=None, help="also write the result as JSON to this file")
    seeds.set_defaults(handler=command_analyze_seeds)
