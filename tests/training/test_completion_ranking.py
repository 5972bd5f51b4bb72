"""The completion ranking loss (neuromath/training/ranking.py, train.rank_weight) and fine-tuning from a trained run
(train.init_from): what a group holds, which fillers are hard, that a run trained with it learns to complete and is
selected on completion, and the errors for settings that cannot work."""

import csv
import random
from types import SimpleNamespace

import pytest
import torch
from test_identities_training import config_for, sameness_set

from neuromath.api import load_classifier
from neuromath.config import load_config
from neuromath.errors import ConfigError, NeuromathError
from neuromath.evaluation.verification import completion_metrics
from neuromath.experiments.fit_then_test import train_classifier
from neuromath.expr.equation_tree import path_to
from neuromath.expr.tree import preorder
from neuromath.models.classifiers import CompletionScorer, build_classifier, node_vocabulary
from neuromath.tasks import get_task
from neuromath.tasks.identities import (
    PI,
    Candidate,
    apply,
    number,
    symbol,
    write_candidates,
    write_equations,
)
from neuromath.tasks.identities.blanks import token_key
from neuromath.training.module import ClassifierModule
from neuromath.training.ranking import CompletionRanking
from neuromath.training.run_folder import epoch_curves

LEAVES = [symbol(f"var_{i}") for i in range(3)] + [number(2), number(3), number("1/2"), PI]
CANDIDATES = [Candidate(leaf, str(i)) for i, leaf in enumerate(LEAVES)] + [
    Candidate(number("4/2"), "3"),  # written otherwise than 2 but not the class of 2: a wrong filler for a 2 blank
    Candidate(apply("sin", LEAVES[0]), "7"),
]
COMPLETION = get_task("identities").completion


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ranking")
    write_equations(sameness_set(1500, 0, depths=(1, 2, 3, 4)), folder / "sameness.json")
    write_candidates(CANDIDATES, folder / "candidates.json")
    return folder


def ranking_for(examples, negatives=5, hard=2, groups=6, seed=0):
    config = load_config(None, ["data.task=identities", "model.name=tree_lstm", "model.d_model=16"])
    vocab = node_vocabulary(examples)
    model = build_classifier(config.model, vocab)
    return CompletionRanking(COMPLETION, examples, CANDIDATES, vocab, groups, negatives, hard, seed=seed), model


def test_a_group_is_the_true_equation_then_wrong_classes_with_the_hard_ones_first():
    examples = sameness_set(200, 1)
    ranking, model = ranking_for(examples)
    assert all(e.label is True for e, _ in ranking.eligible)  # false equations are never blanked
    drawn = ranking.draw(model)
    assert len(drawn) == 6
    scorer = CompletionScorer(model, ranking.vocab, [c.tree for c in CANDIDATES])
    for example, path, chosen in drawn:
        wanted = ranking.classes[token_key(at_path(example.tree, path))]
        assert len(chosen) == len(set(chosen)) == 5
        assert all(CANDIDATES[i].value_class != wanted for i in chosen)  # no right answer among the negatives
        scores = scorer(example.tree, path)
        wrong = [i for i, c in enumerate(CANDIDATES) if c.value_class != wanted]
        best_wrong = sorted(wrong, key=lambda i: -float(scores[i]))[:2]
        assert chosen[:2] == best_wrong  # the two hard fillers: what the model ranks highest among the wrong ones
        group = ranking.group(example, path, chosen)
        assert group[0] is example and [e.label for e in group[1:]] == [False] * 5
        for i, filled in zip(chosen, group[1:]):
            assert token_key(at_path(filled.tree, path)) == token_key(CANDIDATES[i].tree)


def at_path(tree, path):
    for index in path:
        tree = tree.children[index]
    return tree


def test_validation_ranks_blanks_as_the_completion_report_does():
    examples = sameness_set(300, 4)
    ranking, model = ranking_for(examples)
    ranking_with_valid = CompletionRanking(COMPLETION, examples, CANDIDATES, ranking.vocab, 4, 5, 2,
                                           valid=examples[:150])
    assert 20 < len(ranking_with_valid.valid_blanks) <= 75
    mine = ranking_with_valid.validate(model)
    report = completion_metrics(ranking_with_valid.valid_blanks, CANDIDATES,
                                CompletionScorer(model, ranking.vocab, [c.tree for c in CANDIDATES]))
    for key in ("n", "top1", "top5", "mrr"):
        assert mine[key] == pytest.approx(report[key]), key


def test_the_loss_falls_when_the_model_is_trained_on_it_alone():
    torch.manual_seed(0)
    ranking, model = ranking_for(sameness_set(400, 2), negatives=6, hard=3, groups=16)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(60):
        loss = ranking.loss(model, "cpu")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert sum(losses[:10]) / 10 > 1.5  # about log(7) = 1.95 untrained
    assert sum(losses[-10:]) / 10 < 0.5 * sum(losses[:10]) / 10, losses


def test_a_run_trained_to_complete_is_selected_on_completion(tmp_path, files):
    config = config_for(tmp_path, "tree_lstm", files / "sameness.json", **{
        "data.candidates": files / "candidates.json", "train.rank_weight": 1.0, "train.rank_negatives": 6,
        "train.rank_hard": 3, "train.max_epochs": 8})
    summary = train_classifier(config, tmp_path / "ranked")
    completion = summary["best_val_completion"]
    assert completion["n"] > 50 and completion["top1"] > 0.8, completion  # chance: about 1/8
    assert summary["best_val_accuracy"] > 0.8, summary  # verification is still learned
    with open(tmp_path / "ranked" / "metrics.csv", newline="") as stream:
        curves = epoch_curves(list(csv.DictReader(stream)))
    assert curves["rank_loss"][-1][1] < curves["rank_loss"][0][1]
    best = max(value for _, value in curves["val_completion_mrr"])
    assert best == pytest.approx(completion["mrr"])  # the chosen weights are the best epoch by completion
    # the loaded run completes held-out blanks as well
    run = load_classifier(tmp_path / "ranked")
    scorer = run.completion_scorer([c.tree for c in CANDIDATES])
    rng, right, tried = random.Random(3), 0, 0
    for example in sameness_set(300, 77, depths=(2, 3)):
        leaves = [n for n, node in enumerate(preorder(example.tree)) if n and node.is_leaf]
        if example.label and leaves:
            path = path_to(example.tree, rng.choice(leaves))
            hidden = token_key(at_path(example.tree, path))
            wanted = next(c.value_class for c in CANDIDATES if token_key(c.tree) == hidden)
            right += CANDIDATES[int(torch.argmax(scorer(example.tree, path)))].value_class == wanted
            tried += 1
    assert tried > 50 and right / tried > 0.7, (right, tried)


def test_fine_tuning_starts_from_the_trained_weights(tmp_path, files):
    base = config_for(tmp_path, "tree_lstm", files / "sameness.json", **{"train.max_epochs": 2})
    train_classifier(base, tmp_path / "base")
    frozen = config_for(tmp_path, "tree_lstm", files / "sameness.json", **{
        "train.max_epochs": 1, "train.init_from": tmp_path / "base", "optim.lr": 1e-12, "optim.weight_decay": 0})
    summary = train_classifier(frozen, tmp_path / "tuned")  # a rate too small to move: the start is what it keeps
    start, tuned = load_classifier(tmp_path / "base"), load_classifier(tmp_path / "tuned")
    assert (tmp_path / "tuned" / "node_vocab.json").read_text() == (tmp_path / "base" / "node_vocab.json").read_text()
    for key, value in start.model.state_dict().items():
        assert torch.allclose(value, tuned.model.state_dict()[key], atol=1e-6), key
    assert summary["best_val_accuracy"] > 0.75  # the start had learned; a fresh model would be near 0.5
    with pytest.raises(NeuromathError, match="not a trained identities run"):
        train_classifier(config_for(tmp_path, "tree_lstm", files / "sameness.json", **{
            "train.init_from": tmp_path / "nowhere"}), tmp_path / "orphan")


def test_a_resumed_ranked_run_draws_the_groups_an_uninterrupted_one_draws(tmp_path, files):
    """The checkpoint keeps the generator of the ranking groups (and dropout's): 1 epoch + --resume to 2 ends with
    the weights of 2 epochs straight. Before it was kept, the resumed epoch drew other groups."""
    def config(epochs):
        return config_for(tmp_path, "tree_lstm", files / "sameness.json", **{
            "data.candidates": files / "candidates.json", "train.rank_weight": 1.0, "train.rank_negatives": 4,
            "train.rank_hard": 2, "model.dropout": 0.2, "train.max_epochs": epochs})

    train_classifier(config(2), tmp_path / "straight")
    train_classifier(config(1), tmp_path / "resumed")
    train_classifier(config(2), tmp_path / "resumed", resume=True)
    straight = torch.load(tmp_path / "straight" / "checkpoints" / "last.ckpt", weights_only=True)
    resumed = torch.load(tmp_path / "resumed" / "checkpoints" / "last.ckpt", weights_only=True)
    assert straight["random_states"]["own"]["ranking"] == resumed["random_states"]["own"]["ranking"]
    for key, value in straight["state_dict"].items():
        assert torch.equal(value, resumed["state_dict"][key]), key


def test_each_process_of_a_multi_process_run_draws_its_own_groups():
    examples = sameness_set(200, 1)
    config = load_config(None, ["data.task=identities", "model.name=tree_lstm", "train.seed=5"])

    def draws(rank, world, step=0):
        ranking, model = ranking_for(examples, seed=5)
        module = ClassifierModule(config, model, ranking)
        module._trainer = SimpleNamespace(world_size=world, global_rank=rank, global_step=step)
        module.on_fit_start()
        position = {id(example): i for i, example in enumerate(examples)}
        return [(position[id(e)], path) for e, path, _ in ranking.draw(model)]

    assert draws(0, 1) == draws(0, 1, step=7)  # one process: the generator seeded by train.seed, untouched
    assert draws(0, 2) != draws(1, 2)  # two processes: each its own groups
    assert draws(1, 2) == draws(1, 2)  # by rank and step, reproducibly
    assert draws(1, 2, step=7) != draws(1, 2)


def test_settings_that_cannot_work_are_refused(tmp_path, files):
    with pytest.raises(ConfigError, match="rank_hard .* cannot exceed"):
        config_for(tmp_path, "tree_lstm", files / "sameness.json",
                   **{"train.rank_negatives": 3, "train.rank_hard": 4})
    with pytest.raises(ConfigError, match="train.rank_weight does not apply to the lstm model"):
        load_config(None, ["data.task=identities", "model.name=lstm", "train.rank_weight=1"], strict=True)
    with pytest.raises(ConfigError, match="data.candidates does not apply to the word_problems task"):
        load_config(None, ["data.task=word_problems", "model.name=transformer", "data.candidates=c.json"],
                    strict=True)
    with pytest.raises(ConfigError, match="needs data.candidates"):
        train_classifier(config_for(tmp_path, "tree_lstm", files / "sameness.json",
                                    **{"train.rank_weight": 1.0}), tmp_path / "nocand")
    nothing = tmp_path / "unrelated.json"
    write_candidates([Candidate(number(97), "0"), Candidate(number(98), "1")], nothing)
    with pytest.raises(ConfigError, match="no true training equation"):
        train_classifier(config_for(tmp_path, "tree_lstm", files / "sameness.json", **{
            "train.rank_weight": 1.0, "data.candidates": nothing}), tmp_path / "unrelated")
    one_class = tmp_path / "one_class.json"
    write_candidates([Candidate(LEAVES[0], "0"), Candidate(number(2), "0")], one_class)
    with pytest.raises(ConfigError, match="at least two value classes"):
        train_classifier(config_for(tmp_path, "tree_lstm", files / "sameness.json", **{
            "train.rank_weight": 1.0, "data.candidates": one_class}), tmp_path / "one_class")
