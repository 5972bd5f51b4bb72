"""Equations of word problems: from an infix equation with the text's real numbers to prefix tokens over
``n0, n1, ...`` (``example_from_equation``).

Equations given in infix (``example_from_equation``, the JSON and ``Question,Equation``
readers) may be ``expr``, ``x=expr`` or ``expr=x`` for any one unknown name (``x``, ``X``,
``miles``), or any other equation linear in that unknown, which is solved with SymPy
(``X-7-4=5`` becomes ``7 + 4 + 5``); equations that are not linear in the unknown (``x*x=4``,
``40/(60+x)=...``) are rejected with a reason. Square brackets count as parentheses.
Each number of the equation stands for the first number of the text with the same value; a
fraction literal ``(a/b)`` only stands for a text number written as a fraction and is
otherwise read as the division ``a / b`` (MAWPS writes divisions such as ``(25/5)`` that way), while a division
of two integers ``3/4`` stands for a text number written as that fraction (``3/4``, ``(3/4)``). A negative text
number (``-11``, ``negative fifteen``) stands for ``-11`` in the equation, and for ``15`` as ``neg nK``.
Every other number is a constant, written canonically (``27.0`` -> ``27``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from neuromath.errors import ExpressionError
from neuromath.expr import NUMBER_REGEX, Node, format_number, is_number, parse_infix, parse_number, preorder, to_prefix
from neuromath.expr.numbers import shorten
from neuromath.expr.sympy_bridge import sympy_to_node, to_sympy
from neuromath.tasks.word_problems.answer_scoring import equation_value
from neuromath.tasks.word_problems.records import Example, mask_numbers, number_value


def _names(node: Node) -> set[str]:
    return {leaf.value for leaf in preorder(node) if leaf.is_leaf and not is_number(leaf.value)}


def _mask_equation(node: Node, numbers: Sequence[str]) -> Node:
    """Replace each number literal of ``node`` by the first ``nK`` of equal value, else a canonical constant."""
    values = [number_value(number) for number in numbers]
    fraction_indices = [k for k, number in enumerate(numbers) if "/" in number]

    def literal_value(node: Node) -> object:
        return parse_number(node.value) if node.is_leaf and is_number(node.value) else None

    def mask(current: Node) -> Node:
        if not current.is_leaf:
            operands = [literal_value(child) for child in current.children]
            if current.value == "neg" and operands[0] and -operands[0] in values:  # -5 for a text's -5
                return Node(f"n{values.index(-operands[0])}")
            if current.value == "/" and None not in operands and operands[1] != 0:  # 3/4 for a text's fraction 3/4
                for index in fraction_indices:
                    if values[index] == operands[0] / operands[1] and all(o.denominator == 1 for o in operands):
                        return Node(f"n{index}")
            return Node(current.value, tuple(mask(child) for child in current.children))
        if not is_number(current.value):
            return current
        value = parse_number(current.value)
        is_fraction = NUMBER_REGEX.fullmatch(current.value)["fraction"] is not None
        for index in fraction_indices if is_fraction else range(len(values)):
            if values[index] == value:
                return Node(f"n{index}")
        if not is_fraction and value != 0 and -value in values:  # 15 for a text's "negative fifteen": neg n3
            return Node("neg", (Node(f"n{values.index(-value)}"),))
        if is_fraction:
            numerator, denominator = current.value[1:-1].split("/")
            return Node("/", (mask(Node(numerator)), mask(Node(denominator))))
        return Node(format_number(value))

    return mask(node)


def _solve_linear(unknown: str, left: Node, right: Node) -> Node:
    """Solve ``left = right`` for ``unknown`` when it is linear in it (its other leaves stay symbols)."""
    if any(node.value == "^" for side in (left, right) for node in preorder(side)):
        raise ExpressionError(f"cannot solve for {unknown}: equations with powers must be written as {unknown}=...")
    symbol = sympy.Symbol(unknown)
    try:
        difference = sympy.expand(to_sympy(left) - to_sympy(right))
    except RecursionError:  # SymPy recurses several frames per level of a deep equation
        raise ExpressionError(f"cannot solve for {unknown}: the equation is nested too deeply") from None
    if not difference.is_polynomial(symbol) or sympy.degree(difference, symbol) != 1:
        raise ExpressionError(f"cannot solve for {unknown}: the equation is not linear in it")
    numerator, denominator = -difference.coeff(symbol, 0), difference.coeff(symbol, 1)
    if numerator.could_extract_minus_sign():
        numerator, denominator = -numerator, -denominator
    if denominator == 1:
        return sympy_to_node(numerator)
    return Node("/", (sympy_to_node(numerator), sympy_to_node(denominator)))


def _equation_tree(equation: str, numbers: Sequence[str]) -> Node:
    """The masked expression tree of an infix equation (see the module docstring for the forms read)."""
    sides = equation.split("=")
    if len(sides) > 2:
        raise ExpressionError(f"equation {shorten(equation)!r} has more than one '='")
    try:
        trees = [_mask_equation(parse_infix(side), numbers) for side in sides]
    except ExpressionError as error:
        raise ExpressionError(f"equation {shorten(equation)!r}: {error}") from None
    names = set().union(*(_names(tree) for tree in trees)) - {f"n{k}" for k in range(len(numbers))}
    if len(trees) == 1:
        if names:
            raise ExpressionError(f"expression {shorten(equation)!r} has unknown names {shorten(str(sorted(names)))}")
        return trees[0]
    if len(names) != 1:
        found = shorten(str(sorted(names) or "none"))
        raise ExpressionError(f"equation {shorten(equation)!r} must have exactly one unknown, found {found}")
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
    ExpressionError when the equation cannot be parsed, solved or evaluated (division by zero), or its value
    is beyond the range of a float.
    """
    masked_text, numbers = mask_numbers(text if segmented_text is None else segmented_text)
    tree = _equation_tree(equation, numbers)
    tokens = tuple(to_prefix(tree))
    value = equation_value(tokens, numbers)
    if answer is None:
        try:
            answer = float(value)
        except OverflowError:
            reason = f"the value of equation {shorten(equation)!r} is beyond the range of a float"
            raise ExpressionError(reason) from None
    return Example(
        id=id,
        text=text,
        masked_text=masked_text,
        numbers=numbers,
        equation=tokens,
        answer=float(answer),
    )
