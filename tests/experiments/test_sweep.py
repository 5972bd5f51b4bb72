"""``neuromath sweep`` (neuromath/experiments/grid_sweep.py): grid parsing, cell names, configs checked before anything
trains, runs in parallel child processes, a failed run reported with its log, a rerun that skips finished runs
and resumes an interrupted one from its last checkpoint."""

import json
import random

import pytest

from neuromath.cli import main
from neuromath.config import load_config, save_config
from neuromath.errors import ConfigError
from neuromath.experiments.grid_sweep import cell_name, describe, parse_grid, plan_sweep, short_values
from neuromath.tasks.identities import EquationExample, apply, number, symbol, write_equations


def test_parse_grid_reads_keys_and_values_and_refuses_malformed_entries():
    assert parse_grid(["model.dropout=0, 0.1", "model.d_model=50"]) == [("model.dropout", ["0", "0.1"]),
                                                                        ("model.d_model", ["50"])]
    for bad, reason in [("model.dropout", "KEY=V1"), ("=1,2", "KEY=V1"), ("model.dropout=0,,1", "empty value"),
                        ("model.dropout=0,0", "twice")]:
        with pytest.raises(ConfigError, match=reason):
            parse_grid([bad])
    with pytest.raises(ConfigError, match="names model.dropout twice"):
        parse_grid(["model.dropout=0", "model.dropout=1"])
    with pytest.raises(ConfigError, match="at least one"):
        parse_grid([])


def test_cell_names_use_short_keys_unless_two_keys_share_one():
    assert cell_name([("model.d_model", "100"), ("model.dropout", "0.1")]) == "d_model=100_dropout=0.1"
    assert cell_name([("optim.lr", "1e-3"), ("model.lr", "2")]) == "optim.lr=1e-3_model.lr=2"
    assert cell_name([("data.train", "a/b c.json")]) == "train=a-b-c.json"
    assert short_values(["data/big.json", "small.json", "0.1"]) == ["big.json", "small.json", "0.1"]
    assert short_values(["a/x.json", "b/x.json"]) == ["a/x.json", "b/x.json"]  # the same name twice: whole paths


def test_every_cell_is_checked_before_anything_trains(tmp_path):
    sets = ["data.task=identities", "model.name=tree_lstm"]
    runs = plan_sweep(None, sets, parse_grid(["model.d_model=8,16", "model.dropout=0,0.5"]), 2, tmp_path)
    assert [(run.cell, run.seed) for run in runs[:3]] == [("d_model=8_dropout=0", 0), ("d_model=8_dropout=0", 1),
                                                          ("d_model=8_dropout=0.5", 0)]
    assert len(runs) == 8 and runs[-1].run_dir == tmp_path / "d_model=16_dropout=0.5" / "seed1"
    assert runs[-1].overrides[-3:] == ("model.d_model=16", "model.dropout=0.5", "train.seed=1")
    with pytest.raises(ConfigError, match="sweep cell d_model=0.*d_model"):
        plan_sweep(None, sets, parse_grid(["model.d_model=8,0"]), 1, tmp_path)
    with pytest.raises(ConfigError, match="sweep cell no_such_key=1"):
        plan_sweep(None, sets, parse_grid(["model.no_such_key=1"]), 1, tmp_path)
    assert not any(tmp_path.iterdir())


def tiny_equations(n: int, seed: int) -> list[EquationExample]:
    """e = e (true) against e = cos(e) (false) for small random e."""
    rng = random.Random(seed)
    leaves = [symbol("var_0"), symbol("var_1"), number(2), number(3)]
    examples = []
    for i in range(n):
        left = apply(rng.choice(["Add", "Mul"]), rng.choice(leaves), rng.choice(leaves))
        right = left if i % 2 else apply("cos", left)
        examples.append(EquationExample(apply("Equality", left, right), i % 2 == 1))
    return examples


@pytest.mark.slow
def test_sweep_trains_each_cell_in_parallel_reports_a_failure_and_a_rerun_skips_finished_runs(tmp_path, capsys):
    data = tmp_path / "tiny.json"
    write_equations(tiny_equations(300, 0), data)
    config = tmp_path / "config.yaml"
    save_config(load_config(None, ["data.task=identities", "model.name=tree_lstm", "data.train_depths=2-3",
                                   "data.test_depths=2-3", "optim.schedule=plateau", "train.max_epochs=2",
                                   "train.patience=0"]), config)
    out = tmp_path / "sweep"
    grid = ["--grid", f"data.train={data},{tmp_path / 'missing.json'}", "--grid", "model.d_model=8,12"]
    assert main(["sweep", "--config", str(config), *grid, "--out", str(out), "--jobs", "2"]) == 1
    captured = capsys.readouterr()
    assert "4 runs (4 cells x 1 seeds), 0 already finished; 2 at a time" in captured.out
    assert captured.out.count("FAILED") == 2 and "train=missing.json_d_model=8/seed0/train.log" in captured.err
    good = [out / f"train=tiny.json_d_model={width}" for width in (8, 12)]
    for cell, width in zip(good, (8, 12)):
        run_config = load_config(cell / "seed0" / "config.yaml")
        assert run_config.model.d_model == width and run_config.train.num_threads >= 1
        assert (cell / "seed0" / "train.log").is_file() and [p.name for p in cell.glob("seed*")] == ["seed0"]
    result = json.loads((out / "sweep.json").read_text())
    assert list(result["cells"]) == [cell.name for cell in good] and result["seeds"] == 1
    assert result["cells"][good[0].name]["test"]["n"] > 0
    table = (out / "sweep.md").read_text()
    rows = [line for line in table.splitlines()[4:] if line.startswith("|")]  # after the title, a blank, the head
    # two epochs with patience 0: the epoch limit ended them, and the table says they did not converge
    assert len(rows) == 2 and rows[1].startswith(f"| {good[1].name} | 1 | 2 * |")
    assert table.rstrip().endswith("not at convergence")

    finished = (good[0] / "seed0" / "summary.json").stat().st_mtime_ns
    assert main(["sweep", "--config", str(config), "--grid", f"data.train={data}", "--grid", "model.d_model=8,12",
                 "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert "2 runs (2 cells x 1 seeds), 2 already finished" in captured.err  # --json: progress on stderr
    answer = json.loads(captured.out)  # and one object on stdout
    assert list(answer["cells"]) == [cell.name for cell in good] and answer["failed"] == []
    assert (good[0] / "seed0" / "summary.json").stat().st_mtime_ns == finished


@pytest.mark.slow
def test_a_rerun_resumes_an_interrupted_run_from_its_last_checkpoint(tmp_path, capsys):
    data = tmp_path / "tiny.json"
    write_equations(tiny_equations(200, 1), data)
    config = tmp_path / "config.yaml"
    save_config(load_config(None, ["data.task=identities", "model.name=tree_lstm", f"data.train={data}",
                                   "data.train_depths=2-3", "data.test_depths=2-3", "optim.schedule=plateau",
                                   "train.max_epochs=2", "train.patience=0"]), config)
    out = tmp_path / "sweep"
    sweep = ["sweep", "--config", str(config), "--grid", "model.d_model=8", "--out", str(out)]
    assert main(sweep) == 0
    run = out / "d_model=8" / "seed0"
    assert json.loads((run / "summary.json").read_text())["epochs"] == 2
    # An interrupted run: its checkpoints are there, its summary is not. A fresh start would be refused ("already
    # holds a run"), so finishing proves the sweep passed --resume; the longer budget shows training went on.
    (run / "summary.json").unlink()
    capsys.readouterr()
    assert main([*sweep, "--set", "train.max_epochs=4"]) == 0
    assert "1 runs (1 cells x 1 seeds), 0 already finished" in capsys.readouterr().out
    summary = json.loads((run / "summary.json").read_text())
    assert summary["epochs"] == 4 and summary["test"]["n"] > 0
    # without its checkpoint the same rerun starts the run afresh instead of failing
    (run / "summary.json").unlink()
    for checkpoint in (run / "checkpoints").iterdir():
        checkpoint.unlink()
    assert main([*sweep, "--set", "train.max_epochs=3"]) == 0
    assert json.loads((run / "summary.json").read_text())["epochs"] == 3


def test_a_finished_run_a_limit_cut_is_described_as_not_converged():
    summary = {"epochs": 300, "best_val_accuracy": 0.8, "test": {"accuracy": 0.7}}
    assert describe({**summary, "stopped_by": "early_stopping"}) == "300 epochs, valid 80.0, test 70.0"
    assert describe(summary) == "300 epochs, valid 80.0, test 70.0"  # written before stopped_by was recorded
    assert describe({**summary, "stopped_by": "max_epochs"}) == (
        "300 epochs (not converged: ended by its epoch limit (train.max_epochs)), valid 80.0, test 70.0")
