"""Records decoded from JSON hold text only: JSON can escape half of a UTF-16 surrogate pair (``"\\ud800"``), which
decodes to a lone surrogate, a code point that is no character. It passes every check on strings, then fails
whatever encodes it as UTF-8 (a prediction file, a vocabulary, a report) at the end of a training or an evaluation.
The task readers refuse it where it is read, naming the file and the line."""

from __future__ import annotations

import re
from pathlib import Path

from neuromath.errors import DataFormatError
from neuromath.expr.numbers import shorten

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a valid pair decodes to one character above U+FFFF, never these


def lone_surrogate_in(value: object) -> str | None:
    """The first string of a decoded JSON value (a key or a value, at any depth; tuples are walked as lists) that
    holds a lone surrogate, or None. Walked with a stack: a record nested as deeply as the JSON decoder allows is
    checked too."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            if _LONE_SURROGATE.search(current):
                return current
        elif isinstance(current, dict):
            stack.extend(current)
            stack.extend(current.values())
        elif isinstance(current, (list, tuple)):
            stack.extend(current)
    return None


def check_text(value: object, path: str | Path | None = None, line: int | None = None) -> None:
    """Raise DataFormatError (at ``path``:``line``) when a decoded JSON record holds a lone surrogate."""
    found = lone_surrogate_in(value)
    if found is not None:
        surrogate = _LONE_SURROGATE.search(found).group()
        raise DataFormatError(
            path, line, f"the string {shorten(ascii(found)[1:-1], 40)!r} holds the lone surrogate "
            f"\\u{ord(surrogate):04x}, half of a character pair, which is not text")
