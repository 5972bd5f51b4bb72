"""neuromath generate TASK: write generated problems (word problems, the Mathematics Dataset, identities, symbolic
integration and ODE pairs). Every output is locked while it is written (``neuromath.fileio.locked``), so a second
``neuromath generate`` into it is refused with the writer named."""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from neuromath.cli.common import integer_in, integer_set, positive_int, unit_interval
from neuromath.errors import NeuromathError
from neuromath.fileio import locked
from neuromath.tasks import get_task
from neuromath.tasks.identities import generate_identity_files, read_candidates, read_equations, write_equations
from neuromath.tasks.identities.blanks import make_blanks
from neuromath.tasks.identities.evaluations import EvaluationSettings, evaluation_summary, generate_evaluations
from neuromath.tasks.identities.generator import MAX_DEPTH as IDENTITIES_MAX_DEPTH
from neuromath.tasks.identities.rewrites import GENERATOR_STYLES, GeneratorSettings
from neuromath.tasks.mathematics_dataset import generate_directory
from neuromath.tasks.symbolic import generate_symbolic_file


def output_file(out: str) -> Path:
    """``--out`` of a generator that writes one file (and files beside it): refused when it is a folder."""
    path = Path(out)
    if path.is_dir():
        raise NeuromathError(f"{out} is a directory; --out names the file to write (for example {path / 'data'})")
    return path


def command_generate(args: argparse.Namespace) -> int:
    task = get_task(args.task)
    out = output_file(args.out)
    started = time.perf_counter()
    with locked(out, is_folder=False):
        examples = task.generate(args.n, random.Random(args.seed))
        task.write(examples, args.out)
    print(f"wrote {len(examples)} {args.task} examples to {args.out} in {time.perf_counter() - started:.1f} s")
    return 0


def command_generate_mathematics(args: argparse.Namespace) -> int:
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise NeuromathError(f"{args.out} is a file; --out names the root folder of the release layout")
    with locked(args.out, is_folder=True):
        report = generate_directory(
            args.out, args.per_module, splits=args.splits.split(","), modules=args.modules, seed=args.seed,
            workers=args.workers, progress=args.progress,
        )
    print(f"{args.out}: {report.summary()}")
    return 0


def identity_settings(args: argparse.Namespace) -> GeneratorSettings:
    """The generator's settings from the options; ``GeneratorSettings`` checks how they combine."""
    pool = tuple(candidate.tree for candidate in read_candidates(args.substitute_from)) if args.substitute_from else ()
    try:
        return GeneratorSettings(style=args.style, substitute_share=args.substitute_share, substitute_pool=pool,
                                 substitute_source=Path(args.substitute_from).name if args.substitute_from else "")
    except ValueError as error:
        given = f" --substitute-from {args.substitute_from}" if args.substitute_from else ""
        raise NeuromathError(
            f"--style {args.style} --substitute-share {args.substitute_share:g}{given}: {error}"
        ) from None


def command_generate_identities(args: argparse.Namespace) -> int:
    with locked(output_file(args.out), is_folder=False):
        report = generate_identity_files(
            args.n, args.max_depth, args.seed, args.out, workers=args.workers, progress=args.progress,
            settings=identity_settings(args), audit_baselines=args.baselines,
        )
    print(report.table)
    print(report.summary())
    return 0


def command_generate_evaluations(args: argparse.Namespace) -> int:
    try:
        settings = EvaluationSettings(places=args.places, constant_share=args.constant_share)
    except ValueError as error:
        raise NeuromathError(f"--places {args.places} --constant-share {args.constant_share:g}: {error}") from None
    with locked(output_file(args.out), is_folder=False):
        examples = generate_evaluations(args.n, random.Random(args.seed), settings)
        write_equations(args.out, examples)
    print(evaluation_summary(examples))
    print(f"wrote {len(examples)} function-evaluation equations to {args.out} (seed {args.seed}); train on them "
          f"beside identities with --set data.train_extra={args.out} --set model.number_encoder=true")
    return 0


def command_generate_blanks(args: argparse.Namespace) -> int:
    examples, candidates = read_equations(args.source), read_candidates(args.candidates)
    if any(example.blank is not None for example in examples):
        raise NeuromathError(f"{args.source} already holds blanks (blankNodeNum): give a verification file")
    try:
        blanks, report = make_blanks(examples, candidates, args.n, random.Random(args.seed), args.depths)
    except ValueError as error:
        raise NeuromathError(f"{args.source}: {error} of {args.candidates}") from None
    with locked(output_file(args.out), is_folder=False):
        write_equations(args.out, blanks)
    print(f"{args.source}: {report.summary()}")
    print(f"wrote {len(blanks)} equations with a blank to {args.out} (seed {args.seed}); rank the candidates with "
          f"neuromath complete RUN --blanks {args.out} --candidates {args.candidates}")
    return 0


def command_generate_symbolic(args: argparse.Namespace) -> int:
    with locked(output_file(args.out), is_folder=False):
        report = generate_symbolic_file(
            args.out, args.n, method=args.method, max_ops=args.max_ops, seed=args.seed, workers=args.workers,
            time_limit=args.time_limit, progress=args.progress, unique=args.unique,
        )
    print(report.summary())
    return 0


def register(commands) -> None:
    generate = commands.add_parser("generate", help="write generated problems")
    generators = generate.add_subparsers(dest="task", required=True, metavar="TASK")
    word_problems = generators.add_parser("word_problems", help="template-based word problems (JSON Lines)")
    word_problems.add_argument("--n", type=positive_int, required=True)
    word_problems.add_argument("--seed", type=int, default=0)
    word_problems.add_argument("--out", required=True)
    word_problems.set_defaults(handler=command_generate)
    mathematics = generators.add_parser(
        "mathematics_dataset", help="DeepMind's Mathematics Dataset in the release layout OUT/<split>/<module>.txt"
    )
    mathematics.add_argument("--per-module", dest="per_module", type=positive_int, required=True,
                             help="questions per module and split")
    mathematics.add_argument("--splits", default="train-easy,train-medium,train-hard,interpolate,extrapolate",
                             help="comma list of splits")
    mathematics.add_argument("--modules", default="*", help="comma list of module globs, e.g. 'arithmetic__*'")
    mathematics.add_argument("--seed", type=int, default=0)
    mathematics.add_argument("--out", required=True, help="root folder (complete module files already there are kept)")
    mathematics.add_argument("--workers", type=positive_int, default=None,
                             help="worker processes (default: one per CPU)")
    mathematics.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    mathematics.set_defaults(handler=command_generate_mathematics)

    identities = generators.add_parser(
        "identities", help="trigonometric / algebraic equations labelled true or false (released JSON format)"
    )
    identities.add_argument("--n", type=positive_int, required=True,
                            help="equations (half true, half false at each depth)")
    identities.add_argument("--max-depth", dest="max_depth", type=integer_in(1, IDENTITIES_MAX_DEPTH), default=13,
                            help=f"deepest equations, 1..{IDENTITIES_MAX_DEPTH} (the released data go to 13)")
    identities.add_argument("--seed", type=int, default=0)
    identities.add_argument("--out", required=True,
                            help="FILE.json: all equations; beside it FILE.train/.valid/.test.json and FILE.stats.md")
    identities.add_argument("--workers", type=positive_int, default=1, help="worker processes")
    identities.add_argument("--style", choices=GENERATOR_STYLES, default="chain",
                            help="how false equations are made: chain (grow / shrink / replace mutations of chain "
                                 "states) or paper (each true equation with a false twin one edit away: shrink, swap, "
                                 "wrap, or the same operation on both sides of a false twin)")
    identities.add_argument("--substitute-share", dest="substitute_share", type=unit_interval, default=0.0,
                            help="paper style: make this share of false twins by replacing a subtree of at most 3 "
                                 "nodes with a random small term of another value (a wrong filler, as in equation "
                                 "completion); 0 keeps the paper's three edits")
    identities.add_argument("--substitute-from", dest="substitute_from", default=None, metavar="CANDIDATES",
                            help="draw the substitute edit's fillers from the trees of this candidate classes file "
                                 "(released JSON format, e.g. the completion candidates) instead of random terms")
    identities.add_argument("--baselines", action=argparse.BooleanOptionalAction, default=True,
                            help="fit the audit's structure-blind baselines for FILE.stats.md (a few seconds per "
                                 "10,000 equations)")
    identities.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    identities.set_defaults(handler=command_generate_identities)
    evaluations = generators.add_parser(
        "evaluations",
        help="function evaluations such as sin(0.37) = 0.3616, right or wrong (released JSON format), to train "
             "identity classifiers with numbers as evidence (data.train_extra)",
    )
    evaluations.add_argument("--n", type=positive_int, required=True, help="equations (half of them right)")
    evaluations.add_argument("--seed", type=int, default=0)
    evaluations.add_argument("--out", required=True, help="the JSON file to write")
    evaluations.add_argument("--places", type=integer_in(1, 8), default=4, help="decimals of each right side")
    evaluations.add_argument("--constant-share", dest="constant_share", type=unit_interval, default=0.25,
                             help="share of arguments that are the identities' own constants (2, 1/2, pi, ...)")
    evaluations.set_defaults(handler=command_generate_evaluations)

    blanks = generators.add_parser(
        "blanks",
        help="equation-completion problems from the true equations of a verification file (released JSON format): "
             "one blank per equation, on a node written as one of the candidates",
    )
    blanks.add_argument("--from", dest="source", required=True,
                        help="verification file, e.g. FILE.test.json of neuromath generate identities")
    blanks.add_argument("--candidates", required=True, help="candidate classes file, released JSON format")
    blanks.add_argument("--n", type=positive_int, required=True, help="blanks to make (at most one per equation)")
    blanks.add_argument("--depths", type=integer_set(1, IDENTITIES_MAX_DEPTH), default=None,
                        help="only equations of these depths, e.g. 8 or 8-13 (default: every depth)")
    blanks.add_argument("--seed", type=int, default=0)
    blanks.add_argument("--out", required=True, help="the JSON file to write")
    blanks.set_defaults(handler=command_generate_blanks)

    symbolic = generators.add_parser(
        "symbolic", help="integration / ODE pairs in prefix notation (Lample & Charton's count|input<TAB>output)"
    )
    symbolic.add_argument("--method", choices=("backward", "forward", "parts", "ode1"), default="backward",
                          help="backward: (F', F); forward: (f, SymPy's integral); parts: integration by parts; "
                               "ode1: first-order ODEs")
    symbolic.add_argument("--n", type=positive_int, required=True, help="pairs to keep")
    symbolic.add_argument("--max-ops", dest="max_ops", type=int, default=6,
                          help="operators of a random expression (drawn from 1..K)")
    symbolic.add_argument("--seed", type=int, default=0)
    symbolic.add_argument("--out", required=True,
                          help="FILE; beside it FILE.stats.json (method, counts). An interrupted run leaves "
                               "FILE.attempts.jsonl, and a rerun with the same settings resumes from it")
    symbolic.add_argument("--workers", type=positive_int, default=1, help="worker processes")
    symbolic.add_argument("--time-limit", dest="time_limit", type=float, default=5.0,
                          help="seconds per attempt (SymPy's simplify, integrate, solve)")
    symbolic.add_argument("--unique", action=argparse.BooleanOptionalAction, default=True,
                          help="keep each input once (canonical form), its count| counting the repeats (default on)")
    symbolic.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True)
    symbolic.set_defaults(handler=command_generate_symbolic)
