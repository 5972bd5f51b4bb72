"""The ``neuromath`` command: demo, generate, train, evaluate, complete, cv, data, solve."""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from pathlib import Path

from neuromath.errors import NeuromathError

DEMO_PROBLEMS = ("Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?",)
DEMO_OVERRIDES = (
    "train.max_epochs=40",
    "train.patience=6",
    "train.max_time_minutes=3.5",
    "train.num_threads=2",
)


def command_generate(args: argparse.Namespace) -> int:
    from neuromath.tasks import get_task

    task = get_task(args.task)
    started = time.perf_counter()
    examples = task.generate(args.n, random.Random(args.seed))
    task.write(examples, args.out)
    print(f"wrote {len(examples)} {args.task} examples to {args.out} in {time.perf_counter() - started:.1f} s")
    return 0


def command_generate_mathematics(args: argparse.Namespace) -> int:
    from neuromath.tasks.mathematics_generator import generate_directory

    report = generate_directory(
        args.out, args.per_module, splits=args.splits.split(","), modules=args.modules, seed=args.seed,
        workers=args.workers, progress=args.progress,
    )
    print(f"{args.out}: {report.summary()}")
    return 0


def command_generate_identities(args: argparse.Namespace) -> int:
    from neuromath.tasks.identity_generator import generate_identity_files

    report = generate_identity_files(
        args.n, args.max_depth, args.seed, args.out, workers=args.workers, progress=args.progress
    )
    print(report.table)
    print(report.summary())
    return 0


def command_generate_symbolic(args: argparse.Namespace) -> int:
    from neuromath.tasks.symbolic_generator import generate_symbolic_file

    report = generate_symbolic_file(
        args.out, args.n, method=args.method, max_ops=args.max_ops, seed=args.seed, workers=args.workers,
        time_limit=args.time_limit, progress=args.progress, unique=args.unique,
    )
    print(report.summary())
    return 0


def command_train(args: argparse.Namespace) -> int:
    from neuromath.config import load_config

    config = load_config(args.config, args.set or [])
    if args.seeds < 1:
        raise NeuromathError(f"--seeds must be at least 1, not {args.seeds}")
    if args.seeds == 1:
        train_one(config, args.out, args.resume)
        return 0
    # N seeds: RUN_DIR/seed<S> for S = train.seed .. train.seed + N - 1, then mean and standard deviation
    summaries = []
    for offset in range(args.seeds):
        seed = config.train.seed + offset
        print(f"== seed {seed}")
        seeded = dataclasses.replace(config, train=dataclasses.replace(config.train, seed=seed))
        summaries.append(train_one(seeded, Path(args.out) / f"seed{seed}", args.resume))
    summarise_seeds(config, summaries, Path(args.out))
    return 0


def train_one(config, out, resume: bool) -> dict:
    """Train one run and print its outcome; returns its summary."""
    from neuromath.tasks import get_task

    if config.data.task == "identities":
        from neuromath.training.identities import train_classifier

        summary = train_classifier(config, out, resume=resume)
        print(f"trained {summary['model']}: {summary['epochs']} epochs ({summary['steps']} steps); best validation "
              f"accuracy {_percent(summary['best_val_accuracy'])}; run saved in {out}")
        if "test" in summary:
            test = summary["test"]
            print(f"test: accuracy {_percent(test['accuracy'])}, precision {_percent(test['precision'])}, "
                  f"recall {_percent(test['recall'])} on {test['n']} equations")
        return summary
    from neuromath.training.run import train

    task = get_task(config.data.task)
    summary = train(config, out, resume=resume).summary
    print(
        f"trained {summary['epochs']} epochs ({summary['steps']} steps); best validation {task.accuracy_label} "
        f"{_percent(summary['best_val_value_accuracy'])}; run saved in {out}"
    )
    if "test" in summary:
        test = summary["test"]
        equation = f", {task.equation_label} {_percent(test['equation_accuracy'])}" if task.equation_label else ""
        print(f"test: {task.accuracy_label} {_percent(test['value_accuracy'])}{equation} on {test['n']} examples")
    return summary


def summarise_seeds(config, summaries: list[dict], out: Path) -> None:
    """Mean ± standard deviation of the test scores over seeds: printed and written to OUT/seeds.json (and, for
    the identities task, OUT/seeds.md with the by-depth table)."""
    import statistics

    from neuromath.fileio import write_text_atomic

    tested = [s["test"] for s in summaries if "test" in s]
    if not tested:
        print("no test set: nothing to average over seeds")
        return
    if config.data.task == "identities":
        from neuromath.evaluation.identities import mean_and_std, mean_std_table

        combined = mean_and_std(tested)
        table = mean_std_table({config.model.name: combined})
        write_text_atomic(out / "seeds.md", f"# {config.model.name}: test over {len(tested)} seeds (mean ± std, %)\n\n{table}")
        print(table, end="")
    else:
        values = [t["value_accuracy"] for t in tested]
        combined = {"value_accuracy": {"mean": statistics.fmean(values),
                                       "std": statistics.stdev(values) if len(values) > 1 else 0.0}}
        print(f"test {_percent(combined['value_accuracy']['mean'])} ± {100 * combined['value_accuracy']['std']:.1f} "
              f"over {len(values)} seeds")
    combined["runs"] = [s["run_dir"] for s in summaries]
    write_text_atomic(out / "seeds.json", json.dumps(combined, indent=2))
    print(f"written to {out / 'seeds.json'}")


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def is_identities_run(run_dir: str) -> bool:
    return (Path(run_dir) / "node_vocab.json").exists()


def command_evaluate_identities(args: argparse.Namespace) -> int:
    """Verification accuracy, precision and recall by depth of each run and of the numeric checker."""
    from neuromath.evaluation.identities import depth_table, numeric_checker, verification_metrics, write_verification_report
    from neuromath.tasks.identities import read_equations
    from neuromath.training.identities import load_classifier

    skipped: list = []
    examples = read_equations(args.data, lenient=args.lenient, skipped=skipped)
    for error in skipped:
        print(f"skipped: {error}", file=sys.stderr)
    if not examples or any(e.label is None for e in examples):
        raise NeuromathError(f"{args.data}: evaluation needs equations labelled 1 or 0")
    rows = {}
    for run_dir, name in zip(args.run_dirs, run_names(args.run_dirs)):
        classifier = load_classifier(run_dir)
        rows[name] = verification_metrics(examples, (classifier.logits(examples) > 0).tolist())
    predictions, undecided = numeric_checker(examples)
    rows["numeric checker"] = verification_metrics(examples, predictions)
    rows["numeric checker"]["undecided"] = undecided
    out = Path(args.report) if args.report else Path(args.run_dirs[0]) / "report"
    write_verification_report(rows, out)
    if args.json:
        print(json.dumps({"data": str(args.data), "skipped": len(skipped), "runs": rows}))
        return 0
    for measure in ("accuracy", "precision", "recall"):
        print(f"{measure} (%) by depth on {args.data}\n{depth_table(rows, measure)}")
    print(f"the numeric checker left {undecided} equations undecided (counted as not identities)")
    print(f"report written to {out}/report.md, report.json, accuracy_by_depth.png")
    return 0


def command_complete(args: argparse.Namespace) -> int:
    """Equation completion: rank every candidate for each blank by the run's verification logit."""
    from neuromath.evaluation.identities import completion_metrics, completion_table, numeric_completion_score
    from neuromath.fileio import write_text_atomic
    from neuromath.tasks.identities import read_candidates, read_equations
    from neuromath.training.identities import load_classifier

    examples = read_equations(args.blanks)
    examples = [e for e in examples if e.blank is not None]
    if not examples:
        raise NeuromathError(f"{args.blanks}: no equation with a blank (blankNodeNum)")
    candidates = read_candidates(args.candidates)
    rows = {}
    for run_dir, name in zip(args.run_dirs, run_names(args.run_dirs)):
        classifier = load_classifier(run_dir)
        rows[name] = completion_metrics(examples, candidates, lambda filled: classifier.logits(filled).tolist())
    if args.numeric:
        rows["numeric checker"] = completion_metrics(examples, candidates, numeric_completion_score())
    if args.json:
        print(json.dumps({"blanks": str(args.blanks), "candidates": str(args.candidates), "runs": rows}))
    else:
        print(f"{len(examples)} blanks, {len(candidates)} candidates in "
              f"{len({c.value_class for c in candidates})} value classes\n")
        print(completion_table(rows), end="")
    if args.out:
        write_text_atomic(args.out, json.dumps(rows, indent=2))
    return 0


def command_evaluate(args: argparse.Namespace) -> int:
    import neuromath

    if all(is_identities_run(run_dir) for run_dir in args.run_dirs):
        return command_evaluate_identities(args)
    if all(run_task(run_dir) == "symbolic" for run_dir in args.run_dirs):
        return command_evaluate_symbolic(args)
    for option in ("beams", "train"):
        if getattr(args, option) is not None:
            raise NeuromathError(f"--{option} applies to symbolic runs only")
    from neuromath.evaluation.evaluate import evaluate_examples, write_predictions

    if args.predictions and len(args.run_dirs) > 1:
        raise NeuromathError("--predictions names one file; with several runs each writes RUN_DIR/predictions.jsonl")
    names = run_names(args.run_dirs)
    results, records_by_run = {}, {}
    read_cache: dict[str, tuple[list, list]] = {}  # runs with the same task and data settings read the data once
    for run_dir, name in zip(args.run_dirs, names):
        solver = neuromath.load(run_dir, **decode_options(args))
        task = solver.task
        skipped: list = []  # malformed rows (with --lenient)
        options = task.read_options(solver.config.data, "test")
        for key in ("modules", "splits", "per_module"):
            value = getattr(args, key)
            if value is not None:
                if key not in options:
                    raise NeuromathError(f"--{key.replace('_', '-')} does not apply to the {task.name} task")
                options[key] = value
        cache_key = json.dumps([task.name, options], sort_keys=True)
        if cache_key not in read_cache:
            examples = task.read(args.data, args.format, lenient=args.lenient, skipped=skipped, **options)
            read_cache[cache_key] = examples, skipped
        examples, skipped = read_cache[cache_key]
        if not examples:
            raise NeuromathError(f"{args.data}: no examples to evaluate")
        metrics, records = evaluate_examples(solver, examples)
        predictions = Path(args.predictions) if args.predictions else Path(run_dir) / "predictions.jsonl"
        write_predictions(records, predictions)
        metrics.update({"run": str(run_dir), "data": str(args.data), "skipped": len(skipped),
                        "predictions": str(predictions)})
        results[name], records_by_run[name] = metrics, records
        if not args.json:
            print_metrics(name if len(names) > 1 else None, metrics, task, solver, skipped)

    report = None
    if all(records and "module" in records[0] for records in records_by_run.values()):
        from neuromath.evaluation.modules_report import build_report, to_markdown, write_report

        meta = {name: run_meta(run_dir) for run_dir, name in zip(args.run_dirs, names)}
        report = build_report(records_by_run, meta)
        out = Path(args.report) if args.report else Path(args.run_dirs[0]) / "report"
        paths = write_report(report, out)
        if not args.json:
            print()
            print(to_markdown(report))
            print(f"report written to {', '.join(str(p) for p in paths.values())}")
    if args.json:
        if len(names) == 1:
            output = dict(results[names[0]])
            if report is not None:
                output["report"] = report
        else:
            output = {"runs": results, "report": report}
        print(json.dumps(output))
    return 0


def run_task(run_dir: str) -> str | None:
    """The task named in a run's config.yaml (None when it cannot be read; loading the run reports why)."""
    from neuromath.config import load_config

    try:
        return load_config(Path(run_dir) / "config.yaml").data.task
    except NeuromathError:
        return None


def command_evaluate_symbolic(args: argparse.Namespace) -> int:
    """Exact match and verified accuracy at each beam width, on the full and the deduplicated test set."""
    from neuromath.config import load_config
    from neuromath.evaluation.symbolic import evaluate_symbolic, format_report, write_symbolic_report
    from neuromath.tasks.symbolic import read_pairs

    for option in ("modules", "splits", "per_module", "beam", "nbest", "verify"):
        if getattr(args, option) is not None:
            raise NeuromathError(f"--{option.replace('_', '-')} does not apply to the symbolic task "
                                 "(it decodes with every width of --beams and verifies every hypothesis)")
    beams = parse_beams(args.beams or "1,10,50")
    skipped: list = []
    examples = read_pairs(args.data, args.format, lenient=args.lenient, skipped=skipped)
    for error in skipped:
        print(f"skipped: {error}", file=sys.stderr)
    if not examples:
        raise NeuromathError(f"{args.data}: no examples to evaluate")
    outputs = {}
    for run_dir, name in zip(args.run_dirs, run_names(args.run_dirs)):
        train_path = args.train or load_config(Path(run_dir) / "config.yaml").data.train
        train = read_pairs(train_path, lenient=args.lenient) if train_path else None
        report, records = evaluate_symbolic(
            run_dir, examples, beams, train=train, length_penalty=args.length_penalty, constrained=args.constrained,
            progress=not args.json,
        )
        report.update({"data": str(args.data), "train": train_path, "skipped": len(skipped)})
        out = Path(args.report) / name if args.report and len(args.run_dirs) > 1 else Path(args.report or Path(run_dir) / "report")
        paths = write_symbolic_report(report, records, out)
        outputs[name] = report
        if not args.json:
            if len(args.run_dirs) > 1:
                print(f"== {name}")
            if train is None:
                print("no training file known (the run generated its data; give --train FILE): full test set only")
            print(format_report(report), end="")
            print(f"report written to {paths['markdown']}, {paths['json']}, {paths['predictions']}")
    if args.json:
        print(json.dumps(outputs[run_names(args.run_dirs)[0]] if len(outputs) == 1 else {"runs": outputs}))
    return 0


def parse_beams(text: str) -> list[int]:
    try:
        beams = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise NeuromathError(f"--beams takes a comma list of widths such as 1,10,50, not {text!r}") from None
    if not beams or min(beams) < 1:
        raise NeuromathError(f"--beams: widths must be at least 1, not {text!r}")
    return beams


def command_data_dedup(args: argparse.Namespace) -> int:
    """Remove duplicate inputs within TRAIN and TEST and the TEST pairs whose input occurs in TRAIN."""
    from neuromath.tasks.symbolic import deduplicate, read_pairs, write_pairs

    skipped: list = []
    train = read_pairs(args.train, lenient=args.lenient, skipped=skipped)
    test = read_pairs(args.test, lenient=args.lenient, skipped=skipped)
    for error in skipped:
        print(f"skipped: {error}", file=sys.stderr)
    train_kept, test_kept, counts = deduplicate(train, test)
    train_out = Path(args.train_out) if args.train_out else dedup_path(args.train)
    test_out = Path(args.test_out) if args.test_out else dedup_path(args.test)
    write_pairs(train_kept, train_out)
    write_pairs(test_kept, test_out)
    result = {**counts.as_dict(), "skipped": len(skipped), "train_out": str(train_out), "test_out": str(test_out)}
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.train}: {counts.train_read} pairs, {counts.train_duplicates} duplicate inputs removed, "
          f"{counts.train_kept} written to {train_out}")
    print(f"{args.test}: {counts.test_read} pairs, {counts.test_duplicates} duplicate inputs removed, "
          f"{counts.test_in_train} inputs found in the training file removed, {counts.test_kept} written to {test_out}")
    return 0


def dedup_path(path: str) -> Path:
    """FILE.txt -> FILE.dedup.txt (FILE -> FILE.dedup)."""
    path = Path(path)
    return path.with_name(f"{path.stem}.dedup{path.suffix}") if path.suffix else path.with_name(f"{path.name}.dedup")


def run_names(run_dirs: list[str]) -> list[str]:
    """Short names for report columns: the folder names, or the paths when those repeat."""
    names = [Path(run_dir).name or str(run_dir) for run_dir in run_dirs]
    return names if len(set(names)) == len(names) else [str(run_dir) for run_dir in run_dirs]


def run_meta(run_dir: str) -> dict:
    """Parameters and steps of a run (from summary.json), shown beside its accuracies."""
    try:
        summary = json.loads((Path(run_dir) / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {key: summary[key] for key in ("parameters", "steps") if key in summary}


def print_metrics(name, metrics: dict, task, solver, skipped: list) -> None:
    if name:
        print(f"== {name}")
    for error in skipped:
        print(f"skipped: {error}", file=sys.stderr)
    label_width = 18
    print(f"{task.accuracy_label:<{label_width}}{_percent(metrics['value_accuracy'])} ({metrics['value_correct']}/{metrics['n']})")
    if task.equation_label:
        print(f"{task.equation_label:<{label_width}}{_percent(metrics['equation_accuracy'])} "
              f"({metrics['equation_correct']}/{metrics['n']})")
    if "nbest_value_accuracy" in metrics:
        print(f"{task.accuracy_label} of the {solver.decode.nbest}-best lists (any right) "
              f"{_percent(metrics['nbest_value_accuracy'])}")
    if metrics.get("unknown_tokens"):
        print(f"unknown input tokens: {metrics['unknown_tokens']} in {metrics['examples_with_unknown']} examples "
              f"(not in the run's vocabulary)")
    if skipped:
        print(f"skipped {len(skipped)} malformed rows (listed above)")
    print(f"predictions written to {metrics['predictions']}")


def command_solve(args: argparse.Namespace) -> int:
    import neuromath

    solver = neuromath.load(args.run_dir, **decode_options(args))
    solution = solver.solve(args.text)
    if args.json:
        print(json.dumps({
            "text": solution.text,
            "equation": solution.equation,
            "answer": solution.answer,
            "answer_text": solution.answer_text,
            "masked_equation": list(solution.masked_equation),
            "nbest": [
                {"tokens": list(c.tokens), "equation": c.equation, "answer_text": c.answer_text, "score": c.score,
                 "verified": c.verified}
                for c in solution.nbest
            ],
        }, ensure_ascii=False))
        return 0
    for rank, candidate in enumerate(solution.nbest, start=1):
        shown = f"{candidate.equation} = {candidate.answer_text}" if candidate.equation else " ".join(candidate.tokens) or "(empty)"
        mark = "" if candidate.verified is None else "" if candidate.verified else "  (not well-formed)"
        print(f"{rank:>3}. {shown:<40} score {candidate.score:8.4f}{mark}")
    if solution.nbest:
        print()
    if solution.equation:
        print(f"equation: {solution.equation}")
        print(f"answer: {solution.answer_text}")
    else:
        print(f"no well-formed equation (model output: {' '.join(solution.masked_equation) or 'empty'})")
        return 1
    return 0


def decode_options(args: argparse.Namespace) -> dict:
    """Decoding settings given on the command line (the run's config supplies the rest)."""
    options = {}
    for name in ("beam", "nbest", "length_penalty", "constrained", "verify"):
        value = getattr(args, name, None)
        if value is not None:
            options[name] = value
    if "beam" in options and "nbest" not in options:
        options["nbest"] = 1
    if "nbest" in options and "beam" not in options:
        options["beam"] = max(options["nbest"], 1)
    return options


def add_decode_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--beam", type=int, default=None, metavar="K", help="beam width (default: the run's, greedy = 1)")
    parser.add_argument("--nbest", type=int, default=None, metavar="N", help="keep the N best hypotheses (N <= beam)")
    parser.add_argument("--length-penalty", dest="length_penalty", type=float, default=None, metavar="ALPHA",
                        help="rank hypotheses by score / length^ALPHA")
    parser.add_argument("--constrained", action=argparse.BooleanOptionalAction, default=None,
                        help="only decode tokens that can still complete a well-formed expression")
    parser.add_argument("--verify", action=argparse.BooleanOptionalAction, default=None,
                        help="answer with the first n-best hypothesis the task's verifier accepts (default on)")


def command_demo(args: argparse.Namespace) -> int:
    import neuromath
    from neuromath.config import load_config
    from neuromath.training.run import train

    started = time.perf_counter()
    overrides = [*DEMO_OVERRIDES, f"train.seed={args.seed}", f"train.progress={str(args.progress).lower()}", *(args.set or [])]
    config = load_config(args.config, overrides)
    out = Path(args.out)
    if (out / "checkpoints").exists():
        import shutil

        shutil.rmtree(out)  # the demo's own folder: a fresh run every time
    print(f"demo: generating {config.data.generate_train} training problems and training a "
          f"{config.model.n_encoder_layers}+{config.model.n_decoder_layers}-layer Transformer on the CPU ...", flush=True)
    result = train(config, out)
    print(f"demo: trained {result.summary['epochs']} epochs in {time.perf_counter() - started:.0f} s "
          f"(best validation value accuracy {_percent(result.summary['best_val_value_accuracy'])})", flush=True)
    solver = neuromath.load(out)
    test, metrics = result.data.test, result.summary["test"]
    print(f"demo: equation accuracy {_percent(metrics['equation_accuracy'])} on the held-out problems")
    samples = list(DEMO_PROBLEMS) + [example.text for example in random.Random(args.seed).sample(test, 2)]
    for text in samples:
        solution = solver.solve(text)
        print(f"\nproblem:  {text}\nequation: {solution.equation or '(none)'}\nanswer:   {solution.answer_text or '(none)'}")
    print(f"\ndemo: finished in {time.perf_counter() - started:.0f} s; run saved in {out} "
          f"(try: neuromath solve {out} \"...\")")
    print(f"demo: value accuracy {100 * metrics['value_accuracy']:.1f}% on {metrics['n']} held-out problems")
    return 0


def command_cv(args: argparse.Namespace) -> int:
    """k-fold cross-validation: given fold folders (--folds) or a seeded random split of one file (--data, --k)."""
    from neuromath.config import load_config
    from neuromath.evaluation.cross_validation import (
        find_folds, format_report, read_data_file, run_cross_validation, write_random_folds,
    )

    config = load_config(args.config, args.set or [])
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
        k = 5 if args.k is None else args.k
        folds = write_random_folds(examples, k, 0 if args.seed is None else args.seed, out / "folds")
        # the folds are this project's JSON Lines, whatever format the source file had
        config = dataclasses.replace(config, data=dataclasses.replace(config.data, format="jsonl"))
    report = run_cross_validation(config, folds, out, progress=args.progress)
    if args.json:
        print(json.dumps(report))
    else:
        print(format_report(report), end="")
        print(f"report written to {out / 'report.md'} and {out / 'report.json'}")
    return 0


def command_data_templates(args: argparse.Namespace) -> int:
    """How many equation templates the normalisation of Wang et al. 2018a merges in each word-problem file."""
    from neuromath.tasks.word_problems import read_examples, template_counts

    rows = []
    for path in args.files:
        skipped: list = []
        counts = template_counts(read_examples(path, args.format, lenient=args.lenient, skipped=skipped))
        rows.append({"file": path, **counts, "skipped": len(skipped)})
        for error in skipped:
            print(f"skipped: {error}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows))
        return 0
    print("| file | problems | templates | normalised templates | merged | skipped |\n| --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(f"| {row['file']} | {row['examples']} | {row['templates']} | {row['normalised_templates']} "
              f"| {row['merged']} | {row['skipped']} |")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neuromath", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="show full tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="generate word problems, train a small Transformer, evaluate, solve")
    demo.add_argument("--out", default="runs/demo", help="run directory (replaced on every demo run)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--config", default=None, help="start from this config instead of the defaults")
    demo.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value")
    demo.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    demo.set_defaults(handler=command_demo)

    generate = commands.add_parser("generate", help="write generated problems")
    generators = generate.add_subparsers(dest="task", required=True, metavar="TASK")
    word_problems = generators.add_parser("word_problems", help="template-based word problems (JSON Lines)")
    word_problems.add_argument("--n", type=int, required=True)
    word_problems.add_argument("--seed", type=int, default=0)
    word_problems.add_argument("--out", required=True)
    word_problems.set_defaults(handler=command_generate)
    mathematics = generators.add_parser(
        "mathematics_dataset", help="DeepMind's Mathematics Dataset in the release layout OUT/<split>/<module>.txt"
    )
    mathematics.add_argument("--per-module", dest="per_module", type=int, required=True,
                             help="questions per module and split")
    mathematics.add_argument("--splits", default="train-easy,train-medium,train-hard,interpolate,extrapolate",
                             help="comma list of splits")
    mathematics.add_argument("--modules", default="*", help="comma list of module globs, e.g. 'arithmetic__*'")
    mathematics.add_argument("--seed", type=int, default=0)
    mathematics.add_argument("--out", required=True, help="root folder (complete module files already there are kept)")
    mathematics.add_argument("--workers", type=int, default=None, help="worker processes (default: one per CPU)")
    mathematics.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    mathematics.set_defaults(handler=command_generate_mathematics)

    identities = generators.add_parser(
        "identities", help="trigonometric / algebraic equations labelled true or false (released JSON format)"
    )
    identities.add_argument("--n", type=int, required=True, help="equations (half true, half false at each depth)")
    identities.add_argument("--max-depth", dest="max_depth", type=int, default=13)
    identities.add_argument("--seed", type=int, default=0)
    identities.add_argument("--out", required=True,
                            help="FILE.json: all equations; beside it FILE.train/.valid/.test.json and FILE.stats.md")
    identities.add_argument("--workers", type=int, default=1, help="worker processes")
    identities.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    identities.set_defaults(handler=command_generate_identities)

    symbolic = generators.add_parser(
        "symbolic", help="integration / ODE pairs in prefix notation (Lample & Charton's count|input<TAB>output)"
    )
    symbolic.add_argument("--method", choices=("backward", "forward", "parts", "ode1"), default="backward",
                          help="backward: (F', F); forward: (f, SymPy's integral); parts: integration by parts; "
                               "ode1: first-order ODEs")
    symbolic.add_argument("--n", type=int, required=True, help="pairs to keep")
    symbolic.add_argument("--max-ops", dest="max_ops", type=int, default=6,
                          help="operators of a random expression (drawn from 1..K)")
    symbolic.add_argument("--seed", type=int, default=0)
    symbolic.add_argument("--out", required=True, help="FILE; beside it FILE.stats.json (method, counts)")
    symbolic.add_argument("--workers", type=int, default=1, help="worker processes")
    symbolic.add_argument("--time-limit", dest="time_limit", type=float, default=5.0,
                          help="seconds per attempt (SymPy's simplify, integrate, solve)")
    symbolic.add_argument("--unique", action=argparse.BooleanOptionalAction, default=True,
                          help="keep each input once (canonical form), its count| counting the repeats (default on)")
    symbolic.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    symbolic.set_defaults(handler=command_generate_symbolic)

    train = commands.add_parser("train", help="train a model from a config")
    train.add_argument("--config", required=True)
    train.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    train.add_argument("--out", required=True, help="run directory")
    train.add_argument("--resume", action="store_true", help="continue from RUN_DIR/checkpoints/last.ckpt")
    train.add_argument("--seeds", type=int, default=1,
                       help="train N runs with seeds train.seed, train.seed+1, ... in RUN_DIR/seed<S> and report "
                            "the test scores' mean and standard deviation")
    train.set_defaults(handler=command_train)

    evaluate = commands.add_parser("evaluate", help="evaluate one or more runs on a data file or folder")
    evaluate.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="runs to evaluate (compared side by side)")
    evaluate.add_argument("--data", required=True)
    evaluate.add_argument("--format", default=None, help="data format (default: detected from the file)")
    evaluate.add_argument("--lenient", action="store_true", help="skip malformed rows and report them")
    evaluate.add_argument("--json", action="store_true", help="print one JSON object")
    evaluate.add_argument("--predictions", default=None, help="where to write predictions (default RUN_DIR/predictions.jsonl)")
    evaluate.add_argument("--modules", default=None, help="module globs to evaluate (default: the run's data.modules)")
    evaluate.add_argument("--splits", default=None, help="test splits to read (default: the run's data.test_splits)")
    evaluate.add_argument("--per-module", dest="per_module", type=int, default=None,
                          help="at most this many questions per module file")
    evaluate.add_argument("--report", default=None,
                          help="folder for the report (Mathematics Dataset: per-module report.md, .csv, .json, "
                               "accuracy.png; identities: report.md, .json, accuracy_by_depth.png); "
                               "default RUN_DIR/report of the first run")
    evaluate.add_argument("--beams", default=None, metavar="K,K,...",
                          help="symbolic: beam widths to decode with (default 1,10,50); solved when any hypothesis "
                               "of the beam verifies")
    evaluate.add_argument("--train", default=None, metavar="FILE",
                          help="symbolic: the training pairs the deduplicated test set is checked against "
                               "(default: the run's data.train)")
    add_decode_options(evaluate)
    evaluate.set_defaults(handler=command_evaluate)

    complete = commands.add_parser("complete", help="equation completion: rank candidate fillers of blanks (identities)")
    complete.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="trained identities runs")
    complete.add_argument("--blanks", required=True, help="equations with a blank (blankNodeNum), released JSON format")
    complete.add_argument("--candidates", required=True, help="candidate classes file, released JSON format")
    complete.add_argument("--numeric", action="store_true", help="add the numeric checker as a reference row (slow)")
    complete.add_argument("--json", action="store_true", help="print one JSON object")
    complete.add_argument("--out", default=None, help="also write the metrics as JSON to this file")
    complete.set_defaults(handler=command_complete)

    cv = commands.add_parser("cv", help="k-fold cross-validation of a word-problem model or retrieval baseline")
    cv.add_argument("--config", required=True,
                    help="the run config (model.name jaccard or cosine: a retrieval baseline, no training)")
    cv.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    cv.add_argument("--folds", default=None, metavar="DIR",
                    help="folder of fold0/, fold1/, ... each with train.csv and dev.csv (the test fold)")
    cv.add_argument("--data", default=None, metavar="FILE",
                    help="split this file into --k random folds instead (written to OUT/folds)")
    cv.add_argument("--k", type=int, default=None, help="folds of a --data split (default 5)")
    cv.add_argument("--seed", type=int, default=None, help="shuffle seed of a --data split (default 0)")
    cv.add_argument("--out", required=True,
                    help="folder: a run per fold in OUT/fold<k> (finished ones are reused), OUT/report.md, .json")
    cv.add_argument("--json", action="store_true", help="print the report as one JSON object")
    cv.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                    help="a line per fold on stderr (--no-progress also hides the training progress bars)")
    cv.set_defaults(handler=command_cv)

    data = commands.add_parser("data", help="inspect data files")
    data_commands = data.add_subparsers(dest="data_command", required=True, metavar="COMMAND")
    templates = data_commands.add_parser(
        "templates", help="word problems: distinct equation templates before and after normalisation"
    )
    templates.add_argument("files", nargs="+", metavar="FILE")
    templates.add_argument("--format", default=None, help="data format (default: detected from each file)")
    templates.add_argument("--lenient", action="store_true", help="skip malformed records and report them")
    templates.add_argument("--json", action="store_true", help="print one JSON list")
    templates.set_defaults(handler=command_data_templates)
    dedup = data_commands.add_parser(
        "dedup", help="symbolic: remove duplicate inputs within TRAIN and TEST, and TEST pairs whose input is in TRAIN"
    )
    dedup.add_argument("train", metavar="TRAIN")
    dedup.add_argument("test", metavar="TEST")
    dedup.add_argument("--train-out", dest="train_out", default=None, help="default TRAIN with .dedup before the suffix")
    dedup.add_argument("--test-out", dest="test_out", default=None, help="default TEST with .dedup before the suffix")
    dedup.add_argument("--lenient", action="store_true", help="skip malformed lines and report them")
    dedup.add_argument("--json", action="store_true", help="print the counts as one JSON object")
    dedup.set_defaults(handler=command_data_dedup)

    solve = commands.add_parser("solve", help="solve one word problem with a trained run")
    solve.add_argument("run_dir")
    solve.add_argument("text")
    solve.add_argument("--json", action="store_true")
    add_decode_options(solve)
    solve.set_defaults(handler=command_solve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except NeuromathError as error:
        if args.verbose:
            raise
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        if args.verbose:
            raise
        where = f"{error.filename}: " if error.filename else ""
        print(f"error: {where}{error.strerror or error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
