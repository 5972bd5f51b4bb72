"""``neuromath sweep``: train every cell of a grid of config values (several seeds each), a few runs at a time in
separate processes, and tabulate the mean and standard deviation of each cell's scores.

A grid is one or more ``KEY=V1,V2,...`` (config keys as ``--set`` takes them); its cells are their product, each
trained as ``neuromath train`` would train it with those values set, in ``OUT/<cell>/seed<S>``, where ``<cell>``
names the values (``d_model=100_dropout=0.1``; a file by its name). Every cell's config is checked before anything
trains, so a typo fails at once. Each run is a child process (``python -m neuromath train``) writing its output to
``OUT/<cell>/seed<S>/train.log``, inside its run folder, so that ``neuromath analyze seeds OUT/<cell>/seed*`` reads
the cell's runs and nothing else; with ``--jobs J`` and no ``train.num_threads`` given, each gets ``cpus // J`` threads.
A run whose summary.json holds test scores is finished and skipped, and one with a ``last.ckpt`` is resumed, so
the same command continues an interrupted sweep. At the end ``OUT/sweep.md`` and ``OUT/sweep.json`` hold the table
of ``neuromath.experiments.fit_then_test.combine_runs``: one row per cell.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from neuromath.config import load_config
from neuromath.environment import usable_cpus
from neuromath.errors import ConfigError, NeuromathError
from neuromath.experiments.fit_then_test import combine_runs, combined_runs_table, read_tested_summary
from neuromath.fileio import check_output_path, write_text_atomic
from neuromath.training.run import STOP_REASONS, limit_that_ended


def parse_grid(entries: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``["model.dropout=0,0.1", ...]`` -> ``[("model.dropout", ["0", "0.1"]), ...]``: each key once, each value
    once per key."""
    grid: list[tuple[str, list[str]]] = []
    for entry in entries:
        key, sep, values = entry.partition("=")
        key = key.strip()
        if not sep or not key or not values.strip():
            raise ConfigError(f"--grid {entry!r}: expected KEY=V1,V2,... (for example model.dropout=0,0.1,0.2)")
        choices = [value.strip() for value in values.split(",")]
        if any(not choice for choice in choices):
            raise ConfigError(f"--grid {entry!r}: an empty value")
        if len(set(choices)) != len(choices):
            raise ConfigError(f"--grid {entry!r}: a value is listed twice")
        if key in (k for k, _ in grid):
            raise ConfigError(f"--grid names {key} twice")
        grid.append((key, choices))
    if not grid:
        raise ConfigError("a sweep needs at least one --grid KEY=V1,V2,...")
    return grid


def short_values(values: list[str]) -> list[str]:
    """A key's values as cell names show them: file paths by their last part, unless two of them share it."""
    names = [Path(value).name if ("/" in value or "\\" in value) else value for value in values]
    return names if len(set(names)) == len(names) else values


def cell_name(values: Sequence[tuple[str, str]]) -> str:
    """A folder name for one cell: ``key=value`` joined by ``_``, each key shortened to its last part unless two
    keys of the grid share it. Characters a path cannot hold are replaced by ``-``."""
    short = [key.rsplit(".", 1)[-1] for key, _ in values]
    names = short if len(set(short)) == len(short) else [key for key, _ in values]
    text = "_".join(f"{name}={value}" for name, (_, value) in zip(names, values))
    return "".join("-" if ch in '/\\:*?"<>| ' else ch for ch in text)


@dataclass(frozen=True)
class SweepRun:
    cell: str
    seed: int
    run_dir: Path
    overrides: tuple[str, ...]  # every --set of the run, the grid's values and the seed last

    @property
    def log(self) -> Path:
        return self.run_dir / "train.log"


def plan_sweep(config_path: str, overrides: Sequence[str], grid: list[tuple[str, list[str]]], seeds: int,
               out: Path) -> list[SweepRun]:
    """The runs of a sweep, cell by cell and seed by seed; every cell's config is loaded (strictly, as ``train``
    loads it) so that a wrong key or value is an error before any training."""
    if seeds < 1:
        raise NeuromathError(f"--seeds must be at least 1, not {seeds}")
    base_seed = load_config(config_path, overrides, strict=True).train.seed
    runs = []
    choices = [[(key, value, shown) for value, shown in zip(values, short_values(values))] for key, values in grid]
    for combination in itertools.product(*choices):
        cell_overrides = [*overrides, *(f"{key}={value}" for key, value, _ in combination)]
        name = cell_name([(key, shown) for key, _, shown in combination])
        try:
            load_config(config_path, cell_overrides, strict=True)
        except ConfigError as error:
            raise ConfigError(f"sweep cell {name}: {error}") from None
        for seed in range(base_seed, base_seed + seeds):
            runs.append(SweepRun(name, seed, out / name / f"seed{seed}", (*cell_overrides, f"train.seed={seed}")))
    return runs


def tested_summary(run_dir: Path) -> dict | None:
    """The run's summary.json when its training finished and its test split was scored, else None."""
    try:
        return read_tested_summary(run_dir)
    except NeuromathError:
        return None


def run_command(config_path: str, run: SweepRun, threads: int | None) -> list[str]:
    command = [sys.executable, "-m", "neuromath", "train", "--config", str(config_path), "--out", str(run.run_dir)]
    settings = list(run.overrides) + ["train.progress=false"]
    if threads is not None:
        settings.append(f"train.num_threads={threads}")
    for setting in settings:
        command += ["--set", setting]
    if (run.run_dir / "checkpoints" / "last.ckpt").is_file():
        command.append("--resume")
    return command


def run_sweep(config_path: str, out: str | Path, grid_entries: Sequence[str], overrides: Sequence[str] = (),
              seeds: int = 1, jobs: int = 1, as_json: bool = False) -> int:
    """Train the sweep's unfinished runs, ``jobs`` at a time, then write and print the table; returns 0, or 1 when
    a run failed (its log is named; the others still train and are tabulated). ``as_json``: the progress goes to
    stderr, and stdout gets one JSON object, sweep.json's with the failed runs' logs."""
    out_stream = sys.stderr if as_json else sys.stdout
    if jobs < 1:
        raise NeuromathError(f"--jobs must be at least 1, not {jobs}")
    out = Path(out)
    runs = plan_sweep(config_path, overrides, parse_grid(grid_entries), seeds, out)
    threads = None
    if not any(setting.split("=", 1)[0].strip() == "train.num_threads" for setting in overrides):
        threads = max(1, usable_cpus() // jobs)
    todo = [run for run in runs if tested_summary(run.run_dir) is None]
    print(f"sweep: {len(runs)} runs ({len(runs) // seeds} cells x {seeds} seeds), {len(runs) - len(todo)} already "
          f"finished; {min(jobs, max(len(todo), 1))} at a time, output in {out}", file=out_stream, flush=True)
    failed = []
    running: list[tuple[SweepRun, subprocess.Popen, float]] = []
    waiting = list(todo)
    finished = 0
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                run = waiting.pop(0)
                run.run_dir.mkdir(parents=True, exist_ok=True)
                with open(check_output_path(run.log), "a", encoding="utf-8") as log:  # a planted link: refused
                    process = subprocess.Popen(run_command(config_path, run, threads), stdout=log,
                                               stderr=subprocess.STDOUT)
                running.append((run, process, time.monotonic()))
            time.sleep(0.2)
            for entry in list(running):
                run, process, started = entry
                if process.poll() is None:
                    continue
                running.remove(entry)
                finished += 1
                took = time.monotonic() - started
                where = f"[{finished}/{len(todo)}] {run.cell}/seed{run.seed}"
                summary = tested_summary(run.run_dir) if process.returncode == 0 else None
                if summary is not None:
                    print(f"{where}: {describe(summary)} ({took:.0f} s)", file=out_stream, flush=True)
                else:
                    failed.append(run)
                    print(f"{where}: FAILED (exit {process.returncode}); see {run.log}", file=out_stream, flush=True)
    except KeyboardInterrupt:
        for _, process, _ in running:
            process.terminate()
        for _, process, _ in running:
            process.wait()
        print("sweep interrupted: the same command resumes it", file=sys.stderr)
        raise
    done = [run.run_dir for run in runs if tested_summary(run.run_dir) is not None]
    combined = {}
    if done:
        combined = {Path(group).name: row for group, row in combine_runs(done).items()}
        table = combined_runs_table(combined)
        grid_text = " ".join(f"--grid {entry}" for entry in grid_entries)
        title = f"# sweep of {config_path}: {grid_text}; {seeds} seeds (mean ± std, %)"
        write_text_atomic(out / "sweep.md", f"{title}\n\n{table}")
        write_text_atomic(out / "sweep.json", json.dumps({"config": str(config_path), "grid": list(grid_entries),
                                                          "set": list(overrides), "seeds": seeds, "cells": combined},
                                                         indent=2) + "\n")
        if not as_json:
            print(table, end="")
            print(f"written to {out / 'sweep.md'} and {out / 'sweep.json'}")
    if as_json:
        print(json.dumps({"config": str(config_path), "grid": list(grid_entries), "set": list(overrides),
                          "seeds": seeds, "cells": combined, "failed": [str(run.log) for run in failed]}, indent=2))
    if failed:
        print(f"{len(failed)} runs failed: " + ", ".join(str(run.log) for run in failed), file=sys.stderr)
        return 1
    return 0


def describe(summary: dict) -> str:
    test = summary["test"]
    limit = limit_that_ended(summary)
    cut = f" (not converged: ended by {STOP_REASONS[limit]})" if limit else ""
    if "accuracy" in test:
        return (f"{summary['epochs']} epochs{cut}, valid {100 * summary['best_val_accuracy']:.1f}, "
                f"test {100 * test['accuracy']:.1f}")
    return (f"{summary['epochs']} epochs{cut}, valid {100 * summary['best_val_value_accuracy']:.1f}, "
            f"test {100 * test['value_accuracy']:.1f}")
