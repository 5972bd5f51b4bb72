"""benchmarks/gpu_check.py, the script run whenever a GPU is lent, works before one is: a smoke run on the CPU
writes its one JSON with a number for each preset and precision (the numbers themselves come from a lent GPU)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from neuromath.errors import NeuromathError
from neuromath.nn.compiling import has_cpu_compiler
from tools.results_pages.gpu_pages import render_decode_compile, render_gpu_check

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check.py"
AB_SCRIPT = SCRIPT.with_name("tree_step_ab.py")


def test_the_gpu_check_runs_on_the_cpu_and_writes_its_json(tmp_path):
    out = tmp_path / "check.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--quick", "--skip", "ddp", "serve",
                           "train_compiled", "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["environment"]["device"] == "cpu" and "ddp" not in report
    for preset in ("word_problems/transformer", "identities/tree_lstm"):
        for precision in ("32-true", "bf16-mixed"):
            assert report["steps"][preset][precision]["per_second"] > 0, (preset, precision)
        assert report["agreement"][preset]["max_abs_difference"] == 0.0  # the CPU against itself
    for preset in ("word_problems/graph2tree", "word_problems/gts"):  # the goal-tree step per teacher forcing
        forcing = report["tree_forcing"][preset]
        assert set(forcing) == {f"{f} {p}" for f in ("nodes", "levels") for p in ("32-true", "bf16-mixed")} | {
            "encoder only 32-true"}
        assert all(result["median_ms"] > 0 for result in forcing.values()), forcing
    mfu = report["mfu"]  # the paper-size TP-Transformer: batches double while they fit (quick: up to 8)
    assert mfu["preset"] == "mathematics_dataset/tp_transformer_paper" and mfu["parameters"] > 10_000_000
    assert [tried["batch"] for tried in mfu["tried"]] == [4, 8] and mfu["batch"] == 8
    assert mfu["flops_per_step"] > 6 * mfu["parameters"] * 8  # at least 6 FLOPs a parameter per problem
    assert mfu["mfu"] is None and mfu["peak_tflops"] is None  # no known peak for a CPU


def test_a_setting_past_the_time_budget_is_recorded_as_skipped_and_the_json_is_kept(tmp_path):
    out = tmp_path / "check.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--skip", "agreement", "ddp", "serve",
                           "train_compiled", "--presets", "identities/tree_lstm", "--steps", "2", "--batch", "4",
                           "--batches", "1", "--no-compile", "--budget", "0", "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    steps = report["steps"]["identities/tree_lstm"]
    assert steps == {precision: {"skipped": "past the time budget of 0.0 s"} for precision in ("32-true", "bf16-mixed")}
    assert report["mfu"] == {"skipped": "past the time budget of 0.0 s"}
    assert all(result == {"skipped": "past the time budget of 0.0 s"}
               for preset in report["tree_forcing"].values() for result in preset.values())


def test_the_page_of_a_gpu_check_computes_each_speed_up_within_its_run(tmp_path):
    report = {"environment": {"gpu": "Some GPU", "torch": "2.x", "cuda": "13", "python": "3.12"},
              "settings": {"steps": 20, "batch": 64}, "seconds": 12.0,
              "steps": {"a/model": {"32-true": {"median_ms": 30.0, "per_second": 100.0, "unit": "tokens"},
                                    "bf16-mixed": {"median_ms": 20.0, "per_second": 150.0, "unit": "tokens"},
                                    "32-true compiled": {"skipped": "past the time budget of 1 s"}},
                        "b/model": {"32-true": {"error": "MissingExtraError: no package"},
                                    "32-true compiled": {"skipped": "train.compile does not apply to this model"}}},
              "agreement": {"a/model": {"max_abs_difference": 2e-6, "max_abs_logit": 5.0}},
              "ddp": {"returncode": 0, "seconds": 9.5, "steps": 30},
              "tree_forcing": {"t/gts": {"nodes 32-true": {"median_ms": 80.0, "per_second": 10.0, "unit": "tokens"},
                                         "levels 32-true": {"median_ms": 20.0, "per_second": 40.0, "unit": "tokens"},
                                         "levels bf16-mixed": {"skipped": "past the time budget of 1 s"},
                                         "encoder only 32-true": {"median_ms": 9.0}}},
              "mfu": {"preset": "m/tp", "batch": 512, "precision": "bf16-mixed", "compiled": True,
                      "median_ms": 100.0, "flops_per_step": 5e13, "achieved_tflops": 500.0, "peak_tflops": 1000.0,
                      "mfu": 0.5}}
    path = tmp_path / "check.json"
    path.write_text(json.dumps(report))
    page = render_gpu_check(path, "page.md:1")
    assert "| `a/model` | 30.0 ms | 20.0 ms | skipped (time budget) | 150 tokens (bf16-mixed) | 1.50× |" in page
    assert ("| `b/model` | error: MissingExtraError | not reached | n/a (train.compile: sequence models) | n/a | n/a |"
            in page)
    assert "| `a/model` | 2.00e-06 | 5 |" in page and "return code 0, 30 steps in 9.5 s" in page
    assert "| `t/gts` | levels 32-true | 20.0 ms | 40 tokens | 4.00× |" in page  # against nodes 32-true
    assert "| `t/gts` | levels bf16-mixed | skipped (time budget) | | |" in page
    assert "| `t/gts` | encoder only 32-true | 9.0 ms | | |" in page
    assert "| `m/tp` | 512 | bf16-mixed compiled | 100.0 ms | 50.0 T | 500 TFLOPS | 1000.0 TFLOPS | 50.0 % |" in page
    path.write_text("{broken")
    with pytest.raises(NeuromathError, match="page.md:1: cannot read the GPU check"):
        render_gpu_check(path, "page.md:1")


@pytest.mark.skipif(not has_cpu_compiler(), reason="inductor needs a C++ compiler")
def test_the_decoding_benchmark_runs_on_the_cpu_and_its_page_shows_its_json(tmp_path):
    out = tmp_path / "decode.json"
    script = SCRIPT.parent / "decode_compile.py"
    done = subprocess.run([sys.executable, str(script), "--quick", "--repeats", "1", "--threads", "1",
                           "--precisions", "32-true", "--attentions", "tp", "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    row, = json.loads(out.read_text())["rows"]
    assert row["best_equal_to_eager"]["compiled/beam"] == row["sources"] == 4
    assert row["dynamo"]["graph_breaks"] == 0 and row["dynamo"]["unique_graphs"] == 2
    page = render_decode_compile(out, "page.md:1")
    assert "CPU, 1 threads" in page and "| tp | 32-true |" in page and "| 4 of 4 | 2, 0 |" in page
    out.write_text("{}")
    with pytest.raises(NeuromathError, match="page.md:1: cannot read the decoding benchmark"):
        render_decode_compile(out, "page.md:1")


def test_the_goal_tree_ab_runs_its_three_sides_and_its_page_computes_the_speed_ups(tmp_path):
    # the earlier code base: today's package copied aside stands in for it
    base = tmp_path / "base"
    shutil.copytree(SCRIPT.parents[1] / "neuromath", base / "neuromath",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "ab.json"
    done = subprocess.run([sys.executable, str(AB_SCRIPT), "--quick", "--baseline", str(base), "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rounds = json.loads(out.read_text())["tree_ab"]["rounds"]
    assert [entry["side"] for entry in rounds] == ["base", "packed", "new"]
    assert all(set(entry["results"]) == {"graph2tree levels 32-true", "graph2tree encoder"} and
               all(value > 0 for value in entry["results"].values()) for entry in rounds)
    # a log brought back from a device: its worker lines are the rounds, the page's ratios come from their medians
    log = tmp_path / "ab.log"
    log.write_text("NVIDIA Some GPU\n" + "\n".join(
        f"{number} {side} " + json.dumps({"g levels 32-true": value})
        for number, side, value in [(1, "base", 40.0), (1, "packed", 30.0), (1, "new", 20.0),
                                    (2, "base", 60.0), (2, "packed", 36.0), (2, "new", 30.0)]) + "\n")
    summarised = tmp_path / "summary.json"
    done = subprocess.run([sys.executable, str(AB_SCRIPT), "--from-log", str(log), "--json", str(summarised)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(summarised.read_text())
    assert report["settings"]["log_header"] == ["NVIDIA Some GPU"]
    assert report["tree_ab"]["summary"]["g levels 32-true"]["base_over_new"] == 2.0  # 50 / 25
    page = render_gpu_check(summarised, "page.md:1")
    assert "Medians over 2 rounds" in page
    assert "| g levels 32-true | 50.0 ms (40.0-60.0) | 33.0 ms (30.0-36.0) | 25.0 ms (20.0-30.0) | 2.00× | 1.32× |" \
        in page
