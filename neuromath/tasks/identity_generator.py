"""Generator of identities-task equations (the data generation of Arabshahi, Singh, Anandkumar 2018, used by
Mali et al. 2021; ``statistics_table`` has the layout of their Table 1): an axiom set, true equations by random
local rewrites, false ones by mutations of true ones, every label checked, deduplicated, balanced per depth and
split by depth. No torch here.

How an equation is made
    A chain starts from an instance of an axiom (its pattern variables bound to small random terms) or from a
    trivial ``t = t``. Each step either rewrites one subtree: a subtree that matches one side of an axiom is replaced
    by the other side, instantiated (pattern variables that only the other side has get fresh random terms), or a
    number is folded or unfolded (``3`` <-> ``1 + 2``); or it applies one operation to both sides at the root
    (``L + t = R + t``, ``L*t = R*t``, ``L^t = R^t``, ``t^L = t^R``, ``f(L) = f(R)``). Growth comes from rewrites on a
    longest root-to-leaf path that replace a small subtree by a bigger one, and from root operations. False
    equations are mutations of chain states: grow (a leaf becomes a small subtree), shrink (a subtree becomes one of
    its children) or replace (an operator becomes another of the same arity, a leaf another leaf).

How labels are decided (never trusted from construction)
    ``numeric_label``: both sides are evaluated at random points with ``identities.numeric_check`` (points outside a
    side's domain are skipped), first on [-3, 3], and when that cannot tell, on (0.05, 2) and (-1, 1) as well. A
    candidate whose check is inconclusive goes to SymPy (``simplify(lhs - rhs) == 0``) in a worker process that is
    killed and replaced when it runs past its time limit (``SympyJudge``); SymPy can only prove equality, so such a
    candidate becomes True or is dropped; SymPy is asked only while a depth still lacks true equations after the
    numerically decided ones. A chain state whose check says False is dropped (and ends its chain); a mutation
    whose check says True is kept as a True example when its depth still needs true ones, else dropped. Candidates
    holding a constant that is 0 on paper but not in floating point (``cos(pi/2)``) are skipped.
    An identity here means: both sides are equal wherever both are defined over the reals, which is what the
    numeric check tests; every axiom below holds in that sense.

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
import math
import multiprocessing
import random
import sys
import time
from dataclasses import dataclass, field, fields
from fractions import Fraction
from pathlib import Path
from typing import Iterable

from neuromath.errors import ExpressionError
from neuromath.tasks.identities import (
    ARITY,
    BINARY_FUNCTIONS,
    PI,
    SYMBOLS,
    UNARY_FUNCTIONS,
    EquationExample,
    EquationNode,
    apply,
    height,
    numeric_check,
    number,
    postorder,
    preorder,
    symbol,
    to_preorder,
    write_equations,
)

PATTERN = "PatternVariable"  # the func of a pattern-variable leaf; never appears in a generated equation
ANY_SUBTREE_VARIABLES = ("a", "b", "c")
INTEGER_VARIABLES = ("n", "m")
NUMBER_KINDS_EXACT = ("Integer", "Rational", "One", "NegativeOne", "Half")
SYMBOL_OF_NAME = {"x": "var_0", "y": "var_1", "z": "var_2", "w": "var_3"}


# ---------------------------------------------------------------------------------------------- SymPy -> tree


def from_sympy(expr) -> EquationNode:
    """The binary tree of a SymPy expression in the data's convention: n-ary ``Add``/``Mul`` nested left to right,
    ``Eq`` as ``Equality``, numbers as the leaf kinds of ``identities.number`` (``Float`` for floats), ``pi`` as
    ``Pi``, ``E`` as ``exp(1)``, symbols ``x y z w`` (or ``var_0 .. var_3``) as ``var_0 .. var_3``."""
    import sympy

    if isinstance(expr, sympy.Equality):
        return apply("Equality", from_sympy(expr.lhs), from_sympy(expr.rhs))
    if expr is sympy.pi:
        return PI
    if expr is sympy.E:
        return apply("exp", number(1))
    if isinstance(expr, sympy.Symbol):
        name = SYMBOL_OF_NAME.get(expr.name, expr.name)
        if name not in SYMBOLS:
            raise ExpressionError(f"symbol {expr.name!r} is not one of x, y, z, w")
        return symbol(name)
    if isinstance(expr, sympy.Rational):  # Integer, One, NegativeOne, Half are Rationals too
        return number(Fraction(int(expr.p), int(expr.q)))
    if isinstance(expr, sympy.Float):
        return EquationNode("Float", repr(float(expr)))
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        func = "Add" if isinstance(expr, sympy.Add) else "Mul"
        node = from_sympy(expr.args[0])
        for argument in expr.args[1:]:
            node = apply(func, node, from_sympy(argument))
        return node
    if isinstance(expr, sympy.Pow):
        return apply("Pow", from_sympy(expr.base), from_sympy(expr.exp))
    name = getattr(expr, "func", type(expr)).__name__
    if name in UNARY_FUNCTIONS and len(expr.args) == 1:
        return apply(name, from_sympy(expr.args[0]))
    raise ExpressionError(f"cannot convert {expr!r} ({type(expr).__name__}) to an equation tree")


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


# ---------------------------------------------------------------------------------------------- matching


def matches_integer(node: EquationNode) -> bool:
    return node.func in ("Integer", "One", "NegativeOne")


def match(pattern: EquationNode, tree: EquationNode, bindings: dict[str, EquationNode] | None = None):
    """The bindings of the pattern variables that make ``pattern`` equal to ``tree`` (a repeated variable must
    bind structurally equal subtrees; ``n``, ``m`` bind integer leaves only), or None when it does not match."""
    found = dict(bindings or {})
    stack = [(pattern, tree)]
    while stack:
        pattern_node, tree_node = stack.pop()
        if pattern_node.func == PATTERN:
            name = pattern_node.value
            if name in INTEGER_VARIABLES and not matches_integer(tree_node):
                return None
            if name in found:
                if found[name] != tree_node:
                    return None
            else:
                found[name] = tree_node
            continue
        if (
            pattern_node.func != tree_node.func
            or pattern_node.value != tree_node.value
            or len(pattern_node.children) != len(tree_node.children)
        ):
            return None
        stack.extend(zip(pattern_node.children, tree_node.children))
    return found


def instantiate(pattern: EquationNode, bindings: dict[str, EquationNode]) -> EquationNode:
    """The pattern with every pattern variable replaced by its binding (all must be bound)."""
    built: list[EquationNode] = []  # a value stack over the post-order walk
    for node in postorder(pattern):
        if node.func == PATTERN:
            if node.value not in bindings:
                raise ExpressionError(f"pattern variable {node.value!r} is not bound")
            built.append(bindings[node.value])
        elif node.is_leaf:
            built.append(node)
        else:
            children = tuple(built[-len(node.children):])
            del built[-len(node.children):]
            built.append(EquationNode(node.func, node.value, children))
    return built[0]


# ---------------------------------------------------------------------------------------------- random terms


SMALL_INTEGERS = (1, 2, 3, 4, -1, 0, 5, -2)
SMALL_INTEGER_WEIGHTS = (6, 6, 4, 2, 3, 1, 1, 1)
SMALL_FRACTIONS = tuple(Fraction(text) for text in ("1/2", "1/3", "2/3", "3/2", "2/5", "-1/2", "1/4"))
TERM_FUNCTIONS = ("sin", "cos", "tan", "cot", "sec", "csc", "exp", "log", "asin", "acos", "atan")
TERM_FUNCTION_WEIGHTS = (6, 6, 4, 2, 1, 1, 1, 1, 0.3, 0.3, 0.5)
ROOT_FUNCTIONS = ("sin", "cos", "tan", "cot", "sec", "csc", "exp", "log", "atan")
ROOT_FUNCTION_WEIGHTS = (6, 6, 3, 1, 1, 1, 1.5, 0.5, 0.5)


def symbols_in(tree: EquationNode) -> list[str]:
    return sorted({node.value for node in preorder(tree) if node.func == "Symbol"})


def random_symbol(rng: random.Random, in_use: list[str]) -> EquationNode:
    """Mostly a symbol the equation already has (so equations keep few variables), else the next unused one."""
    unused = [name for name in SYMBOLS if name not in in_use]
    if in_use and (not unused or rng.random() < 0.75):
        return symbol(rng.choice(in_use))
    return symbol(unused[0] if rng.random() < 0.7 else rng.choice(unused))


def random_number(rng: random.Random) -> EquationNode:
    if rng.random() < 0.85:
        return number(rng.choices(SMALL_INTEGERS, SMALL_INTEGER_WEIGHTS)[0])
    return number(rng.choice(SMALL_FRACTIONS))


def random_leaf(rng: random.Random, in_use: list[str]) -> EquationNode:
    draw = rng.random()
    if draw < 0.5:
        return random_symbol(rng, in_use)
    if draw < 0.88:
        return random_number(rng)
    return PI


def random_term(rng: random.Random, max_height: int, in_use: list[str]) -> EquationNode:
    """A small random expression of height at most ``max_height``: leaves, a function of a term, or a sum,
    product or power (mostly a small integer power) of terms."""
    if max_height <= 0 or rng.random() < 0.45:
        return random_leaf(rng, in_use)
    draw = rng.random()
    if draw < 0.35:
        return apply(rng.choices(TERM_FUNCTIONS, TERM_FUNCTION_WEIGHTS)[0], random_term(rng, max_height - 1, in_use))
    if draw < 0.6:
        return apply("Add", random_term(rng, max_height - 1, in_use), random_term(rng, max_height - 1, in_use))
    if draw < 0.85:
        return apply("Mul", random_term(rng, max_height - 1, in_use), random_term(rng, max_height - 1, in_use))
    exponent = number(rng.choice((2, 2, 3, -1, Fraction(1, 2))))
    return apply("Pow", random_term(rng, max_height - 1, in_use), exponent)


def random_binding(name: str, rng: random.Random, in_use: list[str], max_height: int) -> EquationNode:
    if name in INTEGER_VARIABLES:
        return number(rng.choice((2, 2, 3, -1, -2, 4)))
    return random_term(rng, rng.choice((0, 0, 1)) if max_height >= 1 else 0, in_use)


# ---------------------------------------------------------------------------------------------- rewrites


class AxiomRewrite:
    """Replace a subtree matching ``source`` by ``target`` (variables only in ``target`` get random terms)."""

    def __init__(self, axiom: Axiom, source: EquationNode, target: EquationNode, weight: float):
        self.axiom = axiom
        self.source = source
        self.target = target
        self.weight = weight
        self.root = None if source.func == PATTERN else source.func  # None: may apply at any node
        self.free_variables = [name for name in variables_of(target) if name not in variables_of(source)]

    def match(self, node: EquationNode):
        if self.source.func == PATTERN:  # a bare variable: binds any node (any integer leaf for n, m)
            if self.source.value in INTEGER_VARIABLES and not matches_integer(node):
                return None
            return {self.source.value: node}
        return match(self.source, node)

    def build(self, bindings: dict, rng: random.Random, in_use: list[str]) -> EquationNode:
        bindings = dict(bindings)
        for name in self.free_variables:
            bindings[name] = random_binding(name, rng, in_use, 1)
        return instantiate(self.target, bindings)


def is_exact_number(node: EquationNode) -> bool:
    return node.func in NUMBER_KINDS_EXACT


def number_value(node: EquationNode) -> Fraction:
    return Fraction(node.value)


def is_small_fraction(value: Fraction) -> bool:
    return abs(value.numerator) <= 1000 and value.denominator <= 1000


class NumberFolding:
    """``2 + 3`` -> ``5``, ``2*3`` -> ``6``, ``2**3`` -> ``8``, ``4**(1/2)`` -> ``2``: an operator of two number
    leaves becomes the number it equals (when that is a small rational)."""

    root = None
    weight = 0.8

    def match(self, node: EquationNode):
        if node.func not in BINARY_FUNCTIONS or not all(is_exact_number(child) for child in node.children):
            return None
        left, right = (number_value(child) for child in node.children)
        if node.func == "Add":
            value = left + right
        elif node.func == "Mul":
            value = left * right
        elif right.denominator == 1:
            if left == 0 and right <= 0 or abs(right) > 6:
                return None
            value = left ** int(right)
        elif right == Fraction(1, 2) and left >= 0:
            roots = [Fraction(math.isqrt(part)) for part in (left.numerator, left.denominator)]
            if roots[0] ** 2 != left.numerator or roots[1] ** 2 != left.denominator:
                return None
            value = roots[0] / roots[1]
        else:
            return None
        return {"value": value} if is_small_fraction(value) else None

    def build(self, bindings: dict, rng: random.Random, in_use: list[str]) -> EquationNode:
        return number(bindings["value"])


PERFECT_POWERS = {
    Fraction(4): ((2, 2),), Fraction(8): ((2, 3),), Fraction(9): ((3, 2),), Fraction(16): ((2, 4), (4, 2)),
    Fraction(1, 2): ((2, -1),), Fraction(1, 3): ((3, -1),), Fraction(1, 4): ((2, -2), (4, -1)),
    Fraction(2): ((4, Fraction(1, 2)),), Fraction(3): ((9, Fraction(1, 2)),),
}


class NumberUnfolding:
    """A number leaf becomes an expression equal to it: ``k = i + (k - i)``, ``k = i * (k / i)``, ``4 = 2**2``,
    ``1 = i**0``."""

    root = None
    weight = 0.6

    def match(self, node: EquationNode):
        if not is_exact_number(node):
            return None
        value = number_value(node)
        return {"value": value} if abs(value.numerator) <= 20 and value.denominator <= 12 else None

    def build(self, bindings: dict, rng: random.Random, in_use: list[str]) -> EquationNode:
        value: Fraction = bindings["value"]
        draw = rng.random()
        powers = PERFECT_POWERS.get(value, ())
        if value == 1 and draw < 0.15:
            return apply("Pow", number(rng.choice((2, 3, 4))), number(0))
        if powers and draw < 0.35:
            base, exponent = rng.choice(powers)
            return apply("Pow", number(base), number(exponent))
        if draw < 0.75:
            part = Fraction(rng.choice((1, 2, 3, -1, 4)))
            if part == value:
                part += 1
            return apply("Add", number(part), number(value - part))
        factor = Fraction(rng.choice((2, -1, 3, Fraction(1, 2))))
        return apply("Mul", number(factor), number(value / factor))


@functools.lru_cache(maxsize=1)
def rewrite_index() -> tuple[dict[str, list], list]:
    """The rewrites by the function at their source's root, and those that may apply at any node."""
    by_root: dict[str, list] = {}
    anywhere: list = [NumberFolding(), NumberUnfolding()]
    for axiom in AXIOMS:
        for source, target, weight in ((axiom.left, axiom.right, axiom.forward), (axiom.right, axiom.left, axiom.backward)):
            if weight <= 0:
                continue
            rewrite = AxiomRewrite(axiom, source, target, weight)
            if rewrite.root is None:
                anywhere.append(rewrite)
            else:
                by_root.setdefault(rewrite.root, []).append(rewrite)
    return by_root, anywhere


# ---------------------------------------------------------------------------------------------- tree positions


@dataclass(frozen=True)
class Position:
    """A node of a tree, where it is (``path``: child indices from the root) and its ``slack``: how far the longest
    root-to-leaf path through it falls short of the tree's height (0 on a longest path, where growing the node
    grows the tree)."""

    path: tuple[int, ...]
    node: EquationNode
    slack: int


@dataclass(frozen=True)
class TreeLayout:
    """Every position of a tree, its height and its symbols, computed in one walk (a chain step needs all three)."""

    positions: tuple[Position, ...]
    height: int
    symbols: list[str]

    @property
    def node_count(self) -> int:
        return len(self.positions)


def layout(tree: EquationNode) -> TreeLayout:
    visited: list[tuple[tuple[int, ...], EquationNode, int, int]] = []  # (path, node, depth, height)
    names: set[str] = set()

    def visit(node: EquationNode, path: tuple[int, ...], depth: int) -> int:
        node_height = 0
        for index, child in enumerate(node.children):
            node_height = max(node_height, 1 + visit(child, path + (index,), depth + 1))
        if node.func == "Symbol":
            names.add(node.value)
        visited.append((path, node, depth, node_height))
        return node_height

    total = visit(tree, (), 0)
    found = tuple(Position(path, node, total - depth - node_height) for path, node, depth, node_height in visited)
    return TreeLayout(found, total, sorted(names))


def replace_path(tree: EquationNode, path: tuple[int, ...], replacement: EquationNode) -> EquationNode:
    if not path:
        return replacement
    children = list(tree.children)
    children[path[0]] = replace_path(children[path[0]], path[1:], replacement)
    return EquationNode(tree.func, tree.value, tuple(children))


# ---------------------------------------------------------------------------------------------- chain steps


@dataclass(frozen=True)
class GeneratorSettings:
    """Knobs of the chain generator (the defaults give an even spread over depths 1..13)."""

    root_operation_probability: float = 0.12
    longest_path_probability: float = 0.7  # rewrite a node on a longest path (grows the depth) this often
    start_from_trivial_probability: float = 0.2  # start a chain from t = t instead of an axiom instance
    leaf_start_probability: float = 0.35  # ... with t a leaf (the only true equations of depth 1)
    symbol_start_probability: float = 0.9  # make sure an axiom instance has a symbol this often
    offer_probability: float = 0.6  # a chain offers a true candidate at a given depth this often (at most once)
    early_offer_probability: float = 0.3  # offer a state before the chain leaves its depth (else the last state there)
    mutations_per_depth: int = 2  # false candidates made from the states of one depth of one chain
    max_steps: int = 60
    max_nodes_per_depth: int = 7  # a chain ends when its equation has more than this many nodes per depth + 10
    stall_chains: int = 150  # a chunk ends after this many chains in a row that added nothing


def start_state(rng: random.Random, settings: GeneratorSettings) -> EquationNode:
    if rng.random() < settings.start_from_trivial_probability:
        term = random_leaf(rng, []) if rng.random() < settings.leaf_start_probability else random_term(rng, 2, [])
        return apply("Equality", term, term)
    axiom = rng.choice(AXIOMS)
    bindings: dict[str, EquationNode] = {}
    in_use: list[str] = []
    for name in variables_of(apply("Equality", axiom.left, axiom.right)):
        bindings[name] = random_binding(name, rng, in_use, 1)
        if not in_use and name in ANY_SUBTREE_VARIABLES and rng.random() < settings.symbol_start_probability:
            while not symbols_in(bindings[name]):  # mostly equations in variables, not between constants
                bindings[name] = random_binding(name, rng, in_use, 1)
        in_use = sorted(set(in_use) | set(symbols_in(bindings[name])))
    left, right = instantiate(axiom.left, bindings), instantiate(axiom.right, bindings)
    return apply("Equality", left, right) if rng.random() < 0.5 else apply("Equality", right, left)


def apply_to_both_sides(equation: EquationNode, rng: random.Random, shape: TreeLayout | None = None) -> EquationNode:
    """The same operation on both sides: add or multiply by a term, raise to a power, a power of a number with
    the side as exponent, or a function of both sides."""
    left, right = equation.children
    in_use = (shape or layout(equation)).symbols
    draw = rng.random()
    if draw < 0.3:
        term = random_term(rng, 1, in_use)
        on_the_left = rng.random() < 0.5
        sides = [apply("Add", term, side) if on_the_left else apply("Add", side, term) for side in (left, right)]
    elif draw < 0.5:
        term = random_term(rng, 1, in_use)
        on_the_left = rng.random() < 0.5
        sides = [apply("Mul", term, side) if on_the_left else apply("Mul", side, term) for side in (left, right)]
    elif draw < 0.62:
        exponent = number(rng.choice((2, 2, 3, -1, Fraction(1, 2))))
        sides = [apply("Pow", side, exponent) for side in (left, right)]
    elif draw < 0.68:
        base = rng.choice((number(2), number(3), number(Fraction(1, 2)), PI))
        sides = [apply("Pow", base, side) for side in (left, right)]
    else:
        function = rng.choices(ROOT_FUNCTIONS, ROOT_FUNCTION_WEIGHTS)[0]
        sides = [apply(function, side) for side in (left, right)]
    return apply("Equality", *sides)


def rewrite_step(
    equation: EquationNode, rng: random.Random, settings: GeneratorSettings, shape: TreeLayout | None = None
) -> EquationNode | None:
    """One local rewrite somewhere in either side (mostly on a longest path), or None when ten tries found no node
    that any rewrite applies to."""
    by_root, anywhere = rewrite_index()
    shape = shape or layout(equation)
    all_positions = [position for position in shape.positions if position.path]  # not the Equality root
    deepest = [position for position in all_positions if position.slack == 0]
    for _ in range(10):
        pool = deepest if deepest and rng.random() < settings.longest_path_probability else all_positions
        position = rng.choice(pool)
        options = []
        for rewrite in by_root.get(position.node.func, []) + anywhere:
            bindings = rewrite.match(position.node)
            if bindings is not None:
                options.append((rewrite, bindings))
        if not options:
            continue
        rewrite, bindings = rng.choices(options, [option[0].weight for option in options])[0]
        return replace_path(equation, position.path, rewrite.build(bindings, rng, shape.symbols))
    return None


def chain_step(
    equation: EquationNode, rng: random.Random, settings: GeneratorSettings, shape: TreeLayout | None = None
) -> EquationNode | None:
    """The next state of a chain: a root operation on both sides, or a local rewrite."""
    if rng.random() < settings.root_operation_probability:
        return apply_to_both_sides(equation, rng, shape)
    return rewrite_step(equation, rng, settings, shape)


# ---------------------------------------------------------------------------------------------- mutations


SAME_ARITY_REPLACEMENTS = {
    "sin": ("cos", "tan", "csc"), "cos": ("sin", "sec", "tan"), "tan": ("cot", "sin", "cos"),
    "cot": ("tan", "cos", "csc"), "sec": ("csc", "cos"), "csc": ("sec", "sin"),
    "asin": ("acos", "atan", "sin"), "acos": ("asin", "cos"), "atan": ("acot", "tan", "asin"),
    "acot": ("atan", "cot"), "asec": ("acsc", "sec"), "acsc": ("asec", "csc"),
    "exp": ("log", "sin", "cos"), "log": ("exp", "sin"),
    "Add": ("Mul", "Pow"), "Mul": ("Add", "Pow"), "Pow": ("Mul", "Add"),
}


def replacement_leaf(node: EquationNode, rng: random.Random, in_use: list[str]) -> EquationNode:
    for _ in range(10):
        if node.func == "Symbol" and rng.random() < 0.6:
            candidate = random_symbol(rng, [name for name in in_use if name != node.value] or ["var_1"])
        elif is_exact_number(node) and rng.random() < 0.6:
            candidate = number(number_value(node) + rng.choice((1, -1, 2)))
        else:
            candidate = random_leaf(rng, in_use)
        if candidate != node:
            return candidate
    return number(7)


def mutate(equation: EquationNode, rng: random.Random, shape: TreeLayout | None = None) -> EquationNode:
    """A copy with one local change: grow (a leaf becomes a small subtree), shrink (an operator node becomes one
    of its children) or replace (an operator becomes another of the same arity, a leaf another leaf)."""
    shape = shape or layout(equation)
    in_use = shape.symbols
    all_positions = [(position.path, position.node) for position in shape.positions if position.path]
    leaves = [item for item in all_positions if item[1].is_leaf]
    operators = [item for item in all_positions if not item[1].is_leaf]
    kind = rng.choices(("grow", "shrink", "replace"), (0.25, 0.25, 0.5))[0]
    if kind == "shrink" and operators:
        path, node = rng.choice(operators)
        return replace_path(equation, path, rng.choice(node.children))
    if kind == "grow":
        path, node = rng.choice(leaves)
        draw = rng.random()
        if draw < 0.35:
            grown = apply(rng.choices(TERM_FUNCTIONS, TERM_FUNCTION_WEIGHTS)[0], node)
        else:
            other = random_term(rng, 0 if draw < 0.8 else 1, in_use)
            operator = rng.choice(BINARY_FUNCTIONS)
            grown = apply(operator, node, other) if rng.random() < 0.5 else apply(operator, other, node)
        return replace_path(equation, path, grown)
    path, node = rng.choice(all_positions)
    if node.is_leaf:
        return replace_path(equation, path, replacement_leaf(node, rng, in_use))
    new_func = rng.choice(SAME_ARITY_REPLACEMENTS.get(node.func, BINARY_FUNCTIONS if ARITY[node.func] == 2 else UNARY_FUNCTIONS))
    return replace_path(equation, path, EquationNode(new_func, "", node.children))


# ---------------------------------------------------------------------------------------------- label checks


def numeric_label(equation: EquationNode, rng: random.Random) -> bool | None:
    """True / False when random points decide it, None when they cannot (see the module docstring). False needs
    two points where both sides are defined and differ; True needs every usable point of every range tried to
    agree."""
    first = numeric_check(equation, rng, points=10, attempts=50)
    if first.verdict is not None:
        return first.verdict
    checks = [first]
    for low, high in ((0.05, 2.0), (-1.0, 1.0)):
        check = numeric_check(equation, rng, points=10, attempts=50, low=low, high=high)
        if check.verdict is False:
            return False
        checks.append(check)
    if any(check.verdict for check in checks) and all(check.agreeing == check.points for check in checks):
        return True
    return None


def has_inexact_zero(tree: EquationNode) -> bool:
    """Whether a subtree without symbols evaluates (in floating point) to a tiny non-zero number, like
    ``cos(pi/2)`` = 6e-17: such a subtree in a base or under a root can make the numeric check see a difference
    that is not there, so candidates holding one are skipped."""
    from neuromath.tasks.identities import OutsideDomain, evaluate

    constant: dict[int, bool] = {}
    for node in postorder(tree):
        constant[id(node)] = node.func != "Symbol" and all(constant[id(child)] for child in node.children)
    for node in preorder(tree):
        if constant[id(node)] and not node.is_leaf and node.func != "Equality":
            try:
                value = evaluate(node, {})
            except (OutsideDomain, ExpressionError):
                continue
            if 0 < abs(value) < 1e-9:
                return True
    return False


def simplify_difference_is_zero(func: str, variables: str) -> bool:
    """Whether ``simplify(lhs - rhs) == 0`` for the equation of pre-order ``func`` / ``vars`` strings (which pickle
    flat however deep the tree is). Runs in ``SympyJudge``'s worker."""
    import sympy

    from neuromath.tasks.identities import parse_preorder, to_sympy

    expression = to_sympy(parse_preorder(func, variables))
    return bool(sympy.simplify(expression.lhs - expression.rhs) == 0)


class SympyJudge:
    """Asks SymPy whether ``simplify(lhs - rhs) == 0`` in a worker process with a time limit (a one-worker
    ``TimeLimitedPool``): when the limit passes, the worker is killed and a new one is started for the next question
    (no SIGALRM)."""

    def __init__(self, timeout: float = 2.0, start_method: str = "spawn", startup_timeout: float = 120.0):
        from neuromath.timelimit import TimeLimitedPool

        self.pool = TimeLimitedPool(simplify_difference_is_zero, workers=1, time_limit=timeout,
                                    startup_timeout=startup_timeout, start_method=start_method)
        self.errors: list[str] = []

    @property
    def timeouts(self) -> int:
        return self.pool.timeouts

    def start(self) -> None:
        """Start the worker now (its start-up, importing SymPy, is never charged to a question anyway)."""
        self.pool.start()

    def simplifies_to_zero(self, equation: EquationNode) -> bool | None:
        """True when SymPy simplifies lhs - rhs to 0, False when it finishes with something else (not a proof that
        the equation is false), None when the time limit passed or SymPy failed."""
        outcome = self.pool.run(*to_preorder(equation))
        if outcome.status == "error":
            self.errors.append(f"error: {outcome.value}")
        return outcome.value if outcome.ok else None

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> SympyJudge:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------- chunks


@dataclass
class GenerationCounts:
    """What happened to the candidates (each one is counted once, by the first reason it was dropped)."""

    chains: int = 0
    checked: int = 0  # candidates whose label was checked (numerically)
    duplicates: int = 0  # equal to an earlier candidate, also with the sides swapped
    trivial: int = 0  # both sides the same tree (kept only at depth 1, where nothing else is true)
    inexact_constants: int = 0  # a constant subtree that is 0 but not in floating point (has_inexact_zero)
    contradicted: int = 0  # built as true, checked false: dropped
    mutations_found_true: int = 0  # built as false, checked true: kept as true when that depth needs it
    numeric_undecided: int = 0  # the numeric check could not tell
    sympy_proved: int = 0  # ... and SymPy proved the equation
    sympy_not_proved: int = 0  # ... SymPy finished without proving it: dropped
    sympy_timed_out: int = 0  # ... SymPy ran past the time limit or failed: dropped
    undecided_not_needed: int = 0  # ... not sent to SymPy because its depth had enough true equations
    verified: int = 0  # candidates that got a label and were new across chunks (before balancing)
    kept: int = 0  # examples in the final set
    rounds: int = 0  # rounds of chunks

    @property
    def tried(self) -> int:
        """Candidates offered for a (depth, label) that still needed some."""
        return self.checked + self.duplicates + self.trivial + self.inexact_constants

    @property
    def undecided(self) -> int:
        """Numerically undecided candidates that were dropped: SymPy did not prove them, ran out of time, or was not
        asked because their depth had enough true equations."""
        return self.sympy_not_proved + self.sympy_timed_out + self.undecided_not_needed

    def add(self, other: GenerationCounts) -> None:
        for item in fields(self):
            setattr(self, item.name, getattr(self, item.name) + getattr(other, item.name))

    def as_dict(self) -> dict[str, int]:
        return {item.name: getattr(self, item.name) for item in fields(self)}


@dataclass
class ChunkResult:
    candidates: list[tuple[EquationNode, bool | None]]  # label None: the numeric check could not tell
    counts: GenerationCounts


def equation_key(equation: EquationNode) -> tuple[str, str]:
    """The same for an equation and for it with its sides swapped."""
    left, right = (",".join(to_preorder(side)) for side in equation.children)
    return (left, right) if left <= right else (right, left)


def generate_chunk(
    chunk_seed: int,
    needs: dict[tuple[int, bool], int],
    known: frozenset = frozenset(),
    settings: GeneratorSettings | None = None,
) -> ChunkResult:
    """Checked candidates for the (depth, label) pairs of ``needs`` (up to that many each) and, for depths that need
    true equations, numerically undecided ones (label None, for SymPy), from chains seeded by ``chunk_seed`` alone,
    so that chunks can be made in any process. Equations whose ``equation_key`` is in ``known`` are skipped."""
    settings = settings or GeneratorSettings()
    rng = random.Random(chunk_seed)
    check_rng = random.Random(chunk_seed ^ 0x5EED)
    counts = GenerationCounts()
    needed = {key: value for key, value in needs.items() if value > 0}
    undecided_room = {depth: value for (depth, label), value in needed.items() if label}
    seen: set[tuple[str, str]] = set(known)
    candidates: list[tuple[EquationNode, bool | None]] = []

    def consider(equation: EquationNode, depth: int, built_true: bool) -> str:
        left, right = equation.children
        if depth >= 2 and left == right:
            counts.trivial += 1
            return "trivial"
        key = equation_key(equation)
        if key in seen:
            counts.duplicates += 1
            return "duplicate"
        seen.add(key)
        if has_inexact_zero(equation):
            counts.inexact_constants += 1
            return "inexact"
        counts.checked += 1
        label = numeric_label(equation, check_rng)
        if label is None:
            counts.numeric_undecided += 1
            if undecided_room.get(depth, 0) > 0:
                undecided_room[depth] -= 1
                candidates.append((equation, None))
            else:
                counts.undecided_not_needed += 1
            return "undecided"
        if built_true and not label:
            counts.contradicted += 1
            return "contradicted"
        if not built_true and label:
            counts.mutations_found_true += 1
        if needed.get((depth, label), 0) > 0:
            needed[(depth, label)] -= 1
            candidates.append((equation, label))
            return "kept"
        return "not needed"

    def deepest_needed() -> int:
        return max((depth for (depth, _), value in needed.items() if value > 0), default=0)

    max_chains = 200 + 20 * sum(needed.values())
    chains_since_kept = 0
    while deepest_needed() and chains_since_kept < settings.stall_chains and counts.chains < max_chains:
        counts.chains += 1
        chains_since_kept += 1
        kept_before = len(candidates)
        state = start_state(rng, settings)
        shape = layout(state)
        skipped_depths = {depth for depth in range(1, deepest_needed() + 2) if rng.random() >= settings.offer_probability}
        offered_depths: set[int] = set(skipped_depths)  # fewer states of one chain: more varied equations
        mutations_made: dict[int, int] = {}
        for _ in range(settings.max_steps):
            depth = shape.height
            if depth > deepest_needed() + 1 or shape.node_count > settings.max_nodes_per_depth * depth + 10:
                break
            next_state = chain_step(state, rng, settings, shape)
            next_shape = layout(next_state) if next_state is not None else None
            leaving = next_shape is None or next_shape.height != depth  # the last state of this depth
            if (
                needed.get((depth, True), 0) > 0
                and depth not in offered_depths
                and (leaving or rng.random() < settings.early_offer_probability)
            ):
                offered_depths.add(depth)
                if consider(state, depth, built_true=True) == "contradicted":
                    break  # the chain went through a point where a rewrite narrowed the domain; it is false now
            wanted_false = any(needed.get((near, False), 0) > 0 for near in (depth - 1, depth, depth + 1))
            if wanted_false and mutations_made.get(depth, 0) < settings.mutations_per_depth and (
                leaving or rng.random() < settings.early_offer_probability
            ):
                mutations_made[depth] = mutations_made.get(depth, 0) + 1
                mutant = mutate(state, rng, shape)
                mutant_depth = height(mutant)
                if needed.get((mutant_depth, False), 0) > 0 or needed.get((mutant_depth, True), 0) > 0:
                    consider(mutant, mutant_depth, built_true=False)
            if next_state is None:
                break
            state, shape = next_state, next_shape
        if len(candidates) > kept_before:
            chains_since_kept = 0
    return ChunkResult(candidates, counts)


def _generate_chunk_job(arguments: tuple) -> ChunkResult:
    return generate_chunk(*arguments)


# ---------------------------------------------------------------------------------------------- balancing


def balanced_counts(capacities: dict[int, int], half: int) -> dict[int, int]:
    """How many true (and as many false) equations to take at each depth: as even as the capacities allow
    (water filling), ``half`` in all when the capacities add up to that; where an even split leaves a remainder,
    the deeper depths get one more."""
    depths = sorted(capacities)
    if not depths or half <= 0:
        return {depth: 0 for depth in depths}
    if sum(capacities.values()) <= half:
        return dict(capacities)
    level = 0
    while sum(min(capacities[depth], level) for depth in depths) < half:
        level += 1
    counts = {depth: min(capacities[depth], level) for depth in depths}
    surplus = sum(counts.values()) - half
    for depth in depths:  # the shallow depths give back first
        if surplus == 0:
            break
        if counts[depth] == level:
            counts[depth] -= 1
            surplus -= 1
    return counts


def run_chunks(jobs: list[tuple], workers: int) -> list[ChunkResult]:
    """The results of ``generate_chunk`` for each argument tuple, in order; in worker processes when ``workers`` > 1."""
    if workers <= 1 or len(jobs) <= 1:
        return [generate_chunk(*job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(_generate_chunk_job, jobs))


def generate_with_counts(
    n: int,
    rng: random.Random,
    max_depth: int = 13,
    *,
    workers: int = 1,
    chunks_per_round: int = 4,
    max_rounds: int = 12,
    sympy_timeout: float = 2.0,
    judge: SympyJudge | None = None,
    settings: GeneratorSettings | None = None,
    progress: bool = False,
) -> tuple[list[EquationExample], GenerationCounts]:
    """``generate`` that also returns the counts.

    Work goes in rounds of ``chunks_per_round`` chunks, each seeded from ``rng`` in order and asked for an equal
    share of what every (depth, label) still needs; the results are merged in order (deduplicated across chunks,
    SymPy asked about numerically undecided ones while their depth needs true equations). A (depth, label) that
    two rounds in a row bring less than a quarter of what was asked is taken as exhausted (depth 1 has only
    ``t = t`` as true equations), and its shortfall is spread over the other depths. Nothing depends on
    ``workers``, so the result is the same for any number of them."""
    if max_depth < 1:
        raise ValueError(f"max_depth must be at least 1, got {max_depth}")
    settings = settings or GeneratorSettings()
    depths = list(range(1, max_depth + 1))
    labels = (True, False)
    half = max(0, n) // 2
    pools: dict[tuple[int, bool], list[EquationNode]] = {(depth, label): [] for depth in depths for label in labels}
    seen: set[tuple[str, str]] = set()
    counts = GenerationCounts()
    low_rounds = {key: 0 for key in pools}  # rounds in a row that brought too little
    own_judge = judge is None
    judge = judge or SympyJudge(timeout=sympy_timeout)
    bar = _progress_bar(2 * half, progress)

    def capacities(exhausted_only: bool) -> dict[int, int]:
        found = {}
        for depth in depths:
            exhausted = any(low_rounds[(depth, label)] >= 2 for label in labels)
            smallest = min(len(pools[(depth, label)]) for label in labels)
            found[depth] = smallest if exhausted or not exhausted_only else half
        return found

    try:
        for _ in range(max_rounds if half else 0):
            targets = balanced_counts(capacities(exhausted_only=True), half)
            needs = {key: max(0, targets[key[0]] - len(pools[key])) for key in pools if low_rounds[key] < 2}
            if not any(needs.values()):
                break
            counts.rounds += 1
            share = {key: math.ceil(1.25 * value / chunks_per_round) for key, value in needs.items() if value > 0}
            known = frozenset(seen)
            jobs = [(rng.getrandbits(63), share, known, settings) for _ in range(chunks_per_round)]
            sizes_before = {key: len(pool) for key, pool in pools.items()}
            results = run_chunks(jobs, workers)
            undecided: list[EquationNode] = []
            for result in results:  # labelled candidates first, in chunk order
                counts.add(result.counts)
                for equation, label in result.candidates:
                    key = equation_key(equation)
                    if key in seen:
                        counts.duplicates += 1
                    elif label is None:
                        undecided.append(equation)
                    else:
                        seen.add(key)
                        counts.verified += 1
                        pools[(height(equation), label)].append(equation)
            for equation in undecided:  # then SymPy, only where true equations are still missing
                key = equation_key(equation)
                depth = height(equation)
                if key in seen:
                    counts.duplicates += 1
                    continue
                if len(pools[(depth, True)]) >= targets[depth]:
                    counts.undecided_not_needed += 1
                    continue
                seen.add(key)
                proved = judge.simplifies_to_zero(equation)
                if proved is None:
                    counts.sympy_timed_out += 1
                elif not proved:
                    counts.sympy_not_proved += 1
                else:
                    counts.sympy_proved += 1
                    counts.verified += 1
                    pools[(depth, True)].append(equation)
            for key, value in needs.items():
                if value > 0:
                    brought = len(pools[key]) - sizes_before[key]
                    low_rounds[key] = low_rounds[key] + 1 if brought < value / 4 else 0
            bar.n = min(2 * half, 2 * sum(balanced_counts(capacities(exhausted_only=False), half).values()))
            bar.refresh()
    finally:
        bar.close()
        if own_judge:
            judge.close()
    plan = balanced_counts(capacities(exhausted_only=False), half)
    examples: list[EquationExample] = []
    for depth in depths:
        for true_tree, false_tree in zip(pools[(depth, True)][: plan[depth]], pools[(depth, False)][: plan[depth]]):
            examples.append(EquationExample(true_tree, True, source="generated"))
            examples.append(EquationExample(false_tree, False, source="generated"))
    counts.kept = len(examples)
    return examples, counts


def generate(n: int, rng: random.Random, max_depth: int = 13, **params) -> list[EquationExample]:
    """``n`` labelled equations (``n`` rounded down to even: as many true as false at each depth), spread as evenly
    over depths 1..max_depth as each depth allows, every label checked (module docstring). Deterministic for the
    state of ``rng``; ``params`` go to ``generate_with_counts``."""
    return generate_with_counts(n, rng, max_depth, **params)[0]


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="eq", disable=not enabled, file=sys.stderr, desc="generating identities",
                dynamic_ncols=True)


# ---------------------------------------------------------------------------------------------- splits, tables, files


def split_by_depth(
    examples: list[EquationExample],
    rng: random.Random,
    train_depths: Iterable[int] = range(1, 8),
    test_depths: Iterable[int] = range(8, 14),
    valid_fraction: float = 0.1,
) -> tuple[list[EquationExample], list[EquationExample], list[EquationExample]]:
    """(train, valid, test): equations of ``test_depths`` are the test set; those of ``train_depths`` are split
    into train and validation, ``valid_fraction`` of each (depth, label) group going to validation; equations of
    other depths are left out. Each split keeps the input order."""
    train_set, test_set = set(train_depths), set(test_depths)
    if train_set & test_set:
        raise ValueError(f"train and test depths overlap: {sorted(train_set & test_set)}")
    groups: dict[tuple[int, bool | None], list[int]] = {}
    for index, example in enumerate(examples):
        if example.depth in train_set:
            groups.setdefault((example.depth, example.label), []).append(index)
    valid_indices: set[int] = set()
    for key in sorted(groups, key=lambda item: (item[0], str(item[1]))):
        indices = list(groups[key])
        rng.shuffle(indices)
        valid_indices.update(indices[: round(valid_fraction * len(indices))])
    train = [example for index, example in enumerate(examples) if example.depth in train_set and index not in valid_indices]
    valid = [example for index, example in enumerate(examples) if index in valid_indices]
    test = [example for example in examples if example.depth in test_set]
    return train, valid, test


def statistics_table(examples: list[EquationExample]) -> str:
    """A Markdown table like Table 1 of Mali et al. / Arabshahi et al.: per depth the number of equations, how
    many are true and the share of true ones, then the totals."""
    by_depth: dict[int, list[int]] = {}
    for example in examples:
        entry = by_depth.setdefault(example.depth, [0, 0])
        entry[0] += 1
        entry[1] += example.label is True
    lines = ["| depth | equations | true | false | share true |", "| ---: | ---: | ---: | ---: | ---: |"]

    def row(name: str, total: int, true: int) -> str:
        share = f"{100 * true / total:.1f}%" if total else "-"
        return f"| {name} | {total} | {true} | {total - true} | {share} |"

    for depth in sorted(by_depth):
        lines.append(row(str(depth), *by_depth[depth]))
    lines.append(row("total", len(examples), sum(entry[1] for entry in by_depth.values())))
    return "\n".join(lines) + "\n"


@dataclass
class GenerationReport:
    requested: int
    written: int
    max_depth: int
    seed: int
    counts: GenerationCounts
    rounds: int
    seconds: float
    split_sizes: dict[str, int] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)
    table: str = ""

    def summary(self) -> str:
        lines = [
            f"requested {self.requested}, written {self.written} (depths 1..{self.max_depth}, seed {self.seed}) "
            f"in {self.seconds:.1f} s ({self.rounds} round(s) of chunks)",
            "splits: " + ", ".join(f"{name} {size}" for name, size in self.split_sizes.items()),
        ]
        counts = self.counts
        lines += [
            f"candidates tried: {counts.tried}",
            f"kept: {counts.kept}",
            f"duplicates (also with the sides swapped): {counts.duplicates}",
            f"dropped because the check contradicted the construction: {counts.contradicted}",
            f"dropped as undecided or timed out: {counts.undecided} (SymPy did not prove {counts.sympy_not_proved}, "
            f"ran out of time {counts.sympy_timed_out}, not needed {counts.undecided_not_needed})",
            "details: " + ", ".join(f"{name.replace('_', ' ')} {value}" for name, value in counts.as_dict().items()),
        ]
        return "\n".join(lines)


def generate_identity_files(
    n: int, max_depth: int, seed: int, out_path: str | Path, workers: int = 1, progress: bool = True, **params
) -> GenerationReport:
    """Generate ``n`` equations and write them to ``out_path`` (released JSON format) and beside it
    ``<stem>.train.json``, ``<stem>.valid.json``, ``<stem>.test.json`` (``split_by_depth`` with its defaults) and
    ``<stem>.stats.md`` (``statistics_table`` and the counts). The same seed gives the same files for any number of
    workers."""
    started = time.perf_counter()
    out_path = Path(out_path)
    examples, counts = generate_with_counts(n, random.Random(seed), max_depth, workers=workers, progress=progress, **params)
    train, valid, test = split_by_depth(examples, random.Random(f"identities split {seed}"))
    stem = out_path.name[: -len(out_path.suffix)] if out_path.suffix else out_path.name
    paths = {
        "all": out_path,
        "train": out_path.with_name(f"{stem}.train.json"),
        "valid": out_path.with_name(f"{stem}.valid.json"),
        "test": out_path.with_name(f"{stem}.test.json"),
        "stats": out_path.with_name(f"{stem}.stats.md"),
    }
    write_equations(paths["all"], examples)
    for name, split in (("train", train), ("valid", valid), ("test", test)):
        write_equations(paths[name], split)
    report = GenerationReport(
        requested=n, written=len(examples), max_depth=max_depth, seed=seed, counts=counts,
        rounds=counts.rounds, seconds=time.perf_counter() - started,
        split_sizes={"train": len(train), "valid": len(valid), "test": len(test)}, paths=paths,
        table=statistics_table(examples),
    )
    from neuromath.fileio import write_text_atomic

    text = (
        f"# Generated identities: {out_path.name}\n\n{report.table}\n"
        + "\n".join(f"- {line}" for line in report.summary().splitlines())
        + "\n"
    )
    write_text_atomic(paths["stats"], text)
    return report
