"""A broken run folder (truncated or foreign model.pt, empty config.yaml, broken vocabulary) and numeric options out
of range end in one clear error line and exit 2, never a traceback."""

import json
import shutil

import pytest
import torch
from run_folders import JERRY, error_line, write_classifier_run, write_sequence_run

import neuromath
from neuromath.api import load_run_weights
from neuromath.cli import main
from neuromath.errors import ConfigError, DataFormatError, NeuromathError


@pytest.fixture
def run_dir(tmp_path):
    return write_sequence_run(tmp_path / "run")


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "test.jsonl"
    assert main(["generate", "word_problems", "--n", "3", "--seed", "1", "--out", str(path)]) == 0
    return path


def test_an_intact_hand_made_run_loads_and_solves(run_dir, capsys):
    assert main(["solve", str(run_dir), JERRY, "--json"]) in (0, 1)  # untrained: maybe no well-formed equation
    assert json.loads(capsys.readouterr().out)["text"] == JERRY


@pytest.mark.parametrize("keep", [0, 10, 0.5])
def test_a_truncated_weights_file_is_one_error_line(run_dir, data_file, capsys, keep):
    weights = run_dir / "model.pt"
    data = weights.read_bytes()
    weights.write_bytes(data[: int(len(data) * keep) if isinstance(keep, float) else keep])
    message = f"{weights}: not a file of plain saved data: truncated, corrupt or code"
    assert main(["solve", str(run_dir), JERRY]) == 2
    assert error_line(capsys).startswith(f"error: {message}")
    assert main(["evaluate", str(run_dir), "--data", str(data_file)]) == 1
    assert error_line(capsys).startswith(f"error: {message}")
    with pytest.raises(DataFormatError, match="not a file of plain saved data"):
        neuromath.load(run_dir)


def test_weights_of_another_run_name_the_first_size_mismatch(tmp_path, run_dir, data_file, capsys):
    other = write_sequence_run(tmp_path / "other", source_words=("had", "pens", "took", ".", "gave", "more", "left"))
    shutil.copy(other / "model.pt", run_dir / "model.pt")
    weights = run_dir / "model.pt"
    expected = (f"error: {weights}: not a weights file of this run's model (size mismatch for "
                "source_embedding.weight: checkpoint (13, 16) vs model (10, 16))")
    assert main(["solve", str(run_dir), JERRY]) == 2
    assert error_line(capsys) == expected
    assert main(["evaluate", str(run_dir), "--data", str(data_file)]) == 1
    assert error_line(capsys) == expected
    with pytest.raises(DataFormatError, match="size mismatch for source_embedding.weight"):
        neuromath.load(run_dir)


def test_a_weights_file_of_other_keys_or_not_a_state_dict(run_dir, tmp_path):
    model = neuromath.load(run_dir).model
    torch.save({"something.else": torch.zeros(2)}, tmp_path / "keys.pt")
    with pytest.raises(DataFormatError, match=r"keys.pt: not a weights file of this run's model \(missing .* and \d+ "
                                              r"more; unexpected something.else\)"):
        load_run_weights(model, tmp_path / "keys.pt")
    torch.save(torch.zeros(3), tmp_path / "tensor.pt")
    with pytest.raises(DataFormatError, match="tensor.pt: not a weights file .*Tensor"):
        load_run_weights(model, tmp_path / "tensor.pt")
    (tmp_path / "text.pt").write_text("hello\n")
    with pytest.raises(DataFormatError, match="text.pt: not a file of plain saved data"):
        load_run_weights(model, tmp_path / "text.pt")


def test_an_empty_config_of_a_run_is_one_error_line(run_dir, data_file, capsys):
    (run_dir / "config.yaml").write_text("")
    message = f"error: {run_dir / 'config.yaml'}: the config file is empty: it names no task"
    assert main(["solve", str(run_dir), JERRY]) == 2
    assert error_line(capsys).startswith(message)
    assert main(["evaluate", str(run_dir), "--data", str(data_file)]) == 1
    assert error_line(capsys).startswith(message)
    with pytest.raises(ConfigError, match="the config file is empty"):
        neuromath.load(run_dir)


@pytest.mark.parametrize("content, reason", [
    ("{", "not a vocabulary file"),
    ('{"level": "word", "tokens": 5}', "tokens must be a list of strings"),
    ('{"level": "words", "tokens": ["<pad>", "<bos>", "<eos>", "<unk>"]}', "level must be 'word' or 'char'"),
    ('{"level": "word", "tokens": ["<pad>", "<bos>", "<eos>", "<unk>", "a", "a"]}', "a token is listed twice"),
])
def test_a_broken_vocabulary_is_one_error_line(run_dir, capsys, content, reason):
    (run_dir / "source_vocab.json").write_text(content)
    assert main(["solve", str(run_dir), JERRY]) == 2
    line = error_line(capsys)
    assert line.startswith(f"error: {run_dir / 'source_vocab.json'}: ") and reason in line


def test_a_classifier_run_with_foreign_or_truncated_weights(tmp_path):
    run = write_classifier_run(tmp_path / "tree")
    other = write_classifier_run(tmp_path / "wider", d_model=12)
    assert isinstance(neuromath.load(run), neuromath.api.LoadedClassifier)
    shutil.copy(other / "model.pt", run / "model.pt")
    with pytest.raises(DataFormatError, match=r"model.pt: not a weights file of this run's model \(size mismatch for "
                                              r"[\w.]+: checkpoint \(\d+, 12\) vs model \(\d+, 8\)"):
        neuromath.load(run)
    (run / "model.pt").write_bytes(b"")
    with pytest.raises(DataFormatError,
                       match=r"model.pt: not a file of plain saved data: truncated, corrupt or code \(an empty file\)"):
        neuromath.api.load_classifier(run)


@pytest.mark.parametrize("option, value, message", [
    ("--per-module", "-1", "argument --per-module: must be an integer from 0 to 10000000, got -1"),
    ("--beam", "0", "argument --beam: must be an integer from 1 to 1000, got 0"),
    ("--beam", "1000000", "argument --beam: must be an integer from 1 to 1000, got 1000000"),
    ("--nbest", "-1", "argument --nbest: must be an integer from 1 to 1000, got -1"),
    ("--length-penalty", "nan", "argument --length-penalty: must be a finite number, got nan"),
    ("--length-penalty", "inf", "argument --length-penalty: must be a finite number, got inf"),
    ("--length-penalty", "1e308", "argument --length-penalty: must be a number from -10 to 10, got 1e+308"),
    ("--length-penalty", "-11", "argument --length-penalty: must be a number from -10 to 10, got -11"),
    ("--beam", "two", "argument --beam: must be an integer from 1 to 1000, got 'two'"),
])
def test_numeric_options_out_of_range_are_refused_at_parsing(run_dir, data_file, capsys, option, value, message):
    with pytest.raises(SystemExit) as exit:
        main(["evaluate", str(run_dir), "--data", str(data_file), option, value])
    assert exit.value.code == 2 and capsys.readouterr().err.strip().endswith(message)
    if option != "--per-module":
        with pytest.raises(SystemExit) as exit:
            main(["solve", str(run_dir), JERRY, option, value])
        assert exit.value.code == 2 and capsys.readouterr().err.strip().endswith(message)


def test_decoding_options_from_python_are_checked_like_the_config(run_dir):
    with pytest.raises(ConfigError, match=r"decode.length_penalty must be in \[-10, 10\], got nan"):
        neuromath.load(run_dir, length_penalty=float("nan"))
    with pytest.raises(ConfigError, match=r"decode.length_penalty must be in \[-10, 10\], got 1e\+308"):
        neuromath.load(run_dir, length_penalty=1e308)
    with pytest.raises(ConfigError, match=r"decode.beam must be in \[1, 1000\], got 0"):
        neuromath.load(run_dir, beam=0, nbest=1)
    with pytest.raises(ConfigError, match=r"decode.beam must be in \[1, 1000\], got 1000000"):
        neuromath.load(run_dir, beam=1_000_000)
    with pytest.raises(ConfigError, match=r"^decode.max_len \(513\) cannot exceed model.max_len \(512\)"):
        neuromath.load(run_dir, max_len=513)
    with pytest.raises(ConfigError, match=r"^decode.max_len \(513\) cannot exceed model.max_len \(512\)"):
        neuromath.load(run_dir).with_decode(max_len=513)
    assert neuromath.load(run_dir, max_len=512).decode.max_len == 512
    with pytest.raises(ConfigError, match=r"nbest \(4\) cannot exceed the beam width \(2\)"):
        neuromath.load(run_dir, beam=2, nbest=4)
    with pytest.raises(ConfigError, match="unknown decoding option"):
        neuromath.load(run_dir, beams=2)


def test_a_negative_per_module_is_refused_from_python_too():
    from neuromath.experiments.evaluate_runs import EvaluateRequest

    with pytest.raises(NeuromathError, match=r"--per-module must be >= 0 \(0: every question\), got -1"):
        EvaluateRequest(data="x", per_module=-1)
