"""neuromath/models/classifiers.py: every registered equation classifier learns a tiny verification set (is the
right side a copy of the left one?), which needs the dot-product output over both encoded sides to work."""

import random

import pytest
import torch
import torch.nn.functional as F

from neuromath.config import ModelConfig
from neuromath.config.models import model_names
from neuromath.config.rules import MAJORITY, SEQUENCE_CLASSIFIER, TREE_CLASSIFIER
from neuromath.errors import ConfigError
from neuromath.models.classifiers import (
    OPERATORS,
    CompletionScorer,
    EncodedEquations,
    MajorityClassifier,
    build_classifier,
    make_collate,
    node_vocabulary,
    predict_logits,
)
from neuromath.tasks.identities import EquationExample, apply, number, path_to, preorder, replace_path, symbol

LEAVES = [symbol("var_0"), symbol("var_1"), number(2), number(3)]


def tiny_set(n: int, seed: int) -> list[EquationExample]:
    rng = random.Random(seed)

    def term(depth: int):
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(LEAVES)
        if rng.random() < 0.4:
            return apply(rng.choice(["sin", "cos"]), term(depth - 1))
        return apply(rng.choice(["Add", "Mul"]), term(depth - 1), term(depth - 1))

    examples = []
    while len(examples) < n:
        left = term(2)
        right = left if rng.random() < 0.5 else term(2)
        examples.append(EquationExample(apply("Equality", left, right), right == left))
    return examples


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


LEARNED = list(model_names(TREE_CLASSIFIER, SEQUENCE_CLASSIFIER))


def test_every_model_of_the_issue_is_registered():
    assert {"tree_rnn", "tree_lstm", "second_order_tree_rnn", "mtree_lstm", "mi_tree_lstm", "stack_mtree_lstm",
            "stack_mi_tree_lstm", "tree_smu", "tree_smu_lstm", "rnn", "lstm", "stack_rnn",
            "majority"} <= set(model_names(TREE_CLASSIFIER, SEQUENCE_CLASSIFIER, MAJORITY))
    assert len(OPERATORS) == 17


@pytest.mark.parametrize("name", LEARNED)
def test_each_classifier_learns_a_tiny_verification_set(name):
    stack = {"stack_depth": 4} if "stack_depth" in ModelConfig.member(name).__dataclass_fields__ else {}
    losses, accuracy = fit_tiny_set(ModelConfig(name=name, d_model=16, **stack))
    assert losses[-1] < 0.6 * losses[0], losses
    assert accuracy > 0.8, (name, float(accuracy))


def fit_tiny_set(config: ModelConfig) -> tuple[list[float], float]:
    """Train on 400 tiny equations for 8 epochs: the mean training loss of each epoch and the held-out accuracy."""
    torch.manual_seed(0)
    train, held_out = tiny_set(400, 0), tiny_set(200, 1)
    vocab = node_vocabulary(train)
    model = build_classifier(config, vocab)
    loader = torch.utils.data.DataLoader(
        EncodedEquations(train, vocab, model.input_kind), batch_size=50, shuffle=True,
        collate_fn=make_collate(model.input_kind),
        generator=torch.Generator().manual_seed(0),
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(8):
        total = 0.0
        for batch in loader:
            loss = F.binary_cross_entropy_with_logits(model(batch), batch["labels"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        losses.append(total / len(loader))
    accuracy = (
        ((predict_logits(model, held_out, vocab) > 0) == torch.tensor([e.label for e in held_out])).float().mean()
    )
    return losses, float(accuracy)


def node_states(model, examples, vocab) -> tuple[torch.Tensor, torch.Tensor, int]:
    """h and c of every node of the examples' sides (leaves first) and the number of leaves."""
    batch = make_collate(model.input_kind)([EncodedEquations(examples, vocab, model.input_kind)[i]
                                            for i in range(len(examples))])
    hidden, memory = model.encoder(batch["trees"])
    return hidden, memory, int(batch["trees"].level_starts[1])


@pytest.mark.parametrize("site", ["output", "candidate"])
def test_the_dropout_site_decides_what_training_perturbs(site):
    """model.dropout_site candidate (Arabshahi et al.'s Tree-LSTM) drops only the candidate u of each internal
    node, so leaves keep their eval-mode states while internal nodes are perturbed; site output drops every
    node's h, leaves included (memories are carried up undropped either way)."""
    torch.manual_seed(0)
    examples = tiny_set(20, 2)
    vocab = node_vocabulary(examples)
    model = build_classifier(ModelConfig(name="tree_lstm", d_model=16, dropout=0.5, dropout_site=site), vocab)
    assert model.encoder.dropout == (0.5 if site == "output" else 0.0)
    assert model.encoder.cell.candidate_dropout == (0.0 if site == "output" else 0.5)
    model.eval()
    with torch.no_grad():
        hidden, memory, leaves = node_states(model, examples, vocab)
        model.train()
        dropped_hidden, dropped_memory, _ = node_states(model, examples, vocab)
    leaves_kept = torch.equal(dropped_hidden[:leaves], hidden[:leaves])
    assert leaves_kept == (site == "candidate")
    assert torch.equal(dropped_memory[:leaves], memory[:leaves])  # leaf memories are never dropped
    assert not torch.allclose(dropped_hidden[leaves:], hidden[leaves:])  # internal nodes are perturbed either way


def test_candidate_dropout_still_learns_the_tiny_set():
    losses, accuracy = fit_tiny_set(ModelConfig(name="tree_lstm", d_model=16, dropout=0.3, dropout_site="candidate"))
    assert losses[-1] < 0.6 * losses[0], losses
    assert accuracy > 0.8, accuracy


@pytest.mark.parametrize("name", ["tree_rnn", "second_order_tree_rnn", "tree_smu"])
def test_a_cell_without_a_candidate_refuses_candidate_dropout(name):
    with pytest.raises(ConfigError, match=f"model.dropout_site does not apply to the {name} model"):
        ModelConfig(name=name, d_model=8, dropout=0.2, dropout_site="candidate")  # its class has no such key


def test_majority_follows_the_training_labels():
    model = MajorityClassifier()
    model.fit([False, False, True])
    batch = {"labels": torch.zeros(4)}
    assert (model(batch) < 0).all()
    model.fit([True, False])  # a tie counts as true
    assert (model(batch) > 0).all()


def deeper_term(rng: random.Random, depth: int):
    """A random side over every operator kind the scorer walks through: binary, unary, leaves."""
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(LEAVES + [number(5)])  # 5 is outside the training vocabulary: an unknown leaf
    if rng.random() < 0.35:
        return apply(rng.choice(["sin", "exp", "log"]), deeper_term(rng, depth - 1))
    return apply(rng.choice(["Add", "Mul", "Pow"]), deeper_term(rng, depth - 1), deeper_term(rng, depth - 1))


@pytest.mark.parametrize("name", LEARNED)
def test_completion_scorer_equals_scoring_each_filled_equation(name):
    """The path-wise scorer (tree cells: candidates and off-path subtrees encoded once) gives the logits of the
    whole filled equations, for blanks on either side, at a side's root, below unary and binary nodes."""
    torch.manual_seed(1)
    vocab = node_vocabulary(tiny_set(50, 0))
    model = build_classifier(ModelConfig(name=name, d_model=12, dropout=0.3), vocab)
    model.train()  # the scorer must score in eval mode (dropout off) and give the mode back
    rng = random.Random(3)
    candidates = [deeper_term(rng, 2) for _ in range(9)] + [symbol("var_0"), symbol("var_0")]  # a repeated one
    checked = 0
    for _ in range(6):
        equation = apply("Equality", deeper_term(rng, 4), deeper_term(rng, 3))
        scorer = CompletionScorer(model, vocab, candidates)
        for blank in range(1, sum(1 for _ in preorder(equation))):
            path = path_to(equation, blank)
            filled = [EquationExample(replace_path(equation, path, c), True) for c in candidates]
            expected = predict_logits(model, filled, vocab)
            got = scorer(equation, path)
            assert got.shape == (len(candidates),)
            torch.testing.assert_close(got, expected, atol=2e-5, rtol=1e-4)
            checked += 1
    assert model.training and checked > 30
    with pytest.raises(ValueError, match="inside one side"):
        scorer(equation, ())


# ------------------------------------------------------------------------------------ numbers as evidence


def test_with_numbers_floats_share_one_token_and_every_number_leaf_carries_its_value():
    from neuromath.models.classifiers import FLOAT_TOKEN, side_tree
    from neuromath.tasks.identities import PI, leaf

    examples = [EquationExample(apply("Equality", apply("sin", leaf("Float", "0.37")), leaf("Float", "0.3616")), True),
                EquationExample(apply("Equality", apply("Mul", number(2), PI), symbol("var_0")), False)]
    plain, valued = node_vocabulary(examples), node_vocabulary(examples, numbers=True)
    assert "0.37" in plain.index and FLOAT_TOKEN not in plain.index
    assert "0.37" not in valued.index and FLOAT_TOKEN in valued.index
    left = examples[1].tree.children[0]
    two, pi = side_tree(left, valued, numbers=True)[1]
    assert two == (valued.index["2"], (), 2.0) and pi[0] == valued.index["pi"] and abs(pi[2] - 3.14159265) < 1e-6
    assert side_tree(left, plain)[1][0] == (plain.index["2"], ())  # without numbers: tokens only
    assert side_tree(symbol("var_0"), valued, numbers=True) == (valued.index["var_0"], ())
    unseen = side_tree(leaf("Float", "7.25"), valued, numbers=True)
    assert unseen == (valued.index[FLOAT_TOKEN], (), 7.25)  # an unseen decimal is read by its value


@pytest.mark.parametrize("name", ["tree_lstm", "stack_mtree_lstm"])
def test_completion_scorer_with_numbers_equals_scoring_each_filled_equation(name):
    from neuromath.tasks.identities import leaf

    torch.manual_seed(2)
    examples = tiny_set(50, 0) + [EquationExample(apply("Equality", leaf("Float", "0.5"), number(2)), False)]
    vocab = node_vocabulary(examples, numbers=True)
    model = build_classifier(ModelConfig(name=name, d_model=12, number_encoder=True), vocab)
    assert model.reads_numbers
    rng = random.Random(4)
    candidates = [deeper_term(rng, 2) for _ in range(6)] + [leaf("Float", "0.7"), leaf("Float", "1.3"), number(5)]
    scorer = CompletionScorer(model, vocab, candidates)
    for _ in range(4):
        equation = apply("Equality", apply("Add", deeper_term(rng, 3), leaf("Float", "2.25")), deeper_term(rng, 3))
        for blank in range(1, sum(1 for _ in preorder(equation))):
            path = path_to(equation, blank)
            filled = [EquationExample(replace_path(equation, path, c), True) for c in candidates]
            torch.testing.assert_close(scorer(equation, path), predict_logits(model, filled, vocab),
                                       atol=2e-5, rtol=1e-4)
    scores = scorer(apply("Equality", symbol("var_0"), number(2)), (0,))
    assert scores[6] != scores[7]  # two decimals, one token: told apart by value


@pytest.mark.parametrize("name", ["tree_lstm", "stack_mi_tree_lstm"])
def test_logits_and_completion_in_bf16_are_computed_in_bf16_and_stay_near_float32(name):
    """A run trained in bf16-mixed is scored in it (neuromath.nn.precision): the matrix products run in bfloat16,
    and the float32 logits they give stay within bf16's rounding of the float32 ones."""
    torch.manual_seed(1)
    examples = tiny_set(40, 2)
    vocab = node_vocabulary(examples)
    model = build_classifier(ModelConfig(name=name, d_model=16), vocab)
    seen = []
    linear = next(m for m in model.modules() if isinstance(m, torch.nn.Linear))
    handle = linear.register_forward_hook(lambda module, inputs, output: seen.append(output.dtype))
    fp32 = predict_logits(model, examples, vocab)
    bf16 = predict_logits(model, examples, vocab, precision="bf16-mixed")
    handle.remove()
    assert torch.bfloat16 in seen and torch.float32 in seen
    assert bf16.dtype == torch.float32 and not torch.equal(bf16, fp32)
    torch.testing.assert_close(bf16, fp32, atol=0.05, rtol=0.05)
    rng = random.Random(3)
    candidates = [deeper_term(rng, 2) for _ in range(5)]
    equation = apply("Equality", deeper_term(rng, 3), deeper_term(rng, 3))
    path = path_to(equation, 1)
    scores = {p: CompletionScorer(model, vocab, candidates, precision=p)(equation, path)
              for p in ("32-true", "bf16-mixed")}
    assert not torch.equal(scores["bf16-mixed"], scores["32-true"])
    torch.testing.assert_close(scores["bf16-mixed"], scores["32-true"], atol=0.05, rtol=0.05)
