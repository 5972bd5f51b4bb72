"""What a results row costs today against what it cost in an earlier code base: both rows run in one run.

Usage: ``python benchmarks/row_cost.py --row RECIPE:RUN [--baseline REV] [--baseline-row RECIPE:RUN] [--setup DIR]
[--work DIR] [--sequential] [--json FILE]``

A row is a run of a recipe under ``results/`` (``word-problems-cv:gts-mawps-step-seed1``, ``identities-40k:
tree_lstm-paper-batch100``). Today's side runs the row's command from today's recipe with today's package. The
baseline side runs ``--baseline-row`` (default: the same name) as the recipe of revision ``--baseline`` wrote it, with
that revision's package (unpacked with ``git archive``, as ``decoding.py`` does): the row's recipe and code as they
were, for example when an issue was filed. A revision may also be a folder that holds a ``neuromath`` package.
``--command`` / ``--baseline-command`` give a command line in place of a row. ``{work}`` in a command is ``--setup``,
the folder of the recipe's setup files (``WORK/<recipe>`` of ``neuromath results run``).

The two sides run at once, each in its own process (the rows' own ``train.num_threads``, 1 in the recipes; give
each a core), or one after the other with ``--sequential``. Measured for each side: the CPU seconds of the process
and the processes it waited for (user + system, from ``os.wait4``), its wall seconds, the epochs its runs trained,
and the test score of each fold or seed (``accuracy`` for identities, ``value_accuracy`` otherwise), with their mean
and sample standard deviation. Printed: the table and today's CPU seconds over the baseline's.

A script, not a test: it prints numbers and exits 0 unless a side fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decoding import REPOSITORY, unpack  # noqa: E402  (baseline code bases as decoding.py's)

from neuromath.environment import cpu_name  # noqa: E402
from neuromath.results.evidence import test_metric  # noqa: E402

BASELINE = "7c929cf"  # the code when the speed issue was filed


def recipe_text(recipe: str, revision: str | None) -> str:
    """``results/RECIPE/recipe.yaml`` of the working tree (``revision`` None) or of a git revision."""
    relative = f"results/{recipe}/recipe.yaml"
    if revision is None:
        path = REPOSITORY / relative
        if not path.exists():
            raise SystemExit(f"row_cost.py: no recipe {path}")
        return path.read_text(encoding="utf-8")
    done = subprocess.run(["git", "-C", str(REPOSITORY), "show", f"{revision}:{relative}"], capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"row_cost.py: revision {revision!r} has no {relative}: {done.stderr.strip()}")
    return done.stdout


def row_command(row: str, revision: str | None) -> list[str]:
    """The arguments after ``neuromath`` of a recipe run ``RECIPE:RUN``, as the recipe of ``revision`` has it."""
    recipe, _, name = row.partition(":")
    if not name:
        raise SystemExit(f"row_cost.py: a row is RECIPE:RUN, not {row!r}")
    runs = yaml.safe_load(recipe_text(recipe, revision)).get("runs") or {}
    if name not in runs:
        where = f"revision {revision}" if revision else "today's tree"
        raise SystemExit(f"row_cost.py: results/{recipe}/recipe.yaml of {where} has no run {name!r}")
    return command_arguments(runs[name]["command"])


def command_arguments(text: str) -> list[str]:
    argv = shlex.split(" ".join(text.split()))
    if not argv or argv[0] != "neuromath":
        raise SystemExit(f"row_cost.py: a command starts with neuromath: {text!r}")
    return argv[1:]


def with_setup(argv: list[str], setup: Path | None) -> list[str]:
    if any("{work}" in arg for arg in argv):
        if setup is None:
            raise SystemExit("row_cost.py: the command reads the recipe's setup files ({work}/...): name their "
                             "folder with --setup DIR")
        argv = [arg.replace("{work}", str(setup)) for arg in argv]
    return argv


def run_side(name: str, package_root: Path, argv: list[str], folder: Path, result: dict) -> None:
    """Run ``python -m neuromath ARGV --out FOLDER/out`` with ``package_root`` first on the path; fill ``result``
    with its CPU and wall seconds and exit status (its output goes to FOLDER/log.txt)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "out"
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(package_root), *filter(None, [os.environ.get("PYTHONPATH")])]))
    command = [sys.executable, "-m", "neuromath", *argv, "--out", str(out)]
    started = time.perf_counter()
    with open(folder / "log.txt", "w", encoding="utf-8") as log:
        process = subprocess.Popen(command, cwd=folder, env=environment, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    result.update({
        "side": name, "command": "neuromath " + shlex.join(argv), "package": str(package_root),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
        "wall_seconds": round(time.perf_counter() - started, 1), "exit_status": process.returncode,
        "out": str(out), "log": str(folder / "log.txt"),
    })


def scores(out: Path) -> dict:
    """The test score and epochs of each fold or seed under ``out`` (a ``cv``, a ``train --seeds`` or one run)."""
    units = sorted(out.glob("fold*/summary.json")) or sorted(out.glob("seed*/summary.json"))
    if not units and (out / "summary.json").exists():
        units = [out / "summary.json"]
    rows = {}
    for path in units:
        summary = json.loads(path.read_text(encoding="utf-8"))
        metric = "accuracy" if "accuracy" in (summary.get("test") or {}) else "value_accuracy"
        rows[path.parent.name if path.parent != out else "run"] = {
            "metric": metric, "test": test_metric(summary, metric), "epochs": test_metric(summary, "epochs"),
            "stopped_by": summary.get("stopped_by"),
        }
    values = [row["test"] for row in rows.values() if row["test"] is not None]
    return {
        "units": rows,
        "epochs": sum(row["epochs"] or 0 for row in rows.values()),
        "mean": statistics.fmean(values) if values else None,
        "std": statistics.stdev(values) if len(values) > 1 else 0.0 if values else None,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--row", help="today's row, RECIPE:RUN")
    parser.add_argument("--baseline", default=BASELINE,
                        help=f"git revision (or a folder holding a neuromath package) to compare with "
                             f"(default {BASELINE})")
    parser.add_argument("--baseline-row", help="the row in the baseline's recipe (default: --row)")
    parser.add_argument("--command", help="today's command line (neuromath ...) in place of --row")
    parser.add_argument("--baseline-command", help="the baseline's command line in place of --baseline-row")
    parser.add_argument("--setup", type=Path, default=None, help="the folder of the recipe's setup files, {work}")
    parser.add_argument("--work", type=Path, default=None, help="where both sides write (default: a temporary "
                                                                "folder, removed afterwards)")
    parser.add_argument("--sequential", action="store_true", help="run the baseline, then today's row")
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements to this JSON file")
    args = parser.parse_args(argv)
    if not (args.command or args.row) or not (args.baseline_command or args.baseline_row or args.row):
        parser.error("name --row (or --command and --baseline-command)")

    baseline_folder = Path(args.baseline)
    revision = None if baseline_folder.is_dir() else args.baseline
    today_argv = with_setup(command_arguments(args.command) if args.command else row_command(args.row, None),
                            args.setup)
    if args.baseline_command:
        baseline_argv = command_arguments(args.baseline_command)
    elif revision is None:
        raise SystemExit("row_cost.py: a baseline folder has no recipes: give --baseline-command")
    else:
        baseline_argv = row_command(args.baseline_row or args.row, revision)
    baseline_argv = with_setup(baseline_argv, args.setup)

    with tempfile.TemporaryDirectory(prefix="row-cost-") as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        if revision is not None:
            baseline_folder = unpack(revision, Path(tempfile.mkdtemp(prefix="base-", dir=work)))
        sides = {"baseline": {}, "today": {}}
        jobs = [threading.Thread(target=run_side, args=("baseline", baseline_folder, baseline_argv,
                                                        work / "baseline", sides["baseline"])),
                threading.Thread(target=run_side, args=("today", REPOSITORY, today_argv, work / "today",
                                                        sides["today"]))]
        for job in jobs:
            job.start()
            if args.sequential:
                job.join()
        for job in jobs:
            job.join()
        failed = [name for name, side in sides.items() if side["exit_status"] != 0]
        for name in failed:
            tail = Path(sides[name]["log"]).read_text(encoding="utf-8", errors="replace")[-3000:]
            print(f"{name} failed (exit {sides[name]['exit_status']}): {sides[name]['command']}\n{tail}",
                  file=sys.stderr)
        for side in sides.values():
            side.update(scores(Path(side["out"])))

    for name, side in sides.items():  # the folders were temporary or are the user's: keep what ran, not where
        side.pop("out"), side.pop("log")
        side["package"] = "today's tree" if name == "today" else args.baseline
    ratio = (sides["today"]["cpu_seconds"] / sides["baseline"]["cpu_seconds"]
             if sides["baseline"]["cpu_seconds"] else None)
    report = {"baseline": args.baseline, "row": args.row, "baseline_row": args.baseline_row or args.row,
              "concurrent": not args.sequential, "cpu": cpu_name(), "sides": sides,
              "today_over_baseline_cpu": round(ratio, 3) if ratio is not None else None}
    print("| side | CPU s | wall s | epochs | test, mean ± std | command |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for name, side in sides.items():
        score = (f"{100 * side['mean']:.1f} ± {100 * side['std']:.1f}" if side["mean"] is not None else "-")
        print(f"| {name} | {side['cpu_seconds']:.0f} | {side['wall_seconds']:.0f} | {side['epochs']} | {score} | "
              f"`{side['command']}` |")
    if ratio is not None:
        print(f"today / baseline CPU seconds: {ratio:.3f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
