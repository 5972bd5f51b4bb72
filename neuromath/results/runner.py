"""``neuromath results run``: run a recipe's unfinished runs and collect their evidence (see
``neuromath.results.recipes`` for the recipe and ``neuromath.results.evidence`` for what is kept)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from neuromath.dataroot import data_root
from neuromath.errors import NeuromathError
from neuromath.results.evidence import ENVIRONMENT_FILE, collect_evidence
from neuromath.results.recipes import Recipe, check_data, expand


def is_finished(recipe: Recipe, run: str) -> bool:
    return (recipe.evidence_dir(run) / ENVIRONMENT_FILE).is_file()


def neuromath_command(argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "neuromath", *argv]


def run_recipe(recipe: Recipe, work: str | Path, jobs: int = 1, only: list[str] | None = None,
               force: bool = False, echo=print) -> dict[str, str]:
    """Run the recipe's unfinished runs (or ``only`` these) in ``work/<run>``, ``jobs`` at a time, and collect each
    one's evidence when it finishes. Returns run -> ``done``, ``skipped`` or ``failed: ...``."""
    work = Path(work).resolve() / recipe.name
    root = data_root()
    names = list(recipe.runs) if only is None else only
    for name in names:
        if name not in recipe.runs:
            raise NeuromathError(f"{recipe.path}: no run named {name!r} (runs: {', '.join(recipe.runs)})")
    check_data(recipe, root, work)
    todo = [name for name in names if force or not is_finished(recipe, name)]
    outcome = {name: "skipped (evidence is there)" for name in names if name not in todo}
    if not todo:
        return outcome
    work.mkdir(parents=True, exist_ok=True)
    try:  # the setup's files are there, byte for byte: no need to make them again
        made = bool(recipe.setup) and bool(check_data(recipe, root, work, generated=True))
    except NeuromathError:
        made = False
    for argv in [] if made else recipe.setup:
        argv = [expand(arg, work) for arg in argv]
        echo(f"[setup] {shlex.join(['neuromath', *argv])}")
        subprocess.run(neuromath_command(argv), check=True)
    check_data(recipe, root, work, generated=True)

    def one(name: str) -> str:
        run = recipe.runs[name]
        out = work / name
        argv = [expand(arg, work, out) for arg in run.argv]
        finished = run.subcommand == "import" and (out / "summary.json").is_file()
        if run.subcommand == "train":
            seeds = "--seeds" in argv and argv[argv.index("--seeds") + 1] != "1"
            finished = (out / ("seeds.json" if seeds else "summary.json")).is_file()
            started_before = any(out.glob("checkpoints/last.ckpt")) or any(out.glob("seed*/checkpoints/last.ckpt"))
            if not finished and started_before and "--resume" not in argv:
                argv = [*argv, "--resume"]
        full = [*argv, "--out", str(out)]
        echo(f"[{name}] {shlex.join(['neuromath', *full])}")
        started = time.perf_counter()
        log = work / f"{name}.log"
        with open(log, "a", encoding="utf-8") as stream:
            code = 0 if finished else subprocess.run(neuromath_command(full), stdout=stream, stderr=subprocess.STDOUT,
                                                     env={**os.environ, "NEUROMATH_DATA": str(root)}).returncode
            for step in run.then:
                if code != 0:
                    break
                step = [expand(arg, work, out) for arg in step]
                echo(f"[{name}] {shlex.join(['neuromath', *step])}")
                code = subprocess.run(neuromath_command(step), stdout=stream, stderr=subprocess.STDOUT,
                                      env={**os.environ, "NEUROMATH_DATA": str(root)}).returncode
        if code != 0:
            return f"failed: exit status {code}, see {log}"
        collect_evidence(recipe, run, out, work, root, time.perf_counter() - started)
        echo(f"[{name}] evidence in {recipe.evidence_dir(name)}")
        return "done"

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        outcome.update(zip(todo, pool.map(one, todo)))
    return outcome
