"""A run folder received from someone else is read defensively: a FIFO, a device or a folder in place of
config.yaml, model.pt or a vocabulary, a config or vocabulary larger than a run writes, and a vocabulary nested too
deeply each end in one clear error naming the file, at once. Where a regression would hang (a FIFO waits for a
writer), the reader runs in a thread that the test unblocks and fails instead of hanging CI."""

import os

import pytest
from hang_guard import without_hanging
from run_folders import JERRY, error_line, write_classifier_run, write_sequence_run

import neuromath
from neuromath.cli import main
from neuromath.config import load_config
from neuromath.errors import ConfigError, DataFormatError, NeuromathError
from neuromath.safe_read import read_run_file
from neuromath.text import Vocabulary

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
needs_dev_zero = pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")


@pytest.fixture
def run_dir(tmp_path):
    return write_sequence_run(tmp_path / "run")


def replace_with_fifo(path):
    path.unlink()
    os.mkfifo(path)
    return path


@needs_fifo
@pytest.mark.parametrize("name, error", [
    ("config.yaml", ConfigError), ("model.pt", DataFormatError), ("source_vocab.json", DataFormatError),
    ("target_vocab.json", DataFormatError),
])
def test_a_fifo_in_a_sequence_run_is_refused_unread(run_dir, capsys, name, error):
    fifo = replace_with_fifo(run_dir / name)
    result = without_hanging(lambda: neuromath.load(run_dir), fifo)
    assert isinstance(result, error), result
    assert str(result) == f"{fifo}: not a regular file but a FIFO (named pipe)"
    assert without_hanging(lambda: main(["solve", str(run_dir), JERRY]), fifo) == 2
    assert error_line(capsys) == f"error: {fifo}: not a regular file but a FIFO (named pipe)"


@needs_fifo
@pytest.mark.parametrize("name", ["config.yaml", "model.pt", "node_vocab.json"])
def test_a_fifo_in_a_classifier_run_is_refused_unread(tmp_path, name):
    run = write_classifier_run(tmp_path / "run")
    fifo = replace_with_fifo(run / name)
    result = without_hanging(lambda: neuromath.load(run), fifo)
    assert isinstance(result, NeuromathError) and str(result) == f"{fifo}: not a regular file but a FIFO (named pipe)"


@needs_dev_zero
@pytest.mark.parametrize("name, error", [
    ("config.yaml", ConfigError), ("model.pt", DataFormatError), ("source_vocab.json", DataFormatError),
])
def test_a_link_to_dev_zero_is_refused_unread(run_dir, name, error):
    link = run_dir / name
    link.unlink()
    link.symlink_to("/dev/zero")
    result = without_hanging(lambda: neuromath.load(run_dir))
    assert isinstance(result, error), result
    assert str(result) == f"{link}: not a regular file but a character device"


def test_a_folder_in_place_of_the_weights_is_refused(run_dir):
    (run_dir / "model.pt").unlink()
    (run_dir / "model.pt").mkdir()
    with pytest.raises(DataFormatError, match=r"model.pt: not a regular file but a folder$"):
        neuromath.load(run_dir)


def test_links_to_regular_files_are_still_read(run_dir, tmp_path):
    for name in ("config.yaml", "model.pt", "source_vocab.json"):
        (run_dir / name).rename(tmp_path / name)
        (run_dir / name).symlink_to(tmp_path / name)
    assert neuromath.load(run_dir).config.data.task == "word_problems"


def test_a_config_larger_than_any_run_writes_is_refused_unparsed(run_dir, capsys):
    config = run_dir / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "#" * 2**20 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{config}: too large for a config file: 1,0[\d,]+ bytes, more than "
                                          r"the 1,048,576 it may hold$"):
        neuromath.load(run_dir)
    assert main(["solve", str(run_dir), JERRY]) == 2
    assert error_line(capsys).startswith(f"error: {config}: too large for a config file")


def test_a_vocabulary_larger_than_the_limit_is_refused_unparsed(run_dir, monkeypatch):
    monkeypatch.setattr("neuromath.text.vocabulary.VOCABULARY_LIMIT", 100)
    with pytest.raises(DataFormatError, match=r"source_vocab.json: too large for a vocabulary: \d+ bytes, more than "
                                              "the 100 it may hold$"):
        neuromath.load(run_dir)


@pytest.mark.parametrize("content", ["[" * 100_000, '{"tokens": ' * 50_000])
def test_a_deeply_nested_vocabulary_is_a_clear_error(run_dir, capsys, content):
    vocab = run_dir / "target_vocab.json"
    vocab.write_text(content)
    with pytest.raises(DataFormatError, match=r"target_vocab.json:1: JSON nested more than 100 levels deep$"):
        Vocabulary.load(vocab)
    assert main(["solve", str(run_dir), JERRY]) == 2
    assert error_line(capsys) == f"error: {vocab}:1: JSON nested more than 100 levels deep"


def test_read_run_file_reads_within_the_limit_and_names_the_file(tmp_path):
    path = tmp_path / "summary.json"
    path.write_bytes(b"x" * 10)
    assert read_run_file(path, 10) == b"x" * 10
    with pytest.raises(DataFormatError, match=rf"^{path}: too large for a summary: 10 bytes, more than the 9 it may "
                                              "hold$"):
        read_run_file(path, 9, "summary")
    with pytest.raises(DataFormatError, match=rf"^{tmp_path / 'missing'}: cannot read: No such file or directory$"):
        read_run_file(tmp_path / "missing", 10)


@needs_fifo
def test_a_fifo_given_as_the_config_is_refused_unread(tmp_path, capsys):
    fifo = tmp_path / "mine.yaml"
    os.mkfifo(fifo)
    result = without_hanging(lambda: load_config(fifo, strict=True), fifo)
    assert isinstance(result, ConfigError) and str(result) == f"{fifo}: not a regular file but a FIFO (named pipe)"
    assert without_hanging(lambda: main(["config", "show", str(fifo)]), fifo) == 1
    assert error_line(capsys) == f"error: {fifo}: not a regular file but a FIFO (named pipe)"


@needs_fifo
def test_a_fifo_as_summary_is_refused_unread_by_every_reader_of_summaries(run_dir, tmp_path):
    from neuromath.experiments.evaluate_runs import run_meta
    from neuromath.experiments.fit_then_test import read_tested_summary

    fifo = tmp_path / "run" / "summary.json"
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo)
    error = without_hanging(lambda: read_tested_summary(run_dir), fifo)
    assert isinstance(error, NeuromathError) and "FIFO" in str(error)
    assert without_hanging(lambda: run_meta(str(run_dir)), fifo) == {}  # shown beside accuracies: left out
