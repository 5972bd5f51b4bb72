"""MkDocs hook: writes the command-line reference from ``neuromath.cli.build_parser()`` at build time.

``docs/reference/cli.md`` holds an introduction and the marker ``<!-- cli-reference -->``; ``on_page_markdown``
replaces the marker with one section per command and subcommand (walked recursively): its usage, description,
arguments with their help, defaults and choices, and its epilog (the examples) as a code block. Nothing here
depends on which help texts exist: a command without a description falls back to the help its parent lists it
with, and a missing help text leaves the argument's cell empty.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

MARKER = "<!-- cli-reference -->"
PAGE = "reference/cli.md"
WIDTH = 100  # columns of the usage and epilog blocks, so the page does not depend on the terminal that builds it

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]#|])")


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri != PAGE or MARKER not in markdown:
        return markdown
    root = Path(config.config_file_path).resolve().parent
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))  # the checkout's package, also when it is not installed
    from neuromath.cli import build_parser

    return markdown.replace(MARKER, cli_reference(build_parser()))


def cli_reference(parser: argparse.ArgumentParser) -> str:
    """The Markdown of every command under ``parser``, depth first, in the order ``--help`` lists them."""
    sections: list[str] = []
    walk(parser, [parser.prog], None, sections)
    return "\n".join(sections)


def walk(parser: argparse.ArgumentParser, path: list[str], listed_help: str | None, sections: list[str]) -> None:
    depth = len(path)
    anchor = "-".join(path[1:]) or "neuromath"
    sections.append(f"{'#' * min(depth + 1, 6)} {' '.join(path)} {{#{anchor}}}\n")
    description = parser.description or listed_help
    if description:
        sections.append(prose(description) + "\n")
    sections.append(code_block(usage(parser)))
    for subparsers in (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)):
        sections.append(subcommand_table(subparsers, path))
    for group in parser._action_groups:
        table = argument_table(parser, group)
        if table:
            title = group.title or "arguments"
            sections.append(f"**{escape(title[:1].upper() + title[1:])}**\n\n{table}")
    if parser.epilog:
        sections.append(code_block(parser.epilog.strip("\n")))
    for subparsers in (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)):
        helps = {choice.dest: choice.help for choice in subparsers._choices_actions}
        for name, child in subparsers.choices.items():
            walk(child, path + [name], helps.get(name), sections)


def formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    try:
        return parser.formatter_class(prog=parser.prog, width=WIDTH)
    except TypeError:  # a formatter class that takes no width
        return parser._get_formatter()


def usage(parser: argparse.ArgumentParser) -> str:
    form = formatter(parser)
    form.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return form.format_help().strip("\n")


def subcommand_table(subparsers: argparse._SubParsersAction, path: list[str]) -> str:
    rows = ["| command | what it does |", "| --- | --- |"]
    for choice in subparsers._choices_actions:
        anchor = "-".join(path[1:] + [choice.dest])
        rows.append(f"| [`{' '.join(path[1:] + [choice.dest])}`](#{anchor}) | {cell(choice.help or '')} |")
    return "\n".join(rows) + "\n"


def argument_table(parser: argparse.ArgumentParser, group) -> str:
    rows = []
    form = formatter(parser)
    for action in group._group_actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        names = ", ".join(action.option_strings) if action.option_strings else (action.metavar or action.dest)
        value = ""
        if action.option_strings and action.nargs != 0:
            metavar = form._format_args(action, action.dest.upper())
            value = f" {metavar}"
        help_text = form._expand_help(action) if action.help else ""
        notes = []
        shows_choices = bool(action.option_strings) and action.metavar is None  # the metavar is then {a,b,...}
        if action.choices is not None and not isinstance(action.choices, dict) and not shows_choices:
            notes.append("choices: " + ", ".join(f"`{choice}`" for choice in action.choices))
        if action.required and action.option_strings:
            notes.append("required")
        shown_default = action.default not in (None, False, argparse.SUPPRESS) and action.nargs != 0
        if shown_default and "default" not in help_text.lower():
            notes.append(f"default: `{action.default}`")
        details = cell(help_text)
        if notes:
            details = f"{details} ({'; '.join(notes)})" if details else "; ".join(notes)
        rows.append(f"| `{names}{value}` | {details} |")
    if not rows:
        return ""
    return "\n".join(["| argument | description |", "| --- | --- |", *rows]) + "\n"


def code_block(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text}\n{fence}\n"


def escape(text: str) -> str:
    """Plain text shown as written: Markdown's specials escaped, ``<`` and ``>`` as entities (``seed<S>`` is no tag)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIALS.sub(r"\\\1", text)


def cell(text: str) -> str:
    """One table cell: the help text on one line, with Markdown's specials (the pipe included) escaped."""
    return escape(" ".join(text.split()))


def prose(text: str) -> str:
    """A description as paragraphs of escaped text; indented lines (examples, lists) keep their layout."""
    blocks = []
    for paragraph in re.split(r"\n\s*\n", text.strip("\n")):
        lines = paragraph.splitlines()
        if any(line.startswith((" ", "\t")) for line in lines):
            blocks.append(code_block(paragraph.rstrip()).rstrip("\n"))
        else:
            blocks.append(escape(" ".join(" ".join(lines).split())))
    return "\n\n".join(blocks)
