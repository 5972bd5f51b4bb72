"""What the installed package carries and needs: presets and the serve page as package data, one version, extras
that fail with the name of what to install."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import neuromath
from neuromath.cli import main
from neuromath.config import load_config
from neuromath.config.presets import PRESETS, preset_description, preset_names
from neuromath.errors import MissingExtraError
from neuromath.extras import DISTRIBUTION, EXTRAS, require

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_every_preset_lies_in_the_package_and_has_a_one_line_description():
    names = preset_names()
    assert len(names) >= 40 and "word_problems/graph2tree" in names and "identities/tree_lstm" in names
    assert PRESETS.parent == Path(neuromath.__file__).resolve().parent
    for name in names:
        description = preset_description(name)
        assert 10 < len(description) <= 100, name
        assert load_config(name, strict=True).data.task.startswith(name.split("/")[0])  # word_problems_normalized


def test_package_data_names_the_presets_and_the_page():
    data = PYPROJECT["tool"]["setuptools"]["package-data"]["neuromath"]
    assert "configs/*/*.yaml" in data and "serve/page.html" in data and "py.typed" in data
    assert (ROOT / "neuromath" / "py.typed").exists() and (ROOT / "neuromath" / "serve" / "page.html").exists()
    assert not (ROOT / "configs").exists(), "presets live in neuromath/configs only"


def test_the_version_is_written_once():
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "neuromath.__version__"}
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_every_extra_named_in_the_code_exists_in_pyproject():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert set(EXTRAS.values()) <= set(extras)
    assert {"serve", "plots", "hub", "analysis", "mathematics", "docs", "dev"} <= set(extras)
    assert "test" not in extras, "development tools are not a published user extra"
    core = " ".join(PYPROJECT["project"]["dependencies"])
    for optional in ("fastapi", "uvicorn", "scikit-learn", "scipy", "mathematics_dataset", "numpy<2", "matplotlib",
                     "huggingface"):
        assert optional not in core, optional
    users = " ".join(" ".join(extras[name]) for name in extras if name != "dev")
    for tool in ("pytest", "ruff", "selenium", "twine", "build", "hypothesis"):
        assert tool not in users, tool


def test_the_distribution_name_is_not_the_taken_one_and_no_message_names_it():
    assert PYPROJECT["project"]["name"] == DISTRIBUTION == "neuromath-toolkit"
    for path in [*(ROOT / "neuromath").rglob("*.py"), *(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]:
        text = path.read_text(encoding="utf-8")
        assert "install 'neuromath[" not in text and 'install "neuromath[' not in text, path
        assert "pip install neuromath\n" not in text and "pip install neuromath " not in text, path


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_a_missing_extra_is_an_error_naming_it(monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    with pytest.raises(MissingExtraError) as error:
        require(module, "this command")
    assert f"pip install 'neuromath-toolkit[{EXTRAS[module]}]'" in str(error.value)
    assert "this command" in str(error.value)


def test_serve_without_its_extra_stops_with_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    assert main(["serve", str(tmp_path)]) == 1
    assert "pip install 'neuromath-toolkit[serve]'" in capsys.readouterr().err


def test_config_list_prints_every_preset_once():
    listed = subprocess.run([sys.executable, "-m", "neuromath", "config", "list"], capture_output=True, text=True,
                            check=True).stdout.splitlines()
    assert [line.split()[0] for line in listed] == preset_names()
    assert all(len(line.split(None, 1)) == 2 for line in listed)
    tasks = subprocess.run([sys.executable, "-m", "neuromath", "config", "list", "--task", "identities"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert tasks and all(line.startswith("identities/") for line in tasks)


def test_a_reader_that_stops_early_gets_no_error():
    """`neuromath config list | head -2`: the command stops quietly when the pipe closes, no "error: Broken pipe"."""
    listing = subprocess.Popen([sys.executable, "-m", "neuromath", "config", "list"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    first = listing.stdout.readline()
    listing.stdout.close()  # the reader goes; the command is still writing
    error = listing.stderr.read().decode()
    assert listing.wait(timeout=60) in (0, 1) and first.startswith(b"identities/") and error == ""


def test_a_preset_is_named_without_a_path_and_a_wrong_name_suggests_the_closest(capsys):
    assert main(["config", "show", "word_problems/graph2tree"]) == 0
    assert "name: graph2tree" in capsys.readouterr().out
    assert main(["config", "show", "word_problems/graph2tre"]) == 1
    error = capsys.readouterr().err
    assert "did you mean word_problems/graph2tree" in error and "neuromath config list" in error


HIDE_MATPLOTLIB = (  # lightning's torchmetrics imports matplotlib when its metadata is there: import it first, then
    # forget every matplotlib module and make importing one fail as it does where the plots extra is not installed
    "import sys, lightning.pytorch\n"
    "class Hide:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] == 'matplotlib':\n"
    "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
    "sys.meta_path.insert(0, Hide())\n"
    "for name in [name for name in sys.modules if name.split('.')[0] == 'matplotlib']:\n"
    "    del sys.modules[name]\n")


def test_training_without_the_plots_extra_leaves_the_figure_out_and_says_how_to_get_it(tmp_path):
    """matplotlib is the plots extra: a run trains without it, and only the figure is missing."""
    script = HIDE_MATPLOTLIB + (
        "from neuromath.cli import main\n"
        "sys.exit(main(['train', '--config', 'word_problems/transformer', '--set', 'model.d_model=32', '--set',"
        " 'model.n_heads=2', '--set', 'model.d_ff=64', '--set', 'train.progress=false', '--set',"
        " 'train.max_epochs=1', '--set', 'data.generate_train=40', '--set', 'data.generate_valid=8', '--set',"
        f" 'data.generate_test=0', '--out', {str(tmp_path / 'run')!r}]))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "run" / "model.pt").is_file() and (tmp_path / "run" / "metrics.csv").is_file()
    assert not (tmp_path / "run" / "learning_curves.png").exists()
    assert "pip install 'neuromath-toolkit[plots]'" in done.stdout + done.stderr
    blocked = HIDE_MATPLOTLIB + ("from neuromath.evaluation.verification import plot_accuracy_by_depth\n"
                                 "plot_accuracy_by_depth({'m': {8: 0.5}}, 'x.png')\n")
    refused = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, cwd=tmp_path)
    assert refused.returncode != 0 and "neuromath-toolkit[plots]" in refused.stderr
    assert not (tmp_path / "x.png").exists()


def test_config_list_json_names_each_presets_task_and_model(capsys):
    assert main(["config", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in rows] == preset_names()
    for row in rows:
        config = load_config(row["name"])
        assert row == {"name": row["name"], "task": config.data.task, "model": config.model.name,
                       "description": preset_description(row["name"])}
    assert main(["config", "list", "--json", "--task", "identities"]) == 0
    assert {row["name"].split("/", 1)[0] for row in json.loads(capsys.readouterr().out)} == {"identities"}


def test_a_redirected_run_writes_a_line_per_epoch_and_no_bar_redraws(tmp_path):
    """train.progress null (the default): bars only on a terminal; a log file gets one line per epoch."""
    command = [sys.executable, "-m", "neuromath", "train", "--config", "word_problems/transformer",
               "--set", "model.d_model=32", "--set", "model.n_heads=2", "--set", "model.d_ff=64",
               "--set", "train.max_epochs=2", "--set", "train.patience=0", "--set", "data.generate_train=40",
               "--set", "data.generate_valid=8", "--set", "data.generate_test=0", "--out", str(tmp_path / "run")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.startswith("epoch ")]
    assert [line.split(":")[0] for line in lines] == ["epoch 1/2", "epoch 2/2"]
    assert "val value accuracy" in lines[-1] and "%" in lines[-1] and "\r" not in done.stderr
    assert "trained 2 epochs (" in done.stdout
