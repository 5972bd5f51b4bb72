import random

import pytest
import torch

from neuromath.decoding.constraints import GrammarConstraint
from neuromath.expr.grammar import WORD_PROBLEM_GRAMMAR, TreeGrammar
from neuromath.text import Vocabulary

WORD_TOKENS = ["+", "-", "*", "/", "^", "neg", "n0", "n1", "1"]
DIGITS = [str(d) for d in range(10)]
LAMPLE_TOKENS = ["INT+", "INT-", *DIGITS, "add", "mul", "sin", "x"]
LAMPLE_GRAMMAR = TreeGrammar(
    arities={"add": 2, "mul": 2, "sin": 1}, notation="prefix", number_starts=frozenset({"INT+", "INT-"})
)
POSTFIX_GRAMMAR = TreeGrammar(arities=dict(WORD_PROBLEM_GRAMMAR.arities), notation="postfix")
POSTFIX_LAMPLE_GRAMMAR = TreeGrammar(
    arities={"add": 2, "mul": 2, "sin": 1}, notation="postfix", number_starts=frozenset({"INT+", "INT-"})
)


def setup(grammar, tokens):
    vocabulary = Vocabulary(tokens)
    return vocabulary, GrammarConstraint(grammar.token_classes(vocabulary.tokens))


def allowed_tokens(vocabulary, constraint, prefix, steps_left):
    state = constraint.start(1, "cpu")
    for token in prefix:
        state = constraint.advance(state, torch.tensor([vocabulary.index[token]]))
    mask = constraint.allowed(state, steps_left)
    assert mask.shape == (1, len(vocabulary))
    return {vocabulary.tokens[i] for i in mask[0].nonzero().view(-1).tolist()}


def parses(tokens, grammar):
    """True when ``tokens`` (no eos) is exactly one complete expression of ``grammar``."""
    numbers, digits = grammar.number_starts, grammar.digits if grammar.number_starts else frozenset()
    # Group each number start with its digits into one leaf, rejecting misplaced digits.
    items, position = [], 0
    while position < len(tokens):
        token = tokens[position]
        if token in numbers:
            end = position + 1
            while end < len(tokens) and tokens[end] in digits:
                end += 1
            if end == position + 1:
                return False
            items.append(0)
            position = end
            continue
        if token in digits or token in ("<pad>", "<bos>", "<eos>", "<unk>"):
            return False
        items.append(grammar.arity(token))
        position += 1
    if grammar.notation == "prefix":
        need = 1
        for arity in items:
            if need == 0:
                return False
            need += arity - 1
        return need == 0
    stack = 0
    for arity in items:
        if stack < arity:
            return False
        stack += 1 - arity
    return stack == 1


def test_checker_itself():
    assert parses(["+", "n0", "neg", "1"], WORD_PROBLEM_GRAMMAR)
    assert not parses(["+", "n0"], WORD_PROBLEM_GRAMMAR)
    assert not parses(["n0", "n1"], WORD_PROBLEM_GRAMMAR)
    assert parses(["n0", "n1", "+", "neg"], POSTFIX_GRAMMAR)
    assert not parses(["n0", "+"], POSTFIX_GRAMMAR)
    assert parses(["add", "INT+", "1", "6", "x"], LAMPLE_GRAMMAR)
    assert not parses(["add", "INT+", "x", "x"], LAMPLE_GRAMMAR)
    assert not parses(["add", "1", "x"], LAMPLE_GRAMMAR)


BINARY = {"+", "-", "*", "/", "^"}
WORD_LEAVES = {"n0", "n1", "1"}


@pytest.mark.parametrize(
    "prefix, steps_left, expected",
    [
        ([], 10, BINARY | {"neg"} | WORD_LEAVES),
        ([], 3, BINARY | {"neg"} | WORD_LEAVES),  # binary: two leaves then eos
        ([], 2, {"neg"} | WORD_LEAVES),  # neg: one leaf then eos
        ([], 1, WORD_LEAVES),  # a leaf then eos
        ([], 0, {"<eos>"}),  # nothing fits: eos so that decoding ends
        (["+", "n0"], 10, BINARY | {"neg"} | WORD_LEAVES),
        (["+", "n0"], 1, WORD_LEAVES),
        (["+"], 2, WORD_LEAVES),  # two slots need two leaves, then eos
        (["+"], 3, WORD_LEAVES | {"neg"}),
        (["+", "n0", "n1"], 10, {"<eos>"}),
        (["n0"], 5, {"<eos>"}),
        (["+", "n0", "n1", "<eos>"], 5, {"<eos>"}),
    ],
)
def test_word_problem_prefix_allowed_sets(prefix, steps_left, expected):
    vocabulary, constraint = setup(WORD_PROBLEM_GRAMMAR, WORD_TOKENS)
    assert allowed_tokens(vocabulary, constraint, prefix, steps_left) == expected


@pytest.mark.parametrize(
    "prefix, steps_left, expected",
    [
        ([], 10, WORD_LEAVES),  # operators need operands on the stack
        ([], 1, WORD_LEAVES),
        (["n0"], 10, {"<eos>", "neg"} | WORD_LEAVES),
        (["n0"], 2, {"<eos>", "neg"} | WORD_LEAVES),  # push, reduce with a binary operator, eos
        (["n0"], 1, {"<eos>", "neg"}),
        (["n0", "n1"], 10, BINARY | {"neg"} | WORD_LEAVES),
        (["n0", "n1"], 1, BINARY),  # the stack of 2 must shrink to 1 now
        (["n0", "n1"], 2, BINARY | {"neg"}),
        (["n0", "n1", "1"], 2, BINARY),  # 3 -> 2 -> 1 takes two operators
        (["n0", "n1", "1"], 3, BINARY | {"neg"}),  # a push would need three operators and eos
        (["n0", "n1", "1"], 4, BINARY | {"neg"} | WORD_LEAVES),
    ],
)
def test_postfix_allowed_sets(prefix, steps_left, expected):
    vocabulary, constraint = setup(POSTFIX_GRAMMAR, WORD_TOKENS)
    assert allowed_tokens(vocabulary, constraint, prefix, steps_left) == expected


def test_postfix_without_binary_operators_never_grows_the_stack():
    grammar = TreeGrammar(arities={"neg": 1, "sin": 1}, notation="postfix")
    vocabulary, constraint = setup(grammar, ["x", "y", "neg", "sin"])
    assert allowed_tokens(vocabulary, constraint, [], 10) == {"x", "y"}
    assert allowed_tokens(vocabulary, constraint, ["x"], 10) == {"<eos>", "neg", "sin"}


def test_postfix_with_only_a_ternary_operator():
    grammar = TreeGrammar(arities={"if": 3}, notation="postfix")
    vocabulary, constraint = setup(grammar, ["x", "if"])
    # A second operand needs another push and "if" before eos can close the expression.
    assert allowed_tokens(vocabulary, constraint, ["x"], 2) == {"<eos>"}
    assert allowed_tokens(vocabulary, constraint, ["x"], 3) == {"<eos>", "x"}
    assert allowed_tokens(vocabulary, constraint, ["x", "x"], 2) == {"x"}
    assert allowed_tokens(vocabulary, constraint, ["x", "x", "x"], 1) == {"if"}


SLOT_FILLERS = {"add", "mul", "sin", "x", "INT+", "INT-"}


@pytest.mark.parametrize(
    "prefix, steps_left, expected",
    [
        ([], 10, SLOT_FILLERS),  # no digits outside numbers
        ([], 2, {"sin", "x", "INT+", "INT-"}),  # a number start needs a digit and eos after it
        ([], 1, {"x"}),
        (["INT+"], 10, set(DIGITS)),  # exactly the digits after a number start
        (["INT+"], 1, set(DIGITS)),
        (["INT+", "1"], 10, set(DIGITS) | {"<eos>"}),  # the last number may go on
        (["INT+", "1", "6"], 0, {"<eos>"}),
        (["add", "INT-"], 10, set(DIGITS)),
        (["add", "INT-", "3"], 10, set(DIGITS) | SLOT_FILLERS),
        (["add", "INT-", "3"], 1, {"x"}),
        (["add", "INT-", "3"], 2, set(DIGITS) | {"x", "sin", "INT+", "INT-"}),
    ],
)
def test_lample_charton_prefix_allowed_sets(prefix, steps_left, expected):
    vocabulary, constraint = setup(LAMPLE_GRAMMAR, LAMPLE_TOKENS)
    assert allowed_tokens(vocabulary, constraint, prefix, steps_left) == expected


def test_numbers_as_the_only_leaves_cost_two_tokens():
    grammar = TreeGrammar(arities={"add": 2}, notation="prefix", number_starts=frozenset({"INT+"}))
    vocabulary, constraint = setup(grammar, ["INT+", *DIGITS, "add"])
    assert allowed_tokens(vocabulary, constraint, [], 1) == {"<eos>"}  # nothing fits
    assert allowed_tokens(vocabulary, constraint, [], 2) == {"INT+"}
    assert allowed_tokens(vocabulary, constraint, [], 5) == {"INT+", "add"}  # add INT+ d INT+ d, eos
    assert allowed_tokens(vocabulary, constraint, [], 4) == {"INT+"}


def test_digits_are_plain_leaves_without_number_starts():
    grammar = TreeGrammar(arities={"+": 2}, notation="prefix")
    vocabulary, constraint = setup(grammar, ["+", "1", "2"])
    assert allowed_tokens(vocabulary, constraint, [], 5) == {"+", "1", "2"}
    assert allowed_tokens(vocabulary, constraint, ["1"], 5) == {"<eos>"}


def test_state_is_batched_and_advance_does_not_modify_its_input():
    vocabulary, constraint = setup(WORD_PROBLEM_GRAMMAR, WORD_TOKENS)
    state = constraint.start(3, "cpu")
    ids = torch.tensor([vocabulary.index[t] for t in ["+", "n0", "neg"]])
    after = constraint.advance(state, ids)
    assert after["count"].tolist() == [2, 0, 1]
    assert state["count"].tolist() == [1, 1, 1]
    mask = constraint.allowed(after, 5)
    assert mask[1].nonzero().view(-1).tolist() == [vocabulary.eos_id]
    assert mask[0, vocabulary.index["+"]] and not mask[0, vocabulary.eos_id]
    reordered = {name: value.index_select(0, torch.tensor([2, 2, 0])) for name, value in after.items()}
    assert reordered["count"].tolist() == [1, 1, 2]


GRAMMARS = [
    (WORD_PROBLEM_GRAMMAR, WORD_TOKENS),
    (POSTFIX_GRAMMAR, WORD_TOKENS),
    (LAMPLE_GRAMMAR, LAMPLE_TOKENS),
    (POSTFIX_LAMPLE_GRAMMAR, LAMPLE_TOKENS),
]


@pytest.mark.parametrize("grammar, tokens", GRAMMARS)
def test_every_sampled_sequence_parses(grammar, tokens):
    vocabulary, constraint = setup(grammar, tokens)
    generator = torch.Generator().manual_seed(0)
    shortest = 2  # every grammar here has a plain leaf: one leaf and eos
    for max_len in range(1, 16):
        rows = 64
        state = constraint.start(rows, "cpu")
        sequences = torch.zeros(rows, 0, dtype=torch.long)
        for step in range(max_len):
            allowed = constraint.allowed(state, max_len - step - 1)
            assert not allowed[:, [0, 1, 3]].any()  # pad, bos, unk
            next_ids = torch.multinomial(allowed.float(), 1, generator=generator).view(-1)
            state = constraint.advance(state, next_ids)
            sequences = torch.cat([sequences, next_ids[:, None]], dim=1)
            if bool(state["finished"].all()):
                break
        for row in sequences.tolist():
            assert vocabulary.eos_id in row, "every sequence ends in eos within max_len"
            words = vocabulary.decode(row)
            if max_len >= shortest:
                assert parses(words, grammar), (max_len, words)
            else:
                assert words == []


def random_expression(grammar, tokens, rng, depth=0):
    """A random well-formed expression as a list of tokens, in the grammar's notation."""
    operators = [t for t in tokens if grammar.arity(t) > 0]
    leaves = [t for t in tokens if grammar.arity(t) == 0 and t not in grammar.digits] if grammar.number_starts else [
        t for t in tokens if grammar.arity(t) == 0
    ]
    if depth < 4 and rng.random() < 0.6:
        operator = rng.choice(operators)
        children = [random_expression(grammar, tokens, rng, depth + 1) for _ in range(grammar.arity(operator))]
        flat = [token for child in children for token in child]
        return [operator, *flat] if grammar.notation == "prefix" else [*flat, operator]
    leaf = rng.choice(leaves)
    if leaf in grammar.number_starts:
        return [leaf, *rng.choices(DIGITS, k=rng.randint(1, 3))]
    return [leaf]


@pytest.mark.parametrize("grammar, tokens", GRAMMARS)
def test_every_well_formed_expression_is_allowed_with_the_exact_length_budget(grammar, tokens):
    vocabulary, constraint = setup(grammar, tokens)
    rng = random.Random(1)
    for _ in range(150):
        expression = random_expression(grammar, tokens, rng)
        assert parses(expression, grammar)
        ids = vocabulary.encode(expression, add_eos=True)
        state = constraint.start(1, "cpu")
        for step, token_id in enumerate(ids):
            allowed = constraint.allowed(state, len(ids) - step - 1)
            assert allowed[0, token_id], (expression, step)
            state = constraint.advance(state, torch.tensor([token_id]))
        assert bool(state["finished"].all())
