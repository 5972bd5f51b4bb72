"""Run folders as training leaves them, written by hand for the run-folder tests (tests/test_run_folder_errors.py,
tests/test_run_folder_tamper.py), and the one error line a command prints."""

import torch

from neuromath.config import load_config, save_config
from neuromath.models import build_task_model
from neuromath.models.classifiers import build_classifier
from neuromath.tasks import get_task
from neuromath.text import Vocabulary

JERRY = "Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?"
TINY = ["model.d_model=16", "model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1", "model.n_decoder_layers=1"]


def write_sequence_run(run_dir, source_words=("had", "pens", "took", ".")):
    """A word-problem run folder as training leaves it (config, vocabularies, weights), without training."""
    run_dir.mkdir(parents=True)
    config = load_config(None, ["data.task=word_problems", *TINY])
    source = Vocabulary(["n0", "n1", *source_words])
    target = Vocabulary(["+", "-", "*", "/", "n0", "n1"])
    save_config(config, run_dir / "config.yaml")
    source.save(run_dir / "source_vocab.json")
    target.save(run_dir / "target_vocab.json")
    model = build_task_model(config.model, get_task("word_problems"), source, target)
    torch.save(model.state_dict(), run_dir / "model.pt")
    return run_dir


def write_classifier_run(run_dir, d_model=8):
    run_dir.mkdir(parents=True)
    config = load_config(None, ["data.task=identities", "model.name=tree_lstm", f"model.d_model={d_model}"])
    vocab = Vocabulary(["Equality", "Add", "var_0", "var_1"])
    save_config(config, run_dir / "config.yaml")
    vocab.save(run_dir / "node_vocab.json")
    torch.save(build_classifier(config.model, vocab).state_dict(), run_dir / "model.pt")
    return run_dir


def error_line(capsys) -> str:
    """What the command printed on stderr: exactly one line, the error."""
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]
