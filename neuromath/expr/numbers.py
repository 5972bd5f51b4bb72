"""Number literals as they appear in maths problems, read and written exactly.

A literal is one of: an integer ``135``, a decimal ``2.5`` or ``.5``, a fraction ``(2/5)``
written without spaces, a percentage ``30%`` or ``2.5%``, or a mixed number ``1(1/2)``.
Literals are unsigned; a minus sign is an operator.
"""

from __future__ import annotations

import re
from fractions import Fraction

from neuromath.errors import ExpressionError

_DECIMAL = r"(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)"
_FRACTION = r"\([0-9]+/[0-9]+\)"

# Alternatives are tried in order, so a mixed number wins over its leading integer.
NUMBER_REGEX = re.compile(
    rf"(?P<mixed_whole>[0-9]+)(?P<mixed_fraction>{_FRACTION})"
    rf"|(?P<fraction>{_FRACTION})"
    rf"|(?P<decimal>{_DECIMAL})(?P<percent>%)?"
)


def is_number(token: str) -> bool:
    """Whether ``token`` is exactly one number literal."""
    return NUMBER_REGEX.fullmatch(token) is not None


def _fraction_literal_value(literal: str) -> Fraction:
    numerator, denominator = literal[1:-1].split("/")
    if int(denominator) == 0:
        raise ExpressionError(f"number literal {literal!r} has a zero denominator")
    return Fraction(int(numerator), int(denominator))


def parse_number(token: str) -> Fraction:
    """The exact value of a number literal: ``30%`` -> 3/10, ``1(1/2)`` -> 3/2, ``(2/5)`` -> 2/5."""
    match = NUMBER_REGEX.fullmatch(token)
    if match is None:
        raise ExpressionError(f"{token!r} is not a number literal")
    if match["mixed_whole"] is not None:
        return int(match["mixed_whole"]) + _fraction_literal_value(match["mixed_fraction"])
    if match["fraction"] is not None:
        return _fraction_literal_value(match["fraction"])
    value = Fraction(match["decimal"])
    return value / 100 if match["percent"] else value


def _is_finite_decimal(denominator: int) -> bool:
    for factor in (2, 5):
        while denominator % factor == 0:
            denominator //= factor
    return denominator == 1


def format_number(value: Fraction | int) -> str:
    """Write a value canonically: ``116``, ``2.5``, ``(7/3)``; a negative value gets a leading ``-``
    (``-2.5``, ``-(7/3)``), which makes it an infix expression rather than a single literal."""
    value = Fraction(value)
    if value < 0:
        return "-" + format_number(-value)
    if value.denominator == 1:
        return str(value.numerator)
    if not _is_finite_decimal(value.denominator):
        return f"({value.numerator}/{value.denominator})"
    decimal_places = 0
    while (value * 10**decimal_places).denominator != 1:
        decimal_places += 1
    digits = str(int(value * 10**decimal_places)).rjust(decimal_places + 1, "0")
    return f"{digits[:-decimal_places]}.{digits[-decimal_places:]}"
