"""How the identities generator makes false equations (Arabshahi, Singh, Anandkumar 2018): one local edit of an
equation. The chain style's ``mutate_with_edit`` grows (a leaf becomes a small subtree), shrinks (a subtree becomes
one of its children) or replaces (an operator becomes another of the same arity, a leaf another leaf) a node of a
chain state; the paper style's ``paper_edit`` shrinks, swaps (a leaf or an operator for another) or wraps (a node
becomes a function of itself) a node of a true equation, or with ``substitute_share`` substitutes a small subtree.
The random terms and tree layouts they draw on, and the true equations, are ``rewrites``; no labels are checked here
(``identity_generator``).
"""

from __future__ import annotations

import random

from neuromath.expr.equation_tree import (
    ARITY,
    BINARY_FUNCTIONS,
    UNARY_FUNCTIONS,
    EquationNode,
    apply,
    number,
    replace_path,
    size,
)
from neuromath.tasks.identities.rewrites import (
    TERM_FUNCTION_WEIGHTS,
    TERM_FUNCTIONS,
    TreeLayout,
    is_exact_number,
    layout,
    number_value,
    random_leaf,
    random_symbol,
    random_term,
)

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
    """``mutate_with_edit`` without the edit's name."""
    return mutate_with_edit(equation, rng, shape)[0]


def mutate_with_edit(
    equation: EquationNode, rng: random.Random, shape: TreeLayout | None = None
) -> tuple[EquationNode, str]:
    """A copy with one local change, and the edit's name (the chain style's false equations): ``grow`` (a leaf becomes a
    small subtree), ``shrink`` (an operator node becomes one of its children) or ``replace`` (an operator becomes
    another of the same arity, a leaf another leaf)."""
    shape = shape or layout(equation)
    in_use = shape.symbols
    all_positions = [(position.path, position.node) for position in shape.positions if position.path]
    leaves = [item for item in all_positions if item[1].is_leaf]
    operators = [item for item in all_positions if not item[1].is_leaf]
    edit_name = rng.choices(("grow", "shrink", "replace"), (0.25, 0.25, 0.5))[0]
    if edit_name == "shrink" and operators:
        path, node = rng.choice(operators)
        return replace_path(equation, path, rng.choice(node.children)), "shrink"
    if edit_name == "grow":
        path, node = rng.choice(leaves)
        draw = rng.random()
        if draw < 0.35:
            grown = apply(rng.choices(TERM_FUNCTIONS, TERM_FUNCTION_WEIGHTS)[0], node)
        else:
            other = random_term(rng, 0 if draw < 0.8 else 1, in_use)
            operator = rng.choice(BINARY_FUNCTIONS)
            grown = apply(operator, node, other) if rng.random() < 0.5 else apply(operator, other, node)
        return replace_path(equation, path, grown), "grow"
    path, node = rng.choice(all_positions)
    return replace_path(equation, path, swapped(node, rng, in_use)), "replace"


def swapped(node: EquationNode, rng: random.Random, in_use: list[str]) -> EquationNode:
    """The node with its symbol changed: a leaf becomes another leaf, an operator another of the same arity (over
    the same children)."""
    if node.is_leaf:
        return replacement_leaf(node, rng, in_use)
    same_arity = BINARY_FUNCTIONS if ARITY[node.func] == 2 else UNARY_FUNCTIONS
    new_func = rng.choice(SAME_ARITY_REPLACEMENTS.get(node.func, same_arity))
    return EquationNode(new_func, "", node.children)


# The edits of the paper style (Arabshahi et al.'s description of their generator): a false equation is one of
# these applied once to a true equation, or a false equation with the same operation applied to both sides.
PAPER_EDITS = ("shrink", "swap", "wrap")
# An optional fourth edit (``GeneratorSettings.substitute_share``), not in the paper's list: a small subtree is
# replaced by a random small term of another value, the way a wrong filler fills the blank of equation completion.
SUBSTITUTE = "substitute"
SMALL_SUBTREE_NODES = 3  # the subtrees that ``substitute`` replaces: leaves, f(leaf), f(g(leaf)), op(leaf, leaf)


def substituted(
    node: EquationNode, rng: random.Random, in_use: list[str], pool: tuple[EquationNode, ...] = ()
) -> EquationNode:
    """A small random term other than ``node``: a leaf, a function of a leaf, or a sum, product or power of leaves
    (``random_term`` of height 1, the shapes of the released completion candidates), or, when ``pool`` is given,
    one of its terms drawn uniformly (such as the candidates of a completion file). Its value is not checked
    here: the generator keeps the edited equation only when the numeric check calls it false."""
    for _ in range(10):
        candidate = rng.choice(pool) if pool else random_term(rng, 1, in_use)
        if candidate != node:
            return candidate
    return number(7) if node != number(7) else number(5)


def paper_edit(
    equation: EquationNode, rng: random.Random, shape: TreeLayout | None = None, substitute_share: float = 0.0,
    substitute_pool: tuple[EquationNode, ...] = (),
) -> tuple[EquationNode, str]:
    """One local edit of a non-root node, and its name: ``shrink`` (an operator node becomes one of its
    children), ``swap`` (a leaf becomes another leaf, an operator another of the same arity) or ``wrap`` (a node
    becomes a function of itself, ``t`` -> ``f(t)``); with probability ``substitute_share``, ``substitute`` (a
    subtree of at most ``SMALL_SUBTREE_NODES`` nodes becomes another small term, from ``substitute_pool`` when it
    is given). With ``substitute_share`` 0 the
    random stream is the one this function always drew, so earlier paper-style files are generated unchanged."""
    shape = shape or layout(equation)
    positions = [position for position in shape.positions if position.path]
    if substitute_share and rng.random() < substitute_share:
        small = [position for position in positions if size(position.node) <= SMALL_SUBTREE_NODES]
        position = rng.choice(small)  # never empty: every tree has leaves
        filler = substituted(position.node, rng, shape.symbols, substitute_pool)
        return replace_path(equation, position.path, filler), SUBSTITUTE
    edit_name = rng.choice(PAPER_EDITS)
    if edit_name == "shrink":
        operators = [position for position in positions if not position.node.is_leaf]
        if not operators:
            edit_name = "swap"
        else:
            position = rng.choice(operators)
            return replace_path(equation, position.path, rng.choice(position.node.children)), edit_name
    if edit_name == "wrap":
        position = rng.choice(positions)
        function = rng.choices(TERM_FUNCTIONS, TERM_FUNCTION_WEIGHTS)[0]
        return replace_path(equation, position.path, apply(function, position.node)), edit_name
    position = rng.choice(positions)
    return replace_path(equation, position.path, swapped(position.node, rng, shape.symbols)), "swap"
