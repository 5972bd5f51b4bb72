"""The command line explains itself: every command and sub-command has a description, every leaf command an epilog
of examples that parse, every argument a help text; ``neuromath --version`` and the top-level ``--help`` say what
neuromath is."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import pytest

import neuromath
from neuromath.cli import DESCRIPTION, build_parser, main
from neuromath.config.presets import preset_names

UNDOCUMENTED = (argparse._HelpAction, argparse._VersionAction)  # argparse writes their help itself


def parsers(parser: argparse.ArgumentParser | None = None) -> list[argparse.ArgumentParser]:
    """The parser and every sub-parser under it, depth first; each one's ``prog`` is its command path."""
    parser = parser or build_parser()
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # an alias would list a parser twice
                found.extend(parsers(sub))
    return found


def is_leaf(parser: argparse.ArgumentParser) -> bool:
    return not any(isinstance(action, argparse._SubParsersAction) for action in parser._actions)


def option_name(action: argparse.Action) -> str:
    return "/".join(action.option_strings) or action.metavar or action.dest


def example_lines(parser: argparse.ArgumentParser) -> list[str]:
    """The command lines of a parser's epilog, each continued line (ending in a backslash) joined to the next."""
    lines, pending = [], ""
    for line in (parser.epilog or "").splitlines()[1:]:
        if not line.strip():
            break  # the examples end at the first blank line (the top level's documentation line follows)
        pending += line.strip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
        else:
            lines.append(pending)
            pending = ""
    return lines


def test_every_argument_has_a_help_text():
    missing = [
        f"{parser.prog}: {option_name(action)}"
        for parser in parsers()
        for action in parser._actions
        if not isinstance(action, UNDOCUMENTED) and (not action.help or action.help == argparse.SUPPRESS)
    ]
    assert not missing, "arguments without help=:\n" + "\n".join(missing)


def test_every_command_has_a_description_and_every_leaf_command_examples():
    problems = []
    for parser in parsers():
        if not (parser.description or "").strip():
            problems.append(f"{parser.prog}: no description")
        if is_leaf(parser) and not (parser.epilog or "").startswith("examples:"):
            problems.append(f"{parser.prog}: the epilog does not start with 'examples:'")
        if parser.epilog and not issubclass(parser.formatter_class, argparse.RawDescriptionHelpFormatter):
            problems.append(f"{parser.prog}: the examples' line breaks are lost (not RawDescriptionHelpFormatter)")
    assert not problems, "\n".join(problems)


def test_every_help_renders_with_its_examples_line_by_line():
    for parser in parsers():
        text = parser.format_help()  # a stray % in a help text fails here
        assert parser.epilog is None or parser.epilog in text, parser.prog


def test_the_examples_are_command_lines_that_parse(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("NEUROMATH_DATA", str(tmp_path))  # an empty data root: the examples' corpora are not there ...
    monkeypatch.setattr("neuromath.cli.common.find_data", Path)  # ... and their syntax, not the files, is tested here
    failures = []
    for parser in parsers():
        for line in example_lines(parser):
            words = shlex.split(line, comments=True)
            if words[0] != "neuromath":
                continue  # e.g. the curl request of serve
            try:
                build_parser().parse_args(words[1:])
            except SystemExit as exit_:
                failures.append(f"{parser.prog}: {line}\n    exit {exit_.code}: {capsys.readouterr().err.strip()}")
    assert not failures, "examples that do not parse:\n" + "\n".join(failures)


def test_the_examples_name_presets_that_exist():
    presets, unknown = set(preset_names()), []
    for parser in parsers():
        for line in example_lines(parser):
            words = shlex.split(line, comments=True)
            named = [after for before, after in zip(words, words[1:]) if before in ("--config", "show")]
            unknown += [f"{parser.prog}: {name}" for name in named
                        if name not in presets and not name.endswith(".yaml")]
    assert not unknown, "examples that name no preset:\n" + "\n".join(unknown)


def test_the_examples_name_no_shared_or_temporary_paths():
    for parser in parsers():
        text = parser.format_help()
        for forbidden in ("../shared", "/tmp"):
            assert forbidden not in text, (parser.prog, forbidden)


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"neuromath {neuromath.__version__}"


def test_the_top_level_help_is_whole(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    flat = " ".join(text.split())
    assert " ".join(DESCRIPTION.split()) in flat  # the whole description, not its first line
    assert DESCRIPTION.rstrip().endswith(".")
    assert "examples:\n  neuromath demo" in text
    assert "documentation: docs/" in text
    for command in ("demo", "generate", "train", "sweep", "evaluate", "complete", "cv", "compare", "analyze", "data",
                    "solve", "serve", "config"):
        assert f"\n    {command} " in text, command
