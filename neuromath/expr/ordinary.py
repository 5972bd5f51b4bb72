"""Ordinary notation as a user types it (``x*cos(x)``, ``exp(x)*sin(x)``, ``sin(x)^2 + cos(x)^2 = 1``), read without
``eval``: SymPy's ``sympify`` and ``parse_expr`` call ``eval`` on their input, so user text never reaches them. The
tree is a ``PrefixNode`` in the vocabulary of Lample & Charton's prefix notation (``neuromath.expr.symbolic_prefix``:
``add sub mul div pow``, the functions, ``INT`` leaves), which the symbolic task writes as tokens and the identities
task turns into its equation trees.

Grammar, loosest first (``-`` and ``/`` left-associative, ``^`` right-associative)::

    equation := sum ("=" sum)?
    sum      := product (("+" | "-") product)*
    product  := unary (("*" | "/") unary)*
    unary    := ("-" | "+") unary | power           -x^2 is -(x^2)
    power    := primary ("^" unary)?
    primary  := number | name "'"* | function "(" sum ")" | "(" sum ")"

``**`` is ``^``; ``log`` and ``arcsin``-style names are ``ln`` and ``asin``; ``e`` is Euler's number ``E`` and ``π``
is ``pi``. Unary minus is ``mul`` by ``-1`` (the prefix notation has no negation), ``-3`` the integer -3, a decimal
such as ``0.25`` the fraction ``div 1 4``. Which names and functions a caller accepts is the caller's: an unknown
one is an ``ExpressionError`` naming it and its position, as is anything malformed. Nesting is limited to
``symbolic_prefix.MAX_DEPTH`` levels, so no input raises ``RecursionError``.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Iterable

from neuromath.errors import ExpressionError
from neuromath.expr.numbers import MAX_NUMBER_DIGITS, shorten
from neuromath.expr.symbolic_prefix import FUNCTIONS, MAX_DEPTH, PrefixNode

ALIASES = {
    "log": "ln", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arccot": "acot", "arcsec": "asec",
    "arccsc": "acsc", "arsinh": "asinh", "arcosh": "acosh", "artanh": "atanh", "e": "E", "π": "pi",
}
_TOKEN = re.compile(r"\s*(?:(?P<number>\d+(?:\.\d+)?|\.\d+)|(?P<name>[^\W\d]\w*)|(?P<symbol>\*\*|[-+*/^()=']))")


def _integer(value: int) -> PrefixNode:
    return PrefixNode("INT", value=value)


# The most digits a number typed in ordinary notation may have: one fewer than Python converts between integers and
# strings (``sys.get_int_max_str_digits``), since a decimal's denominator (10 ** places) has one digit more.
MAX_ORDINARY_DIGITS = MAX_NUMBER_DIGITS - 1


def number_node(text: str) -> PrefixNode:
    """``12`` as an integer leaf, ``0.25`` as ``div 1 4`` (exact). A number of more than ``MAX_ORDINARY_DIGITS``
    digits is an ExpressionError: its value could not be written out again (Python refuses to convert integers
    of more than 4,300 digits to strings), and no expression of the tasks needs one."""
    digits = sum(char.isdigit() for char in text)
    if digits > MAX_ORDINARY_DIGITS:
        raise ExpressionError(
            f"the number {shorten(text)!r} has {digits} digits; at most {MAX_ORDINARY_DIGITS} are read")
    value = Fraction(text)
    if value.denominator == 1:
        return _integer(value.numerator)
    return PrefixNode("div", (_integer(value.numerator), _integer(value.denominator)))


class _Parser:
    def __init__(self, text: str, names: Iterable[str], functions: Iterable[str]):
        self.text, self.names, self.functions = text, set(names), set(functions)
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, position)
        position = 0
        while position < len(text):
            match = _TOKEN.match(text, position)
            if match is None or match.end() == position:
                rest = text[position:].lstrip()
                if not rest:
                    break
                raise self.error(f"unknown character {rest[0]!r}", len(text) - len(rest))
            kind = match.lastgroup
            self.tokens.append((kind, match.group(kind), match.start(kind)))
            position = match.end()
        self.index, self.nesting = 0, 0

    def error(self, reason: str, position: int) -> ExpressionError:
        return ExpressionError(f"cannot read {shorten(self.text, 60)!r} at position {position}: {reason}")

    def peek(self, *symbols: str) -> str | None:
        if self.index < len(self.tokens):
            kind, text, _ = self.tokens[self.index]
            if kind == "symbol" and text in symbols:
                return "^" if text == "**" else text
        return None

    def position(self) -> int:
        return self.tokens[self.index][2] if self.index < len(self.tokens) else len(self.text)

    def finish(self, tree: PrefixNode) -> PrefixNode:
        if self.index < len(self.tokens):
            kind, text, position = self.tokens[self.index]
            raise self.error(f"unmatched {text!r}" if text == ")" else f"missing operator before {text!r}", position)
        return tree

    def chain(self, operators: dict[str, str], operand) -> PrefixNode:
        """``operand (op operand)*`` for the spellings in ``operators``, grouped from the left."""
        tree = operand()
        while operator := self.peek(*operators):
            self.index += 1
            tree = PrefixNode(operators[operator], (tree, operand()))
        return tree

    def sum(self) -> PrefixNode:
        return self.chain({"+": "add", "-": "sub"}, self.product)

    def product(self) -> PrefixNode:
        return self.chain({"*": "mul", "/": "div"}, self.unary)

    def unary(self) -> PrefixNode:
        if self.nesting >= MAX_DEPTH:
            raise self.error(f"nested too deeply (more than {MAX_DEPTH} levels)", self.position())
        self.nesting += 1
        sign = self.peek("+", "-")
        if sign is None:
            tree = self.power()
        else:
            self.index += 1
            tree = self.unary()
            if sign == "-":
                literal = tree.token == "INT" and self.tokens[self.index - 1][0] == "number"
                tree = _integer(-tree.value) if literal else PrefixNode("mul", (_integer(-1), tree))
        self.nesting -= 1
        return tree

    def power(self) -> PrefixNode:
        base = self.primary()
        if self.peek("^", "**"):
            self.index += 1
            return PrefixNode("pow", (base, self.unary()))
        return base

    def primary(self) -> PrefixNode:
        if self.index == len(self.tokens):
            raise self.error("incomplete: a number, name or '(' is missing at the end", len(self.text))
        kind, text, position = self.tokens[self.index]
        self.index += 1
        if kind == "number":
            try:
                return number_node(text)
            except ExpressionError as error:
                raise self.error(str(error), position) from None
        if kind == "name":
            name = ALIASES.get(text, text)
            if self.peek("("):
                if name not in self.functions:
                    raise self.error(f"unknown function {text!r}", position)
                self.index += 1
                return PrefixNode(name, (self.bracketed(position),))
            while self.peek("'"):  # Y', Y'': derivatives of the unknown function
                self.index += 1
                name += "'"
            if name in self.functions:
                raise self.error(f"the function {text!r} needs its argument in brackets", position)
            if name not in self.names:
                raise self.error(f"unknown name {name!r} (known: {', '.join(sorted(self.names))})", position)
            return PrefixNode(name)
        if text == "(":
            return self.bracketed(position)
        raise self.error(f"expected a number, name or '(' but found {text!r}", position)

    def bracketed(self, opening: int) -> PrefixNode:
        inner = self.sum()
        if not self.peek(")"):
            if self.index == len(self.tokens):
                raise self.error("unclosed '('", opening)
            raise self.error(f"missing operator before {self.tokens[self.index][1]!r}", self.position())
        self.index += 1
        return inner


def parse_ordinary(text: str, names: Iterable[str], functions: Iterable[str] = FUNCTIONS) -> PrefixNode:
    """One expression in ordinary notation over ``names`` (leaves) and ``functions``."""
    parser = _Parser(text, names, functions)
    if not parser.tokens:
        raise parser.error("empty expression", 0)
    return parser.finish(parser.sum())


def parse_ordinary_equation(text: str, names: Iterable[str],
                            functions: Iterable[str] = FUNCTIONS) -> tuple[PrefixNode, PrefixNode]:
    """The two sides of ``left = right`` in ordinary notation (exactly one ``=``)."""
    parser = _Parser(text, names, functions)
    if not parser.tokens:
        raise parser.error("empty equation", 0)
    left = parser.sum()
    if not parser.peek("="):
        if parser.index < len(parser.tokens):
            parser.finish(left)  # what stands where '=' could: a missing operator, an unmatched ')'
        raise parser.error("an equation needs '=' between its two sides", parser.position())
    parser.index += 1
    return left, parser.finish(parser.sum())
