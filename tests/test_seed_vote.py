"""A folder of ``train --seeds N`` is one voting model (neuromath/api/voting.py) for load, solve, evaluate and
serve: each problem's answer is the majority vote of the seeds' answers."""

import json
import random
import subprocess
import sys

import pytest

import neuromath
from neuromath.api import Solver, VotingSolver
from neuromath.errors import NeuromathError
from neuromath.evaluation.scoring import evaluate_examples
from neuromath.evaluation.vote import vote_runs
from neuromath.tasks.word_problems import write_jsonl
from neuromath.tasks.word_problems.templates import generate

TINY = ["data.generate_train=300", "data.generate_valid=30", "data.generate_test=40", "model.d_model=16",
        "model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1", "model.n_decoder_layers=1",
        "train.max_epochs=3", "train.progress=false", "train.num_threads=1", "optim.schedule=constant",
        "optim.lr=0.003"]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    out = tmp_path_factory.mktemp("vote") / "three"
    done = subprocess.run([sys.executable, "-m", "neuromath", "train", "--config", "word_problems/transformer",
                           "--seeds", "3", "--out", str(out), *(f"--set={item}" for item in TINY)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_vote_is_the_majority_of_the_seeds_answers(seeds):
    voting = neuromath.load(seeds)
    assert isinstance(voting, VotingSolver) and len(voting.members) == 3
    examples = voting.task.generate(40, random.Random(5))
    members = [Solver(seeds / f"seed{seed}") for seed in range(3)]
    member_records = [evaluate_examples(member, examples)[1] for member in members]
    expected = vote_runs(member_records, ["seed0", "seed1", "seed2"])
    _, records = evaluate_examples(voting, examples)
    assert [record["predicted_value"] for record in records] == [record["predicted_value"] for record in expected]
    assert [record["correct"] for record in records] == [record["correct"] for record in expected]
    assert voting.with_decode(beam=3).members[1].decode.beam == 3  # serve's decoding variants reach every seed
    seconds = [json.loads((seeds / f"seed{seed}" / "summary.json").read_text())["wall_seconds"] for seed in range(3)]
    assert all(0 < second < 600 for second in seconds)  # each seed's summary says what it cost


def test_solve_and_evaluate_take_the_folder(seeds, tmp_path):
    data = tmp_path / "test.jsonl"
    write_jsonl(generate(20, random.Random(9)), data)
    done = subprocess.run([sys.executable, "-m", "neuromath", "evaluate", str(seeds), "--data", str(data), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["n"] == 20
    solved = subprocess.run([sys.executable, "-m", "neuromath", "solve", str(seeds),
                             "Ann has 7 pens and gives away 2. How many pens does she have?", "--json"],
                            capture_output=True, text=True, timeout=300)
    assert solved.returncode == 0, solved.stderr[-2000:]
    assert "equation" in json.loads(solved.stdout)


def test_a_folder_with_one_seed_or_attention_asked_of_a_vote_is_refused(seeds, tmp_path):
    voting = neuromath.load(seeds)
    with pytest.raises(NeuromathError, match="no one attention map"):
        voting.solve("Ann has 7 pens and gives away 2. How many pens does she have?", attention=True)
    lone = tmp_path / "lone"
    lone.mkdir()
    (seeds / "seed0").rename(lone / "seed0")
    try:
        with pytest.raises(NeuromathError, match="not a run directory"):
            neuromath.load(lone)
    finally:
        (lone / "seed0").rename(seeds / "seed0")


def test_serve_answers_with_the_vote_and_counts_every_seeds_parameters(seeds):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from neuromath.serve.app import create_app

    text = "Ann has 7 pens and gives away 2. How many pens does she have?"
    one_seed = sum(p.numel() for p in Solver(seeds / "seed0").model.parameters())
    with TestClient(create_app([seeds], max_batch=4, max_wait_ms=1)) as client:
        info = client.get("/api/runs").json()[0]
        answer = client.post("/api/solve", json={"run": seeds.name, "text": text}).json()
    assert info["parameters"] == 3 * one_seed
    assert answer["equation"] == neuromath.load(seeds).solve(text).equation
