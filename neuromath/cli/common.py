"""Options and output shared by several commands, and argument types that refuse values out of range at parsing."""

from __future__ import annotations

import argparse
import math
import textwrap
from pathlib import Path

from neuromath.config_rules import MAX_BEAM, MAX_LENGTH_PENALTY
from neuromath.dataroot import corpus_of, find_data
from neuromath.errors import DataNotFoundError

HELP_WIDTH = 79  # the columns a description is filled to; examples are kept as written


def fill(text: str) -> str:
    """One paragraph of help text filled to ``HELP_WIDTH`` columns, never breaking a word or a hyphenated name."""
    return textwrap.fill(" ".join(text.split()), HELP_WIDTH, break_long_words=False, break_on_hyphens=False)


def documented(description: str, *examples: str) -> dict:
    """Keyword arguments of ``add_parser`` that make a command's ``--help`` self-explanatory: ``description`` (what
    the command does, reads and writes; paragraphs separated by a blank line) filled to ``HELP_WIDTH`` columns, and an
    epilog ``examples:`` of command lines kept as written (a line break inside one continues it), under
    ``RawDescriptionHelpFormatter`` so that argparse does not run the examples together."""
    paragraphs = [fill(paragraph) for paragraph in description.split("\n\n")]
    lines = [f"  {line}" for example in examples for line in example.splitlines()]
    return {"description": "\n\n".join(paragraphs), "epilog": "\n".join(["examples:", *lines]),
            "formatter_class": argparse.RawDescriptionHelpFormatter}


def integer_in(low: int, high: int | None = None):
    """An argparse type: an integer >= ``low`` (and <= ``high``); anything else is refused with the allowed range."""
    allowed = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {value}")
        return value

    parse.__name__ = allowed  # what argparse names the type in its own messages
    return parse


positive_int = integer_in(1)  # widths, sizes, counts of at least one
nonnegative_int = integer_in(0)  # counts where 0 means all or none


def integer_set(low: int, high: int):
    """An argparse type: a set of integers from ``low`` to ``high`` written as ``8``, ``8-13`` or ``8,10-11``."""
    allowed = f"integers from {low} to {high}, written like 8, 8-13 or 8,10-11"

    def parse(text: str) -> set[int]:
        values: set[int] = set()
        for part in text.split(","):
            first, dash, last = part.strip().partition("-")
            try:
                start, stop = int(first), int(last if dash else first)
            except ValueError:
                raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}") from None
            if not low <= start <= stop <= high:
                raise argparse.ArgumentTypeError(f"must be {allowed}, got {part.strip()!r}")
            values.update(range(start, stop + 1))
        return values

    parse.__name__ = allowed
    return parse


def data_path(text: str) -> str:
    """An argparse type: a data file or folder, read from the working directory when it is there, else from the data
    root ($NEUROMATH_DATA, else ./data; ``neuromath.dataroot``). Found in neither, a path into a known corpus
    (``mawps-cv/fold0/dev.csv``) is refused with the corpus and where to get it; any other path is passed on as
    written, for the command to report with the rest of its checks when it reads it."""
    try:
        return str(find_data(text))
    except DataNotFoundError as error:
        if corpus_of(text) is not None and not Path(text).is_absolute():
            raise argparse.ArgumentTypeError(str(error)) from None
        return text


def finite_float(text: str) -> float:
    """An argparse type: a finite number (not nan or inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def nonnegative_float(text: str) -> float:
    """An argparse type: a finite number >= 0 (a duration)."""
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {value}")
    return value


def float_in(low: float, high: float):
    """An argparse type: a finite number from ``low`` to ``high``; anything else is refused with the allowed range."""
    allowed = f"a number from {low:g} to {high:g}"

    def parse(text: str) -> float:
        value = finite_float(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {value:g}")
        return value

    parse.__name__ = allowed  # what argparse names the type in its own messages
    return parse


unit_interval = float_in(0.0, 1.0)  # a share or probability


def add_decode_options(parser: argparse.ArgumentParser) -> None:
    """--beam, --nbest, --length-penalty, --constrained and --verify, within the ranges of the decode keys
    (the ranges ``DecodeConfig``'s fields declare)."""
    parser.add_argument("--beam", type=integer_in(1, MAX_BEAM), default=None, metavar="K",
                        help="beam width (default: the run's, greedy = 1)")
    parser.add_argument("--nbest", type=integer_in(1, MAX_BEAM), default=None, metavar="N",
                        help="keep the N best hypotheses (N <= beam)")
    parser.add_argument("--length-penalty", dest="length_penalty", default=None, metavar="ALPHA",
                        type=float_in(-MAX_LENGTH_PENALTY, MAX_LENGTH_PENALTY),
                        help="rank hypotheses by score / length^ALPHA")
    parser.add_argument("--constrained", action=argparse.BooleanOptionalAction, default=None,
                        help="only decode tokens that can still complete a well-formed expression")
    parser.add_argument("--verify", action=argparse.BooleanOptionalAction, default=None,
                        help="answer with the first n-best hypothesis the task's verifier accepts (default on)")
