"""The one bridge between neuromath's expression forms and SymPy, both ways. No torch here.

Three forms meet SymPy here, and nowhere else:

* word-problem expression trees (``neuromath.expr.tree.Node``): ``to_sympy`` with exact Rationals, identifiers
  bound to numbers or left as Symbols; ``sympy_to_node`` writes a SymPy expression over symbols and rationals
  back as a tree in the data's habits (``a - b`` rather than ``a + (-1)*b``, ``a / b`` for a fraction);
* the prefix tokens of Lample & Charton (2020, "Deep learning for symbolic mathematics", section 2;
  ``neuromath.expr.symbolic_prefix``): ``prefix_to_sympy`` and ``sympy_to_prefix``;
* the equation trees of the identities task (``neuromath.expr.equation_tree.EquationNode``): ``equation_to_sympy``
  and ``sympy_to_equation``.

Prefix tokens: ``sympy_to_prefix`` writes n-ary sums and products as right-nested binary ``add`` / ``mul``
(``x + y + z`` is ``add x add y z``), ``x**(1/2)`` as ``sqrt x``, ``exp(x)`` as ``exp x`` and every other power as
``pow``. Anything else (floats, ``zoo``, ``nan``, unevaluated integrals, special functions such as ``erf``) raises
``ExpressionError``. ``prefix_to_sympy`` checks the sequence first (``check_prefix``), so a malformed sequence is an
``ExpressionError`` that says which token is wrong and why; it builds the expression with SymPy's automatic
evaluation, so ``prefix_to_sympy(sympy_to_prefix(e)) == e`` for the expressions ``sympy_to_prefix`` accepts.
Building can be slow for pathological input (``pow INT+ 9 9 9 pow INT+ 9 9 9``): call it on untrusted sequences
(model output) in a worker with a time limit (``neuromath.timelimit``).

Equation trees: ``sympy_to_equation`` nests n-ary ``Add``/``Mul`` left to right, as the released data does; it is
the inverse of ``equation_to_sympy`` on trees already in SymPy's canonical form.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

import sympy

from neuromath.errors import ExpressionError
from neuromath.expr import equation_tree
from neuromath.expr.equation_tree import UNARY_FUNCTIONS, EquationNode, apply, number, postorder
from neuromath.expr.exact import MAX_EXPONENT, Bindings, binding_values, check_power_size, leaf_value
from neuromath.expr.numbers import format_number, is_number
from neuromath.expr.symbolic_prefix import (
    CONSTANT,
    FUNCTION_LEAVES,
    LEAVES,
    VARIABLE,
    PrefixNode,
    check_prefix,
    fold,
    integer_tokens,
)
from neuromath.expr.tree import Node, check_arity

# --------------------------------------------------------------------------------------------- expression trees


def _sympy_power(base: sympy.Expr, exponent: sympy.Expr) -> sympy.Expr:
    if base.is_Rational and exponent.is_Rational:
        check_power_size(Fraction(int(base.p), int(base.q)), Fraction(int(exponent.p), int(exponent.q)))
    elif base.is_number and exponent.is_Rational and abs(exponent) > MAX_EXPONENT:
        raise ExpressionError(f"power too large to compute: the exponent is limited to {MAX_EXPONENT}")
    return sympy.Pow(base, exponent)


def _to_sympy(node: Node, values: dict[str, Fraction]) -> sympy.Expr:
    check_arity(node)
    if node.is_leaf:
        if is_number(node.value) or node.value in values:
            value = leaf_value(node, values)
            return sympy.Rational(value.numerator, value.denominator)
        return sympy.Symbol(node.value)
    operands = [_to_sympy(child, values) for child in node.children]
    if node.value == "neg":
        return -operands[0]
    left, right = operands
    if node.value == "+":
        return left + right
    if node.value == "-":
        return left - right
    if node.value == "*":
        return left * right
    if node.value == "/":
        return left / right
    return _sympy_power(left, right)


def to_sympy(node: Node, bindings: Bindings | None = None) -> sympy.Expr:
    """A SymPy expression with exact Rationals; identifiers without a binding become Symbols.

    Division by zero follows SymPy (``zoo``); powers too large to compute raise ExpressionError.
    """
    return _to_sympy(node, binding_values(bindings))


def sympy_to_node(expression: sympy.Expr) -> Node:
    """A tree for a SymPy expression over symbols and rationals: a - b rather than a + (-1)*b."""
    if expression.is_Symbol:
        return Node(expression.name)
    if (expression.is_Number or expression.is_Mul) and expression.could_extract_minus_sign():
        return Node("neg", (sympy_to_node(-expression),))
    if expression.is_Rational:
        return Node(format_number(Fraction(int(expression.p), int(expression.q))))
    numerator, denominator = sympy.fraction(expression)
    if denominator != 1:
        return Node("/", (sympy_to_node(numerator), sympy_to_node(denominator)))
    if expression.is_Add:
        terms = expression.as_ordered_terms()
        positive = [term for term in terms if not term.could_extract_minus_sign()]
        negative = [-term for term in terms if term.could_extract_minus_sign()]
        if not positive:
            return Node("neg", (sympy_to_node(-expression),))
        tree = sympy_to_node(positive[0])
        for term in positive[1:]:
            tree = Node("+", (tree, sympy_to_node(term)))
        for term in negative:
            tree = Node("-", (tree, sympy_to_node(term)))
        return tree
    if expression.is_Mul:
        factors = [sympy_to_node(factor) for factor in expression.as_ordered_factors()]
        tree = factors[0]
        for factor in factors[1:]:
            tree = Node("*", (tree, factor))
        return tree
    raise ExpressionError(f"cannot write the solution {expression} as an equation")


# --------------------------------------------------------------------------------------------- prefix tokens


def symbol(name: str) -> sympy.Symbol:
    """The SymPy symbol of a leaf token (``x`` and ``c`` are real, as the generators assume)."""
    return sympy.Symbol(name, real=True) if name in (VARIABLE, CONSTANT) else sympy.Symbol(name)


PREFIX_UNARY = {
    "exp": sympy.exp, "ln": sympy.log, "sqrt": sympy.sqrt, "abs": sympy.Abs, "sign": sympy.sign,
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec, "csc": sympy.csc,
    "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan, "acot": sympy.acot, "asec": sympy.asec,
    "acsc": sympy.acsc, "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh, "coth": sympy.coth,
    "sech": sympy.sech, "csch": sympy.csch, "asinh": sympy.asinh, "acosh": sympy.acosh, "atanh": sympy.atanh,
    "acoth": sympy.acoth, "asech": sympy.asech, "acsch": sympy.acsch,
    "inv": lambda a: 1 / a,
    "pow2": lambda a: a**2, "pow3": lambda a: a**3, "pow4": lambda a: a**4, "pow5": lambda a: a**5,
}
PREFIX_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "pow": lambda a, b: a**b,
}
PREFIX_LEAVES = {
    **{name: symbol(name) for name in (VARIABLE, CONSTANT) + FUNCTION_LEAVES},
    "pi": sympy.pi, "E": sympy.E, "I": sympy.I,
}
# The token of each SymPy function and constant sympy_to_prefix writes (unary operators written as themselves).
PREFIX_FUNCTION_NAMES = {
    sympy.exp: "exp", sympy.log: "ln", sympy.Abs: "abs", sympy.sign: "sign",
    sympy.sin: "sin", sympy.cos: "cos", sympy.tan: "tan", sympy.cot: "cot", sympy.sec: "sec", sympy.csc: "csc",
    sympy.asin: "asin", sympy.acos: "acos", sympy.atan: "atan", sympy.acot: "acot", sympy.asec: "asec",
    sympy.acsc: "acsc", sympy.sinh: "sinh", sympy.cosh: "cosh", sympy.tanh: "tanh", sympy.coth: "coth",
    sympy.sech: "sech", sympy.csch: "csch", sympy.asinh: "asinh", sympy.acosh: "acosh",
    sympy.atanh: "atanh", sympy.acoth: "acoth", sympy.asech: "asech", sympy.acsch: "acsch",
}
PREFIX_CONSTANT_NAMES = {sympy.pi: "pi", sympy.E: "E", sympy.I: "I"}


def _prefix_leaf(node: PrefixNode) -> sympy.Expr:
    return sympy.Integer(node.value) if node.token == "INT" else PREFIX_LEAVES[node.token]


def _prefix_operation(node: PrefixNode, args: list) -> sympy.Expr:
    return (PREFIX_BINARY.get(node.token) or PREFIX_UNARY[node.token])(*args)


def prefix_to_sympy(tokens: Sequence[str]) -> sympy.Expr:
    """The SymPy expression of a prefix token sequence (``ExpressionError`` when malformed, nested deeper than
    ``symbolic_prefix.MAX_DEPTH`` levels, or undefined, e.g. ``div x INT+ 0``)."""
    # folded iteratively: a long chain of add or mul is one level for SymPy but many for a recursion
    expression = fold(check_prefix(tokens), _prefix_leaf, _prefix_operation)
    if expression.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise ExpressionError("the expression is undefined (division by zero or an infinite value)")
    return expression


def sympy_to_prefix(expression) -> list[str]:
    """Prefix tokens of a SymPy expression over the operators and leaves of ``symbolic_prefix`` (``ExpressionError``
    otherwise)."""

    def nested(operator: str, args: Sequence) -> list[str]:
        out: list[str] = []
        for i, arg in enumerate(args):
            if i < len(args) - 1:
                out.append(operator)
            out += convert(arg)
        return out

    def convert(e) -> list[str]:
        if e.is_Integer:
            return integer_tokens(int(e))
        if e.is_Rational:
            return ["div", *integer_tokens(int(e.p)), *integer_tokens(int(e.q))]
        if e.is_Symbol:
            if e.name not in LEAVES:
                raise ExpressionError(f"unknown symbol {e.name!r}")
            return [e.name]
        for constant, name in PREFIX_CONSTANT_NAMES.items():
            if e == constant:
                return [name]
        if e.is_Add:
            return nested("add", e.args)
        if e.is_Mul:
            return nested("mul", e.args)
        if e.is_Pow:
            base, power = e.args
            if power == sympy.Rational(1, 2):
                return ["sqrt", *convert(base)]
            return ["pow", *convert(base), *convert(power)]
        if e.func in PREFIX_FUNCTION_NAMES and len(e.args) == 1:
            return [PREFIX_FUNCTION_NAMES[e.func], *convert(e.args[0])]
        raise ExpressionError(f"cannot write {type(e).__name__} in prefix notation: {e}")

    try:  # strict: a number or a SymPy object; text (or an object only its str() describes) is never parsed here
        expression = sympy.sympify(expression, strict=True)
    except sympy.SympifyError as error:
        raise ExpressionError(f"not a SymPy expression: {type(expression).__name__}") from error
    return convert(expression)


# --------------------------------------------------------------------------------------------- equation trees


EQUATION_FUNCTIONS = {name: getattr(sympy, name) for name in UNARY_FUNCTIONS}


def equation_to_sympy(node: EquationNode) -> sympy.Basic:
    """The SymPy expression of an equation tree (an ``Equality`` becomes ``sympy.Eq`` without evaluation; symbols
    ``var_0 .. var_3`` become the real symbols x, y, z, w)."""
    values: list = []  # a value stack (shared subtrees are visited once per occurrence)
    for current in postorder(node):
        if current.is_leaf:
            if current.func == "Symbol":
                values.append(sympy.Symbol(equation_tree.SYMBOL_NAMES.get(current.value, current.value), real=True))
            elif current.func == "Pi":
                values.append(sympy.pi)
            elif current.func == "Float":
                values.append(sympy.Float(current.value))
            else:
                values.append(sympy.Rational(current.value))
            continue
        args = values[-len(current.children):]
        del values[-len(current.children):]
        if current.func == "Equality":
            values.append(sympy.Eq(*args, evaluate=False))
        elif current.func == "Add":
            values.append(sympy.Add(*args))
        elif current.func == "Mul":
            values.append(sympy.Mul(*args))
        elif current.func == "Pow":
            values.append(sympy.Pow(*args))
        else:
            values.append(EQUATION_FUNCTIONS[current.func](args[0]))
    return values[0]


def sympy_to_equation(expr) -> EquationNode:
    """The binary tree of a SymPy expression in the data's convention: n-ary ``Add``/``Mul`` nested left to right,
    ``Eq`` as ``Equality``, numbers as the leaf kinds of ``equation_tree.number`` (``Float`` for floats), ``pi`` as
    ``Pi``, ``E`` as ``exp(1)``, symbols ``x y z w`` (or ``var_0 .. var_3``) as ``var_0 .. var_3``."""
    if isinstance(expr, sympy.Equality):
        return apply("Equality", sympy_to_equation(expr.lhs), sympy_to_equation(expr.rhs))
    if expr is sympy.pi:
        return equation_tree.PI
    if expr is sympy.E:
        return apply("exp", number(1))
    if isinstance(expr, sympy.Symbol):
        name = equation_tree.SYMBOL_OF_NAME.get(expr.name, expr.name)
        if name not in equation_tree.SYMBOLS:
            raise ExpressionError(f"symbol {expr.name!r} is not one of x, y, z, w")
        return equation_tree.symbol(name)
    if isinstance(expr, sympy.Rational):  # Integer, One, NegativeOne, Half are Rationals too
        return number(Fraction(int(expr.p), int(expr.q)))
    if isinstance(expr, sympy.Float):
        return EquationNode("Float", repr(float(expr)))
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        func = "Add" if isinstance(expr, sympy.Add) else "Mul"
        node = sympy_to_equation(expr.args[0])
        for argument in expr.args[1:]:
            node = apply(func, node, sympy_to_equation(argument))
        return node
    if isinstance(expr, sympy.Pow):
        return apply("Pow", sympy_to_equation(expr.base), sympy_to_equation(expr.exp))
    name = getattr(expr, "func", type(expr)).__name__
    if name in UNARY_FUNCTIONS and len(expr.args) == 1:
        return apply(name, sympy_to_equation(expr.args[0]))
    raise ExpressionError(f"cannot convert {expr!r} ({type(expr).__name__}) to an equation tree")
