"""The exit status of neuromath: 0 success, 1 a failure the command reports, 2 a usage error argparse reports."""

import pytest

from neuromath.cli import main


def test_a_missing_data_file_exits_1_with_one_error_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NEUROMATH_DATA", str(tmp_path / "data"))
    code = main(["train", "--config", "word_problems/graph2tree", "--set", "data.train=missing.csv",
                 "--out", str(tmp_path / "run")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(lines) == 1 and lines[0].startswith("error: ") and "missing.csv" in lines[0], lines
    assert not (tmp_path / "run").exists()


def test_an_unknown_option_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--config", "word_problems/graph2tree", "--out", "run", "--no-such-option"])
    assert exit_.value.code == 2 and "unrecognized arguments: --no-such-option" in capsys.readouterr().err


def test_a_config_error_exits_1(capsys):
    assert main(["config", "show", "word_problems/graph2tree", "--set", "train.max_epoch=1"]) == 1
    assert "did you mean train.max_epochs?" in capsys.readouterr().err
