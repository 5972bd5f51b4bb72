"""Tiny run folders of three tasks (untrained, seeded weights, as training would leave them) for the service tests:
``wp`` (a word-problem Transformer), ``sym`` (a symbolic Transformer) and ``ids`` (an identities Tree-LSTM)."""

import pytest
import torch

from neuromath.config import load_config, save_config
from neuromath.models import build_task_model
from neuromath.models.classifiers import build_classifier
from neuromath.tasks import get_task
from neuromath.text import Vocabulary

TINY = ["model.d_model=16", "model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1", "model.n_decoder_layers=1",
        "decode.max_len=12"]
WORDS = ["tom", "has", "apples", ".", "he", "buys", "more", "how", "many", "does", "have", "?", "jerry", "had",
         "pens", "john", "took", "from", "him", "left", "gives", "away"]
EQUATION_TOKENS = ["+", "-", "*", "/", "n0", "n1", "n2", "1"]
SYMBOLIC_TOKENS = ["add", "mul", "sin", "cos", "exp", "x", "INT+", "INT-", *"0123456789"]
NODES = ["Add", "Mul", "Pow", "sin", "cos", "var_0", "1", "2", "-1"]


def sequence_run(run_dir, task: str, source: list[str], target: list[str], seed: int = 0):
    run_dir.mkdir(parents=True)
    config = load_config(None, [f"data.task={task}", *TINY])
    source_vocab, target_vocab = Vocabulary(source), Vocabulary(target)
    save_config(config, run_dir / "config.yaml")
    source_vocab.save(run_dir / "source_vocab.json")
    target_vocab.save(run_dir / "target_vocab.json")
    torch.manual_seed(seed)
    model = build_task_model(config.model, get_task(task), source_vocab, target_vocab)
    torch.save(model.state_dict(), run_dir / "model.pt")
    return run_dir


def identities_run(run_dir):
    run_dir.mkdir(parents=True)
    config = load_config(None, ["data.task=identities", "model.name=tree_lstm", "model.d_model=8"])
    vocab = Vocabulary(NODES)
    save_config(config, run_dir / "config.yaml")
    vocab.save(run_dir / "node_vocab.json")
    torch.manual_seed(0)
    torch.save(build_classifier(config.model, vocab).state_dict(), run_dir / "model.pt")
    return run_dir


@pytest.fixture(scope="session")
def serve_runs(tmp_path_factory):
    """{name: run folder} of the three tiny runs."""
    root = tmp_path_factory.mktemp("serve_runs")
    return {
        "wp": sequence_run(root / "wp", "word_problems", [*WORDS, "n0", "n1", "n2"], EQUATION_TOKENS),
        "sym": sequence_run(root / "sym", "symbolic", SYMBOLIC_TOKENS, SYMBOLIC_TOKENS),
        "ids": identities_run(root / "ids"),
    }


@pytest.fixture(scope="module")
def client(serve_runs):
    """A test client of the app over the three tiny runs (server errors come back as answers, as a client sees
    them)."""
    from fastapi.testclient import TestClient  # the serve extra: only the tests that ask for a client need it

    from neuromath.serve.app import create_app

    app = create_app(list(serve_runs.values()), max_batch=8, max_wait_ms=2)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client
