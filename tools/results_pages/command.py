"""``python -m tools.results_pages build [--check]``, run from the repository root: write the docs' results pages
and the README's results block from ``results/``, or (``--check``) write nothing and fail when a committed file
differs."""

from __future__ import annotations

import argparse
import sys

from neuromath.errors import NeuromathError
from tools.results_pages.pages import build_pages, stale_pages, write_pages

COMMAND = "python -m tools.results_pages build"


def build(args: argparse.Namespace) -> int:
    readme = None if args.no_readme else args.readme
    files = build_pages(args.results, args.docs, readme)
    if args.check:
        stale = stale_pages(files)
        for path in stale:
            print(f"out of date: {path}", file=sys.stderr)
        if stale:
            print(f"run `{COMMAND}` and commit what it writes", file=sys.stderr)
            return 1
        print(f"{len(files)} files match {args.results}")
        return 0
    written = write_pages(files)
    for path in written:
        print(f"wrote {path}")
    print(f"{len(files)} files from {args.results}, {len(written)} changed")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.results_pages", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    pages = sub.add_parser(
        "build", help="write the docs' results pages from results/",
        description="Write docs/results/*.md (and their plots) from the page templates in results/pages/ and the "
                    "evidence of every recipe, and the results block of README.md. A run without evidence appears as "
                    "'recipe only, not re-run here', with no number. --check writes nothing and fails when a "
                    "committed page differs.")
    pages.add_argument("--results", default="results", help="the results folder (default: results)")
    pages.add_argument("--docs", default="docs", help="the docs folder to write results/ in (default: docs)")
    pages.add_argument("--readme", default="README.md", help="the README whose results block is written")
    pages.add_argument("--no-readme", action="store_true", help="leave the README alone")
    pages.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is out of date")
    pages.set_defaults(handler=build)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except NeuromathError as error:  # a malformed template, recipe or evidence file: 1, as neuromath's commands
        print(f"error: {error}", file=sys.stderr)
        return 1
