"""benchmarks/tree_step_ops.py: the ops of a training step, counted per phase, and a baseline's extra op found."""

import json
import subprocess
import sys
from pathlib import Path

import torch
from support.patched_package import patched_package

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "tree_step_ops.py"
sys.path.insert(0, str(SCRIPT.parent))
from tree_step_ops import count_ops  # noqa: E402


def test_count_ops_counts_each_phase_and_skips_views():
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    x = torch.randn(4, 3)

    def step():
        optimizer.zero_grad(set_to_none=True)
        out = layer(x).t().t()  # two views: not counted
        (out * out).sum().backward()
        optimizer.step()

    phases, names = count_ops(step, optimizer)
    # the forward, the loss and the gradient that starts the backward; no views, no profiler markers
    assert {name: count for name, count in names.items() if name.startswith("forward ")} == {
        "forward addmm": 1, "forward mul": 1, "forward sum": 1, "forward ones_like": 1}
    assert phases["forward"] == 4
    assert phases["backward"] > 0 and phases["optimizer"] > 0
    assert sum(phases.values()) == sum(names.values())


def test_one_extra_op_in_the_baseline_shows_as_one_op_per_step(tmp_path):
    """The baseline is today's package with one more op in the graph module's forward: each setting must count
    exactly one more forward op there, and one tree depth per step must take fewer ops than one node per step."""
    base = patched_package(tmp_path / "base", "nn/graph.py", "        graph = torch.cat(heads, dim=-1)  # (B, T, H)\n",
                           "        graph = graph * 1.0  # one op more\n")
    out = tmp_path / "ops.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--baseline", str(base), "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    for setting in ("graph2tree nodes", "graph2tree levels"):
        row = report["summary"][setting]
        assert row["phases"]["forward"]["baseline"] - row["phases"]["forward"]["today"] == 1, row
        assert report["baseline_counts"][setting]["ops"]["forward mul"] - \
            report["today_counts"][setting]["ops"]["forward mul"] == 1
        assert row["phases"]["optimizer"]["today"] > 0 and row["phases"]["backward"]["today"] > 0
    summary = report["summary"]
    assert summary["graph2tree levels"]["today"] < summary["graph2tree nodes"]["today"]
