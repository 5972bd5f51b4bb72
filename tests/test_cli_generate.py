"""Bad input to ``neuromath generate``: bad arguments and outputs are one error line and exit code 2, and every
output is locked while it is written, so a second writer is refused with the holder named."""

import random
import subprocess
import sys

import pytest

from neuromath.cli import main
from neuromath.cli.common import MAX_WORKERS
from neuromath.cli.generate import MAX_GENERATED, MAX_OPS, MAX_STREAMED
from neuromath.errors import NeuromathError
from neuromath.tasks.identities.identity_generator import MAX_DEPTH, generate_with_counts


@pytest.mark.parametrize("depth", [0, -1, MAX_DEPTH + 1])
def test_identities_refuse_a_depth_outside_the_allowed_range(tmp_path, capsys, depth):
    out = tmp_path / "identities.json"
    with pytest.raises(SystemExit) as exit_:
        main(["generate", "identities", "--n", "4", "--max-depth", str(depth), "--out", str(out)])
    assert exit_.value.code == 2
    assert f"argument --max-depth: must be an integer from 1 to {MAX_DEPTH}, got {depth}\n" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(NeuromathError, match=f"between 1 and {MAX_DEPTH}, not {depth}"):
        generate_with_counts(4, random.Random(0), max_depth=depth)


@pytest.mark.parametrize("task", ["word_problems", "identities", "symbolic"])
def test_a_directory_as_the_output_file_is_named_as_a_directory(tmp_path, capsys, task):
    folder = tmp_path / "out"
    folder.mkdir()
    assert main(["generate", task, "--n", "4", "--out", str(folder)]) == 1
    assert capsys.readouterr().err == (f"error: {folder} is a directory; --out names the file to write "
                                       f"(for example {folder / 'data'})\n")
    assert list(folder.iterdir()) == []


def test_a_file_as_the_mathematics_dataset_root_is_refused(tmp_path, capsys):
    out = tmp_path / "release"
    out.write_text("")
    assert main(["generate", "mathematics_dataset", "--per-module", "1", "--out", str(out)]) == 1
    assert capsys.readouterr().err == f"error: {out} is a file; --out names the root folder of the release layout\n"


@pytest.mark.parametrize("arguments, is_folder", [
    (["word_problems", "--n", "4"], False),
    (["identities", "--n", "4", "--max-depth", "3"], False),
    (["symbolic", "--n", "1", "--max-ops", "1"], False),
    (["mathematics_dataset", "--per-module", "1", "--modules", "arithmetic__add_or_sub", "--splits", "train-easy"],
     True),
])
def test_a_second_writer_of_an_output_is_refused_with_the_holder_named(tmp_path, capsys, arguments, is_folder):
    out = tmp_path / ("release" if is_folder else "out.data")
    holder = subprocess.Popen(  # another process holds the output's lock (filelock lets one process re-enter it)
        [sys.executable, "-c", "import time; from neuromath.fileio import locked\n"
         f"with locked({str(out)!r}, is_folder={is_folder}):\n    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        code = main(["generate", *arguments, "--out", str(out)])
    finally:
        holder.kill()
        holder.wait()
    lock_path = out / ".neuromath.lock" if is_folder else tmp_path / ".out.data.lock"
    error = capsys.readouterr().err
    assert code == 1
    assert error.startswith(f"error: {out} is being written by process {holder.pid} on host ")
    assert error.endswith(f" (lock file {lock_path}; delete it if that process is gone)\n")
    assert not out.exists() or (is_folder and [path.name for path in out.iterdir()] == [".neuromath.lock"])


@pytest.mark.parametrize("task, option, high", [
    ("word_problems", "--n", MAX_GENERATED), ("identities", "--n", MAX_GENERATED),
    ("evaluations", "--n", MAX_GENERATED), ("symbolic", "--n", MAX_STREAMED), ("symbolic", "--workers", MAX_WORKERS),
    ("identities", "--workers", MAX_WORKERS),
    ("symbolic", "--max-ops", MAX_OPS), ("mathematics_dataset", "--per-module", MAX_STREAMED),
    ("mathematics_dataset", "--workers", MAX_WORKERS),
])
@pytest.mark.parametrize("too", ["small", "large"])
def test_counts_outside_their_range_are_refused_when_the_command_line_is_read(task, option, high, too, tmp_path,
                                                                              capsys):
    size = ["--per-module", "5"] if task == "mathematics_dataset" else ["--n", "5"]
    arguments = ["generate", task, "--out", str(tmp_path / "out"), *size]
    value = 0 if too == "small" else high + 1
    with pytest.raises(SystemExit) as exit_:
        main(arguments + [option, str(value)])
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and f"argument {option}: must be an integer from 1 to {high}" in error
    assert error.rstrip().endswith(f"got {value}") and "Traceback" not in error
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("value, message", [
    ("inf", "must be a finite number, got inf"), ("nan", "must be a finite number, got nan"),
    ("0", "must be a number above 0 and at most 3600, got 0"),
    ("-1", "must be a number above 0 and at most 3600, got -1"),
    ("3601", "must be a number above 0 and at most 3600, got 3601"), ("1e400", "must be a finite number"),
])
def test_the_time_limit_of_an_attempt_is_finite_and_positive(value, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["generate", "symbolic", "--n", "1", "--time-limit", value, "--out", str(tmp_path / "out")])
    assert exit_.value.code == 2 and f"argument --time-limit: {message}" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("option", ["--seed", "--n"])
def test_a_number_of_a_million_digits_is_refused_without_echoing_it(option, tmp_path, capsys):
    arguments = ["generate", "word_problems", "--n", "5", "--seed", "0", "--out", str(tmp_path / "out")]
    arguments[arguments.index(option) + 1] = "9" * 1_000_000
    with pytest.raises(SystemExit) as exit_:
        main(arguments)
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and f"argument {option}: must be an integer from " in error and len(error) < 2000


def test_identities_in_the_paper_style_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "paper.json"
    assert main(["generate", "identities", "--n", "60", "--max-depth", "8", "--style", "paper", "--no-baselines",
                 "--no-progress", "--out", str(out)]) == 0
    stats = (tmp_path / "paper.stats.md").read_text()
    assert "style paper" in stats and "100.0% of 30" in stats and "Baselines" not in stats
    assert "style paper" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["generate", "identities", "--n", "4", "--style", "papers", "--out", str(tmp_path / "x.json")])
    assert "invalid choice: 'papers'" in capsys.readouterr().err


def test_identities_with_substitutions_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "sub.json"
    assert main(["generate", "identities", "--n", "40", "--max-depth", "6", "--style", "paper", "--substitute-share",
                 "0.5", "--no-baselines", "--no-progress", "--out", str(out)]) == 0
    assert "style paper, substitute share 0.5" in (tmp_path / "sub.stats.md").read_text()
    assert "| substitute" in (tmp_path / "sub.stats.md").read_text()
    capsys.readouterr()
    assert main(["generate", "identities", "--n", "4", "--substitute-share", "0.5", "--out",
                 str(tmp_path / "x.json")]) != 0
    assert ("--style chain --substitute-share 0.5: substitute_share is an edit of the paper style"
            in capsys.readouterr().err)
    with pytest.raises(SystemExit):
        main(["generate", "identities", "--n", "4", "--style", "paper", "--substitute-share", "2",
              "--out", str(tmp_path / "x.json")])
    assert "--substitute-share: must be a number from 0 to 1, got 2" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"sub.{n}" for n in ("json", "stats.md", "test.json",
                                                                                 "train.json", "valid.json")]


def test_substitute_fillers_from_a_candidate_file(tmp_path, capsys):
    from neuromath.expr.equation_tree import apply, number
    from neuromath.tasks.identities import Candidate, preorder, read_equations, write_candidates

    fillers = [apply("tan", number(3)), apply("Mul", number(7), number(5))]
    write_candidates([Candidate(tree, str(i)) for i, tree in enumerate(fillers)], tmp_path / "candidates.json")
    out = tmp_path / "pool.json"
    assert main(["generate", "identities", "--n", "60", "--max-depth", "6", "--style", "paper", "--substitute-share",
                 "1", "--substitute-from", str(tmp_path / "candidates.json"), "--no-baselines", "--no-progress",
                 "--out", str(out)]) == 0
    assert "substitute share 1, fillers from candidates.json (2)" in (tmp_path / "pool.stats.md").read_text()
    substituted = [e for e in read_equations(out) if e.extra.get("edit") == "substitute"]
    assert substituted and all(any(node in fillers for node in preorder(e.tree)) for e in substituted)
    capsys.readouterr()
    assert main(["generate", "identities", "--n", "4", "--style", "paper", "--substitute-from",
                 str(tmp_path / "candidates.json"), "--out", str(tmp_path / "x.json")]) != 0
    assert "set substitute_share above 0" in capsys.readouterr().err
    assert main(["generate", "identities", "--n", "4", "--style", "paper", "--substitute-share", "0.5",
                 "--substitute-from", str(tmp_path / "missing.json"), "--out", str(tmp_path / "x.json")]) != 0
    assert "missing.json" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
