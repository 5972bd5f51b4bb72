"""Whether a stored prediction of the word-problem evidence depends on how the number reader reads a text.

Usage: ``python benchmarks/word_problem_number_reading.py [--save FILE] [--compare FILE] [--json FILE]``

For every run of ``results/word-problems*/`` that stored predictions (``predictions.jsonl.gz``), the script reads
its test file (``data.test`` of the run's ``config.yaml``, under the data root; the files that a recipe's ``setup``
makes, ``{work}/...``, are made again in a temporary folder by those commands) and, for each predicted problem:

1. whether its numbers came from the number reader at all: the reader masks the text of ``mwptoolkit_json`` and
   ``question_equation_csv`` files; ``svamp_csv`` files hold their masking (the ``Numbers`` column) and this
   project's ``jsonl`` files the masking they were written with;
2. the values the number reader reads from the problem's text now (``mask_numbers(example.text)``), and whether
   they are the numbers the problem was predicted with.

Every data file of the recipes (training and test) is checked: its sha256 against the recipe's, so the problems are
those the evidence was made from, and its format, to count the files whose masking the number reader makes.
``--save FILE`` writes each problem's reading; ``--compare FILE`` counts the predictions whose problem reads
differently from a saved reading: run it with an older checkout first (``PYTHONPATH=OLD python ... --save
before.json``), then with this one (``--compare before.json``). The script only uses names that earlier readers
have too (``read_examples``, ``detect_format``, ``mask_numbers``, ``number_value``).

A script, not a test: it prints the counts and exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shlex
import sys
import tempfile
from pathlib import Path

import yaml

from neuromath.cli import main as neuromath_main
from neuromath.dataroot import data_root
from neuromath.tasks.word_problems import detect_format, mask_numbers, read_examples
from neuromath.tasks.word_problems.records import number_value

ROOT = Path(__file__).resolve().parents[1]
READ_BY_THE_NUMBER_READER = {"mwptoolkit_json", "question_equation_csv"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def values(numbers) -> list[str]:
    return [str(number_value(number)) for number in numbers]


def make_setup_files(recipe: dict, work: Path) -> None:
    """Run the recipe's setup commands with ``{work}`` in the temporary folder, as ``results run`` does."""
    for command in recipe.get("setup") or []:
        arguments = shlex.split(command.replace("{work}", str(work)))
        assert arguments[0] == "neuromath", command
        if neuromath_main(arguments[1:]) != 0:
            raise SystemExit(f"setup command failed: {command}")


def data_file(name: str, work: Path) -> Path:
    return Path(name.replace("{work}", str(work))) if "{work}" in name else data_root() / name


def check_recipe(experiment: Path, work: Path, readings: dict, predicted: list, counts: dict) -> None:
    recipe = yaml.safe_load((experiment / "recipe.yaml").read_text(encoding="utf-8"))
    make_setup_files(recipe, work)
    for name, digest in (recipe.get("data") or {}).items():
        path = data_file(name, work)
        if not path.is_file():
            raise SystemExit(f"{experiment.name}: {name} is not under the data root {data_root()}")
        if sha256(path) != digest:
            raise SystemExit(f"{experiment.name}: {name} is not the file the evidence was made from (sha256)")
        counts["data files checked"] += 1
        counts["data files whose format the number reader masks"] += detect_format(path) in READ_BY_THE_NUMBER_READER
    cache: dict[str, tuple[str, dict]] = {}
    for predictions in sorted(experiment.glob("runs/**/predictions.jsonl.gz")):
        config = yaml.safe_load((predictions.parent / "config.yaml").read_text(encoding="utf-8"))
        test = config["data"]["test"]
        if test not in cache:
            path = data_file(test, work)
            examples = read_examples(path, config["data"].get("format"), lenient=True, skipped=[])
            cache[test] = (detect_format(path), {example.id: example for example in examples})
        file_format, examples = cache[test]
        with gzip.open(predictions, "rt", encoding="utf-8") as stream:
            ids = [json.loads(line)["id"] for line in stream if line.strip()]
        counts["runs"] += 1
        for problem_id in ids:
            example = examples[problem_id]
            read = values(mask_numbers(example.text)[1])
            key = f"{test}#{problem_id}"
            readings[key] = read
            predicted.append(key)
            counts["predictions"] += 1
            counts["predictions whose numbers came from the number reader"] += file_format in READ_BY_THE_NUMBER_READER
            counts["predictions whose text the reader reads as other numbers than the problem's"] += (
                read != values(example.numbers)
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--save", help="write each predicted problem's reading to this JSON file")
    parser.add_argument("--compare", help="count the predictions whose problem reads differently from this file's")
    parser.add_argument("--json", help="write the counts to this JSON file")
    args = parser.parse_args()
    readings: dict = {}  # test file#problem id -> the values read from its text
    predicted: list = []  # the test file#problem id of every stored prediction
    counts = dict.fromkeys([
        "data files checked", "data files whose format the number reader masks", "runs", "predictions",
        "predictions whose numbers came from the number reader",
        "predictions whose text the reader reads as other numbers than the problem's",
    ], 0)
    with tempfile.TemporaryDirectory() as work:
        for experiment in sorted(ROOT.glob("results/word-problems*")):
            check_recipe(experiment, Path(work), readings, predicted, counts)
    if args.compare:
        before = json.loads(Path(args.compare).read_text(encoding="utf-8"))
        changed = sorted(key for key, reading in readings.items() if before.get(key) != reading)
        counts["problems read differently from the saved reading"] = changed
        counts["predictions of those problems"] = sum(key in set(changed) for key in predicted)
    for name, count in counts.items():
        print(f"{name}: {count}")
    if args.save:
        Path(args.save).write_text(json.dumps(readings), encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(counts, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
