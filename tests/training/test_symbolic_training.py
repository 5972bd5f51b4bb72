"""A tiny Transformer learns a tiny backward-integration set through the whole pipeline: files in Lample & Charton's
format, training with validation by the verifier, and `evaluate` at beam 1 and 4 on held-out integrands.

The set: F = g(k·x) for g in sin, cos, exp, sinh, cosh and k in 2..40, integrand f = F' as SymPy writes it (for
example ``mul INT- 7 sin mul INT+ 7 x`` -> ``cos mul INT+ 7 x``). Held-out pairs combine a function and a k never seen
together, so the model must map the derivative's shape to the antiderivative's and copy k; the untrained model
solves none.
"""

import json

import pytest
import sympy

from neuromath.cli import main
from neuromath.config import load_config
from neuromath.experiments.fit_then_test import train
from neuromath.expr.sympy_bridge import symbol, sympy_to_prefix
from neuromath.tasks.symbolic import SymbolicExample, write_pairs

FUNCTIONS = (sympy.sin, sympy.cos, sympy.exp, sympy.sinh, sympy.cosh)


def family() -> list[SymbolicExample]:
    x = symbol("x")
    pairs = []
    for k in range(2, 41):
        for g in FUNCTIONS:
            antiderivative = g(k * x)
            pairs.append(SymbolicExample(tuple(sympy_to_prefix(sympy.diff(antiderivative, x))),
                                         tuple(sympy_to_prefix(antiderivative)), 1, "backward"))
    return pairs


@pytest.mark.slow
def test_a_tiny_model_learns_a_tiny_backward_integration_set(tmp_path, capsys):
    pairs = family()
    test = [p for i, p in enumerate(pairs) if i % 5 == (i // 5) % 5]  # one function per k, a different one each time
    train_pairs = [p for p in pairs if p not in test]
    write_pairs(train_pairs, tmp_path / "train.txt")
    write_pairs(test, tmp_path / "test.txt")
    config = load_config(None, [
        "data.task=symbolic", f"data.train={tmp_path / 'train.txt'}", "data.valid_fraction=0.1",
        "model.d_model=64", "model.n_heads=4", "model.d_ff=128", "model.n_encoder_layers=2", "model.n_decoder_layers=2",
        "model.dropout=0.0", "optim.schedule=constant", "optim.lr=0.003", "train.batch_size=32", "train.max_epochs=60",
        "train.patience=0", "train.num_threads=1", "train.progress=false", "decode.max_len=16",
    ])
    result = train(config, tmp_path / "run")
    losses = [float(row["train_loss_epoch"]) for row in
              __import__("csv").DictReader(open(tmp_path / "run" / "metrics.csv")) if row.get("train_loss_epoch")]
    assert losses[-1] < 0.1 * losses[0]
    assert result.summary["best_val_value_accuracy"] >= 0.8  # validation is scored by the verifier
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "run"), "--data", str(tmp_path / "test.txt"),
                 "--beams", "1,4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    full = report["subsets"]["full"]["overall"]
    assert full["n"] == len(test) == 39
    assert full["1"]["verified"] >= 0.7 and full["4"]["verified"] >= 0.9  # measured: 84.6% and 97.4%
    assert full["1"]["exact"] <= full["1"]["verified"]
    # the held-out inputs are not in the training file: the deduplicated set is the whole test set
    assert report["subsets"]["dedup"]["overall"]["n"] == 39
