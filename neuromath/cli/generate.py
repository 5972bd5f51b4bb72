"""neuromath generate TASK: write generated problems (word problems, the Mathematics Dataset, identities, symbolic
integration and ODE pairs). Every output is locked while it is written (``neuromath.fileio.locked``), so a second
``neuromath generate`` into it is refused with the writer named."""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from neuromath.cli.common import (
    MAX_GENERATED,
    MAX_STREAMED,
    MAX_TIME_LIMIT,
    add_seed_option,
    data_path,
    documented,
    float_in,
    integer_in,
    integer_set,
    unit_interval,
    worker_count,
)
from neuromath.errors import NeuromathError
from neuromath.fileio import locked
from neuromath.tasks import get_task
from neuromath.tasks.identities import generate_identity_files, read_candidates, read_equations, write_equations
from neuromath.tasks.identities.blanks import make_blanks
from neuromath.tasks.identities.evaluations import EvaluationSettings, evaluation_summary, generate_evaluations
from neuromath.tasks.identities.identity_generator import MAX_DEPTH as IDENTITIES_MAX_DEPTH
from neuromath.tasks.identities.rewrites import GENERATOR_STYLES, GeneratorSettings
from neuromath.tasks.mathematics_dataset import generate_directory
from neuromath.tasks.symbolic import generate_symbolic_file
from neuromath.tasks.symbolic.symbolic_methods import DEFAULT_MAX_TOKENS

# An expression of more operators than this has more prefix tokens than the generator keeps (DEFAULT_MAX_TOKENS)
MAX_OPS = DEFAULT_MAX_TOKENS - 1
kept_count = integer_in(1, MAX_GENERATED)  # --n of the generators that hold their problems in memory
written_count = integer_in(1, MAX_STREAMED)  # --n, --per-module of those that write as they go
SAME_SEED_SAME_FILE = "seed of the generator: the same seed writes the same file"


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
    out = output_file(args.out)
    stem = out.with_name(out.name[: -len(out.suffix)] if out.suffix else out.name)
    # the files beside FILE are named after its stem: --out D/ids.json and --out D/ids.txt write the same
    # D/ids.{train,valid,test}.json, so the lock of the stem is held as well as the output's own
    with locked(out, is_folder=False), locked(stem, is_folder=False):
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
        write_equations(examples, args.out)
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
        write_equations(blanks, args.out)
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
    generate = commands.add_parser(
        "generate", help="write generated problems",
        **documented(
            "Write generated problems of one task to files: template word problems, DeepMind's Mathematics Dataset, "
            "trigonometric and algebraic identities, function evaluations, equation-completion blanks, or symbolic "
            "integration and ODE pairs. The same seed writes the same files. Every output is locked while it is "
            "written, so a second neuromath generate into it is refused; run neuromath generate TASK --help for "
            "each generator's options.",
            "neuromath generate word_problems --n 5000 --seed 0 --out data/train.jsonl",
            "neuromath generate identities --n 20000 --max-depth 13 --seed 0 --out data/identities.json",
            "neuromath generate symbolic --method backward --n 10000 --max-ops 5 --workers 2 --out data/train.txt",
        ),
    )
    generators = generate.add_subparsers(dest="task", required=True, metavar="TASK", help="what to generate")
    for add in (add_word_problems, add_mathematics_dataset, add_identities, add_evaluations, add_blanks, add_symbolic):
        add(generators)


def add_word_problems(generators) -> None:
    word_problems = generators.add_parser(
        "word_problems", help="template-based word problems (JSON Lines)",
        **documented(
            "Write N English word problems made from the built-in templates (change, combine, compare, rates, unit "
            "price, sharing, percent, multi-step; one to three operations), each with its equation and exact "
            "answer, as this project's JSON Lines (format jsonl). Name the file in data.train, data.valid or "
            "data.test of a word-problem config, or in --data.",
            "neuromath generate word_problems --n 5000 --seed 0 --out data/train.jsonl",
            "neuromath generate word_problems --n 500 --seed 1 --out data/test.jsonl",
        ),
    )
    word_problems.add_argument("--n", type=kept_count, required=True, help="problems to write")
    add_seed_option(word_problems, SAME_SEED_SAME_FILE)
    word_problems.add_argument("--out", required=True, help="the JSON Lines file to write")
    word_problems.set_defaults(handler=command_generate)


def add_mathematics_dataset(generators) -> None:
    mathematics = generators.add_parser(
        "mathematics_dataset", help="DeepMind's Mathematics Dataset in the release layout OUT/<split>/<module>.txt",
        **documented(
            "Generate questions and answers of DeepMind's Mathematics Dataset with its own generator "
            "(mathematics_dataset 1.0.1), --per-module of them for every module and split, into the release layout "
            "OUT/<split>/<module>.txt. Jobs run in worker processes, each seeded from (seed, split, module) alone, "
            "so the files do not depend on --workers. Complete module files already in OUT are kept, so an "
            "interrupted run resumes; a folder made with another seed or size is refused.",
            "neuromath generate mathematics_dataset --per-module 20000 --modules 'arithmetic__*' --seed 0 \\\n"
            "    --out data/md",
            "neuromath generate mathematics_dataset --per-module 2000 --splits interpolate,extrapolate \\\n"
            "    --modules arithmetic__add_or_sub,numbers__place_value --workers 2 --out data/md-test",
        ),
    )
    mathematics.add_argument("--per-module", dest="per_module", type=written_count, required=True,
                             help="questions per module and split")
    mathematics.add_argument("--splits", default="train-easy,train-medium,train-hard,interpolate,extrapolate",
                             help="comma list of splits (default: all five, train-easy,train-medium,train-hard,"
                                  "interpolate,extrapolate)")
    mathematics.add_argument("--modules", default="*",
                             help="comma list of module globs, e.g. 'arithmetic__*' (default: every module)")
    add_seed_option(mathematics, "seed of the generator; each (split, module) file is seeded from it")
    mathematics.add_argument("--out", required=True, help="root folder (complete module files already there are kept)")
    mathematics.add_argument("--workers", type=worker_count, default=None,
                             help="worker processes (default: one per CPU)")
    mathematics.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                             help="show a progress bar on stderr (default on)")
    mathematics.set_defaults(handler=command_generate_mathematics)


def add_identities(generators) -> None:
    identities = generators.add_parser(
        "identities", help="trigonometric / algebraic equations labelled true or false (released JSON format)",
        **documented(
            "Generate N trigonometric and algebraic equations labelled true or false, as many of each at every "
            "depth, in the released JSON format; no label is trusted from construction, each is checked by "
            "evaluating both sides at random points. Writes FILE.json (all equations) and beside it FILE.train.json "
            "and FILE.valid.json (depths 1-7, a tenth for validation), FILE.test.json (depths 8-13) and "
            "FILE.stats.md (counts per depth and an audit with structure-blind baselines). The same seed writes the "
            "same files for any --workers.",
            "neuromath generate identities --n 20000 --max-depth 13 --seed 0 --out data/identities.json",
            "neuromath generate identities --n 40000 --style paper --workers 2 --out data/pap40.json",
            "neuromath generate identities --n 40000 --style paper --substitute-share 0.5 \\\n"
            "    --substitute-from data/identities/candidate_classes.json --out data/sub40.json",
        ),
    )
    identities.add_argument("--n", type=kept_count, required=True,
                            help="equations (half true, half false at each depth)")
    identities.add_argument("--max-depth", dest="max_depth", type=integer_in(1, IDENTITIES_MAX_DEPTH), default=13,
                            help=f"deepest equations, 1..{IDENTITIES_MAX_DEPTH} (the released data go to 13)")
    add_seed_option(identities, "seed of the generator and of the split: the same seed writes the same files")
    identities.add_argument("--out", required=True,
                            help="FILE.json: all equations; beside it FILE.train/.valid/.test.json and FILE.stats.md")
    identities.add_argument("--workers", type=worker_count, default=1, help="worker processes")
    identities.add_argument("--style", choices=GENERATOR_STYLES, default="chain",
                            help="how false equations are made: chain (grow / shrink / replace mutations of chain "
                                 "states) or paper (each true equation with a false twin one edit away: shrink, swap, "
                                 "wrap, or the same operation on both sides of a false twin)")
    identities.add_argument("--substitute-share", dest="substitute_share", type=unit_interval, default=0.0,
                            help="paper style: make this share of false twins by replacing a subtree of at most 3 "
                                 "nodes with a random small term of another value (a wrong filler, as in equation "
                                 "completion); 0 keeps the paper's three edits")
    identities.add_argument("--substitute-from", type=data_path, dest="substitute_from", default=None,
                            metavar="CANDIDATES",
                            help="draw the substitute edit's fillers from the trees of this candidate classes file "
                                 "(released JSON format, e.g. the completion candidates) instead of random terms")
    identities.add_argument("--baselines", action=argparse.BooleanOptionalAction, default=True,
                            help="fit the audit's structure-blind baselines for FILE.stats.md (a few seconds per "
                                 "10,000 equations)")
    identities.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                            help="show a progress bar on stderr (default on)")
    identities.set_defaults(handler=command_generate_identities)


def add_evaluations(generators) -> None:
    evaluations = generators.add_parser(
        "evaluations",
        help="function evaluations such as sin(0.37) = 0.3616, right or wrong (released JSON format), to train "
             "identity classifiers with numbers as evidence (data.train_extra)",
        **documented(
            "Write N function-evaluation equations such as sin(0.37) = 0.3616 in the released JSON format: one "
            "function of the identities' grammar on the left and a decimal on the right, half of them right (the "
            "value rounded to --places) and half wrong, balanced per function. Train identity classifiers on them "
            "beside identities with --set data.train_extra=FILE --set model.number_encoder=true.",
            "neuromath generate evaluations --n 10000 --seed 0 --out data/evaluations.json",
            "neuromath train --config identities/tree_lstm --set data.train=data/identities.train.json \\\n"
            "    --set data.train_extra=data/evaluations.json --set model.number_encoder=true --out runs/numbers",
        ),
    )
    evaluations.add_argument("--n", type=kept_count, required=True, help="equations (half of them right)")
    add_seed_option(evaluations, SAME_SEED_SAME_FILE)
    evaluations.add_argument("--out", required=True, help="the JSON file to write")
    evaluations.add_argument("--places", type=integer_in(1, 8), default=4,
                             help="decimals of each right side (default 4)")
    evaluations.add_argument("--constant-share", dest="constant_share", type=unit_interval, default=0.25,
                             help="share of arguments that are the identities' own constants (2, 1/2, pi, ...; "
                                  "default 0.25)")
    evaluations.set_defaults(handler=command_generate_evaluations)


def add_blanks(generators) -> None:
    blanks = generators.add_parser(
        "blanks",
        help="equation-completion problems from the true equations of a verification file (released JSON format): "
             "one blank per equation, on a node written as one of the candidates",
        **documented(
            "Make equation-completion problems from the true equations of a verification file (released JSON "
            "format): draw --n of them (of --depths only, if given) and blank in each one node, drawn among the "
            "nodes below the root that are written exactly as one of the candidates, so every blank has a value "
            "class. Writes them in the released format with the blank's pre-order blankNodeNum and prints what was "
            "left out and why; neuromath complete ranks the candidates for them.",
            "neuromath generate blanks --from data/identities.test.json \\\n"
            "    --candidates identities/candidate_classes.json --n 500 --depths 8 --out data/blanks8.json",
            "neuromath generate blanks --from data/identities.test.json \\\n"
            "    --candidates identities/candidate_classes.json --n 500 --depths 8-13 --seed 1 \\\n"
            "    --out data/blanks8-13.json",
        ),
    )
    blanks.add_argument("--from", type=data_path, dest="source", required=True,
                        help="verification file, e.g. FILE.test.json of neuromath generate identities")
    blanks.add_argument("--candidates", type=data_path, required=True,
                        help="candidate classes file, released JSON format")
    blanks.add_argument("--n", type=kept_count, required=True, help="blanks to make (at most one per equation)")
    blanks.add_argument("--depths", type=integer_set(1, IDENTITIES_MAX_DEPTH), default=None,
                        help="only equations of these depths, e.g. 8 or 8-13 (default: every depth)")
    add_seed_option(blanks, "seed of the draw of equations and blanked nodes")
    blanks.add_argument("--out", required=True, help="the JSON file to write")
    blanks.set_defaults(handler=command_generate_blanks)


def add_symbolic(generators) -> None:
    symbolic = generators.add_parser(
        "symbolic", help="integration / ODE pairs in prefix notation (Lample & Charton's count|input<TAB>output)",
        **documented(
            "Generate integration or first-order ODE pairs in prefix notation, one count|input<TAB>output line per "
            "pair as Lample & Charton release them. Every attempt runs in a worker process with a time limit and is "
            "kept only when the verifier accepts it; attempts are seeded by (seed, method, attempt) alone, so "
            "--workers does not change the output. Writes FILE and FILE.stats.json; an interrupted run leaves "
            "FILE.attempts.jsonl, and the same command resumes from it.",
            "neuromath generate symbolic --method backward --n 10000 --max-ops 5 --seed 1 --workers 2 \\\n"
            "    --out data/train.txt",
            "neuromath generate symbolic --method backward --n 500 --max-ops 5 --seed 2 --workers 2 \\\n"
            "    --out data/test.txt",
            "neuromath generate symbolic --method ode1 --n 1000 --time-limit 10 --out data/ode1.txt",
        ),
    )
    symbolic.add_argument("--method", choices=("backward", "forward", "parts", "ode1"), default="backward",
                          help="backward: (F', F); forward: (f, SymPy's integral); parts: integration by parts; "
                               "ode1: first-order ODEs")
    symbolic.add_argument("--n", type=written_count, required=True, help="pairs to keep")
    symbolic.add_argument("--max-ops", dest="max_ops", default=6, metavar="K",
                          type=integer_in(1, MAX_OPS, f"more operators make more than the {DEFAULT_MAX_TOKENS} "
                                                      "prefix tokens a pair may have"),
                          help="operators of a random expression (drawn from 1..K; default 6)")
    add_seed_option(symbolic, SAME_SEED_SAME_FILE)
    symbolic.add_argument("--out", required=True,
                          help="FILE; beside it FILE.stats.json (method, counts). An interrupted run leaves "
                               "FILE.attempts.jsonl, and a rerun with the same settings resumes from it")
    symbolic.add_argument("--workers", type=worker_count, default=1, help="worker processes")
    symbolic.add_argument("--time-limit", dest="time_limit", type=float_in(0.0, MAX_TIME_LIMIT, low_open=True),
                          default=5.0, metavar="SECONDS",
                          help="seconds per attempt (SymPy's simplify, integrate, solve; default 5, at most "
                               f"{MAX_TIME_LIMIT:g})")
    symbolic.add_argument("--unique", action=argparse.BooleanOptionalAction, default=True,
                          help="keep each input once (canonical form), its count| counting the repeats (default on)")
    symbolic.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                          help="show a progress bar on stderr (default on)")
    symbolic.set_defaults(handler=command_generate_symbolic)
