"""The tree-decoding solvers gts and graph2tree (neuromath/models/tree_decoders.py): the state machine of the
goal-driven decoder, the masks (numbers a problem lacks, eos only after a complete tree), decoding through the
sequence contract (cache, greedy, beam), the graph encoder's inputs, and learning a tiny task that needs both a
word-chosen operator and pointing at numbers."""

import itertools
import math
import random

import pytest
import torch

from neuromath.config import ModelConfig
from neuromath.decoding.beam import beam_search
from neuromath.decoding.constraints import GrammarConstraint
from neuromath.decoding.greedy import greedy_decode
from neuromath.errors import ConfigError
from neuromath.expr.grammar import WORD_PROBLEM_GRAMMAR, TreeGrammar
from neuromath.models import build_model, tree_decoders
from neuromath.models.batching import collate, move_batch
from neuromath.models.inputs import ModelInputs
from neuromath.text import Vocabulary

MODELS = ("gts", "graph2tree")
WORDS = ["tom", "has", "n0", "n1", "n2", "n3", "apples", "pears", ",", ".", "plus", "minus", "times", "the", "first",
         "last", "two", "?", "red", "big", "old", "sells", "buys"]
OPERATORS = {"plus": "+", "minus": "-", "times": "*"}


def pointing_task(n: int, rng: random.Random):
    """Three numbers; a word picks the operator and another which two numbers it joins (first two / last two), so a
    model must read the question and point at the right numbers. Filler words vary."""
    examples = []
    for _ in range(n):
        word, position = rng.choice(sorted(OPERATORS)), rng.choice(["first", "last"])
        filler = [rng.choice(["red", "big", "old"]) for _ in range(rng.randint(0, 2))]
        text = ["tom", "has", "n0", *filler, "apples", ",", "n1", "pears", ",", "n2", "apples", ".",
                word, "the", position, "two", "?"]
        operands = ["n0", "n1"] if position == "first" else ["n1", "n2"]
        examples.append((text, [OPERATORS[word], *operands], [3.0, 5.0, 2.0]))
    return examples


def vocabularies():
    return Vocabulary(WORDS), Vocabulary(["+", "-", "*", "n0", "n1", "n2", "n3", "1"])


def batch_of(examples, source_vocab, target_vocab):
    items = [
        (source_vocab.encode(text, add_eos=True), target_vocab.encode(target, add_bos=True, add_eos=True), index,
         values)
        for index, (text, target, values) in enumerate(examples)
    ]
    return collate(items)


def small_model(name, source_vocab, target_vocab, grammar=WORD_PROBLEM_GRAMMAR, **changes):
    values = dict(name=name, d_model=32, encoder_hidden=48, d_ff=64, n_encoder_layers=1, dropout=0.0)
    values = {key: value for key, value in values.items() if key in ModelConfig.member(name).__dataclass_fields__}
    values.update(changes)  # the sizes above that the model's class has (gts has no d_ff), and what the test asks
    inputs = ModelInputs(
        len(source_vocab), len(target_vocab), source_tokens=source_vocab.tokens, target_tokens=target_vocab.tokens,
        target_classes=grammar.token_classes(target_vocab.tokens),
    )
    return build_model(ModelConfig(**values), inputs)


def is_complete_prefix(tokens, arity) -> bool:
    open_slots = 1
    for token in tokens:
        if open_slots == 0:
            return False
        open_slots += arity.get(token, 0) - 1
    return open_slots == 0


@pytest.mark.parametrize("name", MODELS)
def test_decode_step_with_and_without_cache_matches_teacher_forcing(name):
    torch.manual_seed(0)
    source_vocab, target_vocab = vocabularies()
    batch = batch_of(pointing_task(4, random.Random(1)), source_vocab, target_vocab)
    model = small_model(name, source_vocab, target_vocab).eval()
    with torch.no_grad():
        full = torch.log_softmax(model(batch), dim=-1)  # (B, T, V)
        memory, cache = model.encode(batch), None
        for step in range(batch["target_in"].size(1)):
            log_probs, cache = model.decode_step(memory, batch["target_in"][:, : step + 1], cache)
            allowed = torch.isfinite(log_probs)
            assert torch.allclose(log_probs[allowed], full[:, step][allowed], atol=1e-5)
            uncached, _ = model.decode_step(memory, batch["target_in"][:, : step + 1], None)
            assert torch.allclose(uncached, log_probs, atol=1e-5)


@pytest.mark.parametrize("name", MODELS)
def test_teacher_forcing_of_unfinished_trees_only_equals_every_row_at_every_node(name):
    """The forward computes node t only for the trees still open at t (rows put in order of target length); its
    logits, loss and gradients must be those of every row taking every step, in the batch's own order."""
    torch.manual_seed(0)
    source_vocab, target_vocab = vocabularies()
    text = pointing_task(1, random.Random(2))[0][0]
    targets = [["+", "n0", "n1"], ["n2"], ["*", "+", "n0", "n1", "-", "n2", "1"], ["-", "n1", "n0"],
               ["*", "n2", "+", "n1", "1"]]
    batch = batch_of([(text, target, [3.0, 5.0, 2.0]) for target in targets], source_vocab, target_vocab)
    model = small_model(name, source_vocab, target_vocab).train()  # dropout 0: both passes draw nothing

    def loss_and_grads(forward):
        model.zero_grad()
        logits = forward()
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch["target_out"].flatten(), ignore_index=0)
        loss.backward()
        return logits.detach(), loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    compact = loss_and_grads(lambda: model(batch))
    every = loss_and_grads(lambda: model.every_row_forced(model.encode(batch), batch["target_out"]))
    assert compact[0].shape == every[0].shape == (5, 8, len(target_vocab))
    assert torch.allclose(compact[0], every[0], atol=1e-5)  # padded positions too: a complete tree's logits
    assert torch.allclose(compact[1], every[1], atol=1e-6)
    assert len(compact[2]) == len(every[2]) and all(
        torch.allclose(a, b, atol=1e-6) for a, b in zip(compact[2], every[2], strict=True)
    )


def test_masks_numbers_the_problem_lacks_and_allows_eos_exactly_after_a_complete_tree():
    torch.manual_seed(0)
    source_vocab, target_vocab = vocabularies()
    batch = batch_of(pointing_task(2, random.Random(1)), source_vocab, target_vocab)  # n0 n1 n2, no n3
    model = small_model("gts", source_vocab, target_vocab).eval()
    ids = {token: target_vocab.index[token] for token in ["+", "n0", "n2", "n3", "1"]}
    with torch.no_grad():
        memory = model.encode(batch)
        log_probs, cache = model.decode_step(memory, batch["target_in"][:, :1], None)
        assert torch.isneginf(log_probs[:, ids["n3"]]).all()  # the problem has no fourth number
        assert torch.isfinite(log_probs[:, [ids["n0"], ids["n2"], ids["1"], ids["+"]]]).all()
        for special in (Vocabulary.pad_id, Vocabulary.bos_id, Vocabulary.eos_id, Vocabulary.unk_id):
            assert torch.isneginf(log_probs[:, special]).all()
        prefix = batch["target_in"][:, :1]
        for token in ["+", "n0", "+", "1", "n2"]:  # + n0 (+ 1 n2): complete only after the last token
            prefix = torch.cat([prefix, torch.full((2, 1), ids[token] if token in ids else 0)], dim=1)
            log_probs, cache = model.decode_step(memory, prefix, cache)
            complete = token == "n2"
            assert bool(torch.isfinite(log_probs[:, Vocabulary.eos_id]).all()) == complete
            assert bool(torch.isfinite(log_probs).sum(dim=1).eq(1).all()) == complete
    with torch.no_grad():
        counts = torch.isfinite(log_probs).sum(dim=1)
    assert counts.tolist() == [1, 1]


def test_a_problem_without_a_number_slot_in_the_text_never_uses_it_when_it_is_padded_out():
    torch.manual_seed(0)
    source_vocab, target_vocab = vocabularies()
    short = (["tom", "has", "n0", "apples", ".", "plus", "the", "first", "two", "?"], ["n0"], [3.0])
    batch = batch_of([short, *pointing_task(1, random.Random(2))], source_vocab, target_vocab)
    model = small_model("graph2tree", source_vocab, target_vocab).eval()
    with torch.no_grad():
        log_probs, _ = model.decode_step(model.encode(batch), batch["target_in"][:, :1], None)
    n1, n2 = target_vocab.index["n1"], target_vocab.index["n2"]
    assert torch.isneginf(log_probs[0, [n1, n2]]).all() and torch.isfinite(log_probs[1, [n1, n2]]).all()


@pytest.mark.parametrize("name", MODELS)
def test_beam_search_ends_only_complete_trees_and_width_one_is_greedy(name):
    torch.manual_seed(3)
    source_vocab, target_vocab = vocabularies()
    batch = batch_of(pointing_task(6, random.Random(4)), source_vocab, target_vocab)
    model = small_model(name, source_vocab, target_vocab).eval()
    arity = dict(WORD_PROBLEM_GRAMMAR.arities)
    beams = beam_search(model, batch, beam_size=5, max_len=12, nbest=5)
    for hypotheses in beams:
        assert hypotheses
        for hypothesis in hypotheses:
            tokens = target_vocab.decode(hypothesis.tokens)
            assert is_complete_prefix(tokens, arity) == hypothesis.finished
    greedy = greedy_decode(model, batch, max_len=12)
    width_one = beam_search(model, batch, beam_size=1, max_len=12)
    assert [hypotheses[0].tokens for hypotheses in width_one] == [list(ids) for ids in greedy]


def all_trees(operators, leaves, max_tokens):
    """Every complete prefix tree over ``operators`` (binary) and ``leaves`` with at most ``max_tokens`` tokens."""
    trees = []
    for length in range(1, max_tokens + 1, 2):
        for tokens in itertools.product(operators + leaves, repeat=length):
            if is_complete_prefix(tokens, {op: 2 for op in operators}):
                trees.append(list(tokens))
    return trees


@pytest.mark.parametrize("name", MODELS)
def test_a_wide_beam_finds_exactly_the_brute_force_ranking(name):
    """On a vocabulary of two operators and two numbers, a beam wider than every partial tree is exhaustive: its
    finished hypotheses are all trees of at most 5 tokens, with the log-probabilities teacher forcing gives them."""
    torch.manual_seed(5)
    source_vocab = Vocabulary(WORDS)
    target_vocab = Vocabulary(["+", "-", "n0", "n1"])
    text = ["tom", "has", "n0", "apples", ",", "n1", "pears", ".", "plus", "the", "first", "two", "?"]
    model = small_model(name, source_vocab, target_vocab).eval()
    trees = all_trees(["+", "-"], ["n0", "n1"], 5)  # 2 + 8 + 64 trees
    assert len(trees) == 74
    batch = batch_of([(text, tree, [3.0, 4.0]) for tree in trees], source_vocab, target_vocab)
    with torch.no_grad():
        log_probs = torch.log_softmax(model(batch), dim=-1)
    target = batch["target_out"]
    scores = log_probs.gather(2, target.unsqueeze(-1)).squeeze(-1).masked_fill(target.eq(0), 0.0).sum(dim=1)
    brute = sorted(zip(scores.tolist(), map(tuple, trees)), reverse=True)

    one = batch_of([(text, ["n0"], [3.0, 4.0])], source_vocab, target_vocab)
    # the grammar constraint drops prefixes that cannot end within max_len, which would otherwise fill the beam
    constraint = GrammarConstraint(WORD_PROBLEM_GRAMMAR.token_classes(target_vocab.tokens))
    found = beam_search(model, one, beam_size=300, max_len=6, nbest=300, length_penalty=0.0, constraint=constraint)[0]
    finished = [(h.score, tuple(target_vocab.decode(h.tokens))) for h in found if h.finished]
    assert sorted(tree for _, tree in finished) == sorted(tree for _, tree in brute)
    by_tree = dict((tree, score) for score, tree in finished)
    for score, tree in brute:
        assert math.isclose(by_tree[tree], score, abs_tol=1e-4)
    assert [tree for _, tree in finished[:10]] == [tree for _, tree in brute[:10]]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("forcing", ["nodes", "levels"])
def test_each_tree_decoder_learns_to_pick_the_operator_and_point_at_the_numbers(name, forcing, fit_teacher_forced):
    """Chance is 1/6 (three operators times two number pairs); after 150 full-batch steps with dropout a model that
    reads the operator word and points at the right encoder states gets at least 90% of held-out problems (new
    fillers), with teacher forcing node by node and one tree depth per step (``model.tree_forcing``)."""
    torch.manual_seed(0)
    source_vocab, target_vocab = vocabularies()
    train = batch_of(pointing_task(120, random.Random(2)), source_vocab, target_vocab)
    test_examples = pointing_task(60, random.Random(3))
    test = batch_of(test_examples, source_vocab, target_vocab)
    model = small_model(name, source_vocab, target_vocab, tree_forcing=forcing, dropout=0.1)
    start, final = fit_teacher_forced(model, train, steps=150)
    model.eval()
    predictions = greedy_decode(model, test, max_len=6)
    right = sum(target_vocab.decode(ids) == target for ids, (_, target, _) in zip(predictions, test_examples))
    assert final < 0.1 * start
    assert right / len(test_examples) >= 0.9


def test_graph2tree_reads_the_number_values_through_the_comparison_graph():
    torch.manual_seed(0)
    source_vocab, target_vocab = vocabularies()
    examples = pointing_task(2, random.Random(1))
    model = small_model("graph2tree", source_vocab, target_vocab).eval()
    reordered = [(text, target, [1.0, 2.0, 9.0]) for text, target, _ in examples]
    with torch.no_grad():
        first = model.encode(batch_of(examples, source_vocab, target_vocab))["states"]
        second = model.encode(batch_of(reordered, source_vocab, target_vocab))["states"]
        gts = small_model("gts", source_vocab, target_vocab).eval()
        same = [gts.encode(batch_of(rows, source_vocab, target_vocab))["states"] for rows in (examples, reordered)]
    assert not torch.allclose(first, second)
    assert torch.equal(same[0], same[1])


def test_graph2tree_finds_a_rows_links_once_and_looks_them_up_after_that(monkeypatch):
    source_vocab, target_vocab = vocabularies()
    examples = pointing_task(6, random.Random(2))
    examples[0] = (examples[0][0], examples[0][1], [3.0, math.nan, 2.0])  # a number without a value
    examples[1] = (examples[1][0], examples[1][1], [1.0, 2.0, 9.0])  # the same words, other values
    batch = batch_of(examples, source_vocab, target_vocab)
    model = small_model("graph2tree", source_vocab, target_vocab)
    calls, find = [], model.graph_links
    monkeypatch.setattr(model, "graph_links", lambda *args: calls.append(args) or find(*args))
    first = model.graphs(batch)
    rows = {(tuple(ids), str(values)) for ids, values in zip(batch["source"].tolist(), batch["number_values"].tolist())}
    assert len(calls) == len(rows)  # once per distinct row: its ids and its values
    second = model.graphs(batch)
    assert len(calls) == len(rows) and torch.equal(first, second)  # looked up, NaN values included
    assert torch.equal(first, small_model("graph2tree", source_vocab, target_vocab).graphs(batch))  # a fresh model
    values = batch["number_values"].clone()
    values[1, 0] = 8.0  # the row's comparisons change: found anew, not taken from the memo
    changed = model.graphs({**batch, "number_values": values})
    assert len(calls) == len(rows) + 1 and not torch.equal(changed[1], first[1])
    monkeypatch.setattr(tree_decoders, "GRAPH_MEMO_ROWS", 2)  # the memo's bound: it starts again when full
    model.graph_memo.clear()
    assert torch.equal(model.graphs(batch), first) and len(model.graph_memo) <= 2


def test_shared_words_link_the_question_to_the_cell_words_in_both_cell_graphs_only():
    source_vocab, target_vocab = vocabularies()
    text = ["tom", "has", "n0", "apples", ",", "n1", "pears", ".", "plus", "the", "apples", "?"]
    batch = batch_of([(text, ["+", "n0", "n1"], [3.0, 5.0])], source_vocab, target_vocab)
    plain = small_model("graph2tree", source_vocab, target_vocab).graphs(batch)[0]
    shared = small_model("graph2tree", source_vocab, target_vocab, shared_words=True).graphs(batch)[0]
    added = (shared - plain).nonzero().tolist()  # (graph, reader, read)
    # the cell word "apples" (position 3, after n0) and the question's "apples" (10) read each other in graphs 0, 1
    assert sorted(added) == [[0, 3, 10], [0, 10, 3], [1, 3, 10], [1, 10, 3]]
    assert plain.min() == 0 and (shared - plain).min() == 0  # nothing is taken away


def test_graph_text_builds_the_graphs_from_the_words_as_written_so_unknown_words_count():
    source_vocab, target_vocab = vocabularies()  # "plums" is not in the vocabulary: <unk>
    text = ["tom", "has", "n0", "plums", ",", "n1", "pears", ".", "plus", "the", "plums", "?"]
    source = source_vocab.encode(text, add_eos=True)
    target = target_vocab.encode(["+", "n0", "n1"], add_bos=True, add_eos=True)
    batch = collate([(source, target, 0, [3.0, 5.0], text), (source, target, 1, [3.0, 5.0], None)])
    assert batch["source_words"][0] == tuple(text) and batch["source_words"][1] == ()
    assert move_batch(batch, "cpu")["source_words"] is batch["source_words"]
    by_ids = small_model("graph2tree", source_vocab, target_vocab, shared_words=True).graphs(batch)
    by_text = small_model("graph2tree", source_vocab, target_vocab, shared_words=True, graph_text=True).graphs(batch)
    added = (by_text[0] - by_ids[0]).nonzero().tolist()  # (graph, reader, read)
    # as <unk>, "plums" was no content word; as written, n0 (2) and "plums" (3) read each other, and the question's
    # "plums" (10) joins the cell's
    assert sorted(added) == [[0, 2, 3], [0, 3, 10], [0, 10, 3], [1, 3, 2], [1, 3, 10], [1, 10, 3]]
    assert (by_text[0] - by_ids[0]).min() == 0
    assert torch.equal(by_text[1], by_ids[1])  # a row without words keeps the vocabulary's tokens
    with pytest.raises(ConfigError, match="graph_text"):
        small_model("graph2tree", source_vocab, target_vocab, graph_text=True).graphs(
            batch_of(pointing_task(1, random.Random(0)), source_vocab, target_vocab))


def test_tree_decoders_refuse_postfix_targets():
    source_vocab, target_vocab = vocabularies()
    postfix = TreeGrammar(arities=dict(WORD_PROBLEM_GRAMMAR.arities), notation="postfix")
    with pytest.raises(ConfigError, match="prefix"):
        small_model("gts", source_vocab, target_vocab, grammar=postfix)


def test_the_slot_ablation_embeds_numbers_whatever_the_problem_says():
    torch.manual_seed(0)
    source_vocab, target_vocab = vocabularies()
    examples = pointing_task(3, random.Random(6))
    batch = batch_of(examples, source_vocab, target_vocab)
    with torch.no_grad():
        pointer = small_model("gts", source_vocab, target_vocab).eval().encode(batch)
        slot = small_model("gts", source_vocab, target_vocab, numbers="slot").eval().encode(batch)
    constants = 1  # the constant "1" comes first among the leaves, then n0 .. n3
    assert torch.equal(slot["leaves"][0, constants:], slot["leaves"][1, constants:])  # the same for every problem
    assert not torch.allclose(pointer["leaves"][0, constants:3], pointer["leaves"][1, constants:3])
    with pytest.raises(ConfigError, match="model.numbers"):
        small_model("gts", source_vocab, target_vocab, numbers="copy")


def test_without_subtree_embeddings_a_right_goal_does_not_depend_on_its_left_subtree():
    torch.manual_seed(0)
    source_vocab, target_vocab = vocabularies()
    text = pointing_task(1, random.Random(7))[0][0]
    ids = {token: target_vocab.index[token] for token in ["+", "-", "n0", "n1"]}
    for subtree_embedding, differs in ((True, True), (False, False)):
        model = small_model("gts", source_vocab, target_vocab, subtree_embedding=subtree_embedding).eval()
        batch = batch_of([(text, ["n0"], [3.0, 5.0, 2.0])] * 2, source_vocab, target_vocab)
        prefixes = torch.tensor([[Vocabulary.bos_id, ids["+"], ids["n0"]],  # + n0 ?   the right goal after n0
                                 [Vocabulary.bos_id, ids["+"], ids["n1"]]])  # + n1 ?   ... after n1
        with torch.no_grad():
            log_probs, _ = model.decode_step(model.encode(batch), prefixes, None)
        assert (not torch.allclose(log_probs[0], log_probs[1])) == differs


@pytest.mark.parametrize("name", MODELS)
def test_number_relevance_learns_which_numbers_the_equation_uses_and_joins_the_training_loss(name):
    """In the pointing task one of the three numbers is a distractor that the question word decides; trained on the
    auxiliary loss alone, the relevance head tells used from unused numbers on held-out problems (chance 2/3 for
    always "used"). The trainer's loss is the cross-entropy plus that loss, in training only."""
    import torch.nn.functional as F

    from neuromath.config import load_config
    from neuromath.training.module import SequenceModule

    torch.manual_seed(0)
    source_vocab, target_vocab = vocabularies()
    train_examples = pointing_task(120, random.Random(2))
    train = batch_of(train_examples, source_vocab, target_vocab)
    model = small_model(name, source_vocab, target_vocab, number_relevance=0.5)
    # the labels by hand: the first example's equation uses two of its three numbers
    with torch.no_grad():
        memory = model.encode(train)
        used_by_hand = [[f"n{k}" in target for k in range(4)] for _, target, _ in train_examples]
        logits = model.relevance(memory["numbers"]).squeeze(-1)
        expected = F.binary_cross_entropy_with_logits(logits[:, :3], torch.tensor(used_by_hand)[:, :3].float())
        computed = model.relevance_loss(memory, train["target_out"])
    assert float(computed) == pytest.approx(0.5 * float(expected), rel=1e-5)

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(100):
        optimizer.zero_grad()
        loss = model.relevance_loss(model.encode(train), train["target_out"])
        loss.backward()
        optimizer.step()
    model.eval()
    test_examples = pointing_task(60, random.Random(3))
    test = batch_of(test_examples, source_vocab, target_vocab)
    with torch.no_grad():
        predicted = model.relevance(model.encode(test)["numbers"]).squeeze(-1)[:, :3] > 0
    truth = torch.tensor([[f"n{k}" in target for k in range(3)] for _, target, _ in test_examples])
    assert (predicted == truth).float().mean() >= 0.9

    module = SequenceModule(load_config("word_problems/graph2tree", [], strict=True), model)
    model.train()
    torch.manual_seed(1)
    with_auxiliary = module.loss(train)
    torch.manual_seed(1)
    logits = model(train)
    auxiliary = model.last_auxiliary_loss
    plain = F.cross_entropy(logits.flatten(0, 1), train["target_out"].flatten(), ignore_index=0)
    assert auxiliary is not None
    assert float(with_auxiliary.detach()) == pytest.approx(float((plain + auxiliary).detach()), rel=1e-5)
    model.eval()
    model.last_auxiliary_loss = None
    model(train)
    assert model.last_auxiliary_loss is None  # validation and decoding: the cross-entropy alone


def test_number_relevance_needs_the_numbers_encoder_states():
    source_vocab, target_vocab = vocabularies()
    with pytest.raises(ConfigError, match="number_relevance reads each number's encoder state"):
        small_model("gts", source_vocab, target_vocab, number_relevance=0.5, numbers="slot")
