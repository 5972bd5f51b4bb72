"""neuromath results: run the recipes of results/ and verify their evidence. The docs' results pages are written
from that evidence by the repository's own tool, ``python -m tools.results_pages build``, which the wheel does not
carry."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from neuromath.cli.common import add_json_option, documented, worker_count


def command_results_verify(args: argparse.Namespace) -> int:
    from neuromath.dataroot import data_root
    from neuromath.results.evidence import verify_recipe
    from neuromath.results.recipes import RECIPE_FILE, find_recipes, load_recipe

    recipes = []
    for path in args.recipes or [args.results]:  # an experiment's folder or recipe, or a results folder of them
        folder = Path(path)
        whole = folder.is_dir() and not (folder / RECIPE_FILE).exists() and any(folder.glob(f"*/{RECIPE_FILE}"))
        recipes += find_recipes(folder) if whole else [load_recipe(folder)]
    root = data_root()
    problems, checked = [], {}
    for recipe in recipes:
        recipe_problems, lines = verify_recipe(recipe, root, with_gold=not args.no_gold, work=args.work)
        problems += recipe_problems
        checked[recipe.name] = lines
        for line in [] if args.json else lines:
            print(line)
    if args.json:
        print(json.dumps({"verified": not problems, "experiments": checked, "problems": problems}, indent=2))
        return 1 if problems else 0
    for problem in problems:
        print(f"FAILED {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"every reported score, mean and spread of {len(recipes)} experiments follows from its records")
    return 0


def command_results_run(args: argparse.Namespace) -> int:
    from neuromath.results.recipes import load_recipe
    from neuromath.results.runner import run_recipe

    recipe = load_recipe(args.recipe)
    outcome = run_recipe(recipe, args.work, jobs=args.jobs, only=args.only, force=args.force)
    for name, what in outcome.items():
        print(f"{name}: {what}")
    return 1 if any(what.startswith("failed") for what in outcome.values()) else 0


def register(commands) -> None:
    results = commands.add_parser(
        "results", help="run recipes and verify their evidence",
        **documented(
            "The experiments behind every reported number. results/<experiment>/recipe.yaml holds the exact commands, "
            "seeds and data files (with sha256); results/<experiment>/runs/<run>/ the compact evidence of each run "
            "(summaries, metrics, predictions, environment). `run` makes the evidence, `verify` recomputes each "
            "reported accuracy from it. The docs' results pages are written from the evidence by "
            "`python -m tools.results_pages build`, run in a checkout of the repository.",
            "neuromath results run results/word-problems-cv --jobs 2",
            "neuromath results verify",
        ),
    )
    sub = results.add_subparsers(dest="results_command", required=True, metavar="COMMAND",
                                 help="run or verify")
    verify = sub.add_parser(
        "verify", help="recompute every reported accuracy from its predictions and the gold data",
        **documented(
            "For every run with evidence: the test scores of each summary.json (per depth, per module, per beam width) "
            "are recomputed from its predictions (and, where the data root holds the recipe's files with the "
            "recipe's sha256, from the gold data), its best validation score, epochs and steps from its metrics.csv, "
            "the means and standard deviations of report.json and seeds.json from its folds' and seeds' summaries, "
            "and the evidence is checked against its recipe (command, model, data files). Each difference is "
            "printed with the file, the number it states and the number recomputed; the exit status is 1 when there "
            "is one. RECIPE may be an experiment's folder or a whole results folder (a copy, say).",
            "neuromath results verify",
            "neuromath results verify results/word-problems-cv --no-gold",
            "neuromath results verify ~/results-copy --no-gold",
        ),
    )
    verify.add_argument("recipes", nargs="*", metavar="RECIPE",
                        help="results/<experiment> folders or recipe.yaml files, or results folders holding them "
                             "(default: every experiment of --results)")
    verify.add_argument("--results", default="results", help="the results folder (default: results)")
    verify.add_argument("--work", default=None,
                        help="the work folder of `results run`, which holds the files a recipe's setup generated "
                             "(WORK/<experiment>/...); without it, those runs are checked against their predictions")
    verify.add_argument("--no-gold", action="store_true",
                        help="check the predictions against the summaries only, without reading the gold data")
    add_json_option(verify, "one JSON object: verified (true or false), what was checked of each experiment, and the "
                            "problems found")
    verify.set_defaults(handler=command_results_verify)
    run = sub.add_parser(
        "run", help="run a recipe and collect its evidence",
        **documented(
            "Run every run of a recipe that has no evidence yet, JOBS at a time, in WORK/<experiment>/<run> "
            "(resumable: a cross-validation reuses its finished folds, a training resumes from its last checkpoint), "
            "and copy each finished run's evidence into results/<experiment>/runs/<run>/. The recipe's data files "
            "are checked against their sha256 before anything trains.",
            "neuromath results run results/word-problems-cv --jobs 2",
            "neuromath results run results/word-problems-cv --only graph2tree-mawps --work /scratch/neuromath",
        ),
    )
    run.add_argument("recipe", type=Path, metavar="RECIPE", help="a results/<experiment> folder or its recipe.yaml")
    run.add_argument("--jobs", type=worker_count, default=1, help="runs at a time (default 1)")
    run.add_argument("--work", default="runs/results", help="where the run folders go (default: runs/results)")
    run.add_argument("--only", nargs="+", metavar="RUN", default=None, help="run only these runs of the recipe")
    run.add_argument("--force", action="store_true", help="run again, and replace, runs that have evidence")
    run.set_defaults(handler=command_results_run)


__all__ = ["register"]
