"""Equation normalisation (Wang et al. 2018a, "Translating a Math Word Problem to an Expression Tree", EMNLP 2018,
Sec. "Equation Normalization"): equivalent equations that differ by operand order or brackets get one target,
written in postfix. The rules are in the docstring of ``normalize_tree``.

Below the rules: the targets and scorers of the task ``word_problems_normalized``, whose hypotheses are postfix tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from neuromath.errors import ExpressionError
from neuromath.expr import Node, from_postfix, from_prefix, is_number, parse_number, to_postfix, to_prefix
from neuromath.tasks.word_problems.answer_scoring import VALUE_REL_TOL, describe_prediction, is_correct, is_well_formed
from neuromath.tasks.word_problems.records import MASK_REGEX, Example

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
        term = normalize_tree(node)
        if term.value in operators:  # neg neg (a * b) normalises to a * b, which belongs to a chain of * and /
            _signed_terms(term, positive, operators, terms)
        else:
            terms.append((positive, term))
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

    Equations differing only by the operand order of + and * or the brackets of + - and * / get the same tree,
    of the same exact value (``evaluate``) as ``node`` whenever ``node`` evaluates. Built bottom-up by two rules:

    R1, commutative order. The operands of + and * are sorted by ``term_order_key``: masked numbers ``nK`` by K
        (order of appearance, as Wang et al.), then constants by value, other leaves by name, compound subtrees by
        normalised postfix string. ``n1 + n0`` -> ``n0 n1 +``; ``100 * n0`` -> ``n0 100 *``; ``(n1 * n2) + n0`` ->
        ``n0 n1 n2 * +``.

    R2, associativity and brackets. A maximal chain of + and - is flattened into positive and negative terms and
        rebuilt left-deep as ``((p1 + p2) + ...) - n1 - n2 ...``, each group sorted by the key of R1:
        a - (b + c) = a - b - c, a + (b - c) = a + b - c, a - (b - c) = a - b + c.
        ``neg`` belongs to the chain and flips the sign of its operand: a + neg(b) = a - b, neg(a - b) = b - a.
        ``n0 + (n2 + n1)`` -> ``n0 n1 + n2 +``; ``n0 - (n1 + n2)`` -> ``n0 n1 - n2 -``.
        Likewise a maximal chain of * and / is flattened into numerator and denominator factors and rebuilt as
        ``((p1 * p2) * ...) / d1 / d2 ...``: a / (b * c) = a / b / c, a * (b / c) = a * b / c,
        a / (b / c) = a * c / b; ``n0 / (n1 / n2)`` -> ``n0 n2 * n1 /``. The last rewrite assumes c != 0, true
        whenever the equation evaluates (b / c is a nonzero divisor there).
        A chain without a positive (numerator) term (only through ``neg``: ``neg(n0) - n1``, ``neg(n0 + n1)``)
        keeps its own order, its children normalised.

    ``^`` keeps its operand order, both normalised; a ``neg`` that R2 does not remove keeps its normalised operand.
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


def canonical_prefix(prefix_tokens: Sequence[str]) -> tuple[str, ...]:
    """The normalised equation in PREFIX tokens: ``+ n1 n0`` -> ``+ n0 n1``, for prefix decoders
    (``data.targets canonical``). Raises ExpressionError for ill-formed tokens."""
    return tuple(to_prefix(normalize_tree(from_prefix(list(prefix_tokens)))))


def with_canonical_equation(example: Example) -> Example:
    """``example`` with its equation in canonical prefix form, or as it is when the equation cannot be read."""
    try:
        return replace(example, equation=canonical_prefix(example.equation))
    except ExpressionError:
        return example


def postfix_to_prefix(postfix_tokens: Sequence[str]) -> tuple[str, ...]:
    """The same equation in prefix tokens: ``n0 n1 +`` -> ``+ n0 n1``. Raises ExpressionError for ill-formed tokens."""
    return tuple(to_prefix(from_postfix(list(postfix_tokens))))


def template_counts(examples: Sequence[Example]) -> dict[str, int]:
    """Counts of ``examples``, distinct equations (``templates``), distinct normalised ones (``normalised_templates``)
    and their difference (``merged``)."""
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
    """The normalised task's target: the normalised postfix equation ([] without an equation, as from
    ``prepare_problem``)."""
    return list(normalize_equation(example.equation)) if example.equation else []


def prefix_of_postfix_hypothesis(postfix_tokens: Sequence[str]) -> tuple[str, ...] | None:
    """The prefix tokens of a postfix hypothesis, or None when it is not one well-formed equation."""
    try:
        return postfix_to_prefix(postfix_tokens)
    except (ExpressionError, RecursionError):
        return None


def is_correct_postfix(hypothesis_tokens: Sequence[str], example: Example, rel_tol: float = VALUE_REL_TOL) -> bool:
    """Value accuracy of a postfix hypothesis (``is_correct`` after conversion); an ill-formed one is wrong."""
    prefix_tokens = prefix_of_postfix_hypothesis(hypothesis_tokens)
    return prefix_tokens is not None and is_correct(prefix_tokens, example, rel_tol)


def is_well_formed_postfix(hypothesis_tokens: Sequence[str], example: Example) -> bool:
    """The verifier of the normalised task: ``is_well_formed`` of a postfix hypothesis after conversion."""
    prefix_tokens = prefix_of_postfix_hypothesis(hypothesis_tokens)
    return prefix_tokens is not None and is_well_formed(prefix_tokens, example)


def equation_matches_normalized(hypothesis_tokens: Sequence[str], example: Example) -> bool:
    """Whether the postfix hypothesis equals the normalised gold equation token for token (no equation: matches
    only no tokens)."""
    gold = normalize_equation(example.equation) if example.equation else ()
    return tuple(hypothesis_tokens) == gold


def describe_postfix_prediction(hypothesis_tokens: Sequence[str], example: Example) -> dict:
    """``describe_prediction`` of the hypothesis's prefix form (ill-formed: ``reason`` says why), with
    ``predicted_tokens`` the postfix as produced, ``gold_target`` the normalised gold postfix, ``equation_correct``
    from ``equation_matches_normalized``."""
    try:
        prefix_tokens, reason = postfix_to_prefix(hypothesis_tokens), None
    except ExpressionError as error:
        prefix_tokens, reason = (), f"no well-formed equation: {error}"  # () never parses
    record = describe_prediction(prefix_tokens, example)
    record["reason"] = reason or record["reason"]
    record["predicted_tokens"] = list(hypothesis_tokens)
    record["gold_target"] = list(normalize_equation(example.equation)) if example.equation else []
    record["equation_correct"] = equation_matches_normalized(hypothesis_tokens, example)
    return record
