"""Word-problem records: the ``Example`` dataclass, masking the numbers of a problem's text, and the problem a user
types, ready to solve (``prepare_problem``).

Masking (``mask_numbers``; ``read_numbers`` gives the same quantities with their spans and values):

- a number is an integer ``135``, a decimal ``2.5`` / ``.5``, a fraction ``(2/5)`` or ``3/4``, a percentage
  ``30%``, a mixed number ``1(1/2)`` or ``2 1/2`` or an integer with thousands commas ``1,000``; it is
  recorded as written, except that commas are dropped (``1000``) and fractions are recorded in brackets
  (``3/4`` -> ``(3/4)``, ``2 1/2`` -> ``2(1/2)``). ``3/4/2020`` (a date) and ``3/0`` are no fractions: their
  numbers are read one by one. A percentage is one number only when ``%`` follows the digits (``3 %`` is the
  number 3 and the word ``%``, as MAWPS writes it); a word after digits is a unit (``76.7 million`` is 76.7 and the
  word million, ``8 dozen`` is 8, ``3 quarters`` is 3), as in the corpora's equations;
- a number in scientific notation (``1e308``, ``2.5E-3``) or written as a power, without spaces (``2^10``,
  ``2**10``, ``3²``, ``2^-3``, ``2^3^2`` is 2^9), is one number, recorded by its exact value (``1024``, ``0.0025``,
  ``(1/3)``); one whose value is too large to compute or to write out (``2^99999``, ``1e5000``) is an
  ExpressionError naming it;
- a number directly after an ASCII letter or digit is part of a word (``mp3``, ``H1``), and an
  ordinal such as ``2nd`` is a word; a number may run into a unit (``280kg`` -> ``n0 kg``);
- a sign makes a number negative where it cannot be subtraction: ``-`` written against the number (``-5``,
  ``(-5)``, ``5 - -3``) or the word ``minus`` or ``negative`` before it (``minus 5``, ``negative fifteen``), unless
  a number or a closing bracket comes just before (``10 -5``, ``10 minus 5``, ``3-5``, ``(2)-1`` are subtraction or
  a range). A signed number is one mask and a literal with a leading ``-`` (``-5``); a spaced ``- 5`` is the
  operator and the number 5, as Math23K writes it;
- English cardinal number words with a value of two or more (``twelve``, ``fifty-eight``,
  ``three hundred``, ``twelve hundred``, ``two thousand and five``) are numbers too, recorded in digits (``58``),
  and so are decimals in words (``two point five`` -> ``2.5``) and signed words (``minus one`` -> ``-1``). "one" and
  "zero" alone are not, because they are mostly not quantities ("one of them"); ordinals ("fifth") are never
  numbers. Whether a word is meant as a quantity cannot be known when a problem is solved, so every number word
  from two upwards is masked. Number words that are part of something the reader does not read stay text, never a
  shorter, wrong number: before a multiplier it did not take (``twenty hundred``, ``twelve hundred thousand``), a
  fraction's denominator (``two thirds``, ``twelve hundredths``, ``three quarters``, ``two and a half``) or an
  ordinal (``twenty first``, ``the two thousandth``);
- the punctuation ``. , ? ! ; : " ( )`` and Chinese ``，。．？！；：（）、“”`` is split from words
  (never from inside a number) and the masked text is its tokens joined by single spaces.

``Example.numbers`` holds number literals; a literal may carry a leading ``-``: a negative number of the text, or
of a data set that masks a negative number as one (the SVAMP-style CSV files do).
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
                 (``"135"``, ``"2.5"``, ``"(2/5)"``, ``"30%"``, ``"1(1/2)"``, ``"-5"``).
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
_BARE_FRACTION = r"[0-9]+/[0-9]*[1-9][0-9]*"  # 3/4; never 3/0
_NOT_BEFORE_A_FRACTION = r"(?<![A-Za-z0-9.,/])"
_NOT_AFTER_A_FRACTION = r"(?![0-9/])(?!\.[0-9])"  # 3/4/2020 is a date, 1/2.5 no simple fraction
_TEXT_TOKEN_REGEX = re.compile(
    # A mixed number written with a space (2 1/2) and a simple fraction (3/4), not glued to a letter or digit.
    rf"(?P<spaced_mixed>{_NOT_BEFORE_A_FRACTION}[0-9]+ {_BARE_FRACTION}{_NOT_AFTER_A_FRACTION})"
    rf"|(?P<bare_fraction>{_NOT_BEFORE_A_FRACTION}{_BARE_FRACTION}{_NOT_AFTER_A_FRACTION})"
    # A number in scientific notation or written as a power, not glued to a letter or digit on either side.
    rf"|(?P<power>(?<![A-Za-z0-9]){_WRITTEN_POWER}(?![0-9A-Za-z]))"
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

# Words after which the number words before them are not a cardinal that could be read alone: a multiplier the
# reading did not take ("twenty hundred", "twelve hundred thousand"), the denominator of a fraction in words ("two
# thirds", "twelve hundredths", "three quarters": quarters may also be coins), or an ordinal of a scale ("the two
# thousandth visitor"). The number words before them stay text rather than become a wrong number.
_DENOMINATOR_WORDS = {
    "half", "halves", "third", "thirds", "quarter", "quarters", "fourth", "fourths", "fifths", "sixths", "sevenths",
    "eighths", "ninths", "tenths", "elevenths", "twelfths", "twentieths", "hundredth", "hundredths", "thousandth",
    "thousandths", "millionth", "millionths", "billionth", "billionths",
}
_NOT_ALONE_BEFORE = {"hundred", "hundreds", "thousands", "millions", "billions", *_SCALE_WORDS, *_DENOMINATOR_WORDS}
_NOT_ALONE_BEFORE.difference_update({"half", "third", "quarter", "fourth"})  # "two third graders": an ordinal noun
# An ordinal after a tens or scale word makes one ordinal of them ("twenty first", "one hundred second").
_UNIT_ORDINALS = {"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"}
_ORDINAL_HEADS = {*_TENS_WORDS, "hundred", *_SCALE_WORDS}
_SIGN_WORDS = {"minus", "negative"}
_MINUS_SIGNS = {"-", "−"}
_CLOSING_BRACKETS = {")", "）", "]"}
_MAX_DECIMAL_WORDS = 15  # "two point five": at most this many digit words after "point"


def _below_hundred(words: list[str]) -> int:
    """The value of ``tens [unit] | teen | unit``, more than zero."""
    if len(words) == 2 and words[0] in _TENS_WORDS and _UNIT_WORDS.get(words[1], 0) > 0:
        return _TENS_WORDS[words[0]] + _UNIT_WORDS[words[1]]
    if len(words) == 1:
        for table in (_UNIT_WORDS, _TEEN_WORDS, _TENS_WORDS):
            if table.get(words[0], 0) > 0:
                return table[words[0]]
    raise ValueError(f"not a number below a hundred: {' '.join(words)!r}")


def _group(words: list[str], after_scale: bool, alone: bool) -> int:
    """The value of one group: ``[M "hundred" ["and"]] [below a hundred]`` or, after a scale word, ``"and" [below a
    hundred]``. M is a unit; when the number has no scale word (``alone``) it may also be 11-99 but not a multiple of
    ten: "twelve hundred" is 1200, "twenty-five hundred" 2500, while "ten hundred" and "twenty hundred" are not read.
    """
    if "hundred" in words:
        at = words.index("hundred")
        multiplier = _below_hundred(words[:at])
        if multiplier >= 10 and (not alone or multiplier % 10 == 0):
            raise ValueError(f"{' '.join(words)!r}: {multiplier} hundred is not read here")
        rest = words[at + 1 :]
        if rest[:1] == ["and"] and len(rest) > 1:
            rest = rest[1:]
        return 100 * multiplier + (_below_hundred(rest) if rest else 0)
    if after_scale and words[:1] == ["and"] and len(words) > 1:  # "two thousand and five"
        words = words[1:]
    return _below_hundred(words)


def words_to_number(words: str) -> int:
    """The value of an English cardinal number in words: ``"fifty-eight"`` -> 58, ``"three hundred"`` -> 300,
    ``"two thousand five hundred and six"`` -> 2506, ``"twelve hundred"`` -> 1200, ``"nineteen hundred and five"``
    -> 1905, ``"two thousand and five"`` -> 2005.

    Raises ValueError for anything else (``"fifth"``, ``"two three"``, ``"fifty-zero"``, ``"twenty hundred"``,
    ``"twelve hundred thousand"``).
    """
    parts = []
    for word in words.lower().split():
        tens, hyphen, unit = word.partition("-")
        if hyphen and not (tens in _TENS_WORDS and _UNIT_WORDS.get(unit, 0) > 0):
            raise ValueError(f"{word!r} is not a number word")
        parts.extend([tens, unit] if hyphen else [word])
    if parts == ["zero"]:
        return 0
    alone = not any(part in _SCALE_WORDS for part in parts)
    total, group, last_scale = 0, [], None
    for part in parts:
        if part in _SCALE_WORDS:
            scale = _SCALE_WORDS[part]
            if last_scale is not None and scale >= last_scale:
                raise ValueError(f"{words!r}: {part!r} out of order")
            total += _group(group, last_scale is not None, alone) * scale
            group, last_scale = [], scale
        elif part in _NUMBER_WORDS:
            group.append(part)
        else:
            raise ValueError(f"{part!r} is not a number word")
    if group or last_scale is None:  # the words after the last scale word, or all of them
        total += _group(group, last_scale is not None, alone)
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


def _read_alone(words: list[str], start: int, stop: int) -> bool:
    """Whether the number words ``words[start:stop]`` may be read as a number by themselves, given the words after
    them (see ``_NOT_ALONE_BEFORE``): not before a multiplier or a fraction's denominator, and not the head of an
    ordinal ("twenty first", "one hundred and first")."""
    following = [word.lower() for word in words[stop : stop + 3]]
    if following[:1] and following[0] in _NOT_ALONE_BEFORE:
        return False
    last = words[stop - 1].lower().rpartition("-")[2]
    if following[:1] and following[0] in _UNIT_ORDINALS and last in _ORDINAL_HEADS:
        return False
    if following[:1] == ["and"] and len(following) >= 2:
        if following[1] in _UNIT_ORDINALS and last in _ORDINAL_HEADS:  # "one hundred and first"
            return False
        if len(following) == 3 and following[2] in _DENOMINATOR_WORDS:  # "two and a half", "two and three quarters"
            return False
    return True


def _decimal_words(words: list[str], stop: int) -> tuple[int, Fraction] | None:
    """The digit words after ``words[stop]``, a "point" after a number in words (``two point five``): (end, the
    fraction they make), or None when they are too many or run on into other number words."""
    end = stop + 1
    while end < len(words) and end - stop - 1 < _MAX_DECIMAL_WORDS + 1 and words[end].lower() in _UNIT_WORDS:
        end += 1
    places = end - stop - 1
    runs_on = end < len(words) and words[end].lower() != "and" and _is_number_word(words[end])
    if places == 0 or places > _MAX_DECIMAL_WORDS or runs_on:
        return None
    digits = "".join(str(_UNIT_WORDS[word.lower()]) for word in words[stop + 1 : end])
    return end, Fraction(int(digits), 10**places)


def _number_word_run(
    words: list[str], start: int, smallest: int = SMALLEST_MASKED_NUMBER_WORD
) -> tuple[int, int | Fraction] | None:
    """The longest run of words from ``start`` that reads as a number of at least ``smallest``: (end, value); a
    decimal in words (``two point five``) is read whatever its value.

    Only the first ``_MAX_NUMBER_WORD_TOKENS`` words from ``start`` can be part of a number, and a run that starts
    with a word no number starts with ("and", "hundred", "thousand") is none, so each call costs a bounded amount of
    work whatever the text holds. A run that reads but is followed by a word that makes it part of something else
    (``_read_alone``) is none: the words stay text.
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
        if stop + 1 < len(words) and words[stop].lower() == "point" and words[stop + 1].lower() in _UNIT_WORDS:
            decimal = _decimal_words(words, stop)  # "two point five"; one that does not read stays text
            return None if decimal is None else (decimal[0], value + decimal[1])
        if not _read_alone(words, start, stop):
            return None
        return (stop, value) if value >= smallest else None
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


@dataclass(frozen=True)
class NumberSpan:
    """One quantity read from a text: ``text[start:end]`` as written (``"twelve hundred"``, ``"-5"``, ``"1,200"``)
    and its ``literal``, the entry of ``Example.numbers`` (``"1200"``, ``"-5"``, ``"(3/4)"``, ``"2(1/2)"``)."""

    text: str
    literal: str
    start: int
    end: int

    @property
    def value(self) -> Fraction:
        """The exact value: ``"25%"`` is 1/4, ``"2 1/2"`` 5/2."""
        return number_value(self.literal)


@dataclass(frozen=True)
class _Token:
    kind: str  # a group name of _TEXT_TOKEN_REGEX
    text: str  # as written, except numbers: their literal (commas dropped, powers computed, fractions bracketed)
    start: int
    end: int


def _tokens(text: str) -> list[_Token]:
    tokens = []
    for match in _TEXT_TOKEN_REGEX.finditer(text):
        kind, written = match.lastgroup, match.group()
        if kind == "power":
            literal = written_power_value(written)
        elif kind == "bare_fraction":
            literal = f"({written})"
        elif kind == "spaced_mixed":
            whole, fraction = written.split()
            literal = f"{whole}({fraction})"
        elif kind == "number":
            literal = written.replace(",", "")
        else:
            literal = written
        is_number = kind in ("power", "bare_fraction", "spaced_mixed", "number")
        tokens.append(_Token("number" if is_number else kind, literal, match.start(), match.end()))
    return tokens


def _scan(text: str) -> tuple[list[str], list[NumberSpan]]:
    """The tokens of ``text`` with each number replaced by its mask, and the numbers read (see the module docstring).

    A sign makes a number negative only where it cannot be subtraction: ``-`` written against the number (``-5``,
    not ``- 5``), or the word ``minus`` / ``negative`` before it, and neither after a number or a closing bracket
    (``10 -5``, ``10 minus 5``, ``3-5`` and ``(2)-1`` are subtraction or a range, their numbers positive).
    """
    tokens = _tokens(text)
    words = [token.text for token in tokens]
    masked: list[str] = []
    numbers: list[NumberSpan] = []

    def add(first: int, last: int, literal: str) -> None:
        start, end = tokens[first].start, tokens[last].end
        masked.append(f"n{len(numbers)}")
        numbers.append(NumberSpan(text[start:end], literal, start, end))

    index = 0
    while index < len(tokens):
        token = tokens[index]
        after_quantity = bool(masked) and (MASK_REGEX.fullmatch(masked[-1]) is not None or masked[-1] in
                                           _CLOSING_BRACKETS)
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if token.kind == "number":
            add(index, index, token.text)
            index += 1
            continue
        if not after_quantity and following is not None:
            if token.text in _MINUS_SIGNS and following.kind == "number" and following.start == token.end:
                add(index, index + 1, "-" + following.text)
                index += 2
                continue
            if token.text.lower() in _SIGN_WORDS:
                if following.kind == "number":
                    add(index, index + 1, "-" + following.text)
                    index += 2
                    continue
                signed = _number_word_run(words, index + 1, smallest=0)
                if signed is not None:
                    add(index, signed[0] - 1, "-" + format_number(signed[1]))
                    index = signed[0]
                    continue
        word_number = _number_word_run(words, index) if token.kind == "word" else None
        if word_number is None:
            masked.append(token.text)
            index += 1
            continue
        add(index, word_number[0] - 1, format_number(word_number[1]))
        index = word_number[0]
    return masked, numbers


def read_numbers(text: str) -> list[NumberSpan]:
    """The quantities of ``text`` in order, each with its span and value: what ``mask_numbers`` masks. Raises
    ExpressionError for a number written as a power whose value is too large (``2^99999``)."""
    return _scan(text)[1]


def mask_numbers(text: str) -> tuple[str, tuple[str, ...]]:
    """Mask each number of ``text`` as ``n0``, ``n1``, ...: returns the masked text (tokens joined
    by single spaces) and the numbers in order (see the module docstring for what counts).
    Raises ExpressionError for a number written as a power whose value is too large (``2^99999``)."""
    masked, numbers = _scan(text)
    return " ".join(masked), tuple(number.literal for number in numbers)


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
