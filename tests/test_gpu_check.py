"""benchmarks/gpu_check.py, the script run whenever a GPU is lent, works before one is: a smoke run on the CPU
writes its one JSON with a number for each preset and precision (the numbers themselves come from a lent GPU)."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check.py"


def test_the_gpu_check_runs_on_the_cpu_and_writes_its_json(tmp_path):
    out = tmp_path / "check.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--quick", "--skip", "ddp", "serve",
                           "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["environment"]["device"] == "cpu" and "ddp" not in report
    for preset in ("word_problems/transformer", "identities/tree_lstm"):
        for precision in ("32-true", "bf16-mixed"):
            assert report["steps"][preset][precision]["per_second"] > 0, (preset, precision)
        assert report["agreement"][preset]["max_abs_difference"] == 0.0  # the CPU against itself
