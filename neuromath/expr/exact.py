"""Exact evaluation of expression trees with fractions (SymPy conversions: ``neuromath.expr.sympy_bridge``)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from neuromath.errors import ExpressionError
from neuromath.expr.numbers import is_number, parse_number
from neuromath.expr.tree import Node, check_arity

# Powers beyond these limits raise ExpressionError instead of taking minutes and gigabytes.
MAX_EXPONENT = 10_000
MAX_RESULT_BITS = 100_000

Bindings = Mapping[str, Fraction | int | str]


def binding_values(bindings: Bindings | None) -> dict[str, Fraction]:
    """The bindings as exact Fractions (number literals parsed); ExpressionError for any other value."""
    values = {}
    for name, value in (bindings or {}).items():
        if isinstance(value, str):
            values[name] = parse_number(value)
        elif isinstance(value, (Fraction, int)):
            values[name] = Fraction(value)
        else:
            raise ExpressionError(f"binding {name!r} = {value!r} is not a Fraction, int or number literal")
    return values


def leaf_value(leaf: Node, values: dict[str, Fraction]) -> Fraction:
    """A leaf's exact value: its number literal, or its identifier's binding in ``values``."""
    if is_number(leaf.value):
        return parse_number(leaf.value)
    if leaf.value in values:
        return values[leaf.value]
    raise ExpressionError(f"unknown identifier {leaf.value!r} (no binding given)")


def check_power_size(base: Fraction, exponent: Fraction) -> None:
    """Raise ExpressionError when ``base ** exponent`` is beyond MAX_EXPONENT or MAX_RESULT_BITS."""
    if abs(base) in (0, 1):
        return
    base_bits = max(base.numerator.bit_length(), base.denominator.bit_length())
    if abs(exponent) > MAX_EXPONENT or base_bits * abs(exponent) > MAX_RESULT_BITS:
        raise ExpressionError(
            f"power too large to compute: the exponent is limited to {MAX_EXPONENT} "
            f"and the result to {MAX_RESULT_BITS} bits"
        )


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    if base == 0 and exponent < 0:
        raise ExpressionError("division by zero: 0 raised to a negative power")
    check_power_size(base, exponent)
    if exponent.denominator == 1:
        return base**exponent.numerator
    if base < 0:
        raise ExpressionError(f"negative base {base} with non-integer exponent {exponent} has no real value")
    try:
        return Fraction(float(base) ** float(exponent))
    except OverflowError:
        raise ExpressionError(f"power {base} ^ {exponent} overflows a float") from None


def _apply(operator: str, operands: list[Fraction]) -> Fraction:
    if operator == "neg":
        return -operands[0]
    left, right = operands
    if operator == "+":
        return left + right
    if operator == "-":
        return left - right
    if operator == "*":
        return left * right
    if operator == "/":
        if right == 0:
            raise ExpressionError("division by zero")
        return left / right
    return _power(left, right)


def _evaluate(root: Node, values: dict[str, Fraction]) -> Fraction:
    # Post-order with an explicit stack (no recursion limit): a node's operands are the last values computed.
    computed: list[Fraction] = []
    stack = [(root, False)]
    while stack:
        node, operands_ready = stack.pop()
        if operands_ready:
            operands = computed[len(computed) - len(node.children) :]
            del computed[len(computed) - len(node.children) :]
            computed.append(_apply(node.value, operands))
            continue
        check_arity(node)
        if node.is_leaf:
            computed.append(leaf_value(node, values))
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children))
    return computed[0]


def evaluate(node: Node, bindings: Bindings | None = None) -> Fraction:
    """The exact value of a tree; identifiers take their values from ``bindings``.

    Raises ExpressionError for division by zero, unknown identifiers or operators, a negative base
    with a non-integer exponent (computed through float otherwise) and powers too large to compute.
    Trees of any depth are evaluated (without recursion).
    """
    return _evaluate(node, binding_values(bindings))
