"""Number literals as they appear in maths problems, read and written exactly.

A literal is one of: an integer ``135``, a decimal ``2.5`` or ``.5``, a fraction ``(2/5)``
written without spaces, a percentage ``30%`` or ``2.5%``, or a mixed number ``1(1/2)``.
Literals are unsigned; a minus sign is an operator. A literal or a written value has at most MAX_NUMBER_DIGITS
digits (Python's own limit for converting between text and integers); a longer one is an ExpressionError.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from neuromath.errors import ExpressionError

MAX_NUMBER_DIGITS = 4300
MAX_NUMBER_BITS = int(MAX_NUMBER_DIGITS * math.log2(10))  # an integer below 2 ** this has at most 4300 digits

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


def shorten(text: str, width: int = 30) -> str:
    """``text`` cut to ``width`` characters with an ellipsis, for error messages about huge input."""
    return text if len(text) <= width else text[: width - 1] + "…"


def parse_number(token: str) -> Fraction:
    """The exact value of a number literal: ``30%`` -> 3/10, ``1(1/2)`` -> 3/2, ``(2/5)`` -> 2/5."""
    match = NUMBER_REGEX.fullmatch(token)
    if match is None:
        raise ExpressionError(f"{shorten(token)!r} is not a number literal")
    digits = sum(char.isdigit() for char in token)
    if digits > MAX_NUMBER_DIGITS:
        raise ExpressionError(
            f"number literal {shorten(token)!r} has {digits} digits; at most {MAX_NUMBER_DIGITS} are read"
        )
    if match["mixed_whole"] is not None:
        return int(match["mixed_whole"]) + _fraction_literal_value(match["mixed_fraction"])
    if match["fraction"] is not None:
        return _fraction_literal_value(match["fraction"])
    value = Fraction(match["decimal"])
    return value / 100 if match["percent"] else value


def _decimal_places(denominator: int) -> int | None:
    """How many decimal places a fraction in lowest terms with this denominator has; None when they never end."""
    twos = (denominator & -denominator).bit_length() - 1
    rest, fives = denominator >> twos, 0
    while rest % 5 == 0:
        rest, fives = rest // 5, fives + 1
    return max(twos, fives) if rest == 1 else None


def _digits(integer: int) -> str:
    """``str(integer)``, or ExpressionError when it would have more than MAX_NUMBER_DIGITS digits."""
    if integer.bit_length() > MAX_NUMBER_BITS:
        raise ExpressionError(f"the value has more than {MAX_NUMBER_DIGITS} digits, too many to write out")
    return str(integer)


def format_number(value: Fraction | int) -> str:
    """Write a value canonically: ``116``, ``2.5``, ``(7/3)``; a negative value gets a leading ``-``
    (``-2.5``, ``-(7/3)``), which makes it an infix expression rather than a single literal.
    Raises ExpressionError when the text would have more than MAX_NUMBER_DIGITS digits."""
    value = Fraction(value)
    if value < 0:
        return "-" + format_number(-value)
    if value.denominator == 1:
        return _digits(value.numerator)
    denominator = _digits(value.denominator)  # checked first: the decimal places grow with it
    decimal_places = _decimal_places(value.denominator)
    if decimal_places is None:
        return f"({_digits(value.numerator)}/{denominator})"
    digits = _digits(value.numerator * (10**decimal_places // value.denominator)).rjust(decimal_places + 1, "0")
    return f"{digits[:-decimal_places]}.{digits[-decimal_places:]}"
