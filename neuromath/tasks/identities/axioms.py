"""The axioms of the identities generator (Arabshahi, Singh, Anandkumar 2018): identities over the reals that the
generator rewrites equations with, written in a small pattern notation, and the parser of that notation.

Axiom notation
    Axioms are strings ``"left = right"`` in Python syntax, read by ``parse_pattern`` with Python's ``ast`` module
    (not SymPy, whose parser reorders products even with ``evaluate=False``). ``a``, ``b``, ``c`` are pattern
    variables matching any subtree; ``n``, ``m`` match integer leaves only; ``x y z w`` are the symbols ``var_0 ..
    var_3``; ``pi`` is pi. The tree is built in the data's convention: ``a - b`` is ``Add(a, Mul(-1, b))``, ``a / b``
    is ``Mul(a, Pow(b, -1))``, ``sqrt(a)`` is ``Pow(a, 1/2)``, ``-a`` is ``Mul(-1, a)``, and a literal integer
    fraction ``p/q`` or a negative literal ``-k`` is a single number leaf.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from fractions import Fraction

from neuromath.errors import ExpressionError
from neuromath.expr.equation_tree import (
    PI,
    SYMBOL_OF_NAME,
    UNARY_FUNCTIONS,
    EquationNode,
    apply,
    number,
    symbol,
)
from neuromath.expr.tree import preorder

PATTERN = "PatternVariable"  # the func of a pattern-variable leaf; never appears in a generated equation
ANY_SUBTREE_VARIABLES = ("a", "b", "c")
INTEGER_VARIABLES = ("n", "m")


# ---------------------------------------------------------------------------------------------- pattern notation


def pattern_variable(name: str) -> EquationNode:
    return EquationNode(PATTERN, name)


def parse_pattern(text: str) -> EquationNode:
    """An expression of the axiom notation (see the module docstring) as a tree with pattern-variable leaves."""
    try:
        syntax = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as error:
        raise ExpressionError(f"cannot parse {text!r}: {error.msg}") from None

    def literal(node: ast.expr) -> Fraction | None:
        """The value of an integer literal, a negated one or an integer fraction ``p/q``; None otherwise."""
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return Fraction(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = literal(node.operand)
            return -inner if inner is not None else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            top, bottom = literal(node.left), literal(node.right)
            if top is not None and bottom is not None and bottom.denominator == 1 and top.denominator == 1:
                return top / bottom
        return None

    def build(node: ast.expr) -> EquationNode:
        value = literal(node)
        if value is not None:
            return number(value)
        if isinstance(node, ast.Name):
            if node.id in ANY_SUBTREE_VARIABLES or node.id in INTEGER_VARIABLES:
                return pattern_variable(node.id)
            if node.id == "pi":
                return PI
            if node.id in SYMBOL_OF_NAME:
                return symbol(SYMBOL_OF_NAME[node.id])
            raise ExpressionError(f"unknown name {node.id!r} in {text!r}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return apply("Mul", number(-1), build(node.operand))
        if isinstance(node, ast.BinOp):
            left, right = build(node.left), build(node.right)
            if isinstance(node.op, ast.Add):
                return apply("Add", left, right)
            if isinstance(node.op, ast.Sub):
                negated_literal = literal(node.right)
                if negated_literal is not None:
                    return apply("Add", left, number(-negated_literal))
                return apply("Add", left, apply("Mul", number(-1), right))
            if isinstance(node.op, ast.Mult):
                return apply("Mul", left, right)
            if isinstance(node.op, ast.Div):
                return apply("Mul", left, apply("Pow", right, number(-1)))
            if isinstance(node.op, ast.Pow):
                return apply("Pow", left, right)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 and not node.keywords:
            argument = build(node.args[0])
            if node.func.id == "sqrt":
                return apply("Pow", argument, number(Fraction(1, 2)))
            if node.func.id in UNARY_FUNCTIONS:
                return apply(node.func.id, argument)
        raise ExpressionError(f"unsupported syntax {ast.dump(node)} in {text!r}")

    return build(syntax)


def variables_of(pattern: EquationNode) -> list[str]:
    """The pattern variables of a pattern, in order of first appearance (pre-order)."""
    names: list[str] = []
    for node in preorder(pattern):
        if node.func == PATTERN and node.value not in names:
            names.append(node.value)
    return names


# ---------------------------------------------------------------------------------------------- axioms


@dataclass(frozen=True)
class Axiom:
    """``left = right`` holds over the reals wherever both sides are defined, for every binding of the pattern
    variables. ``forward`` / ``backward`` weigh how often the rewrite left -> right / right -> left is chosen."""

    name: str
    text: str
    family: str
    forward: float = 1.0
    backward: float = 1.0

    @functools.cached_property
    def sides(self) -> tuple[EquationNode, EquationNode]:
        if self.text.count("=") != 1:
            raise ExpressionError(f"axiom {self.name}: expected one '=' in {self.text!r}")
        left, right = self.text.split("=")
        return parse_pattern(left), parse_pattern(right)

    @property
    def left(self) -> EquationNode:
        return self.sides[0]

    @property
    def right(self) -> EquationNode:
        return self.sides[1]


# Weights: a rewrite whose source is a bare pattern variable applies to every node, so the family of "a -> a*1"
# rewrites gets small weights; those that narrow the domain (a -> sin(asin(a))) get smaller ones still.
AXIOMS: tuple[Axiom, ...] = (
    # --- algebra: order, grouping, distribution, neutral and absorbing elements
    Axiom("add commutes", "a + b = b + a", "algebra"),
    Axiom("multiplication commutes", "a*b = b*a", "algebra"),
    Axiom("add associates", "(a + b) + c = a + (b + c)", "algebra"),
    Axiom("multiplication associates", "(a*b)*c = a*(b*c)", "algebra"),
    Axiom("distribute from the left", "a*(b + c) = a*b + a*c", "algebra"),
    Axiom("distribute from the right", "(a + b)*c = a*c + b*c", "algebra"),
    Axiom("adding zero", "a + 0 = a", "algebra", 1.0, 0.15),
    Axiom("zero plus", "0 + a = a", "algebra", 1.0, 0.1),
    Axiom("times one", "a*1 = a", "algebra", 1.0, 0.15),
    Axiom("one times", "1*a = a", "algebra", 1.0, 0.1),
    Axiom("times zero", "a*0 = 0", "algebra", 1.0, 0.3),
    Axiom("minus itself", "a - a = 0", "algebra", 1.0, 0.3),
    Axiom("double negation", "-(-a) = a", "algebra", 1.0, 0.1),
    Axiom("negation distributes", "-(a + b) = -a - b", "algebra"),
    Axiom("negation moves", "(-a)*b = -(a*b)", "algebra"),
    Axiom("minus one squared", "-1*(-1) = 1", "algebra", 1.0, 0.3),
    Axiom("sum of equals", "a + a = 2*a", "algebra"),
    Axiom("product of equals", "a*a = a**2", "algebra"),
    Axiom("divided by itself", "a/a = 1", "algebra", 1.0, 0.3),
    Axiom("divided by one", "a/1 = a", "algebra", 1.0, 0.05),
    Axiom("subtract then add", "a - b + b = a", "algebra", 1.0, 0.05),
    Axiom("fractions over one denominator", "a/c + b/c = (a + b)/c", "algebra"),
    Axiom("fraction times", "(a/b)*c = (a*c)/b", "algebra"),
    Axiom("divide by a fraction", "a/(b/c) = (a*c)/b", "algebra"),
    Axiom("square of a sum", "(a + b)**2 = a**2 + 2*a*b + b**2", "algebra"),
    Axiom("square of a difference", "(a - b)**2 = a**2 - 2*a*b + b**2", "algebra"),
    Axiom("difference of squares", "(a + b)*(a - b) = a**2 - b**2", "algebra"),
    Axiom("cube of a sum", "(a + b)**3 = a**3 + 3*a**2*b + 3*a*b**2 + b**3", "algebra"),
    # --- powers
    Axiom("power one", "a**1 = a", "power", 1.0, 0.15),
    Axiom("power zero", "a**0 = 1", "power", 1.0, 0.3),
    Axiom("one to a power", "1**a = 1", "power", 1.0, 0.3),
    Axiom("product of powers", "a**b*a**c = a**(b + c)", "power"),
    Axiom("quotient of powers", "a**b/a**c = a**(b - c)", "power"),
    Axiom("power of a power", "(a**b)**n = a**(b*n)", "power"),
    Axiom("power of a product", "(a*b)**c = a**c*b**c", "power"),
    Axiom("power of a quotient", "(a/b)**c = a**c/b**c", "power"),
    Axiom("negative exponent", "a**(-b) = 1/a**b", "power"),
    Axiom("inverse of an inverse", "(a**-1)**-1 = a", "power", 1.0, 0.05),
    Axiom("square root squared", "sqrt(a)**2 = a", "power", 1.0, 0.03),
    Axiom("product of square roots", "sqrt(a)*sqrt(b) = sqrt(a*b)", "power"),
    # --- trigonometry: definitions and reciprocals
    Axiom("tangent", "tan(a) = sin(a)/cos(a)", "trigonometry"),
    Axiom("cotangent", "cot(a) = cos(a)/sin(a)", "trigonometry"),
    Axiom("cotangent as reciprocal", "cot(a) = 1/tan(a)", "trigonometry"),
    Axiom("secant", "sec(a) = 1/cos(a)", "trigonometry"),
    Axiom("cosecant", "csc(a) = 1/sin(a)", "trigonometry"),
    Axiom("tangent times cotangent", "tan(a)*cot(a) = 1", "trigonometry", 1.0, 0.3),
    Axiom("sine times cosecant", "sin(a)*csc(a) = 1", "trigonometry", 1.0, 0.3),
    Axiom("cosine times secant", "cos(a)*sec(a) = 1", "trigonometry", 1.0, 0.3),
    # --- Pythagorean identities
    Axiom("Pythagoras", "sin(a)**2 + cos(a)**2 = 1", "trigonometry", 1.0, 0.6),
    Axiom("Pythagoras with tangent", "1 + tan(a)**2 = sec(a)**2", "trigonometry"),
    Axiom("Pythagoras with cotangent", "1 + cot(a)**2 = csc(a)**2", "trigonometry"),
    Axiom("sine squared", "sin(a)**2 = 1 - cos(a)**2", "trigonometry"),
    Axiom("cosine squared", "cos(a)**2 = 1 - sin(a)**2", "trigonometry"),
    # --- parity
    Axiom("sine is odd", "sin(-a) = -sin(a)", "trigonometry"),
    Axiom("cosine is even", "cos(-a) = cos(a)", "trigonometry"),
    Axiom("tangent is odd", "tan(-a) = -tan(a)", "trigonometry"),
    Axiom("cotangent is odd", "cot(-a) = -cot(a)", "trigonometry"),
    Axiom("secant is even", "sec(-a) = sec(a)", "trigonometry"),
    Axiom("cosecant is odd", "csc(-a) = -csc(a)", "trigonometry"),
    # --- sums and differences of angles
    Axiom("sine of a sum", "sin(a + b) = sin(a)*cos(b) + cos(a)*sin(b)", "trigonometry"),
    Axiom("sine of a difference", "sin(a - b) = sin(a)*cos(b) - cos(a)*sin(b)", "trigonometry"),
    Axiom("cosine of a sum", "cos(a + b) = cos(a)*cos(b) - sin(a)*sin(b)", "trigonometry"),
    Axiom("cosine of a difference", "cos(a - b) = cos(a)*cos(b) + sin(a)*sin(b)", "trigonometry"),
    Axiom("tangent of a sum", "tan(a + b) = (tan(a) + tan(b))/(1 - tan(a)*tan(b))", "trigonometry"),
    Axiom("tangent of a difference", "tan(a - b) = (tan(a) - tan(b))/(1 + tan(a)*tan(b))", "trigonometry"),
    # --- multiple and half angles
    Axiom("sine of a double angle", "sin(2*a) = 2*sin(a)*cos(a)", "trigonometry"),
    Axiom("cosine of a double angle", "cos(2*a) = cos(a)**2 - sin(a)**2", "trigonometry"),
    Axiom("cosine of a double angle by cosine", "cos(2*a) = 2*cos(a)**2 - 1", "trigonometry"),
    Axiom("cosine of a double angle by sine", "cos(2*a) = 1 - 2*sin(a)**2", "trigonometry"),
    Axiom("tangent of a double angle", "tan(2*a) = 2*tan(a)/(1 - tan(a)**2)", "trigonometry"),
    Axiom("sine of a triple angle", "sin(3*a) = 3*sin(a) - 4*sin(a)**3", "trigonometry"),
    Axiom("cosine of a triple angle", "cos(3*a) = 4*cos(a)**3 - 3*cos(a)", "trigonometry"),
    Axiom("cosine squared lowered", "cos(a)**2 = (1 + cos(2*a))/2", "trigonometry"),
    Axiom("sine squared lowered", "sin(a)**2 = (1 - cos(2*a))/2", "trigonometry"),
    Axiom("tangent of a half angle", "tan(a/2) = sin(a)/(1 + cos(a))", "trigonometry"),
    Axiom("tangent of a half angle by cosine", "tan(a/2) = (1 - cos(a))/sin(a)", "trigonometry"),
    # --- products and sums of sines and cosines
    Axiom("product of sines", "sin(a)*sin(b) = (cos(a - b) - cos(a + b))/2", "trigonometry"),
    Axiom("product of cosines", "cos(a)*cos(b) = (cos(a - b) + cos(a + b))/2", "trigonometry"),
    Axiom("sine times cosine", "sin(a)*cos(b) = (sin(a + b) + sin(a - b))/2", "trigonometry"),
    Axiom("sum of sines", "sin(a) + sin(b) = 2*sin((a + b)/2)*cos((a - b)/2)", "trigonometry"),
    Axiom("sum of cosines", "cos(a) + cos(b) = 2*cos((a + b)/2)*cos((a - b)/2)", "trigonometry"),
    Axiom("difference of cosines", "cos(a) - cos(b) = -2*sin((a + b)/2)*sin((a - b)/2)", "trigonometry"),
    # --- shifts by pi, 2 pi and pi/2
    Axiom("sine shifted by pi", "sin(a + pi) = -sin(a)", "trigonometry"),
    Axiom("cosine shifted by pi", "cos(a + pi) = -cos(a)", "trigonometry"),
    Axiom("tangent has period pi", "tan(a + pi) = tan(a)", "trigonometry"),
    Axiom("cotangent has period pi", "cot(a + pi) = cot(a)", "trigonometry"),
    Axiom("sine has period two pi", "sin(a + 2*pi) = sin(a)", "trigonometry"),
    Axiom("cosine has period two pi", "cos(a + 2*pi) = cos(a)", "trigonometry"),
    Axiom("secant has period two pi", "sec(a + 2*pi) = sec(a)", "trigonometry"),
    Axiom("cosecant has period two pi", "csc(a + 2*pi) = csc(a)", "trigonometry"),
    Axiom("sine of the supplement", "sin(pi - a) = sin(a)", "trigonometry"),
    Axiom("cosine of the supplement", "cos(pi - a) = -cos(a)", "trigonometry"),
    Axiom("sine of the complement", "sin(pi/2 - a) = cos(a)", "trigonometry"),
    Axiom("cosine of the complement", "cos(pi/2 - a) = sin(a)", "trigonometry"),
    Axiom("tangent of the complement", "tan(pi/2 - a) = cot(a)", "trigonometry"),
    Axiom("cotangent of the complement", "cot(pi/2 - a) = tan(a)", "trigonometry"),
    Axiom("secant of the complement", "sec(pi/2 - a) = csc(a)", "trigonometry"),
    Axiom("cosecant of the complement", "csc(pi/2 - a) = sec(a)", "trigonometry"),
    Axiom("sine shifted by a right angle", "sin(a + pi/2) = cos(a)", "trigonometry"),
    Axiom("cosine shifted by a right angle", "cos(a + pi/2) = -sin(a)", "trigonometry"),
    # --- values at special angles (those whose exact zero is not a floating-point zero, like sin(pi), are left
    #     out: 1.2e-16 to a small power is far from 0, which would fool the numeric check)
    Axiom("sine of zero", "sin(0) = 0", "values"),
    Axiom("cosine of zero", "cos(0) = 1", "values"),
    Axiom("tangent of zero", "tan(0) = 0", "values"),
    Axiom("secant of zero", "sec(0) = 1", "values"),
    Axiom("sine of pi/6", "sin(pi/6) = 1/2", "values"),
    Axiom("cosine of pi/3", "cos(pi/3) = 1/2", "values"),
    Axiom("sine of pi/4", "sin(pi/4) = sqrt(2)/2", "values"),
    Axiom("cosine of pi/4", "cos(pi/4) = sqrt(2)/2", "values"),
    Axiom("sine of pi/3", "sin(pi/3) = sqrt(3)/2", "values"),
    Axiom("cosine of pi/6", "cos(pi/6) = sqrt(3)/2", "values"),
    Axiom("tangent of pi/4", "tan(pi/4) = 1", "values"),
    Axiom("tangent of pi/3", "tan(pi/3) = sqrt(3)", "values"),
    Axiom("tangent of pi/6", "tan(pi/6) = 1/sqrt(3)", "values"),
    Axiom("cotangent of pi/4", "cot(pi/4) = 1", "values"),
    Axiom("sine of pi/2", "sin(pi/2) = 1", "values"),
    Axiom("cosecant of pi/2", "csc(pi/2) = 1", "values"),
    Axiom("cosine of pi", "cos(pi) = -1", "values"),
    Axiom("secant of pi", "sec(pi) = -1", "values"),
    # --- exponential and logarithm
    Axiom("exponential of a sum", "exp(a + b) = exp(a)*exp(b)", "exp-log"),
    Axiom("exponential of zero", "exp(0) = 1", "exp-log", 1.0, 0.3),
    Axiom("exponential of a negation", "exp(-a) = 1/exp(a)", "exp-log"),
    Axiom("power of an exponential", "exp(a)**b = exp(a*b)", "exp-log"),
    Axiom("logarithm of one", "log(1) = 0", "exp-log", 1.0, 0.3),
    Axiom("logarithm of an exponential", "log(exp(a)) = a", "exp-log", 1.0, 0.05),
    Axiom("exponential of a logarithm", "exp(log(a)) = a", "exp-log", 1.0, 0.02),
    Axiom("logarithm of a product", "log(a*b) = log(a) + log(b)", "exp-log"),
    Axiom("logarithm of a quotient", "log(a/b) = log(a) - log(b)", "exp-log"),
    Axiom("logarithm of a power", "log(a**b) = b*log(a)", "exp-log"),
    Axiom("power through the logarithm", "exp(b*log(a)) = a**b", "exp-log", 1.0, 0.3),
    # --- inverse trigonometric functions
    Axiom("sine of arcsine", "sin(asin(a)) = a", "inverse", 1.0, 0.01),
    Axiom("cosine of arccosine", "cos(acos(a)) = a", "inverse", 1.0, 0.01),
    Axiom("tangent of arctangent", "tan(atan(a)) = a", "inverse", 1.0, 0.03),
    Axiom("cotangent of arccotangent", "cot(acot(a)) = a", "inverse", 1.0, 0.015),
    Axiom("secant of arcsecant", "sec(asec(a)) = a", "inverse", 1.0, 0.01),
    Axiom("cosecant of arccosecant", "csc(acsc(a)) = a", "inverse", 1.0, 0.01),
    Axiom("arcsine is odd", "asin(-a) = -asin(a)", "inverse"),
    Axiom("arctangent is odd", "atan(-a) = -atan(a)", "inverse"),
    Axiom("arccosine of a negation", "acos(-a) = pi - acos(a)", "inverse"),
    Axiom("arcsine plus arccosine", "asin(a) + acos(a) = pi/2", "inverse", 1.0, 0.1),
    Axiom("arccotangent", "acot(a) = atan(1/a)", "inverse"),
    Axiom("arcsecant", "asec(a) = acos(1/a)", "inverse"),
    Axiom("arccosecant", "acsc(a) = asin(1/a)", "inverse"),
    Axiom("cosine of arcsine", "cos(asin(a)) = sqrt(1 - a**2)", "inverse"),
    Axiom("sine of arccosine", "sin(acos(a)) = sqrt(1 - a**2)", "inverse"),
    Axiom("cosine of arctangent", "cos(atan(a)) = 1/sqrt(1 + a**2)", "inverse"),
    Axiom("sine of arctangent", "sin(atan(a)) = a/sqrt(1 + a**2)", "inverse"),
    Axiom("arcsine of zero", "asin(0) = 0", "values"),
    Axiom("arctangent of one", "atan(1) = pi/4", "values"),
    Axiom("arccosine of zero", "acos(0) = pi/2", "values"),
)
