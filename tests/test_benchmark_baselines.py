"""The benchmarks that compare with the code of an earlier commit (decoding.py, training_step.py,
tree_decoder_training.py) still run it: the baseline's worker imports today's benchmark helpers over the baseline's
package, and both build the same weights."""

import csv
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
BASELINE = "6486a0a"


def has_baseline() -> bool:
    done = subprocess.run(["git", "-C", str(BENCHMARKS), "cat-file", "-e", f"{BASELINE}^{{commit}}"],
                          capture_output=True)
    return done.returncode == 0


pytestmark = pytest.mark.skipif(not has_baseline(), reason=f"the history lacks {BASELINE} (a shallow clone)")


def test_the_training_step_benchmark_runs_the_baseline_on_the_same_weights(tmp_path):
    out = tmp_path / "step.json"
    done = subprocess.run([sys.executable, str(BENCHMARKS / "training_step.py"), "--quick", "--attention", "tp",
                           "--threads", "1", "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    losses = json.loads(out.read_text())["tp"]["first_step_loss"]
    assert losses["today 32-true True"] == pytest.approx(losses["baseline 32-true False"], abs=1e-5)
    assert losses["today bf16-mixed True"] == pytest.approx(losses["baseline 32-true False"], abs=2e-2)


def test_the_decoding_benchmark_finds_the_baselines_best_hypotheses(tmp_path):
    out = tmp_path / "decoding.json"
    done = subprocess.run([sys.executable, str(BENCHMARKS / "decoding.py"), "--quick", "--attention", "tp",
                           "--threads", "1", "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(out.read_text())["tp"]
    assert report["same_best_fp32_vs_baseline"] == 4
    # The floor's steps run the beams' rows (memory per source, first step copied) and must find greedy's tokens.
    assert report["steps_rows_equal_to_greedy_fp32"] == 4 * 10


TREE_BASELINE = "7c929cf"


def tiny_word_problems(path: Path, rows: int = 40) -> Path:
    """A SVAMP-style CSV of one- to three-operator problems, so the trees of a batch end at different nodes."""
    rng = random.Random(0)
    shapes = [("+ number0 number1", lambda a, b, c: a + b), ("- number0 number1", lambda a, b, c: a - b),
              ("* number0 + number1 number2", lambda a, b, c: a * (b + c)),
              ("- * number0 number1 + number2 1", lambda a, b, c: a * b - (c + 1))]
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["Question", "Numbers", "Equation", "Answer"])
        for _ in range(rows):
            equation, value = rng.choice(shapes)
            a, b, c = (float(rng.randint(2, 20)) for _ in range(3))
            question = f"Tom has number0 apples , number1 pears and number2 plums . How many {rng.choice('abc')} ?"
            writer.writerow([question, f"{a} {b} {c}", equation, value(a, b, c)])
    return path


@pytest.mark.skipif(subprocess.run(["git", "-C", str(BENCHMARKS), "cat-file", "-e", f"{TREE_BASELINE}^{{commit}}"],
                                   capture_output=True).returncode != 0, reason=f"the history lacks {TREE_BASELINE}")
def test_the_tree_decoder_benchmark_computes_the_baselines_losses(tmp_path):
    out = tmp_path / "tree.json"
    train = tiny_word_problems(tmp_path / "train.csv")
    done = subprocess.run([sys.executable, str(BENCHMARKS / "tree_decoder_training.py"), "--quick", "--sizes",
                           "preset", "--train", str(train), "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert [row["model"] for row in rows] == ["gts", "graph2tree"]
    for row in rows:
        losses = row["first_step_loss_dropout0"]
        assert losses["today"] == pytest.approx(losses["baseline"], abs=1e-5)
        assert losses["today"] > 0 and all(value > 0 for value in row["seconds_per_step"].values())
