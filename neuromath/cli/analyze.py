"""neuromath analyze: look inside a trained run. ``analyze roles RUN --data FILE``: cluster the TP-Transformer's role
vectors of every head and layer and compare the clusters with token classes against a shuffled baseline
(``neuromath.experiments.analyses``). ``analyze edits RUN [RUN ...] --data FILE``: how often equation classifiers
call a file's false equations false, by how deep their edit lies. ``analyze seeds RUN [RUN ...]``: the mean and
standard deviation of runs' recorded scores, the runs named ``seed<S>`` under one folder making one row (seeds
trained in parallel, one process each, combined as ``train --seeds`` would)."""

from __future__ import annotations

import argparse
import json

from neuromath.cli.common import (
    MAX_EXAMPLES,
    add_format_option,
    add_json_option,
    add_seed_option,
    batch_size,
    bootstrap_samples,
    data_path,
    documented,
    integer_in,
)


def command_analyze_roles(args: argparse.Namespace) -> int:
    from neuromath.experiments.analyses import RolesRequest, analyze_roles  # torch, scikit-learn: loaded only here

    request = RolesRequest(data=args.data, out=args.out, k=args.k, max_examples=args.max_examples,
                           max_vectors=args.max_vectors, seed=args.seed, shuffles=args.shuffles,
                           batch_size=args.batch_size, head_row=args.head, format=args.format, json=args.json)
    return analyze_roles(args.run_dir, request)


def command_analyze_edits(args: argparse.Namespace) -> int:
    from neuromath.experiments.analyses import analyze_edits  # torch: loaded only here

    return analyze_edits(args.run_dirs, args.data, args.json, args.batch_size)


def command_analyze_slices(args: argparse.Namespace) -> int:
    from neuromath.experiments.slices import slices_command  # the task readers: loaded only here

    return slices_command(args.runs, args.json, args.samples, args.seed, args.work)


def command_analyze_vote(args: argparse.Namespace) -> int:
    from neuromath.experiments.run_vote import vote_command  # the task readers: loaded only here

    return vote_command(args.runs, args.json, args.samples, args.seed, args.work)


def command_analyze_seeds(args: argparse.Namespace) -> int:
    from neuromath.experiments.fit_then_test import combine_runs, combined_runs_table
    from neuromath.fileio import write_text_atomic

    combined = combine_runs(args.run_dirs)
    text = json.dumps(combined, indent=2) if args.json else combined_runs_table(combined)
    print(text, end="" if text.endswith("\n") else "\n")
    if args.out:
        write_text_atomic(args.out, json.dumps(combined, indent=2) + "\n")
    return 0


def register(commands) -> None:
    analyze = commands.add_parser(
        "analyze", help="look inside a trained run (roles: TP-Attention role vectors; edits: equation classifiers by "
                        "the depth of the edit; seeds: mean ± std of runs trained apart; slices, vote: word "
                        "problems)",
        **documented(
            "Look inside trained runs: the role vectors of a TP-Transformer's heads against token classes (roles), "
            "how equation classifiers judge false equations by the depth of the edit that made them (edits), "
            "the mean ± std of the recorded scores of runs trained with different seeds (seeds), word-problem "
            "accuracy on slices of the test problems (slices) and what a vote of runs would score (vote). Run "
            "neuromath analyze ANALYSIS --help for each one's options.",
            "neuromath analyze roles runs/tp --data md4-test --out runs/tp/roles",
            "neuromath analyze edits runs/tree_lstm/seed0 --data data/identities.test.json",
            "neuromath analyze seeds runs/tree_lstm/seed0 runs/tree_lstm/seed1 runs/tree_lstm/seed2",
        ),
    )
    kinds = analyze.add_subparsers(dest="analysis", required=True, metavar="ANALYSIS", help="the analysis to run")
    for add in (add_roles, add_edits, add_seeds, add_slices, add_vote):
        add(kinds)


def add_roles(kinds) -> None:
    roles = kinds.add_parser(
        "roles", help="k-means of the TP-Attention role vectors of every head and layer against token classes, with "
                      "a shuffled baseline and a PCA plot",
        **documented(
            "Run a trained TP-Transformer teacher-forced over --data and collect the role vector of every head of "
            "every TP-Attention layer at every token. Per head, cluster them with k-means and measure purity and "
            "normalised mutual information against the tokens' classes (digit, letter, operator, ...), beside the "
            "same clusters with the classes shuffled. Prints the table of heads and writes OUT/report.md, "
            "OUT/report.json and OUT/roles_pca.png (one head's roles on their first two principal components).",
            "neuromath analyze roles runs/tp --data md4-test --k 20 --out runs/tp/roles",
            "neuromath analyze roles runs/tp --data md4-test --max-examples 500 --head 3 \\\n"
            "    --out runs/tp/roles_head3",
        ),
    )
    roles.add_argument("run_dir", metavar="RUN_DIR",
                       help="a trained run whose model has TP-Attention layers, e.g. of mathematics_dataset/"
                            "tp_transformer")
    roles.add_argument("--data", type=data_path, required=True, help="examples to run the model on (teacher-forced)")
    roles.add_argument("--out", required=True, help="folder for report.md, report.json and roles_pca.png")
    roles.add_argument("--k", type=integer_in(1, 1000), default=20, help="clusters per head (default 20)")
    roles.add_argument("--max-examples", dest="max_examples", type=integer_in(0, MAX_EXAMPLES), default=2000,
                       help="the first this many examples of the data (0: all; default 2000)")
    roles.add_argument("--max-vectors", dest="max_vectors", type=integer_in(0, MAX_EXAMPLES), default=20000,
                       help="per head, a seeded sample of at most this many token occurrences (0: all; default 20000)")
    roles.add_argument("--shuffles", type=integer_in(1, 10_000), default=20,
                       help="shuffles of the token classes for the chance baseline (default 20)")
    roles.add_argument("--head", type=integer_in(1, 100_000), default=None, metavar="ROW",
                       help="the row of the printed table whose clusters and PCA plot the report shows "
                            "(default: the head with the largest NMI)")
    add_seed_option(roles, "seed of the sample of token occurrences, k-means and the shuffles")
    roles.add_argument("--batch-size", dest="batch_size", type=batch_size, default=64,
                       help="examples per forward pass (default 64)")
    add_format_option(roles)
    add_json_option(roles, "the report as one JSON object")
    roles.set_defaults(handler=command_analyze_roles)


def add_edits(kinds) -> None:
    edits = kinds.add_parser(
        "edits", help="equation classifiers: the share of false equations called false, by how far below the root "
                      "the edit that made each one lies",
        **documented(
            "For every false equation of an identities file (--data), find the deepest position at which some true "
            "equation of the same file equals it but for the subtree there (level 1: a whole side). Prints, per "
            "run, the share of false equations called false at each level beside the share of true equations "
            "called true; writes nothing.",
            "neuromath analyze edits runs/tree_lstm/seed0 runs/tree_rnn --data data/identities.test.json",
            "neuromath analyze edits runs/tree_lstm/seed0 --data data/identities.test.json --json",
        ),
    )
    edits.add_argument("run_dirs", metavar="RUN_DIR", nargs="+", help="trained identities runs (equation classifiers)")
    edits.add_argument("--data", type=data_path, required=True, help="an identities file with true and false equations")
    edits.add_argument("--batch-size", dest="batch_size", type=batch_size, default=512,
                       help="equations per forward pass (default 512)")
    add_json_option(edits, "the result as one JSON object")
    edits.set_defaults(handler=command_analyze_edits)


def add_seeds(kinds) -> None:
    seeds = kinds.add_parser(
        "seeds", help="mean ± std of the epochs, best validation accuracy and test scores (by depth for equation "
                      "classifiers) in runs' summary.json; runs named seed<S> under one folder are one row",
        **documented(
            "Read the summary.json of finished runs and print the mean ± std of their epochs, best validation "
            "accuracy and test scores (by depth for equation classifiers). Runs named seed<S> under one folder make "
            "one row, so seeds trained apart, one process each, give the table that train --seeds gives. Nothing "
            "is trained or decoded; --out also writes the result as JSON.",
            "neuromath analyze seeds runs/tree_lstm/seed0 runs/tree_lstm/seed1 runs/tree_lstm/seed2",
            "neuromath analyze seeds runs/sweep/*/seed* --json --out runs/sweep_seeds.json",
        ),
    )
    seeds.add_argument("run_dirs", metavar="RUN_DIR", nargs="+",
                       help="finished runs (with a summary.json); runs named seed<S> under one folder are one row")
    add_json_option(seeds, "the result as one JSON object")
    seeds.add_argument("--out", default=None, help="also write the result as JSON to this file")
    seeds.set_defaults(handler=command_analyze_seeds)


def add_pairing_options(parser) -> None:
    """--work, --samples, --seed and --json of the analyses that pair word-problem runs (slices, vote)."""
    parser.add_argument("--work", default=None, metavar="DIR",
                        help="where a test file a results recipe generated ({work}/...) is: WORK/<experiment>")
    parser.add_argument("--samples", type=bootstrap_samples, default=10_000,
                        help="paired bootstrap resamples (default 10000)")
    add_seed_option(parser, "seed of the bootstrap")
    add_json_option(parser, "the table as one JSON object")


def add_slices(kinds) -> None:
    slices = kinds.add_parser(
        "slices", help="word problems: accuracy on slices of the test problems (a number left unused, how many "
                       "numbers, how many operators), later runs paired with the first",
        **documented(
            "Read each run's test prediction records and the gold test file its config names, and print value "
            "accuracy on slices of the test problems: those whose gold equation leaves a given number unused (the "
            "corpus's own distractors) and the others, by how many numbers the problem gives and by how many "
            "operators its equation has. A run is a cv folder (pooled over its folds), a folder of seeds (pooled "
            "over seed<S>) or one run; evidence folders under results/ work too. Every later run is paired with "
            "the first on each slice: the difference, its paired bootstrap interval and McNemar's exact p. "
            "Nothing is trained or decoded.",
            "neuromath analyze slices runs/cv_g2t runs/cv_g2t_irrelevant",
            "neuromath analyze slices results/word-problems-cv/runs/graph2tree-asdiv "
            "results/word-problems-generalise/runs/graph2tree-combined-asdiv",
        ),
    )
    slices.add_argument("runs", metavar="RUN", nargs="+",
                        help="cv folders, folders of seeds or runs that scored the same test problems")
    add_pairing_options(slices)
    slices.set_defaults(handler=command_analyze_slices)


def add_vote(kinds) -> None:
    voting = kinds.add_parser(
        "vote", help="word problems: what a majority vote of finished runs would score, from their kept predictions",
        **documented(
            "Read each run's test prediction records and the gold test file its config names, compute each "
            "predicted equation's value again, and print what a majority vote of the runs would score: per problem "
            "the answer most runs gave, ties to the earliest run given (as cv --seeds votes). Runs are cv folders, "
            "folders of seeds or single runs over the same test problems; evidence folders under results/ work "
            "too. Also printed: each run's accuracy, the vote paired with the first run, the share of problems some "
            "run got right (the ceiling of any vote of these runs) and the share every run answered alike. A vote "
            "whose members were chosen by these test scores is a diagnostic, not a result. Nothing is trained or "
            "decoded.",
            "neuromath analyze vote runs/cv_g2t runs/cv_g2t_ngrams runs/cv_g2t_subwords",
            "neuromath analyze vote results/word-problems-cv/runs/graph2tree-mawps "
            "results/word-problems-generalise/runs/graph2tree-ngrams-mawps "
            "results/word-problems-generalise/runs/graph2tree-canonical-mawps",
        ),
    )
    voting.add_argument("runs", metavar="RUN", nargs="+",
                        help="two or more cv folders, folders of seeds or runs that scored the same test problems")
    add_pairing_options(voting)
    voting.set_defaults(handler=command_analyze_vote)
