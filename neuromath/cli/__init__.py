"""The neuromath command: demo, generate, train, sweep, evaluate, complete, cv, compare, analyze, data, solve, serve,
config.

One module per command, each with a ``register(commands)`` that adds its sub-parser and handler; this module holds
``main`` and the error handling they share. Command modules import the heavy layers (torch, lightning) inside their
handlers, so ``neuromath --help`` and the data commands start in a fraction of a second.
"""

from __future__ import annotations

import argparse
import sys

from neuromath.cli import (
    analyze,
    compare,
    complete,
    config,
    cv,
    data,
    demo,
    evaluate,
    generate,
    serve,
    solve,
    sweep,
    train,
)
from neuromath.errors import NeuromathError

# in the order --help lists them
COMMANDS = (demo, generate, train, sweep, evaluate, complete, cv, compare, analyze, data, solve, serve, config)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neuromath", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="show full tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(commands)
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
