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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    escape_unencodable_output()  # an answer that echoes a byte of argv that was not UTF-8 prints, escaped
    try:
        return args.handler(args)
    except NeuromathError as error:
        if args.verbose:
            raise
        print(f"error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of the output has gone (neuromath config list | head -3): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush must not fail
        return 1
    except OSError as error:
        if args.verbose:
            raise
        where = f"{error.filename}: " if error.filename else ""
        print(f"error: {where}{error.strerror or error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
