"""The benchmarks that compare with the code of an earlier commit (decoding.py, training_step.py) still run it: the
baseline's worker imports today's benchmark helpers over the baseline's package, and both build the same weights."""

import json
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
