"""The neuromath command (demo, generate, train, sweep, evaluate, complete, export, cv, compare, analyze, data, solve,
check, serve, results, config) and its ``--help``.

One module per command, each with a ``register(commands)`` that adds its sub-parser and handler; this module holds
``main`` and the error handling they share. Command modules import the heavy layers (torch, lightning) inside their
handlers, so ``neuromath --help`` and the data commands start in a fraction of a second.
"""

from __future__ import annotations

import argparse
import os
import sys

from neuromath import __version__
from neuromath.cli import (
    analyze,
    check,
    compare,
    complete,
    config,
    cv,
    data,
    demo,
    evaluate,
    export,
    generate,
    imports,
    push,
    results,
    serve,
    solve,
    sweep,
    train,
)
from neuromath.cli.common import escape_unencodable_output, fill
from neuromath.errors import NeuromathError

# in the order --help lists them
COMMANDS = (demo, generate, train, sweep, evaluate, complete, export, imports, cv, compare, analyze, data, solve, check,
            serve, results, config, push)


DESCRIPTION = (
    "neuromath trains, evaluates and serves neural networks that solve mathematics problems: word problems, "
    "DeepMind's Mathematics Dataset, equation verification and completion (identities), and symbolic integration "
    "and differential equations. neuromath COMMAND --help says what a command reads and writes, with examples."
)
EPILOG = """\
examples:
  neuromath demo                   # generate word problems, train a small Transformer, solve three problems
  neuromath config list            # the presets, named <task>/<model>
  neuromath train --config word_problems/graph2tree --out runs/g2t
  neuromath solve runs/g2t "Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?"

documentation: docs/ (mkdocs serve) and README.md"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neuromath", description=fill(DESCRIPTION), epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="show full tracebacks")
    parser.add_argument("--version", action="version", version=f"neuromath {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     help="the command to run (neuromath COMMAND --help describes it)")
    for command in COMMANDS:
        command.register(commands)
    return parser


# Exit status: 0 success; 1 a failure (a NeuromathError: a missing or malformed data file, a config error, a missing
# extra; an OSError); 2 a usage error, which argparse reports and exits with itself. solve and check keep their
# verdict codes (0, 1) and exit INPUT_ERROR for an error of theirs: the input they cannot read, as their help says.
FAILURE = 1
INPUT_ERROR = 2
INPUT_ERROR_COMMANDS = ("solve", "check")


def failure_status(args: argparse.Namespace) -> int:
    """The exit status of a command that stopped on an error: INPUT_ERROR for solve and check, else FAILURE."""
    return INPUT_ERROR if args.command in INPUT_ERROR_COMMANDS else FAILURE


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)  # a usage error exits 2 here (argparse's parser.error)
    escape_unencodable_output()  # an answer that echoes a byte of argv that was not UTF-8 prints, escaped
    try:
        return args.handler(args)
    except NeuromathError as error:
        if args.verbose:
            raise
        print(f"error: {error}", file=sys.stderr)
        return failure_status(args)
    except BrokenPipeError:  # the reader of the output has gone (neuromath config list | head -3): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush must not fail
        return FAILURE
    except OSError as error:
        if args.verbose:
            raise
        where = f"{error.filename}: " if error.filename else ""
        print(f"error: {where}{error.strerror or error}", file=sys.stderr)
        return failure_status(args)


if __name__ == "__main__":
    sys.exit(main())
