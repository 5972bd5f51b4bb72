"""The paper-style identities generator, the data audit written into FILE.stats.md, and dropout in the equation
classifiers."""

import json
import random
from collections import Counter

import pytest
import torch

from neuromath.api import load
from neuromath.cli import main
from neuromath.config import load_config, save_config
from neuromath.expr.equation_tree import PI, apply, height, number, size, symbol
from neuromath.expr.tree import preorder
from neuromath.models.classifiers import build_classifier
from neuromath.tasks.identities import EquationExample, read_equations
from neuromath.tasks.identities.audit import (
    accuracy_by_edit_level,
    audit_report,
    bag,
    depth_only,
    edit_levels,
    one_edit_share,
)
from neuromath.tasks.identities.dataset import generate_identity_files
from neuromath.tasks.identities.equations import write_equations
from neuromath.tasks.identities.identity_generator import generate_with_counts
from neuromath.tasks.identities.identity_labels import numeric_label
from neuromath.tasks.identities.mutations import PAPER_EDITS, SMALL_SUBTREE_NODES, SUBSTITUTE, paper_edit
from neuromath.tasks.identities.rewrites import GeneratorSettings, layout
from neuromath.text import Vocabulary

X, Y = symbol("var_0"), symbol("var_1")


def eq(left, right):
    return apply("Equality", left, right)


def example(tree, label, **extra):
    return EquationExample(tree, label, extra=extra)


@pytest.fixture(scope="module")
def paper_set():
    return generate_with_counts(104, random.Random(7), max_depth=13, settings=GeneratorSettings(style="paper"))


def test_paper_style_pairs_every_false_equation_with_a_true_one_a_single_edit_away(paper_set):
    examples, counts = paper_set
    assert len(examples) == 104 and counts.kept == 104
    by_depth = Counter((e.depth, e.label) for e in examples)
    assert all(by_depth[(depth, True)] == by_depth[(depth, False)] for depth in range(1, 14))
    assert {depth for depth, _ in by_depth} == set(range(1, 14))
    # written in pairs: each false equation follows its true twin, of the same depth
    for true_one, false_one in zip(examples[::2], examples[1::2]):
        assert true_one.label is True and false_one.label is False and true_one.depth == false_one.depth
        assert false_one.extra["edit"] in {*PAPER_EDITS, *(f"{k}+both sides" for k in PAPER_EDITS)}
        assert one_edit_share([false_one], [true_one]) == 1.0, (str(true_one.tree), str(false_one.tree))
    rng = random.Random(3)
    for e in examples:  # every label holds when checked again at other points
        assert numeric_label(e.tree, rng) in (e.label, None), str(e.tree)


def test_chain_style_records_its_mutation_kinds_and_keeps_true_equations_unmarked():
    examples, _ = generate_with_counts(60, random.Random(2), max_depth=8)
    kinds = Counter(e.extra.get("edit") for e in examples if e.label is False)
    assert set(kinds) <= {"grow", "shrink", "replace"} and sum(kinds.values()) == 30
    assert all("edit" not in e.extra for e in examples if e.label is True)


def test_generator_style_is_checked():
    with pytest.raises(ValueError, match="unknown generator style 'papers'"):
        GeneratorSettings(style="papers")


def test_paper_edit_changes_one_subtree_of_the_kind_it_names():
    tree = eq(apply("sin", apply("Add", X, Y)), apply("Mul", number(2), X))
    rng = random.Random(0)
    seen = set()
    for _ in range(60):
        edited, kind = paper_edit(tree, rng, layout(tree))
        seen.add(kind)
        assert edited != tree and one_edit_share([example(edited, False)], [example(tree, True)]) == 1.0
        if kind == "wrap":
            assert layout(edited).node_count == layout(tree).node_count + 1
        if kind == "shrink":
            assert layout(edited).node_count < layout(tree).node_count
        if kind == "swap":
            assert layout(edited).node_count == layout(tree).node_count
    assert seen == set(PAPER_EDITS)


def replaced_subtree(before, after):
    """The smallest subtree (before, after) outside which two trees are equal, found by walking both from the
    root down while a single child differs."""
    while True:
        if before.func != after.func or before.value != after.value or len(before.children) != len(after.children):
            return before, after
        differing = [(b, a) for b, a in zip(before.children, after.children) if b != a]
        if len(differing) != 1:
            return before, after
        before, after = differing[0]


def test_substitute_edit_puts_a_small_term_where_a_small_subtree_was():
    tree = eq(apply("sin", apply("Add", X, Y)), apply("Mul", apply("Pow", X, number(2)), apply("cos", Y)))
    rng = random.Random(1)
    replaced_sizes = Counter()
    for _ in range(200):
        edited, kind = paper_edit(tree, rng, layout(tree), substitute_share=1.0)
        assert kind == SUBSTITUTE and edited != tree
        old, new = replaced_subtree(tree, edited)
        assert size(old) <= SMALL_SUBTREE_NODES and height(new) <= 1 and old != new
        replaced_sizes[size(old)] += 1
    assert set(replaced_sizes) == {1, 2, 3}  # leaves, f(leaf) and op(leaf, leaf) are all replaced


def test_substitute_fillers_come_from_the_pool_when_one_is_given():
    tree = eq(apply("sin", apply("Add", X, Y)), apply("Mul", apply("Pow", X, number(2)), apply("cos", Y)))
    pool = (apply("tan", number(3)), apply("Add", PI, number(2)), X)
    rng, fillers = random.Random(2), Counter()
    for _ in range(300):
        edited, kind = paper_edit(tree, rng, layout(tree), substitute_share=1.0, substitute_pool=pool)
        old, new = replaced_subtree(tree, edited)
        assert kind == SUBSTITUTE and new in pool and new != old and size(old) <= SMALL_SUBTREE_NODES
        fillers[new] += 1
    assert set(fillers) == set(pool)  # every term is drawn (X too, where it does not stand already)
    # through the generator: every substitute twin holds one more pool term than its true twin
    pool = pool[:2]
    settings = GeneratorSettings(style="paper", substitute_share=1.0, substitute_pool=pool, substitute_source="p.json")
    assert settings.description == "paper, substitute share 1, fillers from p.json (2)"
    examples, _ = generate_with_counts(40, random.Random(5), max_depth=6, settings=settings)
    pairs = [(t, f) for t, f in zip(examples[::2], examples[1::2]) if f.extra["edit"] == SUBSTITUTE]
    assert len(pairs) >= 10

    def pool_terms(tree):
        return sum(node in pool for node in preorder(tree))

    for true_one, false_one in pairs:
        assert pool_terms(false_one.tree) == pool_terms(true_one.tree) + 1, (str(true_one.tree), str(false_one.tree))
    with pytest.raises(ValueError, match="set substitute_share above 0"):
        GeneratorSettings(style="paper", substitute_pool=pool)


def test_a_zero_substitute_share_draws_the_paper_edits_as_before():
    tree = eq(apply("sin", apply("Add", X, Y)), apply("Mul", number(2), X))
    for seed in range(40):
        assert paper_edit(tree, random.Random(seed), substitute_share=0.0) == paper_edit(tree, random.Random(seed))
    shared = [paper_edit(tree, random.Random(seed), substitute_share=0.5)[1] for seed in range(400)]
    assert 0.4 < shared.count(SUBSTITUTE) / 400 < 0.6 and set(shared) == {SUBSTITUTE, *PAPER_EDITS}


def test_paper_style_with_substitutions_keeps_one_checked_edit_per_pair():
    examples, _ = generate_with_counts(
        104, random.Random(7), max_depth=13, settings=GeneratorSettings(style="paper", substitute_share=0.5)
    )
    kinds = Counter(e.extra["edit"].split("+")[0] for e in examples if e.label is False)
    assert kinds[SUBSTITUTE] >= 15 and set(kinds) <= {SUBSTITUTE, *PAPER_EDITS}
    rng = random.Random(3)
    for true_one, false_one in zip(examples[::2], examples[1::2]):
        assert true_one.label is True and false_one.label is False and true_one.depth == false_one.depth
        assert one_edit_share([false_one], [true_one]) == 1.0, (str(true_one.tree), str(false_one.tree))
        assert numeric_label(false_one.tree, rng) in (False, None), str(false_one.tree)


def test_the_substitute_share_is_checked():
    with pytest.raises(ValueError, match=r"substitute_share must be in \[0, 1\], not 1.5"):
        GeneratorSettings(style="paper", substitute_share=1.5)
    with pytest.raises(ValueError, match="an edit of the paper style"):
        GeneratorSettings(substitute_share=0.5)
    assert GeneratorSettings(style="paper", substitute_share=0.25).description == "paper, substitute share 0.25"


def test_one_edit_share_tells_one_edit_from_two():
    true = example(eq(apply("Add", X, Y), apply("Add", Y, X)), True)
    one = example(eq(apply("Add", X, X), apply("Add", Y, X)), False)  # y -> x on the left
    wrapped = example(eq(apply("Add", X, Y), apply("sin", apply("Add", Y, X))), False)  # the right side wrapped
    two = example(eq(apply("Add", X, X), apply("Add", Y, Y)), False)  # one change on each side
    assert one_edit_share([one], [true]) == 1.0
    assert one_edit_share([wrapped], [true]) == 1.0
    assert one_edit_share([two], [true]) == 0.0
    assert one_edit_share([one, two], [true]) == 0.5


def test_bag_counts_tokens_and_side_differences():
    tree = example(eq(apply("Add", X, X), apply("Mul", X, number(2))), True)
    assert bag(tree, "bag") == Counter({"Add": 1, "Mul": 1, "var_0": 3, "2": 1})
    assert bag(tree, "difference") == Counter({"Add": 1, "Mul": 1, "var_0": 1, "2": 1})


def test_depth_only_predicts_each_depths_training_majority():
    train = [example(eq(X, X), True), example(eq(X, X), True), example(eq(X, Y), False),
             example(eq(apply("sin", X), Y), False)]
    test = [example(eq(Y, Y), True), example(eq(apply("cos", X), X), True)]
    score = depth_only(train, train, test)
    assert score.test == 0.5 and score.test_by_depth == {1: 1.0, 2: 0.0}


def test_the_audit_finds_a_symbol_cue_that_a_structure_blind_baseline_exploits():
    rng = random.Random(0)
    leaves = [X, Y, number(2), number(3)]

    def side():
        return apply(rng.choice(["Add", "Mul"]), rng.choice(leaves), rng.choice(leaves))

    def make(n, depth_extra=0):
        out = []
        for i in range(n):
            left, right = side(), side()
            for _ in range(depth_extra):
                left = apply("exp", left)
            if i % 2:  # the cue: every false equation has a tan on the right
                out.append(example(eq(left, apply("tan", right)), False, edit="wrap"))
            else:
                out.append(example(eq(left, right), True))
        return out

    train, valid, test = make(200), make(60), make(60, depth_extra=2)
    report = audit_report(train, valid, test)
    assert "| wrap | 160 | 100.0 |" in report
    rows = {line.split("|")[1].strip(): line for line in report.splitlines() if line.startswith("| bag of symbols")}
    linear_test = float(rows["bag of symbols, linear"].split("|")[3])
    assert linear_test > 95.0  # the tan gives the label away
    depth_row = next(line for line in report.splitlines() if line.startswith("| depth only"))
    assert float(depth_row.split("|")[3]) == 50.0


def test_generate_files_with_the_paper_style_write_the_audit(tmp_path):
    out = tmp_path / "paper.json"
    report = generate_identity_files(200, 9, seed=4, out_path=out, progress=False,
                                     settings=GeneratorSettings(style="paper"))
    stats = (tmp_path / "paper.stats.md").read_text()
    assert "style paper" in stats and "## Audit" in stats and "| side difference, network |" in stats
    assert "one local edit away (equal but for the subtree at one position): 100.0% of 100" in stats
    written = read_equations(out)
    assert report.written == len(written) == 200
    assert all(e.extra["edit"].split("+")[0] in PAPER_EDITS for e in written if e.label is False)


def test_classifier_dropout_acts_in_training_only():
    from neuromath.config import ModelConfig
    from neuromath.models.classifiers import EncodedEquations, build_classifier, make_collate, node_vocabulary

    examples = [example(eq(apply("sin", apply("Add", X, Y)), apply("Mul", number(2), X)), True),
                example(eq(apply("cos", X), Y), False)]
    vocab = node_vocabulary(examples)
    batch = make_collate("trees")([EncodedEquations(examples, vocab, "trees")[i] for i in range(2)])
    for name in ("tree_lstm", "lstm"):
        torch.manual_seed(0)
        dropped = build_classifier(ModelConfig(name=name, d_model=16, dropout=0.5), vocab)
        torch.manual_seed(0)
        plain = build_classifier(ModelConfig(name=name, d_model=16, dropout=0.0), vocab)
        if name == "lstm":
            batch = make_collate("tokens")([EncodedEquations(examples, vocab, "tokens")[i] for i in range(2)])
        dropped.train()
        assert not torch.equal(dropped(batch), dropped(batch))  # a fresh mask each call
        dropped.eval(), plain.eval()
        assert torch.equal(dropped(batch), plain(batch))  # the same weights, no dropout at evaluation


def test_edit_levels_find_the_deepest_position_a_true_equation_differs_at():
    true = eq(apply("Add", apply("sin", X), number("2")), Y)  # Equality 0; Add 1; sin 2; x 3; 2 at 2; y at 1
    other_true = eq(apply("cos", X), X)
    examples = [
        example(true, True),
        example(eq(apply("Add", apply("sin", Y), number("2")), Y), False),  # x -> y under sin: level 3
        example(eq(apply("Add", apply("sin", X), number("3")), Y), False),  # 2 -> 3: level 2
        example(eq(apply("cos", X), Y), False),  # the whole left side of `true` (and the right of other_true): 1
        example(eq(number("5"), number("3")), False),  # one edit from no true equation
        example(other_true, True),
        example(eq(apply("cos", apply("sin", X)), X), False),  # x -> sin(x) in other_true: level 2
        example(eq(X, Y), None),
    ]
    assert edit_levels(examples) == [None, 3, 2, 1, None, None, 2, None]


def test_accuracy_by_edit_level_counts_false_equations_called_false_per_level_beside_the_true_ones():
    examples = [example(eq(X, X), True), example(eq(X, Y), True)] + [example(eq(X, Y), False)] * 5
    levels = [None, None, 1, 1, 3, 7, None]
    said = [True, False, False, True, False, True, True]  # true: 1 of 2; level 1: 1 of 2; 3: 1 of 1; 6+: 0 of 1
    result = accuracy_by_edit_level(examples, levels, said)
    assert result == {"true": (1, 2), "false": {"1": (1, 2), "3": (1, 1), "6+": (0, 1)}, "false_without_edit": 1}
    with pytest.raises(ValueError, match="7 examples, 6 levels"):
        accuracy_by_edit_level(examples, levels[:-1], said)


def test_analyze_edits_scores_each_run_on_the_files_false_equations_by_edit_level(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    config = load_config(None, ["data.task=identities", "model.name=tree_rnn", "model.d_model=8"])
    save_config(config, run / "config.yaml")
    vocab = Vocabulary(["Add", "sin", "cos", "var_0", "var_1", "2", "3"])
    vocab.save(run / "node_vocab.json")
    torch.manual_seed(3)
    torch.save(build_classifier(config.model, vocab).state_dict(), run / "model.pt")
    true = eq(apply("Add", apply("sin", X), number("2")), Y)
    examples = [example(true, True), example(eq(apply("Add", apply("sin", Y), number("2")), Y), False),
                example(eq(apply("Add", apply("sin", X), number("3")), Y), False),
                example(eq(apply("cos", X), Y), False), example(eq(apply("cos", Y), Y), True)]
    data = tmp_path / "eqs.json"
    write_equations(examples, data)

    assert main(["analyze", "edits", str(run), "--data", str(data), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)["runs"][str(run)]
    said = (load(run).logits(read_equations(data)) > 0).tolist()
    expected = accuracy_by_edit_level(read_equations(data), edit_levels(read_equations(data)), said)
    assert printed == json.loads(json.dumps(expected))
    # cos(x) = y is one edit from both true equations: at level 1 of the first, at level 2 (x -> y) of cos(y) = y
    assert {level: n for level, (_, n) in printed["false"].items()} == {"2": 2, "3": 1} and printed["true"][1] == 2

    assert main(["analyze", "edits", str(run), "--data", str(data)]) == 0
    table = capsys.readouterr().out
    assert "| level 3 (n=1) |" in table and table.count(f"| {run} |") == 1

    write_equations([example(true, True)], data)
    assert main(["analyze", "edits", str(run), "--data", str(data)]) == 1
    assert "no false equations" in capsys.readouterr().err
