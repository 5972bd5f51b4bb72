"""Prefix notation of Lample & Charton (2020, "Deep learning for symbolic mathematics", section 2) and SymPy, both
ways.

A token sequence is one expression in prefix (Polish) notation:

* binary operators ``add sub mul div pow``; unary ``inv sqrt exp ln abs sign`` and the circular, hyperbolic and
  inverse functions ``sin cos tan cot sec csc asin acos atan acot asec acsc sinh cosh tanh coth sech csch asinh
  acosh atanh acoth asech acsch``; ``pow2 pow3 pow4 pow5`` are read (their files use them) but never written;
* integers digit by digit after a sign token: ``INT+ 1 6`` is 16, ``INT- 3`` is -3 (no leading zeros, no ``INT- 0``);
  a rational is ``div`` of two integers (``div INT- 1 INT+ 2`` is -1/2);
* leaves ``x`` (the variable), ``c`` (the constant of an ODE solution), ``Y``, ``Y'``, ``Y''`` (the unknown function
  of an ODE and its derivatives), and the constants ``pi``, ``E`` and ``I``.

``sympy_to_prefix`` writes n-ary sums and products as right-nested binary ``add`` / ``mul`` (``x + y + z`` is
``add x add y z``), ``x**(1/2)`` as ``sqrt x``, ``exp(x)`` as ``exp x`` and every other power as ``pow``. Anything
else (floats, ``zoo``, ``nan``, unevaluated integrals, special functions such as ``erf``) raises ``ExpressionError``.
``prefix_to_sympy`` checks the sequence first (``check_prefix``: arity, unknown tokens, stray digits, numbers without
digits), so a malformed sequence is an ``ExpressionError`` that says which token is wrong and why; it builds the
expression with SymPy's automatic evaluation, so ``prefix_to_sympy(sympy_to_prefix(e)) == e`` for the expressions
``sympy_to_prefix`` accepts. Building can be slow for pathological input (``pow INT+ 9 9 9 pow INT+ 9 9 9``): call it
on untrusted sequences (model output) in a worker with a time limit (``neuromath.timelimit``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from neuromath.errors import ExpressionError

BINARY = ("add", "sub", "mul", "div", "pow")
FUNCTIONS = (
    "exp", "ln", "sqrt", "abs", "sign", "inv",
    "sin", "cos", "tan", "cot", "sec", "csc",
    "asin", "acos", "atan", "acot", "asec", "acsc",
    "sinh", "cosh", "tanh", "coth", "sech", "csch",
    "asinh", "acosh", "atanh", "acoth", "asech", "acsch",
)
READ_ONLY_UNARY = ("pow2", "pow3", "pow4", "pow5")
ARITIES: dict[str, int] = {**{op: 2 for op in BINARY}, **{op: 1 for op in FUNCTIONS + READ_ONLY_UNARY}}
NUMBER_STARTS = ("INT+", "INT-")
DIGIT_TOKENS = tuple("0123456789")
VARIABLE = "x"
CONSTANT = "c"  # the integration constant of an ODE solution
FUNCTION_LEAVES = ("Y", "Y'", "Y''")  # the unknown function of an ODE and its first two derivatives
CONSTANTS = ("pi", "E", "I")
LEAVES = (VARIABLE, CONSTANT) + FUNCTION_LEAVES + CONSTANTS


@dataclass(frozen=True)
class PrefixNode:
    """A checked prefix expression: ``token`` is an operator, a leaf, or ``"INT"`` with ``value`` set."""

    token: str
    children: tuple["PrefixNode", ...] = ()
    value: int | None = None

    def size(self) -> int:
        return 1 + sum(child.size() for child in self.children)


def check_prefix(tokens: Sequence[str]) -> PrefixNode:
    """Parse ``tokens`` into a ``PrefixNode`` tree or raise ``ExpressionError`` naming the position and the reason."""
    tokens = list(tokens)
    if not tokens:
        raise ExpressionError("empty expression")
    position = 0

    def parse() -> PrefixNode:
        nonlocal position
        if position >= len(tokens):
            raise ExpressionError(f"wrong arity: the {len(tokens)} tokens end before every operator has its operands")
        start, token = position, tokens[position]
        position += 1
        if token in ARITIES:
            return PrefixNode(token, tuple(parse() for _ in range(ARITIES[token])))
        if token in NUMBER_STARTS:
            digits = []
            while position < len(tokens) and tokens[position] in DIGIT_TOKENS:
                digits.append(tokens[position])
                position += 1
            if not digits:
                raise ExpressionError(f"{token} at position {start} has no digits")
            if len(digits) > 1 and digits[0] == "0":
                raise ExpressionError(f"the number at position {start} has a leading zero")
            value = int("".join(digits))
            if token == "INT-":
                if value == 0:
                    raise ExpressionError(f"INT- 0 at position {start}: zero is written INT+ 0")
                value = -value
            return PrefixNode("INT", (), value)
        if token in DIGIT_TOKENS:
            raise ExpressionError(f"stray digit {token!r} at position {start}: digits only follow INT+ or INT-")
        if token in LEAVES:
            return PrefixNode(token)
        raise ExpressionError(f"unknown token {token!r} at position {start}")

    tree = parse()
    if position != len(tokens):
        if tokens[position] in DIGIT_TOKENS:
            raise ExpressionError(f"stray digit {tokens[position]!r} at position {position}: digits only follow INT+ or INT-")
        raise ExpressionError(
            f"{len(tokens) - position} extra token(s) from position {position} after a complete expression"
        )
    return tree


def integer_tokens(value: int) -> list[str]:
    return ["INT-" if value < 0 else "INT+", *str(abs(value))]


def node_tokens(node: PrefixNode) -> list[str]:
    """The prefix tokens of a ``PrefixNode`` tree (the inverse of ``check_prefix``)."""
    if node.token == "INT":
        return integer_tokens(node.value)
    out = [node.token]
    for child in node.children:
        out += node_tokens(child)
    return out


# --------------------------------------------------------------------------------------------- SymPy


def _sympy_tables():
    import sympy

    unary = {
        "exp": sympy.exp, "ln": sympy.log, "sqrt": sympy.sqrt, "abs": sympy.Abs, "sign": sympy.sign,
        "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec, "csc": sympy.csc,
        "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan, "acot": sympy.acot, "asec": sympy.asec,
        "acsc": sympy.acsc, "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh, "coth": sympy.coth,
        "sech": sympy.sech, "csch": sympy.csch, "asinh": sympy.asinh, "acosh": sympy.acosh, "atanh": sympy.atanh,
        "acoth": sympy.acoth, "asech": sympy.asech, "acsch": sympy.acsch,
        "inv": lambda a: 1 / a,
        "pow2": lambda a: a**2, "pow3": lambda a: a**3, "pow4": lambda a: a**4, "pow5": lambda a: a**5,
    }
    binary = {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "div": lambda a, b: a / b, "pow": lambda a, b: a**b,
    }
    leaves = {name: symbol(name) for name in (VARIABLE, CONSTANT) + FUNCTION_LEAVES}
    leaves.update({"pi": sympy.pi, "E": sympy.E, "I": sympy.I})
    return unary, binary, leaves


def symbol(name: str):
    """The SymPy symbol of a leaf token (``x`` and ``c`` are real, as the generators assume)."""
    import sympy

    return sympy.Symbol(name, real=True) if name in (VARIABLE, CONSTANT) else sympy.Symbol(name)


def prefix_to_sympy(tokens: Sequence[str]):
    """The SymPy expression of a prefix token sequence (``ExpressionError`` when malformed or undefined, e.g.
    ``div x INT+ 0``)."""
    import sympy

    unary, binary, leaves = _sympy_tables()

    def build(node: PrefixNode):
        if node.token == "INT":
            return sympy.Integer(node.value)
        if node.token in leaves:
            return leaves[node.token]
        args = [build(child) for child in node.children]
        if node.token in binary:
            return binary[node.token](*args)
        return unary[node.token](*args)

    expression = build(check_prefix(tokens))
    if expression.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise ExpressionError("the expression is undefined (division by zero or an infinite value)")
    return expression


def sympy_to_prefix(expression) -> list[str]:
    """Prefix tokens of a SymPy expression over the operators and leaves above (``ExpressionError`` otherwise)."""
    import sympy

    names = {
        sympy.exp: "exp", sympy.log: "ln", sympy.Abs: "abs", sympy.sign: "sign",
        sympy.sin: "sin", sympy.cos: "cos", sympy.tan: "tan", sympy.cot: "cot", sympy.sec: "sec", sympy.csc: "csc",
        sympy.asin: "asin", sympy.acos: "acos", sympy.atan: "atan", sympy.acot: "acot", sympy.asec: "asec",
        sympy.acsc: "acsc", sympy.sinh: "sinh", sympy.cosh: "cosh", sympy.tanh: "tanh", sympy.coth: "coth",
        sympy.sech: "sech", sympy.csch: "csch", sympy.asinh: "asinh", sympy.acosh: "acosh",
        sympy.atanh: "atanh", sympy.acoth: "acoth", sympy.asech: "asech", sympy.acsch: "acsch",
    }
    constants = {sympy.pi: "pi", sympy.E: "E", sympy.I: "I"}

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
        for constant, name in constants.items():
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
        if e.func in names and len(e.args) == 1:
            return [names[e.func], *convert(e.args[0])]
        raise ExpressionError(f"cannot write {type(e).__name__} in prefix notation: {e}")

    return convert(sympy.sympify(expression))


def prefix_size(tokens: Sequence[str]) -> int:
    """The number of operators in a prefix sequence (its size in Lample & Charton's sense)."""
    return sum(token in ARITIES for token in tokens)
