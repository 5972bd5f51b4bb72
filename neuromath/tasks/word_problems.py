"""Word problems: the Example record, readers for the common data formats, number masking, scoring.

Notation used throughout: significant numbers of a problem are masked as ``n0, n1, ...`` in
order of appearance; the target equation is a list of tokens in *prefix* notation over those
tokens, constants (``1``, ``100``, ``3.14``, ...) and the operators ``+ - * / ^`` (and ``neg``,
unary minus, where a data set writes one, e.g. MAWPS ``x=(-11.0-7.0)/5``).

Masking (``mask_numbers``):

- a number is an integer ``135``, a decimal ``2.5`` / ``.5``, a fraction ``(2/5)``, a percentage
  ``30%``, a mixed number ``1(1/2)`` or an integer with thousands commas ``1,000``; it is
  recorded as written, except that commas are dropped (``1000``);
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

Equations given in infix (``example_from_equation``, the JSON and ``Question,Equation``
readers) may be ``expr``, ``x=expr`` or ``expr=x`` for any one unknown name (``x``, ``X``,
``miles``), or any other equation linear in that unknown, which is solved with SymPy
(``X-7-4=5`` becomes ``7 + 4 + 5``); equations that are not linear in the unknown (``x*x=4``,
``40/(60+x)=...``) are rejected with a reason. Square brackets count as parentheses.
Each number of the equation stands for the first number of the text with the same value; a
fraction literal ``(a/b)`` only stands for a text number written as a fraction and is
otherwise read as the division ``a / b`` (MAWPS writes divisions such as ``(25/5)`` that way).
Every other number is a constant, written canonically (``27.0`` -> ``27``).

Readers (``read_<format>(path, *, lenient=False, skipped=None)``) raise ``DataFormatError``
naming the file, the line and the reason for a malformed record; with ``lenient=True`` they
skip it instead and append the error to ``skipped``. A file that cannot be read as a whole (it
is missing or empty, its CSV header lacks a column, its JSON is broken) always raises. An
equation whose value differs from the gold answer is not an error: ``is_correct(example.equation,
example)`` tells those apart.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from fractions import Fraction
from pathlib import Path

import sympy

from neuromath.errors import ConfigError, DataFormatError, ExpressionError, NeuromathError
from neuromath.expr import (
    BINARY_OPERATORS,
    NUMBER_REGEX,
    Node,
    evaluate,
    format_infix,
    format_number,
    from_postfix,
    from_prefix,
    is_number,
    parse_infix,
    parse_number,
    preorder,
    substitute,
    to_postfix,
    to_prefix,
    to_sympy,
)
from neuromath.fileio import write_text_atomic


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

MASK_REGEX = re.compile(r"n(\d+)")

_PUNCTUATION = '.,?!;:"()，。．？！；：（）、“”'
_PUNCTUATION_CLASS = re.escape(_PUNCTUATION)
_THOUSANDS = r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?%?"
_TEXT_TOKEN_REGEX = re.compile(
    # A number: not glued to a preceding letter or digit, not followed by a digit or an ordinal suffix.
    rf"(?P<number>(?<![A-Za-z0-9])(?:{_THOUSANDS}|{NUMBER_REGEX.pattern})(?![0-9])(?!(?:st|nd|rd|th)\b))"
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


def _number_word_run(words: list[str], start: int) -> tuple[int, int] | None:
    """The longest run of words from ``start`` that reads as a number of at least two: (end, value)."""
    end = start
    while end < len(words) and _is_number_word(words[end]):
        end += 1
    for stop in range(end, start, -1):
        try:
            value = words_to_number(" ".join(words[start:stop]))
        except ValueError:
            continue
        return (stop, value) if value >= SMALLEST_MASKED_NUMBER_WORD else None
    return None


def mask_numbers(text: str) -> tuple[str, tuple[str, ...]]:
    """Mask each number of ``text`` as ``n0``, ``n1``, ...: returns the masked text (tokens joined
    by single spaces) and the numbers in order (see the module docstring for what counts)."""
    tokens: list[str] = []
    is_number_token: list[bool] = []
    for match in _TEXT_TOKEN_REGEX.finditer(text):
        tokens.append(match.group().replace(",", "") if match.lastgroup == "number" else match.group())
        is_number_token.append(match.lastgroup == "number")
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
    when the text holds no numbers, since a model can only combine the problem's numbers."""
    masked_text, numbers = mask_numbers(text)
    if not numbers:
        raise DataFormatError(
            None, None, f"the problem has no numbers to compute with (digits or number words): {text!r}"
        )
    return Example(id=id, text=text, masked_text=masked_text, numbers=numbers, equation=(), answer=math.nan)


# ---------------------------------------------------------------------------------------------
# Equations: from infix with real numbers to prefix over n0, n1, ...


def _names(node: Node) -> set[str]:
    return {leaf.value for leaf in preorder(node) if leaf.is_leaf and not is_number(leaf.value)}


def _number_value(number: str) -> Fraction:
    """The value of an entry of ``Example.numbers``: a number literal, possibly with a leading ``-``."""
    if number.startswith("-"):
        return -parse_number(number[1:])
    return parse_number(number)


def _number_node(number: str) -> Node:
    return Node("neg", (Node(number[1:]),)) if number.startswith("-") else Node(number)


def _mask_equation(node: Node, numbers: Sequence[str]) -> Node:
    """Replace each number literal of ``node`` by the first ``nK`` of equal value, else a canonical constant."""
    values = [_number_value(number) for number in numbers]
    fraction_indices = [k for k, number in enumerate(numbers) if "/" in number]

    def mask(current: Node) -> Node:
        if not current.is_leaf:
            return Node(current.value, tuple(mask(child) for child in current.children))
        if not is_number(current.value):
            return current
        value = parse_number(current.value)
        is_fraction = NUMBER_REGEX.fullmatch(current.value)["fraction"] is not None
        for index in fraction_indices if is_fraction else range(len(values)):
            if values[index] == value:
                return Node(f"n{index}")
        if is_fraction:
            numerator, denominator = current.value[1:-1].split("/")
            return Node("/", (mask(Node(numerator)), mask(Node(denominator))))
        return Node(format_number(value))

    return mask(node)


def _sympy_to_node(expression: sympy.Expr) -> Node:
    """A tree for a SymPy expression over symbols and rationals: a - b rather than a + (-1)*b."""
    if expression.is_Symbol:
        return Node(expression.name)
    if (expression.is_Number or expression.is_Mul) and expression.could_extract_minus_sign():
        return Node("neg", (_sympy_to_node(-expression),))
    if expression.is_Rational:
        return Node(format_number(Fraction(int(expression.p), int(expression.q))))
    numerator, denominator = sympy.fraction(expression)
    if denominator != 1:
        return Node("/", (_sympy_to_node(numerator), _sympy_to_node(denominator)))
    if expression.is_Add:
        terms = expression.as_ordered_terms()
        positive = [term for term in terms if not term.could_extract_minus_sign()]
        negative = [-term for term in terms if term.could_extract_minus_sign()]
        if not positive:
            return Node("neg", (_sympy_to_node(-expression),))
        tree = _sympy_to_node(positive[0])
        for term in positive[1:]:
            tree = Node("+", (tree, _sympy_to_node(term)))
        for term in negative:
            tree = Node("-", (tree, _sympy_to_node(term)))
        return tree
    if expression.is_Mul:
        factors = [_sympy_to_node(factor) for factor in expression.as_ordered_factors()]
        tree = factors[0]
        for factor in factors[1:]:
            tree = Node("*", (tree, factor))
        return tree
    raise ExpressionError(f"cannot write the solution {expression} as an equation")


def _solve_linear(unknown: str, left: Node, right: Node) -> Node:
    """Solve ``left = right`` for ``unknown`` when it is linear in it (its other leaves stay symbols)."""
    if any(node.value == "^" for side in (left, right) for node in preorder(side)):
        raise ExpressionError(f"cannot solve for {unknown}: equations with powers must be written as {unknown}=...")
    symbol = sympy.Symbol(unknown)
    difference = sympy.expand(to_sympy(left) - to_sympy(right))
    if not difference.is_polynomial(symbol) or sympy.degree(difference, symbol) != 1:
        raise ExpressionError(f"cannot solve for {unknown}: the equation is not linear in it")
    numerator, denominator = -difference.coeff(symbol, 0), difference.coeff(symbol, 1)
    if numerator.could_extract_minus_sign():
        numerator, denominator = -numerator, -denominator
    if denominator == 1:
        return _sympy_to_node(numerator)
    return Node("/", (_sympy_to_node(numerator), _sympy_to_node(denominator)))


def _equation_tree(equation: str, numbers: Sequence[str]) -> Node:
    """The masked expression tree of an infix equation (see the module docstring for the forms read)."""
    sides = equation.split("=")
    if len(sides) > 2:
        raise ExpressionError(f"equation {equation!r} has more than one '='")
    trees = [_mask_equation(parse_infix(side), numbers) for side in sides]
    names = set().union(*(_names(tree) for tree in trees)) - {f"n{k}" for k in range(len(numbers))}
    if len(trees) == 1:
        if names:
            raise ExpressionError(f"expression {equation!r} has unknown names {sorted(names)}")
        return trees[0]
    if len(names) != 1:
        raise ExpressionError(f"equation {equation!r} must have exactly one unknown, found {sorted(names) or 'none'}")
    unknown = names.pop()
    left, right = trees
    if left == Node(unknown) and unknown not in _names(right):
        return right
    if right == Node(unknown) and unknown not in _names(left):
        return left
    return _solve_linear(unknown, left, right)


def example_from_equation(
    id: str, text: str, equation: str, answer: float | None = None, *, segmented_text: str | None = None
) -> Example:
    """An Example from a problem and its infix equation with real numbers (``"x=135-19"``).

    The text (or ``segmented_text``, a tokenised copy of it, when given) is masked; the equation's
    numbers become ``nK`` or constants; ``answer`` defaults to the equation's value. Raises
    ExpressionError when the equation cannot be parsed, solved or evaluated (division by zero).
    """
    masked_text, numbers = mask_numbers(text if segmented_text is None else segmented_text)
    tree = _equation_tree(equation, numbers)
    tokens = tuple(to_prefix(tree))
    value = equation_value(tokens, numbers)
    return Example(
        id=id,
        text=text,
        masked_text=masked_text,
        numbers=numbers,
        equation=tokens,
        answer=float(value) if answer is None else float(answer),
    )


# ---------------------------------------------------------------------------------------------
# Scoring


def fill_numbers(equation_tokens: Sequence[str], numbers: Sequence[str]) -> Node:
    """The tree of a prefix equation with each ``nK`` replaced by the problem's K-th number."""
    tree = from_prefix(list(equation_tokens))
    for leaf in preorder(tree):
        mask = MASK_REGEX.fullmatch(leaf.value) if leaf.is_leaf else None
        if mask and int(mask[1]) >= len(numbers):
            raise ExpressionError(f"{leaf.value} refers to a number the problem does not have (it has {len(numbers)})")
    return substitute(tree, {f"n{k}": _number_node(number) for k, number in enumerate(numbers)})


def equation_value(equation_tokens: Sequence[str], numbers: Sequence[str]) -> Fraction:
    """The exact value of a prefix equation over the problem's numbers; raises ExpressionError."""
    return evaluate(fill_numbers(equation_tokens, numbers))


def is_correct(hypothesis_tokens: Sequence[str], example: Example, rel_tol: float = 1e-4) -> bool:
    """Value accuracy: whether the hypothesis evaluates to the gold answer within ``rel_tol``.
    An ill-formed or unevaluable hypothesis (division by zero, ...) is wrong; this never raises."""
    try:
        value = float(equation_value(hypothesis_tokens, example.numbers))
    except (NeuromathError, OverflowError, RecursionError):
        return False
    return math.isclose(value, example.answer, rel_tol=rel_tol)


def is_well_formed(hypothesis_tokens: Sequence[str], example: Example) -> bool:
    """The verifier of n-best re-ranking: the hypothesis is a complete prefix equation over the
    problem's numbers that evaluates to a finite value (it need not be the right one)."""
    try:
        return math.isfinite(float(equation_value(hypothesis_tokens, example.numbers)))
    except (NeuromathError, OverflowError, RecursionError, ZeroDivisionError):
        return False


def equation_matches(hypothesis_tokens: Sequence[str], example: Example) -> bool:
    """Equation accuracy: the hypothesis is token for token the gold equation."""
    return tuple(hypothesis_tokens) == example.equation


def describe_prediction(hypothesis_tokens: Sequence[str], example: Example) -> dict:
    """A JSON-ready record of one prediction: the equation with the problem's numbers, its value,
    and whether it is right. ``predicted_equation`` is None when the tokens are ill-formed,
    ``predicted_value`` when the equation cannot be evaluated."""
    record = {
        "id": example.id,
        "input": example.text,
        "masked_text": example.masked_text,
        "numbers": list(example.numbers),
        "gold_equation": list(example.equation),
        "gold_answer": example.answer,
        "predicted_tokens": list(hypothesis_tokens),
        "predicted_equation": None,
        "predicted_value": None,
        "predicted_answer_text": None,
        "correct": is_correct(hypothesis_tokens, example),
        "equation_correct": equation_matches(hypothesis_tokens, example),
    }
    try:
        tree = fill_numbers(hypothesis_tokens, example.numbers)
        record["predicted_equation"] = format_infix(tree)
        value = evaluate(tree)
        record["predicted_value"] = float(value)
        record["predicted_answer_text"] = format_number(value)
    except (NeuromathError, OverflowError, RecursionError):
        pass  # the fields stay None: no well-formed equation, or no value
    return record


# ---------------------------------------------------------------------------------------------
# Reading and writing files

_INVALID_UTF8_REGEX = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8, kept by "surrogateescape"


def _read_text(path: Path) -> str:
    """The file's text; bytes that are not UTF-8 are kept as lone surrogates for a per-record error."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise DataFormatError(path, None, f"cannot read the file: {error.strerror or error}") from None
    if not data.strip():
        raise DataFormatError(path, None, "the file is empty")
    return data.decode("utf-8-sig", errors="surrogateescape")


def _check_utf8(strings: Sequence[object]) -> None:
    for value in strings:
        if isinstance(value, str) and _INVALID_UTF8_REGEX.search(value):
            raise DataFormatError(None, None, "the record holds bytes that are not UTF-8 text")


def _build_all(
    path: Path,
    records: Iterator[tuple[int, object]],
    build: Callable[[object, int], Example],
    lenient: bool,
    skipped: list | None,
) -> list[Example]:
    """Build one Example per (line, record); a bad record raises, or is skipped and reported when lenient."""
    examples = []
    ids: dict[str, int] = {}
    for line, record in records:
        try:
            example = build(record, line)
            if example.id in ids:
                raise DataFormatError(None, None, f"id {example.id!r} was already used on line {ids[example.id]}")
        except NeuromathError as error:
            reason = error.reason if isinstance(error, DataFormatError) else str(error)
            located = DataFormatError(path, line, reason)
            if not lenient:
                raise located from error
            if skipped is not None:
                skipped.append(located)
            continue
        ids[example.id] = line
        examples.append(example)
    return examples


def _csv_rows(path: Path, text: str, required: Sequence[str]) -> Iterator[tuple[int, tuple[list[str], list[str]]]]:
    """(line, (header, row)) for each data row of a CSV file whose header has the ``required`` columns."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader)
    missing = [column for column in required if column not in header]
    if missing:
        raise DataFormatError(path, 1, f"missing column(s) {', '.join(missing)} in the header {','.join(header)}")
    last_line = reader.line_num
    for row in reader:
        line, last_line = last_line + 1, reader.line_num
        if row:
            yield line, (header, row)


def _row_fields(header_and_row: tuple[list[str], list[str]], columns: Sequence[str]) -> list[str]:
    """The values of ``columns`` in a CSV row, stripped; raises DataFormatError for a malformed row."""
    header, row = header_and_row
    if len(row) != len(header):
        raise DataFormatError(None, None, f"the row has {len(row)} fields, the header has {len(header)}")
    _check_utf8(row)
    values = dict(zip(header, row))
    for column in columns:
        if not values[column].strip():
            raise DataFormatError(None, None, f"the {column} field is empty")
    return [values[column].strip() for column in columns]


def _canonical_number(text: str) -> str:
    """A number literal (with an optional leading ``-``) written canonically: ``8.0`` -> ``8``."""
    try:
        value = _number_value(text)
    except ExpressionError:
        raise DataFormatError(None, None, f"{text!r} is not a number") from None
    return format_number(value) if value >= 0 else "-" + format_number(-value)


_SVAMP_MASK_REGEX = re.compile(r"\bnumber(\d+)\b")
SVAMP_COLUMNS = ("Question", "Numbers", "Equation", "Answer")


def _svamp_example(header_and_row: tuple[list[str], list[str]], line: int) -> Example:
    question, numbers_text, equation_text, answer_text = _row_fields(header_and_row, SVAMP_COLUMNS)
    question = " ".join(question.split())
    numbers = tuple(_canonical_number(number) for number in numbers_text.split())
    for mask in _SVAMP_MASK_REGEX.finditer(question):
        if int(mask[1]) >= len(numbers):
            raise DataFormatError(None, None, f"{mask[0]} has no value in Numbers ({len(numbers)} given)")
    equation = []
    for token in equation_text.split():
        mask = _SVAMP_MASK_REGEX.fullmatch(token)
        if mask:
            equation.append(f"n{mask[1]}")
        elif token in BINARY_OPERATORS:
            equation.append(token)
        elif is_number(token):
            equation.append(format_number(parse_number(token)))
        else:
            raise DataFormatError(None, None, f"unknown token {token!r} in the equation")
    try:
        answer = float(answer_text)
    except ValueError:
        raise DataFormatError(None, None, f"the answer {answer_text!r} is not a number") from None
    equation_value(equation, numbers)  # raises ExpressionError for an ill-formed equation or a division by zero
    return Example(
        id=str(line),
        text=_SVAMP_MASK_REGEX.sub(lambda mask: numbers[int(mask[1])], question),
        masked_text=_SVAMP_MASK_REGEX.sub(lambda mask: f"n{mask[1]}", question),
        numbers=numbers,
        equation=tuple(equation),
        answer=answer,
    )


def read_svamp_csv(path: str | Path, *, lenient: bool = False, skipped: list | None = None) -> list[Example]:
    """The SVAMP repository's CSV (MAWPS, ASDiv-A, SVAMP): ``Question,Numbers,Equation,Answer,...``
    with numbers masked as ``number0..`` and prefix equations. Ids are line numbers."""
    path = Path(path)
    rows = _csv_rows(path, _read_text(path), SVAMP_COLUMNS)
    return _build_all(path, rows, _svamp_example, lenient, skipped)


def _question_equation_example(header_and_row: tuple[list[str], list[str]], line: int) -> Example:
    question, equation = _row_fields(header_and_row, ("Question", "Equation"))
    return example_from_equation(str(line), question, equation)


def read_question_equation_csv(
    path: str | Path, *, lenient: bool = False, skipped: list | None = None
) -> list[Example]:
    """A MathQA-style CSV with the header ``Question,Equation`` and infix equations such as
    ``x=((120/50)*100)``; the answer is the equation's value. Ids are line numbers."""
    path = Path(path)
    rows = _csv_rows(path, _read_text(path), ("Question", "Equation"))
    return _build_all(path, rows, _question_equation_example, lenient, skipped)


def _json_array_items(path: Path, text: str) -> Iterator[tuple[int, object]]:
    """(line, item) for each item of a JSON array, the line being where the item starts."""
    decoder = json.JSONDecoder()

    def skip_whitespace(position: int) -> int:
        while position < len(text) and text[position].isspace():
            position += 1
        return position

    line, counted_up_to = 1, 0
    try:
        position = skip_whitespace(0)
        if text[position : position + 1] != "[":
            raise json.JSONDecodeError("expected a JSON list of records", text, position)
        position = skip_whitespace(position + 1)
        at_end = text[position : position + 1] == "]"
        if at_end:
            position += 1
        while not at_end:
            item, end = decoder.raw_decode(text, position)
            line += text.count("\n", counted_up_to, position)
            counted_up_to = position
            yield line, item
            position = skip_whitespace(end)
            separator = text[position : position + 1]
            if separator not in (",", "]"):
                raise json.JSONDecodeError("expected ',' or ']'", text, position)
            at_end = separator == "]"
            position = skip_whitespace(position + 1)
        if text[position:].strip():
            raise json.JSONDecodeError("extra data after the list", text, position)
    except json.JSONDecodeError as error:
        raise DataFormatError(path, error.lineno, f"invalid JSON: {error.msg}") from None


_ANSWER_FRACTION_REGEX = re.compile(r"\(\((\d+)\)/\((\d+)\)\)")


def _parse_answer(raw: object) -> float:
    """A gold answer: a number, or text such as ``"9"``, ``"50%"``, ``"((5)/(6))"``, ``"19((3)/(4))"``."""
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, str):
        try:
            return float(evaluate(parse_infix(_ANSWER_FRACTION_REGEX.sub(r"(\1/\2)", raw.strip()))))
        except ExpressionError:
            pass
    raise DataFormatError(None, None, f"the answer {raw!r} is not a number")


MWPTOOLKIT_KEYS = ("id", "original_text", "equation", "ans")


def _mwptoolkit_example(record: object, line: int) -> Example:
    if not isinstance(record, dict):
        raise DataFormatError(None, None, f"a record must be a JSON object, got {type(record).__name__}")
    missing = [key for key in MWPTOOLKIT_KEYS if key not in record]
    if missing:
        raise DataFormatError(None, None, f"missing key(s) {', '.join(missing)}")
    _check_utf8(list(record.values()))
    text, equation = record["original_text"], record["equation"]
    segmented_text = record.get("segmented_text")
    if not all(isinstance(value, str) for value in (text, equation, segmented_text or "")):
        raise DataFormatError(None, None, "original_text, segmented_text and equation must be strings")
    answer = _parse_answer(record["ans"])
    try:
        return example_from_equation(str(record["id"]), text, equation, answer, segmented_text=segmented_text)
    except ExpressionError as error:
        raise DataFormatError(None, None, f"record {record['id']}: {error}") from None


def read_mwptoolkit_json(path: str | Path, *, lenient: bool = False, skipped: list | None = None) -> list[Example]:
    """MWPToolkit JSON (MAWPS, Math23K): a list of ``{id, original_text, segmented_text, equation, ans}``
    with raw numbers and infix equations such as ``x=56*9``. The segmented text is masked when given."""
    path = Path(path)
    return _build_all(path, _json_array_items(path, _read_text(path)), _mwptoolkit_example, lenient, skipped)


_EXAMPLE_FIELDS = tuple(field.name for field in fields(Example))


def _jsonl_example(line_text: object, line: int) -> Example:
    _check_utf8([line_text])
    try:
        record = json.loads(line_text)
    except json.JSONDecodeError as error:
        raise DataFormatError(None, None, f"invalid JSON: {error.msg} (column {error.colno})") from None
    if not isinstance(record, dict):
        raise DataFormatError(None, None, f"a line must hold a JSON object, got {type(record).__name__}")
    missing = [name for name in _EXAMPLE_FIELDS if name not in record]
    unknown = sorted(set(record) - set(_EXAMPLE_FIELDS))
    if missing or unknown:
        raise DataFormatError(None, None, f"missing field(s) {missing}, unknown field(s) {unknown}")
    for name in ("id", "text", "masked_text"):
        if not isinstance(record[name], str):
            raise DataFormatError(None, None, f"{name} must be a string")
    for name in ("numbers", "equation"):
        if not (isinstance(record[name], list) and all(isinstance(token, str) for token in record[name])):
            raise DataFormatError(None, None, f"{name} must be a list of strings")
    if not isinstance(record["answer"], (int, float)) or isinstance(record["answer"], bool):
        raise DataFormatError(None, None, "answer must be a number")
    numbers = tuple(record["numbers"])
    for number in numbers:
        _number_value(number)  # raises ExpressionError for a token that is not a number
    equation_value(record["equation"], numbers)  # raises ExpressionError for an ill-formed equation
    return Example(
        id=record["id"],
        text=record["text"],
        masked_text=record["masked_text"],
        numbers=numbers,
        equation=tuple(record["equation"]),
        answer=float(record["answer"]),
    )


def read_jsonl(path: str | Path, *, lenient: bool = False, skipped: list | None = None) -> list[Example]:
    """This project's JSON Lines: one Example per line with its dataclass fields (see ``write_jsonl``)."""
    path = Path(path)
    lines = ((number, line) for number, line in enumerate(_read_text(path).splitlines(), 1) if line.strip())
    return _build_all(path, lines, _jsonl_example, lenient, skipped)


def write_jsonl(examples: Sequence[Example], path: str | Path) -> None:
    """Write Examples as JSON Lines, atomically (a temporary file in the same folder, then a rename)."""
    write_text_atomic(path, "".join(json.dumps(asdict(example), ensure_ascii=False) + "\n" for example in examples))


FORMATS: dict[str, Callable[..., list[Example]]] = {
    "svamp_csv": read_svamp_csv,
    "mwptoolkit_json": read_mwptoolkit_json,
    "question_equation_csv": read_question_equation_csv,
    "jsonl": read_jsonl,
}


_DETECT_BYTES = 1 << 16


def detect_format(path: str | Path) -> str:
    """The name in FORMATS of a file's format, from its extension and its first record or CSV header."""
    path = Path(path)
    try:
        with path.open("rb") as stream:  # the start of the file is enough; the reader reads it all
            head = stream.read(_DETECT_BYTES).decode("utf-8-sig", errors="replace")
    except OSError as error:
        raise DataFormatError(path, None, f"cannot read the file: {error.strerror or error}") from None
    text = head.lstrip()
    if not text:
        raise DataFormatError(path, None, "the file is empty")
    if path.suffix.lower() in (".json", ".jsonl") or text[:1] in ("[", "{"):
        if text[:1] == "[":
            return "mwptoolkit_json"
        if text[:1] == "{":
            return "jsonl"
        raise DataFormatError(path, 1, "a .json file must hold a list of records, a .jsonl file one object per line")
    header = next(csv.reader(io.StringIO(text.splitlines()[0])))
    if all(column in header for column in SVAMP_COLUMNS):
        return "svamp_csv"
    if all(column in header for column in ("Question", "Equation")):
        return "question_equation_csv"
    expected = f"{','.join(SVAMP_COLUMNS)} or Question,Equation"
    raise DataFormatError(path, 1, f"unknown format: the header {','.join(header)} has neither {expected}")


def read_examples(
    path: str | Path, format: str | None = None, *, lenient: bool = False, skipped: list | None = None
) -> list[Example]:
    """Read word problems from a file in one of FORMATS (detected when ``format`` is None)."""
    if format is None:
        format = detect_format(path)
    if format not in FORMATS:
        raise ConfigError(f"unknown word-problem format {format!r}; known: {', '.join(FORMATS)}")
    return FORMATS[format](path, lenient=lenient, skipped=skipped)


def generate(n: int, rng, **params) -> list[Example]:
    """``n`` template-based synthetic problems (see ``neuromath.tasks.word_problem_templates``)."""
    from neuromath.tasks import word_problem_templates

    return word_problem_templates.generate(n, rng, **params)


# ---------------------------------------------------------------------------------------------
# Spans for group attention (Li et al. 2019, Sec. 3.2)

SPAN_BREAKS = frozenset({",", ".", "，", "。"})  # English and Chinese commas and full stops end a span


def split_spans(tokens: Sequence[str]) -> list[int]:
    """The span of every token: spans end after a comma or period (English or Chinese), which belongs to the span
    it ends. The last span is the question; a final break with nothing after it does not open an empty span."""
    spans, current = [], 0
    for position, token in enumerate(tokens):
        spans.append(current)
        if token in SPAN_BREAKS and position < len(tokens) - 1:
            current += 1
    return spans


def span_roles(tokens: Sequence[str]) -> tuple[list[int], list[bool], list[bool]]:
    """``(span ids, in a quantity span, in the question span)`` per token. A quantity span is a span before the
    question that holds a masked number (``n0``, ``n1``, ...); the question span is the last span."""
    spans = split_spans(tokens)
    question = spans[-1] if spans else 0
    with_numbers = {span for span, token in zip(spans, tokens) if MASK_REGEX.fullmatch(token) and span != question}
    return spans, [span in with_numbers for span in spans], [span == question for span in spans]


# ---------------------------------------------------------------------------------------------
# Equation normalisation (Wang et al. 2018a, "Translating a Math Word Problem to an Expression Tree", EMNLP 2018,
# Sec. "Equation Normalization"): equivalent equations that differ by operand order or brackets get one target,
# written in postfix. The rules are in the docstring of ``normalize_tree``.

ADDITIVE_OPERATORS = frozenset({"+", "-", "neg"})
MULTIPLICATIVE_OPERATORS = frozenset({"*", "/"})


def term_order_key(node: Node) -> tuple:
    """The total order of R1 on normalised terms: ``nK`` by K, then constants by value, then other leaves by name,
    then compound subtrees by their postfix string; ties (``2`` and ``2.0``, ``n1`` and ``n01``) go by spelling."""
    if node.is_leaf:
        mask = MASK_REGEX.fullmatch(node.value)
        if mask:
            return (0, int(mask[1]), node.value)
        if is_number(node.value):
            return (1, parse_number(node.value), node.value)
        return (2, 0, node.value)
    return (3, 0, " ".join(to_postfix(node)))


def _signed_terms(node: Node, positive: bool, operators: frozenset[str], terms: list[tuple[bool, Node]]) -> None:
    """Append (sign, normalised term) for every term of the chain of ``operators`` under ``node``, left to right;
    the right operand of - or / and the operand of neg have the opposite sign of their parent."""
    if node.value not in operators:
        terms.append((positive, normalize_tree(node)))
        return
    if node.value == "neg":
        _signed_terms(node.children[0], not positive, operators, terms)
        return
    left, right = node.children
    _signed_terms(left, positive, operators, terms)
    _signed_terms(right, positive if node.value in ("+", "*") else not positive, operators, terms)


def _rebuilt_chain(positive_terms: list[Node], negative_terms: list[Node], join: str, remove: str) -> Node:
    """``((p1 join p2) join ...) remove n1 remove n2 ...`` with both lists sorted by ``term_order_key``."""
    positive_terms = sorted(positive_terms, key=term_order_key)
    negative_terms = sorted(negative_terms, key=term_order_key)
    tree = positive_terms[0]
    for term in positive_terms[1:]:
        tree = Node(join, (tree, term))
    for term in negative_terms:
        tree = Node(remove, (tree, term))
    return tree


def normalize_tree(node: Node) -> Node:
    """The canonical tree of a masked equation tree (leaves ``nK`` and constants, operators + - * / ^ neg).

    Equations that differ only by the operand order of + and * or by the brackets of + - and of * / get the same
    tree, of the same exact value (``evaluate``) as ``node`` whenever ``node`` evaluates. The tree is built
    bottom-up (every term is normalised before its parent) by two rules:

    R1, commutative order. The operands of + and * are put in order by one total key (``term_order_key``): masked
        numbers ``nK`` first, by their index K (their order of appearance in the text, as Wang et al.: the number
        with the smaller index comes first), then constants by value, then any other leaf by its name, then
        compound subtrees by their normalised postfix string. ``n1 + n0`` -> ``n0 n1 +``; ``100 * n0`` ->
        ``n0 100 *``; ``(n1 * n2) + n0`` -> ``n0 n1 n2 * +``.

    R2, associativity and brackets. A maximal chain of + and - is flattened into positive and negative terms and
        rebuilt left-deep as ``((p1 + p2) + ...) - n1 - n2 ...``, the positive terms sorted and the negative terms
        sorted by the key of R1: a - (b + c) = a - b - c, a + (b - c) = a + b - c, a - (b - c) = a - b + c.
        ``neg`` belongs to the chain and flips the sign of its operand: a + neg(b) = a - b, neg(a - b) = b - a.
        ``n0 + (n2 + n1)`` -> ``n0 n1 + n2 +``; ``n0 - (n1 + n2)`` -> ``n0 n1 - n2 -``.
        Likewise a maximal chain of * and / is flattened into numerator and denominator factors and rebuilt as
        ``((p1 * p2) * ...) / d1 / d2 ...``: a / (b * c) = a / b / c, a * (b / c) = a * b / c,
        a / (b / c) = a * c / b; ``n0 / (n1 / n2)`` -> ``n0 n2 * n1 /``. The last rewrite assumes c != 0, which
        holds for any equation that evaluates (b / c is a divisor there, so it is defined and not zero).
        A chain is rebuilt only when it has at least one positive (numerator) term; a chain without one (only
        possible through ``neg``: ``neg(n0) - n1``, ``neg(n0 + n1)``) keeps its own order, its children normalised.

    ``^`` is neither commutative nor associative and keeps its operands in order, both normalised; a ``neg`` that
    R2 does not remove keeps its normalised operand.
    """
    if node.is_leaf:
        return node
    if node.value in ADDITIVE_OPERATORS:
        operators, join, remove = ADDITIVE_OPERATORS, "+", "-"
    elif node.value in MULTIPLICATIVE_OPERATORS:
        operators, join, remove = MULTIPLICATIVE_OPERATORS, "*", "/"
    else:  # ^ keeps its operand order
        return Node(node.value, tuple(normalize_tree(child) for child in node.children))
    terms: list[tuple[bool, Node]] = []
    _signed_terms(node, True, operators, terms)
    positive_terms = [term for positive, term in terms if positive]
    negative_terms = [term for positive, term in terms if not positive]
    if not positive_terms:  # only through neg: keep this chain's own order, normalise below it
        return Node(node.value, tuple(normalize_tree(child) for child in node.children))
    return _rebuilt_chain(positive_terms, negative_terms, join, remove)


def normalize_equation(prefix_tokens: Sequence[str]) -> tuple[str, ...]:
    """The normalised equation (``normalize_tree``) of prefix tokens, in POSTFIX tokens:
    ``+ n1 n0`` -> ``n0 n1 +``. Raises ExpressionError for ill-formed tokens."""
    return tuple(to_postfix(normalize_tree(from_prefix(list(prefix_tokens)))))


def postfix_to_prefix(postfix_tokens: Sequence[str]) -> tuple[str, ...]:
    """The same equation in prefix tokens: ``n0 n1 +`` -> ``+ n0 n1``. Raises ExpressionError for ill-formed tokens."""
    return tuple(to_prefix(from_postfix(list(postfix_tokens))))


def template_counts(examples: Sequence[Example]) -> dict[str, int]:
    """How many equation templates normalisation merges: the number of examples, of distinct equations
    (``templates``), of distinct normalised equations (``normalised_templates``) and their difference (``merged``)."""
    templates = {example.equation for example in examples}
    normalised_templates = {normalize_equation(equation) for equation in templates}
    return {
        "examples": len(examples),
        "templates": len(templates),
        "normalised_templates": len(normalised_templates),
        "merged": len(templates) - len(normalised_templates),
    }


# The task "word_problems_normalized": targets are normalised postfix equations, so hypotheses are postfix tokens.


def normalized_target_tokens(example: Example) -> list[str]:
    """The target of the normalised task: the example's normalised equation in postfix."""
    return list(normalize_equation(example.equation))


def prefix_of_postfix_hypothesis(postfix_tokens: Sequence[str]) -> tuple[str, ...] | None:
    """The prefix tokens of a postfix hypothesis, or None when it is not one well-formed equation."""
    try:
        return postfix_to_prefix(postfix_tokens)
    except (ExpressionError, RecursionError):
        return None


def is_correct_postfix(hypothesis_tokens: Sequence[str], example: Example, rel_tol: float = 1e-4) -> bool:
    """Value accuracy of a postfix hypothesis (``is_correct`` after conversion); an ill-formed one is wrong."""
    prefix_tokens = prefix_of_postfix_hypothesis(hypothesis_tokens)
    return prefix_tokens is not None and is_correct(prefix_tokens, example, rel_tol)


def is_well_formed_postfix(hypothesis_tokens: Sequence[str], example: Example) -> bool:
    """The verifier of the normalised task: ``is_well_formed`` of a postfix hypothesis after conversion."""
    prefix_tokens = prefix_of_postfix_hypothesis(hypothesis_tokens)
    return prefix_tokens is not None and is_well_formed(prefix_tokens, example)


def equation_matches_normalized(hypothesis_tokens: Sequence[str], example: Example) -> bool:
    """Equation accuracy of the normalised task: the postfix hypothesis is token for token the normalised gold
    equation (an example without an equation, such as ``prepare_problem`` makes, matches only no tokens)."""
    gold = normalize_equation(example.equation) if example.equation else ()
    return tuple(hypothesis_tokens) == gold


def describe_postfix_prediction(hypothesis_tokens: Sequence[str], example: Example) -> dict:
    """``describe_prediction`` of a postfix hypothesis: the fields of its prefix form (None when it is ill-formed),
    with ``predicted_tokens`` the postfix tokens as produced, ``gold_target`` the normalised gold postfix and
    ``equation_correct`` from ``equation_matches_normalized``."""
    prefix_tokens = prefix_of_postfix_hypothesis(hypothesis_tokens)
    record = describe_prediction(() if prefix_tokens is None else prefix_tokens, example)  # () never parses
    record["predicted_tokens"] = list(hypothesis_tokens)
    record["gold_target"] = list(normalize_equation(example.equation)) if example.equation else []
    record["equation_correct"] = equation_matches_normalized(hypothesis_tokens, example)
    return record
