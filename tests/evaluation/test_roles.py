"""Role analysis: purity and token classes against hand-computed cases; clusters that follow the classes are told
apart from chance by the shuffled baseline, and random roles are not; ``neuromath analyze roles`` collects one vector
per token occurrence of every TP-Attention head and writes its report."""

import json
import random

import numpy as np
import pytest
import torch

from neuromath.cli import main
from neuromath.config import load_config, save_config
from neuromath.evaluation.roles import RoleSample, analyse_head, purity, token_class
from neuromath.models import build_task_model
from neuromath.tasks import get_task
from neuromath.text import Vocabulary


def test_purity_by_hand():
    # cluster 0 holds classes [0, 1] (majority 1 of 2), cluster 1 holds [1, 1, 0] (majority 2 of 3): 3 of 5
    assert purity(np.array([0, 0, 1, 1, 1]), np.array([0, 1, 1, 1, 0])) == pytest.approx(3 / 5)
    assert purity(np.array([0, 1, 2]), np.array([2, 0, 1])) == 1.0


@pytest.mark.parametrize("token,expected", [
    ("7", "digit"), ("x", "letter"), ("apples", "letter"), ("+", "operator"), ("(", "bracket"), (" ", "space"),
    ("?", "punctuation"), (",", "punctuation"), ("n3", "number"), ("<bos>", "special"), ("<eos>", "special"),
    ("<", "operator"), ("2.5", "digit"),
])
def test_token_classes(token, expected):
    assert token_class(token) == expected


def sample(structured: bool, n: int = 600, seed: int = 0) -> RoleSample:
    """Digits, letters and spaces; with ``structured`` their roles lie around one centre per class."""
    rng = np.random.default_rng(seed)
    tokens = list(rng.choice(["1", "2", "a", "b", " "], size=n))
    centres = {"digit": (4.0, 0.0, 0.0), "letter": (0.0, 4.0, 0.0), "space": (0.0, 0.0, 4.0)}
    vectors = rng.normal(size=(n, 3))
    if structured:
        vectors += np.array([centres[token_class(t)] for t in tokens])
    return RoleSample("encoder self-attention, layer 1", 0, vectors, tokens)


def test_roles_that_follow_the_classes_stand_far_above_the_shuffled_baseline():
    analysis = analyse_head(sample(structured=True), k=3)
    assert analysis.purity > 0.95 and analysis.nmi > 0.8
    assert analysis.shuffled_purity[0] < 0.5 and analysis.shuffled_nmi[0] < 0.05
    assert {c["majority_class"] for c in analysis.clusters} == {"digit", "letter", "space"}
    assert sum(c["size"] for c in analysis.clusters) == 600


def test_random_roles_are_no_purer_than_shuffled_classes():
    analysis = analyse_head(sample(structured=False), k=3)
    mean, std = analysis.shuffled_purity
    assert abs(analysis.purity - mean) < 4 * std + 0.02 and analysis.nmi < 0.05


def test_k_is_capped_by_the_distinct_vectors_and_a_lone_vector_is_refused():
    few = RoleSample("l", 0, np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]]), ["a", "a", "1"])
    assert analyse_head(few, k=20).k == 2
    with pytest.raises(ValueError, match="need at least 2"):
        analyse_head(RoleSample("l", 0, np.zeros((1, 2)), ["a"]), k=2)


def tp_run(run_dir, attention="tp"):
    """A word-problem TP-Transformer run with untrained, seeded weights, and a data file of generated problems."""
    task = get_task("word_problems")
    examples = task.generate(12, random.Random(0))
    config = load_config(None, ["data.task=word_problems", "model.d_model=16", "model.n_heads=2", "model.d_ff=32",
                                "model.n_encoder_layers=1", "model.n_decoder_layers=2",
                                f"model.attention={attention}"])
    source = Vocabulary.build([task.source_tokens(e) for e in examples])
    target = Vocabulary.build([task.target_tokens(e) for e in examples])
    run_dir.mkdir(parents=True)
    save_config(config, run_dir / "config.yaml")
    source.save(run_dir / "source_vocab.json")
    target.save(run_dir / "target_vocab.json")
    torch.manual_seed(0)
    torch.save(build_task_model(config.model, task, source, target).state_dict(), run_dir / "model.pt")
    data = run_dir.parent / "problems.jsonl"
    task.write(examples, data)
    return run_dir, data, examples, task


def test_analyze_roles_collects_every_head_of_every_layer_over_every_token(tmp_path, capsys):
    run, data, examples, task = tp_run(tmp_path / "run")
    out = tmp_path / "roles"
    assert main(["analyze", "roles", str(run), "--data", str(data), "--out", str(out), "--k", "4",
                 "--shuffles", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads((out / "report.json").read_text())
    heads = report["heads"]
    # 1 encoder layer, 2 decoder layers with self- and cross-attention: 5 layers of 2 heads
    assert len(heads) == 10
    assert [h["layer"] for h in heads[::2]] == [
        "encoder self-attention, layer 1", "decoder self-attention, layer 1", "cross-attention, layer 1",
        "decoder self-attention, layer 2", "cross-attention, layer 2"]
    source_tokens = sum(len(task.source_tokens(e)) + 1 for e in examples)  # + eos
    target_tokens = sum(len(task.target_tokens(e)) + 1 for e in examples)  # + bos
    assert heads[0]["vectors"] == source_tokens
    assert {h["vectors"] for h in heads[2:]} == {target_tokens}
    assert all(0.0 <= h["purity"] <= 1.0 for h in heads)
    assert (out / "roles_pca.png").read_bytes()[:4] == b"\x89PNG"
    markdown = (out / "report.md").read_text()
    assert "| cluster | size |" in markdown and "shuffled" in markdown


def test_analyze_roles_of_a_run_without_roles_says_so(tmp_path, capsys):
    run, data, _, _ = tp_run(tmp_path / "run", attention="standard")
    assert main(["analyze", "roles", str(run), "--data", str(data), "--out", str(tmp_path / "roles")]) == 1
    assert "binds no role vectors" in capsys.readouterr().err


def test_the_detailed_head_is_the_chosen_row_and_a_row_out_of_range_is_refused(tmp_path, capsys):
    run, data, _, _ = tp_run(tmp_path / "run")
    out = tmp_path / "roles"
    common = ["analyze", "roles", str(run), "--data", str(data), "--out", str(out), "--k", "3", "--shuffles", "2"]
    assert main([*common, "--head", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["detailed"]["row"] == 4 and report["detailed"]["layer"] == report["heads"][3]["layer"]
    assert report["detailed"]["head"] == report["heads"][3]["head"] == 2
    assert "(row 4)" in (out / "report.md").read_text()
    assert main([*common, "--head", "11"]) == 1
    assert "there are 10 heads (rows 1 to 10), not row 11" in capsys.readouterr().err
