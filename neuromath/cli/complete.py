"""neuromath complete: equation completion, ranking every candidate filler of each blank (identities runs)."""

from __future__ import annotations

import argparse
import json
import time

from neuromath.cli.common import add_json_option, data_path, documented, worker_count
from neuromath.errors import NeuromathError
from neuromath.evaluation.scoring import run_names
from neuromath.evaluation.verification import (
    blank_positions,
    completion_kind_table,
    completion_metrics,
    completion_table,
    numeric_completion_score,
    write_completion_scores,
)
from neuromath.fileio import write_text_atomic
from neuromath.tasks.identities import read_candidates, read_equations


def command_complete(args: argparse.Namespace) -> int:
    """Equation completion: rank every candidate for each blank by the run's verification logit."""
    import torch  # torch and the api: loaded only by the commands that use them

    from neuromath.api import load_classifier
    from neuromath.models.hub import model_folder

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    examples = read_equations(args.blanks)
    positions = [p for p, e in zip(blank_positions(examples), examples) if e.blank is not None]
    examples = [e for e in examples if e.blank is not None]
    if not examples:
        raise NeuromathError(f"{args.blanks}: no equation with a blank (blankNodeNum)")
    candidates = read_candidates(args.candidates)
    if args.ensemble and len(args.run_dirs) < 2:
        raise NeuromathError("--ensemble averages several runs: name at least two")
    if args.scores and len(args.run_dirs) != 1:
        raise NeuromathError("--scores writes one run's scores: name exactly one run")
    rows, run_scores = {}, []  # run_scores: each run's scores by blank, kept for the ensemble row
    for run_dir, name in zip(args.run_dirs, run_names(args.run_dirs)):
        started = time.perf_counter()
        model = load_classifier(model_folder(run_dir))  # a folder, or a model on the hub by id
        scorer, scores = model.completion_scorer([c.tree for c in candidates]), {}

        def remembered(equation, path, scorer=scorer, scores=scores):
            if (id(equation), path) not in scores:  # the examples stay alive, so ids are stable
                scores[id(equation), path] = scorer(equation, path)
            return scores[id(equation), path]

        if args.scores:  # every blank's scores, kept for the metrics below
            write_completion_scores(args.scores, examples, positions, remembered)
        rows[name] = completion_metrics(examples, candidates,
                                        remembered if args.ensemble or args.scores else scorer)
        rows[name]["seconds"] = time.perf_counter() - started
        run_scores.append(scores)
    if args.ensemble:
        started = time.perf_counter()
        rows[f"mean of {len(run_scores)} runs"] = completion_metrics(
            examples, candidates,
            lambda equation, path: sum(scores[id(equation), path] for scores in run_scores) / len(run_scores),
        )
        rows[f"mean of {len(run_scores)} runs"]["seconds"] = time.perf_counter() - started
    if args.numeric:
        started = time.perf_counter()
        rows["numeric checker"] = completion_metrics(examples, candidates, numeric_completion_score(candidates))
        rows["numeric checker"]["seconds"] = time.perf_counter() - started
    if args.json:
        print(json.dumps({"blanks": str(args.blanks), "candidates": str(args.candidates), "runs": rows}))
    else:
        print(f"{len(examples)} blanks, {len(candidates)} candidates in "
              f"{len({c.value_class for c in candidates})} value classes\n")
        print(completion_table(rows), end="")
        print(f"\nBy what the blank hides:\n\n{completion_kind_table(rows)}", end="")
    if args.out:
        write_text_atomic(args.out, json.dumps(rows, indent=2))
    return 0


def register(commands) -> None:
    complete = commands.add_parser(
        "complete", help="equation completion: rank candidate fillers of blanks (identities)",
        **documented(
            "Equation completion with trained identities runs: every candidate of --candidates is put into each "
            "blank of --blanks, the filled equation is scored with the run's verification logit, and the "
            "candidates are ranked; a candidate is right when it is in the blank's value class. Prints top-1, "
            "top-5, the mean reciprocal rank and the seconds of each run, overall, by depth and by what the blank "
            "hides (a symbol, a number or an expression).",
            "neuromath complete runs/tree_lstm/seed0 --blanks identities/40k_test_blank_0.json \\\n"
            "    --candidates identities/candidate_classes.json",
            "neuromath complete runs/tree_lstm/seed0 runs/tree_lstm/seed1 runs/tree_lstm/seed2 --ensemble \\\n"
            "    --numeric --threads 1 --blanks identities/40k_test_blank_0.json \\\n"
            "    --candidates identities/candidate_classes.json --out runs/completion.json",
            "neuromath complete runs/released/tree_smu --threads 1 --blanks identities/40k_test_blank_0.json \\\n"
            "    --candidates identities/candidate_classes.json --scores runs/released/tree_smu/blank0.jsonl",
        ),
    )
    complete.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="trained identities runs")
    complete.add_argument("--blanks", type=data_path, required=True,
                          help="equations with a blank (blankNodeNum), released JSON format")
    complete.add_argument("--candidates", type=data_path, required=True,
                          help="candidate classes file, released JSON format")
    complete.add_argument("--ensemble", action="store_true",
                          help="add a row that ranks by the runs' mean logit (an ensemble of the runs)")
    complete.add_argument("--numeric", action="store_true", help="add the numeric checker as a reference row")
    complete.add_argument("--threads", type=worker_count, default=None,
                          help="torch CPU threads (default: torch's, one per core); on a machine busy with other "
                               "work 1 is much faster, since the path-wise scoring is many small operations")
    add_json_option(complete)
    complete.add_argument("--out", default=None, help="also write the metrics as JSON to this file")
    complete.add_argument("--scores", default=None, metavar="FILE.jsonl",
                          help="also write every blank's scores (one run only): a JSON line per blank, "
                               '{"depth": D, "index": I, "scores": [...]}, D and I its place in --blanks, one score '
                               "(the logit of true) per candidate in the order of --candidates flattened group by "
                               "group")
    complete.set_defaults(handler=command_complete)
