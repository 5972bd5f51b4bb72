"""How the identities generator makes equations (Arabshahi, Singh, Anandkumar 2018): pattern matching, random terms,
the rewrites (an axiom applied at a node, numbers folded and unfolded), where a rewrite may go in a tree, the steps of
a chain of true equations, and the generator's settings. The edits that make false equations are ``mutations``; no
labels are checked here (``identity_labels``).

How an equation is made
    A chain starts from an instance of an axiom (its pattern variables bound to small random terms) or from a
    trivial ``t = t``. Each step either rewrites one subtree: a subtree that matches one side of an axiom is replaced
    by the other side, instantiated (pattern variables that only the other side has get fresh random terms), or a
    number is folded or unfolded (``3`` <-> ``1 + 2``); or it applies one operation to both sides at the root
    (``L + t = R + t``, ``L*t = R*t``, ``L^t = R^t``, ``t^L = t^R``, ``f(L) = f(R)``). Growth comes from rewrites on a
    longest root-to-leaf path that replace a small subtree by a bigger one, and from root operations. False
    equations are mutations of chain states or, in the paper style, edits of true ones (``mutations``).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from neuromath.errors import ExpressionError
from neuromath.expr.equation_tree import (
    BINARY_FUNCTIONS,
    PI,
    SYMBOLS,
    EquationNode,
    apply,
    number,
    postorder,
    replace_path,
    symbol,
)
from neuromath.expr.tree import preorder
from neuromath.tasks.identities.axioms import (
    ANY_SUBTREE_VARIABLES,
    AXIOMS,
    INTEGER_VARIABLES,
    PATTERN,
    Axiom,
    variables_of,
)

NUMBER_KINDS_EXACT = ("Integer", "Rational", "One", "NegativeOne", "Half")


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
        directions = ((axiom.left, axiom.right, axiom.forward), (axiom.right, axiom.left, axiom.backward))
        for source, target, weight in directions:
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


# ---------------------------------------------------------------------------------------------- chain steps


GENERATOR_STYLES = ("chain", "paper")


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
    twin_tries: int = 6  # paper style: edits tried to make a true equation's false twin
    # how false equations are made: "chain" or "paper" (``neuromath.tasks.identities.identity_chunks``)
    style: str = "chain"
    substitute_share: float = 0.0  # paper style: this share of twin edits are ``substitute`` (``mutations.paper_edit``)
    substitute_pool: tuple[EquationNode, ...] = ()  # substitute's fillers drawn from these (random terms when empty)
    substitute_source: str = ""  # where the pool came from, for the generation report

    def __post_init__(self) -> None:
        if self.style not in GENERATOR_STYLES:
            raise ValueError(f"unknown generator style {self.style!r}: one of {', '.join(GENERATOR_STYLES)}")
        if not 0.0 <= self.substitute_share <= 1.0:
            raise ValueError(f"substitute_share must be in [0, 1], not {self.substitute_share}")
        if self.substitute_share and self.style != "paper":
            raise ValueError("substitute_share is an edit of the paper style: set style='paper' to use it")
        if self.substitute_pool and not self.substitute_share:
            raise ValueError("substitute_pool gives the substitute edit its fillers: set substitute_share above 0")

    @property
    def description(self) -> str:
        """The style as the generation report names it: ``paper, substitute share 0.5`` when that edit is on."""
        if not self.substitute_share:
            return self.style
        pool = f", fillers from {self.substitute_source or 'a pool'} ({len(self.substitute_pool)})" \
            if self.substitute_pool else ""
        return f"{self.style}, substitute share {self.substitute_share:g}{pool}"


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


def both_sides_operation(rng: random.Random, in_use: list[str]):
    """A random operation for both sides of an equation (a function of one side): add or multiply by a term,
    raise to a power, a power of a number with the side as exponent, or a function of the side."""
    draw = rng.random()
    if draw < 0.5:
        term = random_term(rng, 1, in_use)
        operator = "Add" if draw < 0.3 else "Mul"
        if rng.random() < 0.5:
            return lambda side: apply(operator, term, side)
        return lambda side: apply(operator, side, term)
    if draw < 0.62:
        exponent = number(rng.choice((2, 2, 3, -1, Fraction(1, 2))))
        return lambda side: apply("Pow", side, exponent)
    if draw < 0.68:
        base = rng.choice((number(2), number(3), number(Fraction(1, 2)), PI))
        return lambda side: apply("Pow", base, side)
    function = rng.choices(ROOT_FUNCTIONS, ROOT_FUNCTION_WEIGHTS)[0]
    return lambda side: apply(function, side)


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
) -> tuple[EquationNode | None, Callable[[EquationNode], EquationNode] | None]:
    """The next state of a chain (None when no rewrite applies): the same operation on both sides
    (``both_sides_operation``), returned too so that a false twin can follow it, or a local rewrite (operation
    None)."""
    if rng.random() < settings.root_operation_probability:
        operation = both_sides_operation(rng, (shape or layout(equation)).symbols)
        return apply("Equality", *(operation(side) for side in equation.children)), operation
    return rewrite_step(equation, rng, settings, shape), None
