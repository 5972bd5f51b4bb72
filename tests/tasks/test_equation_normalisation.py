"""Equation normalisation (Wang et al. 2018a) of neuromath/tasks/word_problems.py; the word_problems_normalized task."""

from fractions import Fraction

import hypothesis
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from neuromath.dataroot import data_root
from neuromath.errors import ExpressionError
from neuromath.expr import Node, from_prefix, to_prefix
from neuromath.tasks import get_task
from neuromath.tasks.word_problems import (
    Example,
    equation_value,
    normalize_equation,
    normalize_tree,
    postfix_to_prefix,
    read_examples,
    template_counts,
)

DATA = data_root()  # the benchmark corpora ($NEUROMATH_DATA; tests/conftest.py points it at ../shared/data)


def normalized(prefix: str) -> str:
    return " ".join(normalize_equation(prefix.split()))


# --- the rules on hand-written equations --------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "postfix"),
    [
        # R1: operands of + and * in order: nK by index, then constants by value, then compound subtrees.
        ("+ n1 n0", "n0 n1 +"),
        ("* n1 n0", "n0 n1 *"),
        ("+ n0 n1", "n0 n1 +"),
        ("* 100 n0", "n0 100 *"),
        ("+ 1 n3", "n3 1 +"),
        ("+ n10 n2", "n2 n10 +"),  # by the index as a number, not as text
        ("* 3 0.5", "0.5 3 *"),  # constants by value
        ("+ 100 (1/2)", "(1/2) 100 +"),
        ("+ * n1 n2 n0", "n0 n1 n2 * +"),  # a leaf before a compound subtree
        ("+ * n1 n0 1", "1 n0 n1 * +"),  # a constant before a compound subtree, whose operands are ordered too
        ("+ * n1 n2 * n3 n0", "n0 n3 * n1 n2 * +"),  # compound subtrees by postfix string: "n0 n3 *" < "n1 n2 *"
        ("* + n2 n1 - n0 n3", "n0 n3 - n1 n2 + *"),  # "n0 n3 -" < "n1 n2 +"
        # R2: chains of + and - flattened, positive terms first, each group sorted.
        ("+ n0 + n2 n1", "n0 n1 + n2 +"),
        ("+ + n2 n1 n0", "n0 n1 + n2 +"),
        ("- n0 + n1 n2", "n0 n1 - n2 -"),  # a - (b + c) = a - b - c
        ("+ n0 - n1 n2", "n0 n1 + n2 -"),  # a + (b - c) = a + b - c
        ("- n0 - n1 n2", "n0 n2 + n1 -"),  # a - (b - c) = a + c - b
        ("- - n0 n2 n1", "n0 n1 - n2 -"),  # negative terms sorted
        ("- n2 + n1 n0", "n2 n0 - n1 -"),  # the positive term stays first whatever its index
        ("+ n0 neg n1", "n0 n1 -"),  # neg flips the sign inside a chain
        ("neg - n0 n1", "n1 n0 -"),
        ("neg neg n1", "n1"),
        # R2: chains of * and /.
        ("/ n0 / n1 n2", "n0 n2 * n1 /"),  # a / (b / c) = a * c / b
        ("/ n0 * n2 n1", "n0 n1 / n2 /"),  # a / (b * c) = a / b / c
        ("* n0 / n1 n2", "n0 n1 * n2 /"),  # a * (b / c) = a * b / c
        ("* 100 / n1 n0", "n1 100 * n0 /"),
        ("/ * n2 n1 * n0 n3", "n1 n2 * n0 / n3 /"),
        # A chain of one kind is a term of a chain of the other kind.
        ("* + n1 n0 n2", "n2 n0 n1 + *"),
        ("- * n1 n0 / n3 n2", "n0 n1 * n3 n2 / -"),
        # neg and ^ keep their operand order, operands normalised.
        ("^ n1 n0", "n1 n0 ^"),
        ("^ + n1 n0 * n3 n2", "n0 n1 + n2 n3 * ^"),
        ("neg * n1 n0", "n0 n1 * neg"),
        ("* neg n1 n0", "n0 n1 neg *"),
        # A chain without a positive term (only through neg) keeps its own order, children normalised.
        ("- neg n1 n0", "n1 neg n0 -"),
        ("- neg n0 n1", "n0 neg n1 -"),
        ("neg + n1 n0", "n0 n1 + neg"),
        ("+ neg n1 neg + n3 n2", "n1 neg n2 n3 + neg +"),
        # Leaves and what is already normal stay as they are.
        ("n3", "n3"),
        ("100", "100"),
        ("- n0 n1", "n0 n1 -"),
        ("/ n1 n0", "n1 n0 /"),
    ],
)
def test_normalize_equation_by_hand(prefix, postfix):
    assert normalized(prefix) == postfix


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("+ n0 n1", "+ n1 n0"),
        ("* n2 + n0 n1", "* + n1 n0 n2"),
        ("- n0 + n1 n2", "- - n0 n2 n1"),
        ("+ n0 - n1 n2", "- + n1 n0 n2"),
        ("- n0 - n1 n2", "+ - n0 n1 n2"),
        ("/ n0 * n1 n2", "/ / n0 n2 n1"),
        ("* n0 / n1 n2", "/ * n1 n0 n2"),
        ("/ n0 / n1 n2", "/ * n2 n0 n1"),
        ("+ n0 neg n1", "- n0 n1"),
        ("neg - n0 n1", "- n1 n0"),
        ("* 100 / n0 n1", "/ * n0 100 n1"),
        ("^ + n1 n0 2", "^ + n0 n1 2"),
        ("+ * n0 n1 * n3 n2", "+ * n2 n3 * n1 n0"),
        ("+ + n0 n1 + n2 n3", "+ n0 + n1 + n2 n3"),
        ("- + n3 n2 + n1 n0", "+ - - n2 n0 n1 n3"),  # (n3 + n2) - (n1 + n0) = n2 - n0 - n1 + n3
    ],
)
def test_equivalent_equations_get_one_target(first, second):
    assert normalized(first) == normalized(second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("- n0 n1", "- n1 n0"),
        ("/ n0 n1", "/ n1 n0"),
        ("^ n0 n1", "^ n1 n0"),
        ("- n0 + n1 n2", "+ - n0 n1 n2"),  # a - (b + c) is not a - b + c
        ("/ n0 * n1 n2", "* / n0 n1 n2"),
        ("* n0 + n1 n2", "+ * n0 n1 * n0 n2"),  # distributivity is not one of the rules
        ("neg - n0 n1", "- n0 n1"),
        ("+ n0 1", "+ n0 100"),
    ],
)
def test_different_equations_keep_different_targets(first, second):
    assert normalized(first) != normalized(second)


def test_normalized_targets_keep_their_value_by_hand():
    numbers = ("12", "5", "3", "(2/5)")
    for prefix in ["- n0 - n1 n2", "/ n0 / n1 n2", "/ n0 * n1 n2", "neg - n0 n1", "- * n3 n0 / n1 n2"]:
        normal = postfix_to_prefix(normalize_equation(prefix.split()))
        assert equation_value(normal, numbers) == equation_value(prefix.split(), numbers)
    assert equation_value(postfix_to_prefix(normalize_equation("/ n0 / n1 n2".split())), numbers) == Fraction(36, 5)


def test_normalize_tree_on_a_tree():
    tree = from_prefix("+ n1 * 2 n0")
    assert normalize_tree(tree) == Node("+", (Node("n1"), Node("*", (Node("n0"), Node("2")))))


def test_postfix_to_prefix():
    assert postfix_to_prefix(["n0", "n1", "n2", "*", "+"]) == ("+", "n0", "*", "n1", "n2")
    assert postfix_to_prefix(["n0", "neg"]) == ("neg", "n0")
    for bad in (["n0", "+"], ["n0", "n1"], [], ["+", "n0", "n1"]):
        with pytest.raises(ExpressionError):
            postfix_to_prefix(bad)


@pytest.mark.parametrize(
    ("prefix", "postfix"),
    [
        ("* n0 neg neg * n0 n0", "n0 n0 * n0 *"),  # found by the property test below
        ("+ n2 neg neg - n1 n0", "n1 n2 + n0 -"),
        ("/ n0 neg neg / n1 n2", "n0 n2 * n1 /"),
    ],
)
def test_a_double_neg_vanishes_and_its_operand_joins_the_chain_around_it(prefix, postfix):
    # neg neg (a * b) normalises to a * b, a term of the enclosing chain of * and /: flattened into it, the
    # target is the same as without the double neg, and normalising the target again leaves it as it is.
    assert normalized(prefix) == postfix
    assert normalized(prefix.replace("neg neg ", "")) == postfix
    assert normalize_equation(postfix_to_prefix(postfix.split())) == tuple(postfix.split())


def test_normalize_equation_rejects_ill_formed_prefix():
    with pytest.raises(ExpressionError):
        normalize_equation(["+", "n0"])


# --- properties on random trees -----------------------------------------------------------------

LEAVES = ["n0", "n1", "n2", "n3", "n4", "0", "1", "2", "3", "100", "0.5"]
leaves = st.sampled_from(LEAVES).map(Node)


def random_trees(operators, unary: bool):
    def extend(children):
        options = [st.tuples(st.sampled_from(operators), children, children).map(lambda t: Node(t[0], (t[1], t[2])))]
        if unary:
            options.append(children.map(lambda child: Node("neg", (child,))))
        return st.one_of(*options)

    return st.recursive(leaves, extend, max_leaves=10)


any_trees = random_trees(["+", "-", "*", "/", "^"], unary=True)
numbers = st.lists(st.integers(-6, 12).map(str), min_size=5, max_size=5)


def small_powers_only(tree: Node) -> bool:
    """No exponent that is itself computed, so that values stay small and exact."""
    if tree.value == "^" and not tree.children[1].is_leaf:
        return False
    return all(small_powers_only(child) for child in tree.children)


@settings(max_examples=200, deadline=None)
@given(any_trees, numbers)
@hypothesis.example(from_prefix("* n0 neg neg * n0 n0"), ["2", "3", "4", "5", "6"])  # a double neg was not flattened
def test_normalisation_keeps_the_value_and_is_idempotent(tree, values):
    assume(small_powers_only(tree))
    values = tuple(values)  # a leading "-" makes a negative number, as in the SVAMP-style files
    prefix = to_prefix(tree)
    try:
        value = equation_value(prefix, values)
    except ExpressionError:
        assume(False)
    target = normalize_equation(prefix)
    back = postfix_to_prefix(target)  # parses
    assert equation_value(back, values) == value
    assert normalize_equation(back) == target
    assert sorted(token for token in target if token in LEAVES) == sorted(token for token in prefix if token in LEAVES)


def equivalent_rewrite(node: Node, random) -> Node:
    """A random equivalent of a tree without neg, rewriting each node (after its children) by one law, or not at all:
    commutativity of + and *, regrouping of + - and of * /, and a - b = a + neg(b)."""
    if node.is_leaf:
        return node
    left, right = (equivalent_rewrite(child, random) for child in node.children)
    operator = node.value
    if operator in ("+", "*") and random.random() < 0.5:
        left, right = right, left
    if random.random() < 0.5 and not right.is_leaf:
        inner, (b, c) = right.value, right.children
        regroupings = {
            ("+", "+"): ("+", "+"), ("+", "-"): ("+", "-"), ("-", "+"): ("-", "-"), ("-", "-"): ("-", "+"),
            ("*", "*"): ("*", "*"), ("*", "/"): ("*", "/"), ("/", "*"): ("/", "/"),
        }
        if (operator, inner) in regroupings:  # a op (b inner c) = (a op' b) op'' c
            first, second = regroupings[operator, inner]
            return Node(second, (Node(first, (left, b)), c))
        if (operator, inner) == ("/", "/"):  # a / (b / c) = (a * c) / b
            return Node("/", (Node("*", (left, c)), b))
    if operator == "-" and random.random() < 0.25:
        return Node("+", (left, Node("neg", (right,))))
    return Node(operator, (left, right))


@settings(max_examples=200, deadline=None)
@given(random_trees(["+", "-", "*", "/"], unary=False), st.randoms(use_true_random=False))
def test_equivalent_rewrites_get_the_same_target(tree, random):
    rewritten = equivalent_rewrite(tree, random)
    assert normalize_equation(to_prefix(rewritten)) == normalize_equation(to_prefix(tree))


# --- template_counts ------------------------------------------------------------------------------


def example(equation: str, numbers=("12", "5", "3"), answer=None, id="1") -> Example:
    tokens = tuple(equation.split())
    if answer is None:
        answer = float(equation_value(tokens, numbers))
    return Example(id=id, text="", masked_text="n0 n1 n2", numbers=tuple(numbers), equation=tokens, answer=answer)


def test_template_counts_on_a_toy_list():
    equations = ["+ n0 n1", "+ n1 n0", "- n0 n1", "- n1 n0", "+ n0 n1", "* n0 / n1 n2", "/ * n0 n1 n2"]
    counts = template_counts([example(equation, id=str(k)) for k, equation in enumerate(equations)])
    assert counts == {"examples": 7, "templates": 6, "normalised_templates": 4, "merged": 2}
    assert template_counts([]) == {"examples": 0, "templates": 0, "normalised_templates": 0, "merged": 0}


# --- the registered task --------------------------------------------------------------------------


@pytest.fixture
def apples() -> Example:
    # 12 - (3 + 5) = 4, written with the operands of + out of order.
    return Example(
        id="apples",
        text="Tom has 12 apples. He eats 5 and gives 3 away. How many are left?",
        masked_text="Tom has n0 apples . He eats n1 and gives n2 away . How many are left ?",
        numbers=("12", "5", "3"),
        equation=("-", "n0", "+", "n2", "n1"),
        answer=4.0,
    )


def test_task_targets_and_grammar(apples):
    task = get_task("word_problems_normalized")
    plain = get_task("word_problems")
    assert task.target_tokens(apples) == ["n0", "n1", "-", "n2", "-"]
    assert task.source_tokens(apples) == plain.source_tokens(apples)
    assert task.read is plain.read and task.generate is plain.generate and task.write is plain.write
    assert task.target_grammar.notation == "postfix"
    assert task.target_grammar.arity("neg") == 1 and task.target_grammar.arity("/") == 2
    assert task.target_grammar.arity("n0") == 0


def test_task_scores_postfix_hypotheses(apples):
    task = get_task("word_problems_normalized")
    right_and_normal = "n0 n1 - n2 -".split()
    right_not_normal = "n0 n2 n1 + -".split()
    wrong = "n0 n1 + n2 -".split()
    assert task.is_correct(right_and_normal, apples) and task.equation_matches(right_and_normal, apples)
    assert task.is_correct(right_not_normal, apples) and not task.equation_matches(right_not_normal, apples)
    assert not task.is_correct(wrong, apples) and not task.equation_matches(wrong, apples)
    assert not task.is_correct("- n0 + n1 n2".split(), apples)  # the prefix gold is no postfix hypothesis
    verify = task.verifier.verify
    assert verify(wrong, apples) and not verify("n0 n1 n1 - /".split(), apples)  # division by zero


def test_task_describes_postfix_predictions(apples):
    task = get_task("word_problems_normalized")
    record = task.describe("n0 n1 - n2 -".split(), apples)
    assert record["predicted_tokens"] == ["n0", "n1", "-", "n2", "-"]
    assert record["predicted_equation"] == "12 - 5 - 3"
    assert record["predicted_value"] == 4.0
    assert record["correct"] is True and record["equation_correct"] is True
    assert record["gold_target"] == ["n0", "n1", "-", "n2", "-"]
    record = task.describe("n0 n2 n1 + -".split(), apples)
    assert record["predicted_equation"] == "12 - (3 + 5)"
    assert record["correct"] is True and record["equation_correct"] is False


@pytest.mark.parametrize("hypothesis", [["n0", "+"], ["n0", "n1"], [], ["-", "n0", "n1"], ["n0", "n7", "+"]])
def test_ill_formed_hypotheses_are_wrong_without_raising(apples, hypothesis):
    task = get_task("word_problems_normalized")
    assert task.is_correct(hypothesis, apples) is False
    assert task.equation_matches(hypothesis, apples) is False
    assert task.verifier.verify(hypothesis, apples) is False
    record = task.describe(hypothesis, apples)
    assert record["predicted_tokens"] == hypothesis
    assert record["predicted_value"] is None and record["predicted_answer_text"] is None
    assert record["correct"] is False and record["equation_correct"] is False
    assert record["predicted_equation"] is None  # also for n7: it parses, but the problem has no eighth number


# --- the shared data ------------------------------------------------------------------------------


def test_normalisation_on_mawps_keeps_every_value():
    path = DATA / "mawps-cv" / "fold0" / "train.csv"
    if not path.exists():
        pytest.skip(f"the benchmark data is not under the data root {DATA}")
    examples = read_examples(path)
    assert examples
    for item in examples:
        normal = postfix_to_prefix(normalize_equation(item.equation))
        assert equation_value(normal, item.numbers) == equation_value(item.equation, item.numbers), item.id
    assert template_counts(examples)["merged"] >= 1
