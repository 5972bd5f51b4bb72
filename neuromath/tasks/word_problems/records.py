"""Word-problem records: the ``Example`` dataclass, masking the numbers of a problem's text, and the problem a user
types, ready to solve (``prepare_problem``).

Masking (``mask_numbers``):

- a number is an integer ``135``, a decimal ``2.5`` / ``.5``, a fraction ``(2/5)``, a percentage
  ``30%``, a mixed number ``1(1/2)`` or an integer with thousands commas ``1,000``; it is
  recorded as written, except that commas are dropped (``1000``);
- a number in scientific notation (``1e308``, ``2.5E-3``) or written as a power, without spaces (``2^10``,
  ``2**10``, ``3²``, ``2^-3``, ``2^3^2`` is 2^9), is one number, recorded by its exact value (``1024``, ``0.0025``,
  ``(1/3)``); one whose value is too large to compute or to write out (``2^99999``, ``1e5000``) is an
  ExpressionError naming it;
- a number directly after an ASCII letter or digit is part of a word (``mp3``, ``H1``), and an
  ordinal such as ``2nd`` is a word; a number may run into a unit (``280kg`` -> ``n0 kg``);
- a minus sign is an operator, never part of a number: ``-11`` is masked as ``- n0``;
- English cardinal number words with a value of two or more (``twelve``, ``fifty-eight``,
  ``three hundred``) are numbers too, recorded in digits (``58``). "one" and "zero" are not,
  because they are mostly not quantities ("one of them"); ordinals ("fifth") are never numbers.
  Whether a word is meant as a quantity cannot be known when a problem is solved, so every
  number word from two upwards is masked;
- the punctuation ``. , ? ! ; : " ( )`` and Chinese ``，。．？！；：（）、“”`` is split from words
  (never from inside a number) and the masked text is its tokens joined by single spaces.

``Example.numbers`` holds number literals; a literal may carry a leading ``-`` when a data set
masks a negative number as one (the SVAMP-style CSV files do).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from neuromath.errors import DataFormatError, ExpressionError
from neuromath.expr import NUMBER_REGEX, Node, evaluate, format_number, parse_infix, parse_number
from neuromath.expr.numbers import shorten


@dataclass(frozen=True)
class Example:
    """One word problem.

    id:          identifier, unique within its file (a string).
    text:        the problem as written, with its real numbers.
    masked_text: the text with each significant number replaced by ``n0``, ``n1``, ...
                 (tokens separated by single spaces).
    numbers:     the textual numbers behind ``n0``, ``n1``, ... in order of appearance
                 (``"135"``, ``"2.5"``, ``"(2/5)"``, ``"30%"``, ``"1(1/2)"``).
    equation:    target tokens in prefix notation over ``nK`` tokens, constants and operators.
    answer:      the gold numeric answer.
    """

    id: str
    text: str
    masked_text: str
    numbers: tuple[str, ...]
    equation: tuple[str, ...]
    answer: float



# ---------------------------------------------------------------------------------------------
# Masking numbers in text

MASK_REGEX = re.compile(r"n(\d{1,4})")  # at most 4 digits: no problem has 10,000 numbers, and int() of a huge one fails

_PUNCTUATION = '.,?!;:"()，。．？！；：（）、“”'
_PUNCTUATION_CLASS = re.escape(_PUNCTUATION)
_THOUSANDS = r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?%?"
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_WRITTEN_POWER = (
    r"(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)"  # the base: an integer or a decimal
    r"(?:[eE][+-]?[0-9]+|(?:(?:\^|\*\*)[+-]?[0-9]+)+|⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"  # e-notation, ^ or ** powers, superscripts
)
_TEXT_TOKEN_REGEX = re.compile(
    # A number in scientific notation or written as a power, not glued to a letter or digit on either side.
    rf"(?P<power>(?<![A-Za-z0-9]){_WRITTEN_POWER}(?![0-9A-Za-z]))"
    # A number: not glued to a preceding letter or digit, not followed by a digit or an ordinal suffix.
    rf"|(?P<number>(?<![A-Za-z0-9])(?:{_THOUSANDS}|{NUMBER_REGEX.pattern})(?![0-9])(?!(?:st|nd|rd|th)\b))"
    r"|(?P<ordinal>[0-9]+(?:st|nd|rd|th)\b)"
    rf"|(?P<punctuation>[{_PUNCTUATION_CLASS}])"
    # A word runs up to a space, punctuation or the start of a number (a digit after a non-letter).
    rf"|(?P<word>(?:[^\s0-9{_PUNCTUATION_CLASS}]|(?<=[A-Za-z0-9])[0-9])+)"
    r"|(?P<other>\S)"
)

_UNIT_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4,
    "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
}
_TEEN_WORDS = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS_WORDS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}
_SCALE_WORDS = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
_NUMBER_WORDS = {*_UNIT_WORDS, *_TEEN_WORDS, *_TENS_WORDS, *_SCALE_WORDS, "hundred", "and"}
SMALLEST_MASKED_NUMBER_WORD = 2


def _below_thousand(words: list[str]) -> int:
    """The value of ``[unit "hundred" ["and"]] [tens [unit] | teen | unit]``, at least one part."""
    value = 0
    if len(words) >= 2 and words[1] == "hundred" and _UNIT_WORDS.get(words[0], 0) > 0:
        value, words = 100 * _UNIT_WORDS[words[0]], words[2:]
    if value and words[:1] == ["and"] and len(words) > 1:
        words = words[1:]
    if len(words) == 2 and words[0] in _TENS_WORDS and _UNIT_WORDS.get(words[1], 0) > 0:
        return value + _TENS_WORDS[words[0]] + _UNIT_WORDS[words[1]]
    if len(words) == 1:
        word = words[0]
        for table in (_UNIT_WORDS, _TEEN_WORDS, _TENS_WORDS):
            if table.get(word, 0) > 0:
                return value + table[word]
    if not words and value:
        return value
    raise ValueError(f"not a number below a thousand: {' '.join(words)!r}")


def words_to_number(words: str) -> int:
    """The value of an English cardinal number in words: ``"fifty-eight"`` -> 58,
    ``"three hundred"`` -> 300, ``"two thousand five hundred and six"`` -> 2506.

    Raises ValueError for anything else (``"fifth"``, ``"two three"``, ``"fifty-zero"``).
    """
    parts = []
    for word in words.lower().split():
        tens, hyphen, unit = word.partition("-")
        if hyphen and not (tens in _TENS_WORDS and _UNIT_WORDS.get(unit, 0) > 0):
            raise ValueError(f"{word!r} is not a number word")
        parts.extend([tens, unit] if hyphen else [word])
    if parts == ["zero"]:
        return 0
    total, group, last_scale = 0, [], None
    for part in parts:
        if part in _SCALE_WORDS:
            scale = _SCALE_WORDS[part]
            if last_scale is not None and scale >= last_scale:
                raise ValueError(f"{words!r}: {part!r} out of order")
            total += _below_thousand(group) * scale
            group, last_scale = [], scale
        elif part in _NUMBER_WORDS:
            group.append(part)
        else:
            raise ValueError(f"{part!r} is not a number word")
    if group or last_scale is None:  # the words after the last scale word, or all of them
        total += _below_thousand(group)
    return total


def _is_number_word(token: str) -> bool:
    return all(part in _NUMBER_WORDS for part in token.lower().split("-"))


# The most tokens a number in words can have: a group below a thousand has at most five parts ("nine hundred and
# ninety nine"), there are at most four groups, joined by the scale words in falling order, and a token is at least
# one part (a hyphenated one is two). Looking no further than this from a token keeps reading number words linear in
# the length of the text: a run of 1,000 "and" costs no more per token than a run of ten.
_MAX_NUMBER_WORD_TOKENS = 4 * 5 + len(_SCALE_WORDS)
# The words a number in words can start with: a group starts with a unit (before "hundred"), a teen or a tens word.
_FIRST_NUMBER_WORDS = {*_UNIT_WORDS, *_TEEN_WORDS, *_TENS_WORDS}


def _number_word_run(words: list[str], start: int) -> tuple[int, int] | None:
    """The longest run of words from ``start`` that reads as a number of at least two: (end, value).

    Only the first ``_MAX_NUMBER_WORD_TOKENS`` words from ``start`` can be part of a number, and a run that starts
    with a word no number starts with ("and", "hundred", "thousand") is none, so each call costs a bounded amount of
    work whatever the text holds.
    """
    if words[start].lower().partition("-")[0] not in _FIRST_NUMBER_WORDS:
        return None
    limit = min(len(words), start + _MAX_NUMBER_WORD_TOKENS)
    end = start
    while end < limit and _is_number_word(words[end]):
        end += 1
    for stop in range(end, start, -1):
        try:
            value = words_to_number(" ".join(words[start:stop]))
        except ValueError:
            continue
        return (stop, value) if value >= SMALLEST_MASKED_NUMBER_WORD else None
    return None


def written_power_value(written: str) -> str:
    """The number literal of a number in scientific notation or written as a power: ``1.5e3`` -> ``1500``,
    ``2^10`` -> ``1024``, ``3²`` -> ``9``, ``2^-2`` -> ``0.25``. Raises ExpressionError when its value is too
    large to compute or to write out (the limits of ``evaluate`` and ``format_number``)."""
    base = re.match(r"[0-9.]+", written).group()
    exponent = written[len(base) :]
    if exponent[0] in "eE":
        infix = f"{base} * 10 ^ {exponent[1:]}"
    elif exponent[0] in "^*":
        infix = written
    else:  # superscript digits
        infix = f"{base} ^ {exponent.translate(_SUPERSCRIPTS)}"
    try:
        return format_number(evaluate(parse_infix(infix)))
    except ExpressionError as error:
        raise ExpressionError(f"the number {shorten(written)!r}: {error}") from None


def mask_numbers(text: str) -> tuple[str, tuple[str, ...]]:
    """Mask each number of ``text`` as ``n0``, ``n1``, ...: returns the masked text (tokens joined
    by single spaces) and the numbers in order (see the module docstring for what counts).
    Raises ExpressionError for a number written as a power whose value is too large (``2^99999``)."""
    tokens: list[str] = []
    is_number_token: list[bool] = []
    for match in _TEXT_TOKEN_REGEX.finditer(text):
        if match.lastgroup == "power":
            tokens.append(written_power_value(match.group()))
        else:
            tokens.append(match.group().replace(",", "") if match.lastgroup == "number" else match.group())
        is_number_token.append(match.lastgroup in ("number", "power"))
    masked: list[str] = []
    numbers: list[str] = []
    index = 0
    while index < len(tokens):
        if is_number_token[index]:
            end, number = index + 1, tokens[index]
        else:
            word_number = _number_word_run(tokens, index)
            if word_number is None:
                masked.append(tokens[index])
                index += 1
                continue
            end, number = word_number[0], str(word_number[1])
        masked.append(f"n{len(numbers)}")
        numbers.append(number)
        index = end
    return " ".join(masked), tuple(numbers)


def prepare_problem(text: str, id: str = "problem") -> Example:
    """An Example to solve: ``text`` masked, no equation, answer NaN. Raises DataFormatError
    when the text holds no numbers, since a model can only combine the problem's numbers, or a
    number too large to read (more than ``MAX_NUMBER_DIGITS`` digits, ``2^99999``)."""
    try:
        masked_text, numbers = mask_numbers(text)
        for number in numbers:
            number_value(number)
    except ExpressionError as error:
        raise DataFormatError(None, None, str(error)) from None
    if not numbers:
        raise DataFormatError(
            None, None, f"the problem has no numbers to compute with (digits or number words): {shorten(text, 80)!r}"
        )
    return Example(id=id, text=text, masked_text=masked_text, numbers=numbers, equation=(), answer=math.nan)


# ---------------------------------------------------------------------------------------------
# The numbers of an Example


def number_value(number: str) -> Fraction:
    """The value of an entry of ``Example.numbers``: a number literal, possibly with a leading ``-``."""
    if number.startswith("-"):
        return -parse_number(number[1:])
    return parse_number(number)


def number_node(number: str) -> Node:
    """The tree of an entry of ``Example.numbers`` (``neg`` of the literal when it has a leading ``-``)."""
    return Node("neg", (Node(number[1:]),)) if number.startswith("-") else Node(number)
