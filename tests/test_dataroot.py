"""neuromath/dataroot.py: where relative data paths are read from, and what a missing corpus says."""

import pytest

from neuromath.cli import main
from neuromath.config import load_config
from neuromath.dataroot import data_root, find_data, resolve_data_paths
from neuromath.errors import DataNotFoundError


def test_the_root_is_the_config_then_the_environment_then_dot_data(monkeypatch, tmp_path):
    monkeypatch.setenv("NEUROMATH_DATA", str(tmp_path / "env"))
    assert data_root() == tmp_path / "env"
    assert data_root(str(tmp_path / "configured")) == tmp_path / "configured"
    monkeypatch.delenv("NEUROMATH_DATA")
    assert str(data_root()) == "data"


def test_the_working_directory_comes_first_then_the_root(monkeypatch, tmp_path):
    root, work = tmp_path / "root", tmp_path / "work"
    (root / "mawps-cv" / "fold0").mkdir(parents=True)
    (root / "mawps-cv" / "fold0" / "dev.csv").write_text("x")
    (root / "both.csv").write_text("root")
    work.mkdir()
    (work / "both.csv").write_text("work")
    monkeypatch.chdir(work)
    assert find_data("mawps-cv/fold0/dev.csv", root) == root / "mawps-cv" / "fold0" / "dev.csv"
    assert find_data("both.csv", root).read_text() == "work"  # a file the user has here wins
    absolute = root / "both.csv"
    assert find_data(absolute, tmp_path / "elsewhere") == absolute


def test_a_missing_benchmark_file_names_its_corpus_and_where_to_get_it(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataNotFoundError) as error:
        find_data("asdiv-a-cv/fold3/train.csv", tmp_path / "root")
    message = str(error.value)
    assert "\n" not in message and "asdiv-a-cv/fold3/train.csv" in message and str(tmp_path / "root") in message
    assert "ASDiv-A" in message and "github.com/arkilpatel/SVAMP" in message and "docs/data.md" in message
    with pytest.raises(DataNotFoundError) as error:  # a file of no known corpus: where it was looked for, no guess
        find_data("my/own.csv", tmp_path / "root")
    assert "not in the working directory nor under the data root" in str(error.value)
    assert "It is" not in str(error.value)
    with pytest.raises(DataNotFoundError, match="no such file"):
        find_data(tmp_path / "absent.csv")


def test_a_preset_reads_its_benchmark_files_under_the_data_root(monkeypatch, tmp_path):
    root = tmp_path / "root"
    for name in ("train.csv", "dev.csv"):
        (root / "mawps-cv" / "fold0").mkdir(parents=True, exist_ok=True)
        (root / "mawps-cv" / "fold0" / name).write_text("x")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEUROMATH_DATA", str(root))
    config = load_config("word_problems/graph2tree", strict=True)
    assert config.data.train == "mawps-cv/fold0/train.csv"  # the preset names it relative to the root ...
    resolved = resolve_data_paths(config)
    assert resolved.data.train == str(root / "mawps-cv" / "fold0" / "train.csv")  # ... and a run reads it there
    assert resolved.data.test == str(root / "mawps-cv" / "fold0" / "dev.csv")
    other = tmp_path / "other"
    (other / "mawps-cv" / "fold0").mkdir(parents=True)
    (other / "mawps-cv" / "fold0" / "train.csv").write_text("x")
    with pytest.raises(DataNotFoundError, match="mawps-cv/fold0/dev.csv"):  # data.root wins over the environment
        resolve_data_paths(load_config("word_problems/graph2tree", [f"data.root={other}"], strict=True))


def test_train_extra_is_a_list_of_files_each_found(monkeypatch, tmp_path):
    (tmp_path / "a.json").write_text("[]")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "b.json").write_text("[]")
    monkeypatch.chdir(tmp_path)
    config = load_config("identities/tree_lstm", ["data.root=root", "data.train_extra=a.json, b.json"], strict=True)
    assert resolve_data_paths(config).data.train_extra == "a.json,root/b.json"  # here, and under the root


def test_train_stops_on_a_missing_corpus_before_it_makes_a_run(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEUROMATH_DATA", str(tmp_path / "empty"))
    assert main(["train", "--config", "word_problems/gts", "--out", str(tmp_path / "run")]) == 1
    error = capsys.readouterr().err
    assert "mawps-cv/fold0/train.csv" in error and "MAWPS" in error and len(error.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_command_line_data_options_are_found_under_the_root_too(monkeypatch, tmp_path, capsys):
    root = tmp_path / "root"
    (root / "mawps-cv" / "fold0").mkdir(parents=True)
    (root / "mawps-cv" / "fold0" / "train.csv").write_text(
        "Question,Numbers,Equation,Answer,group_nums,Body,Ques_Statement\n"
        "how many are number0 and number1 ?,2 3,+ number0 number1,5.0,[],,\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEUROMATH_DATA", str(root))
    assert main(["data", "templates", "mawps-cv/fold0/train.csv", "--json"]) == 0
    assert str(root / "mawps-cv" / "fold0" / "train.csv") in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["data", "templates", "mawps-cv/fold1/train.csv"])
    assert exit_.value.code == 2 and "MAWPS" in capsys.readouterr().err
