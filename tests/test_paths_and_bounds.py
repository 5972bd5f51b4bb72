"""Paths and arguments that would escape their folder or the machine's memory:

- ``train --out``, ``demo --out`` and ``cv --out`` refuse a symbolic link (even to a folder) and a folder that holds
  files the run did not write; an empty folder, or a run folder of their own, is written into;
- every data path refuses a FIFO, a device and a link to one, through one check (``safe_read.check_data_path`` where
  a path is found, ``safe_read.open_data`` where a file is opened): each reader and command ends in a clear error at
  once instead of waiting on the pipe (a reader that would hang runs in a thread the test unblocks, a command in a
  subprocess with a timeout);
- every count, size, worker and time argument of the command line has an upper bound;
- JSON of run folders and evidence is read by one reader with a depth limit: too deep is an error naming the file.
"""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hang_guard import HANG_GUARD_S, without_hanging
from run_folders import write_sequence_run

from neuromath.api import load
from neuromath.cli import build_parser, main
from neuromath.cli.common import MAX_BOOTSTRAP_SAMPLES, MAX_WORKERS
from neuromath.dataroot import find_data
from neuromath.errors import DataFormatError, NeuromathError
from neuromath.evaluation.scoring import read_predictions
from neuromath.experiments.evaluate_runs import run_meta
from neuromath.experiments.fit_then_test import finished_summary
from neuromath.fileio import check_published, finish_publishing, locked
from neuromath.results.evidence_io import read_gzip_lines, read_json, write_gzip_lines
from neuromath.results.recipes import sha256_of
from neuromath.safe_read import MAX_JSON_DEPTH, check_data_path, json_depth_error, load_json, read_json_file
from neuromath.serve.app import run_info
from neuromath.tasks.identities import read_candidates, read_equations
from neuromath.tasks.mathematics_dataset.mathematics_generator import MANIFEST, unfinished_generation
from neuromath.tasks.mathematics_dataset.release import read_examples as read_release
from neuromath.tasks.mathematics_dataset.release import read_module_file
from neuromath.tasks.streams import InterleavedReader, RecordFiles
from neuromath.tasks.symbolic import read_pairs
from neuromath.tasks.word_problems import (
    detect_format,
    read_examples,
    read_jsonl,
    read_mwptoolkit_json,
    read_question_equation_csv,
    read_svamp_csv,
)
from neuromath.training.run_folder import check_run_folder

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
needs_dev_zero = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")

TINY = [
    "--set", "model.d_model=16", "--set", "model.n_heads=2", "--set", "model.d_ff=32",
    "--set", "model.n_encoder_layers=1", "--set", "model.n_decoder_layers=1",
    "--set", "train.progress=false", "--set", "train.max_epochs=1", "--set", "train.patience=0",
    "--set", "data.generate_train=40", "--set", "data.generate_valid=8", "--set", "data.generate_test=0",
]


def run_cli(*arguments, cwd=None) -> subprocess.CompletedProcess:
    """``neuromath ARGUMENTS`` in a subprocess that may not run longer than HANG_GUARD_S."""
    try:
        return subprocess.run([sys.executable, "-m", "neuromath", *arguments], capture_output=True, text=True,
                              timeout=HANG_GUARD_S, cwd=cwd, env={**os.environ, "OMP_NUM_THREADS": "1"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"neuromath {' '.join(arguments)} hung")


def error_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# ---------------------------------------------------------------------------------------------- --out of a run


def test_train_refuses_a_link_even_to_an_empty_folder(tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "link"
    link.symlink_to(elsewhere, target_is_directory=True)
    assert main(["train", "--config", "word_problems/transformer", *TINY, "--out", str(link)]) == 1
    assert error_line(capsys) == (f"error: {link} is a symbolic link: a run is written only into a folder of its "
                                  "own, never through a link (give the folder it points to, or another --out)")
    assert list(elsewhere.iterdir()) == []  # nothing written through the link
    assert main(["train", "--config", "word_problems/transformer", *TINY, "--out", str(link), "--resume"]) == 1
    assert "is a symbolic link" in error_line(capsys)


def test_train_refuses_a_folder_of_the_users_own_files_and_leaves_them(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "config.yaml").write_text("my own settings\n")
    (out / "notes.txt").write_text("notes\n")
    assert main(["train", "--config", "word_problems/transformer", *TINY, "--out", str(out)]) == 1
    message = error_line(capsys)
    assert message.startswith(f"error: {out} holds files that a run does not write (notes.txt)")
    assert (out / "config.yaml").read_text() == "my own settings\n"
    assert sorted(path.name for path in out.iterdir()) == ["config.yaml", "notes.txt"]


def test_train_writes_into_an_empty_folder_and_resumes_a_run_of_its_own(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    assert main(["train", "--config", "word_problems/transformer", *TINY, "--out", str(out)]) == 0
    assert (out / "summary.json").is_file() and (out / "checkpoints" / "last.ckpt").is_file()
    (out / ".summary.json.x1y2.tmp").write_text("")  # what a killed atomic write leaves
    (out / "evaluations").mkdir()  # what evaluate writes into a run
    capsys.readouterr()
    resumed = [*TINY, "--set", "train.max_epochs=2"]
    assert main(["train", "--config", "word_problems/transformer", *resumed, "--out", str(out), "--resume"]) == 0
    assert json.loads((out / "summary.json").read_text())["epochs"] == 2


def test_a_run_folder_of_its_own_is_recognised_by_what_a_run_writes(tmp_path):
    seeds = tmp_path / "seeds"
    for name in ("seed0/checkpoints", "seed0/logs/session0", "seed1", "seed0/refit/checkpoints"):
        (seeds / name).mkdir(parents=True)
    for name in ("seeds.json", "seeds.md", "seed0/config.yaml", "seed0/model.pt", "seed0/README.md", ".neuromath.lock",
                 "seed1/.neuromath.lock", "seed1/train.log"):
        (seeds / name).write_text("")
    assert check_run_folder(seeds) == seeds and check_run_folder(tmp_path / "absent") == tmp_path / "absent"
    (seeds / "seed0" / "mine.csv").write_text("")
    with pytest.raises(NeuromathError, match=r"holds files that a run does not write \(seed0/mine.csv\)"):
        check_run_folder(seeds)
    (seeds / "seed0" / "mine.csv").unlink()
    (seeds / "seed1" / "model.pt").symlink_to(seeds / "seed0" / "model.pt")  # a link is not a file a run writes
    with pytest.raises(NeuromathError, match=r"\(seed1/model.pt\)"):
        check_run_folder(seeds)
    (tmp_path / "file").write_text("")
    with pytest.raises(NeuromathError, match="exists and is not a folder"):
        check_run_folder(tmp_path / "file")


def test_demo_refuses_a_link_and_a_folder_of_other_files_before_replacing_anything(tmp_path, capsys):
    home = tmp_path / "home"
    (home / "checkpoints").mkdir(parents=True)  # the demo replaces a folder holding checkpoints/: never this one
    (home / "thesis.tex").write_text("years of work\n")
    assert main(["demo", "--out", str(home), "--no-progress"]) == 1
    assert "holds files that a run does not write (thesis.tex)" in error_line(capsys)
    assert (home / "thesis.tex").read_text() == "years of work\n"
    link = tmp_path / "link"
    link.symlink_to(home)
    assert main(["demo", "--out", str(link), "--no-progress"]) == 1
    assert "is a symbolic link" in error_line(capsys)


def test_cv_refuses_a_link_and_a_folder_of_other_files(tmp_path, capsys):
    data = tmp_path / "data.jsonl"
    data.write_text("")
    out = tmp_path / "cv"
    out.mkdir()
    (out / "report.md").write_text("")  # a cross-validation's own report is fine, a user's notes are not
    (out / "notes.txt").write_text("")
    arguments = ["cv", "--config", "word_problems/jaccard", "--data", str(data), "--out"]
    assert main([*arguments, str(out)]) == 1
    assert "holds files that a cross-validation does not write (notes.txt)" in error_line(capsys)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "empty", target_is_directory=True)
    (tmp_path / "empty").mkdir()
    assert main([*arguments, str(link)]) == 1
    assert "is a symbolic link" in error_line(capsys)
    assert list((tmp_path / "empty").iterdir()) == []


def test_sweep_refuses_a_link_as_the_folder_of_its_runs(tmp_path, capsys):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    arguments = ["sweep", "--config", "word_problems/transformer", "--grid", "optim.lr=0.1", "--out"]
    assert main([*arguments, str(tmp_path / "link")]) == 1
    assert "is a symbolic link" in error_line(capsys)
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_lock_is_never_taken_through_a_link_to_a_folder(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(NeuromathError, match="is a symbolic link"):
        with locked(tmp_path / "link"):
            pass
    assert list((tmp_path / "real").iterdir()) == []
    with locked(tmp_path / "real"):  # the folder itself is fine
        assert (tmp_path / "real" / ".neuromath.lock").is_file()


# ------------------------------------------------------------------------------------- data paths: no FIFO, no device


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def fifo_named(fifo, name):
    path = fifo.with_name(name)
    fifo.rename(path)
    return path


def data_readers():
    return {
        "data.jsonl": read_jsonl, "data.csv": read_svamp_csv, "qe.csv": read_question_equation_csv,
        "mwp.json": read_mwptoolkit_json, "detect.csv": detect_format, "examples.csv": read_examples,
        "identities.json": read_equations, "candidates.json": read_candidates, "module.txt": read_module_file,
        "pairs.txt": read_pairs,
    }


@needs_fifo
@pytest.mark.parametrize("name", list(data_readers()))
def test_every_reader_refuses_a_fifo_unread(fifo, name):
    path = fifo_named(fifo, name)
    error = without_hanging(lambda: data_readers()[name](path), path)
    assert isinstance(error, DataFormatError) and str(error) == f"{path}: not a regular file but a FIFO (named pipe)"


@needs_fifo
def test_a_link_to_a_fifo_and_a_link_to_a_device_are_refused_like_them(fifo, tmp_path):
    to_fifo, to_zero = tmp_path / "to_fifo.jsonl", tmp_path / "to_zero.jsonl"
    to_fifo.symlink_to(fifo)
    error = without_hanging(lambda: read_jsonl(to_fifo), fifo)
    assert isinstance(error, DataFormatError) and "a FIFO (named pipe)" in str(error)
    if os.path.exists("/dev/zero"):
        to_zero.symlink_to("/dev/zero")
        error = without_hanging(lambda: read_jsonl(to_zero))
        assert isinstance(error, DataFormatError) and "a character device" in str(error)
        with pytest.raises(DataFormatError, match="not a regular file but a character device"):
            check_data_path(to_zero)
    with pytest.raises(DataFormatError, match="not a regular file but a FIFO"):
        check_data_path(to_fifo)
    with pytest.raises(DataFormatError, match="a folder, not a data file"):
        check_data_path(tmp_path, folder=False)
    assert check_data_path(tmp_path) == tmp_path and check_data_path(tmp_path / "absent") == tmp_path / "absent"


@needs_fifo
def test_found_data_paths_are_files_or_folders(fifo, tmp_path, monkeypatch):
    root = tmp_path / "root"
    (root / "svamp").mkdir(parents=True)
    os.mkfifo(root / "svamp" / "fifo.csv")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataFormatError, match="fifo: not a regular file but a FIFO"):
        find_data("fifo", root)
    with pytest.raises(DataFormatError, match="svamp/fifo.csv: not a regular file but a FIFO"):
        find_data("svamp/fifo.csv", root)  # under the data root too
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    with pytest.raises(NeuromathError, match="a link to a file or folder that does not exist"):
        find_data("dangling", root)


@needs_fifo
def test_fifos_among_the_files_of_a_corpus_are_refused(tmp_path):
    split = tmp_path / "release" / "train-easy"
    split.mkdir(parents=True)
    (split / "algebra__a.txt").write_text("Q?\n1\n")
    os.mkfifo(split / "algebra__b.txt")
    error = without_hanging(lambda: read_release(split), split / "algebra__b.txt")
    assert isinstance(error, DataFormatError) and "algebra__b.txt: not a regular file but a FIFO" in str(error)
    os.mkfifo(tmp_path / "release" / MANIFEST)
    error = without_hanging(lambda: unfinished_generation(tmp_path / "release"), tmp_path / "release" / MANIFEST)
    assert isinstance(error, DataFormatError) and MANIFEST in str(error)
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("1|x\tmul INT+ 2 x\n")
    os.mkfifo(tmp_path / "pairs.txt.stats.json")  # the sidecar that names the generator
    error = without_hanging(lambda: read_pairs(pairs), tmp_path / "pairs.txt.stats.json")
    assert isinstance(error, DataFormatError) and "stats.json: not a regular file but a FIFO" in str(error)
    files = RecordFiles((split / "algebra__b.txt",), 2, lambda path, line, lines: lines)
    for read in (files.count, lambda: InterleavedReader(files).__enter__()):
        error = without_hanging(read, split / "algebra__b.txt")
        assert isinstance(error, DataFormatError) and "FIFO" in str(error)


@needs_fifo
def test_fifos_among_run_and_evidence_files_are_refused(tmp_path):
    for name, read in (("predictions.jsonl", read_predictions), ("predictions.jsonl.gz", read_predictions),
                       ("records.jsonl.gz", read_gzip_lines), ("data.csv", sha256_of)):
        path = tmp_path / name
        os.mkfifo(path)
        error = without_hanging(lambda: read(path), path)
        assert isinstance(error, DataFormatError) and "FIFO" in str(error), (name, error)
    os.mkfifo(tmp_path / ".out.publish.json")  # a FIFO planted as a journal is passed over, never waited on
    assert without_hanging(lambda: check_published(tmp_path / "out"), tmp_path / ".out.publish.json") is None


@needs_fifo
@pytest.mark.parametrize("command", ["data templates", "evaluate", "train", "cv"])
def test_commands_given_a_fifo_as_data_stop_at_once_with_the_reason(tmp_path, command):
    fifo = tmp_path / "problems.csv"
    os.mkfifo(fifo)
    if command == "data templates":
        arguments = ["data", "templates", str(fifo)]
    elif command == "evaluate":
        arguments = ["evaluate", str(write_sequence_run(tmp_path / "run")), "--data", str(fifo)]
    elif command == "train":
        arguments = ["train", "--config", "word_problems/transformer", "--set", f"data.train={fifo}",
                     "--out", str(tmp_path / "out")]
    else:
        arguments = ["cv", "--config", "word_problems/jaccard", "--data", str(fifo), "--out", str(tmp_path / "out")]
    result = run_cli(*arguments)
    status = 1 if command == "train" else 2  # a data argument is checked by the parser; data.train by the command
    assert result.returncode == status and "Traceback" not in result.stderr, result.stderr
    assert f"{fifo}: not a regular file but a FIFO (named pipe)" in result.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "out").exists()


@needs_dev_zero
def test_a_link_to_a_device_given_as_data_is_refused_unread(tmp_path):
    zero = tmp_path / "zero.csv"
    zero.symlink_to("/dev/zero")
    result = run_cli("data", "templates", str(zero))
    assert result.returncode == 2 and "not a regular file but a character device" in result.stderr


# ------------------------------------------------------------------------------------------ bounds of the arguments

# The commands whose arguments are defined elsewhere bound their own counts (see the report).
NOT_NUMBERS = {str, Path, "data_path", "host_name", "origin"}  # option types that read no number


def numeric_arguments():
    """(command, option, type) of every option of the command line whose type reads a number: any type but those of
    NOT_NUMBERS, so a new type must say whether it is bounded."""
    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command")
    found = []

    def walk(name, subparser):
        for action in subparser._actions:
            if action.choices and isinstance(action.choices, dict):
                for inner, child in action.choices.items():
                    walk(f"{name} {inner}", child)
            elif action.type is not None and action.type not in NOT_NUMBERS and \
                    getattr(action.type, "__name__", None) not in NOT_NUMBERS:
                found.append((name, action.option_strings[0] if action.option_strings else action.dest,
                              action.type))

    for name, subparser in commands.choices.items():
        walk(name, subparser)
    return found


def test_every_count_size_worker_and_time_argument_has_an_upper_bound():
    found = numeric_arguments()
    assert len(found) > 40  # the walk found the options (generate's, analyze's, ...)
    unbounded = [(command, option) for command, option, kind in found if not getattr(kind, "bounded", False)]
    assert unbounded == []


@pytest.mark.parametrize("arguments, message", [
    (["generate", "symbolic", "--n", "5", "--max-ops", "1000000"], "argument --max-ops: must be an integer from 1 to"),
    (["generate", "symbolic", "--n", "5", "--workers", "200"] if MAX_WORKERS < 200 else
     ["generate", "symbolic", "--n", "5", "--workers", str(MAX_WORKERS + 1)],
     f"argument --workers: must be an integer from 1 to {MAX_WORKERS} (4 per CPU of this machine, at least 16)"),
    (["generate", "symbolic", "--n", "5", "--time-limit", "inf"], "argument --time-limit: must be a finite number"),
    (["compare", "a", "b", "--samples", "1000000000"],
     f"argument --samples: must be an integer from 1 to {MAX_BOOTSTRAP_SAMPLES}, got 1000000000"),
    (["cv", "--config", "c", "--data", "d", "--out", "o", "--jobs", str(MAX_WORKERS + 1)], "argument --jobs"),
    (["sweep", "--config", "c", "--grid", "a=1", "--out", "o", "--seeds", "101"],
     "argument --seeds: must be an integer from 1 to 100, got 101"),
    (["evaluate", "r", "--data", "d", "--beams", "1,10,1001"], "argument --beams: must be a comma list"),
    (["analyze", "roles", "r", "--data", "d", "--out", "o", "--seed", str(2**32)],
     "argument --seed: must be an integer from 0 to 4294967295"),
    (["demo", "--seed", "-1"], "argument --seed: must be an integer from 0 to 4294967295, got -1"),
])
def test_counts_past_their_bound_are_refused_when_the_command_line_is_read(arguments, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*arguments, "--out", str(tmp_path / "out")] if arguments[0] == "generate" else arguments)
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and message in error and "Traceback" not in error
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------------------------- JSON depth limit


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def test_json_is_read_up_to_the_depth_limit_and_refused_past_it_without_recursion():
    assert load_json(nested(MAX_JSON_DEPTH))["a"]["a"]["a"]
    with pytest.raises(DataFormatError, match=rf"^x.json:1: JSON nested more than {MAX_JSON_DEPTH} levels deep$"):
        load_json(nested(MAX_JSON_DEPTH + 1), "x.json")
    with pytest.raises(DataFormatError, match=r"x.json:3: JSON nested more than"):  # the line where it goes too deep
        load_json('{"a": 1,\n"b": [\n' + "[" * 200 + "]" * 201 + "}", "x.json")
    with pytest.raises(DataFormatError, match=r"x.jsonl:7: JSON nested"):  # a JSON Lines record gives its line
        load_json("[" * 100_000 + "]" * 100_000, "x.jsonl", line=7)
    brackets_in_strings = json.dumps({"text": "[{" * 5000, "quoted": '\\"[' * 300})
    assert json_depth_error(brackets_in_strings) is None and load_json(brackets_in_strings)["text"] == "[{" * 5000
    assert load_json(b"\xef\xbb\xbf[1]") == [1]
    with pytest.raises(ValueError):  # not JSON: json's own error, for the caller to word
        load_json("{")


def test_json_files_of_runs_and_evidence_nested_too_deeply_are_an_error_naming_them(tmp_path):
    deep = tmp_path / "summary.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for read in (read_json, read_json_file):
        with pytest.raises(DataFormatError, match=rf"summary.json:1: JSON nested more than {MAX_JSON_DEPTH} levels"):
            read(deep)
    lines = tmp_path / "predictions.jsonl"
    lines.write_text('{"id": 1, "correct": true}\n' + nested(5000) + "\n")
    with pytest.raises(DataFormatError, match=r"predictions.jsonl:2: JSON nested more than"):
        read_predictions(lines)
    packed = tmp_path / "records.jsonl.gz"
    write_gzip_lines([{"a": 1}], packed)
    assert read_gzip_lines(packed) == [{"a": 1}]

    packed.write_bytes(gzip.compress(b'{"a": 1}\n' + nested(300).encode() + b"\n"))
    with pytest.raises(DataFormatError, match=r"records.jsonl.gz:2: JSON nested more than"):
        read_gzip_lines(packed)


def test_a_journal_nested_too_deeply_is_not_followed(tmp_path):
    (tmp_path / ".out.publish.json").write_text(nested(100_000))
    check_published(tmp_path / "out")  # not one of ours: passed over
    with pytest.raises(NeuromathError, match="unreadable journal of an unfinished write"):
        finish_publishing(tmp_path / "out")


def test_commands_reading_a_summary_nested_too_deeply_print_one_error(tmp_path, capsys):
    run = write_sequence_run(tmp_path / "run")
    (run / "summary.json").write_text("[" * 100_000 + "]" * 100_000)
    assert main(["export", str(run), str(tmp_path / "export")]) == 1
    assert error_line(capsys) == f"error: {run / 'summary.json'}:1: JSON nested more than {MAX_JSON_DEPTH} levels deep"
    assert not (tmp_path / "export").exists()

    assert run_meta(str(run)) == {}  # shown beside accuracies: left out
    with pytest.raises(DataFormatError, match="JSON nested more than"):
        finished_summary(run)


def test_the_server_starts_beside_a_summary_nested_too_deeply(tmp_path):
    pytest.importorskip("fastapi")

    run = write_sequence_run(tmp_path / "run")
    (run / "summary.json").write_text("[" * 100_000 + "]" * 100_000)
    info = run_info("run", Path(run), load(run))
    assert info["accuracy"] is None
