"""Adding a model is one module and one preset (docs/design.md, "Adding a model"): a package registers a toy
encoder-decoder with one ``@ModelConfig.register`` and names it in an entry point; ``neuromath train`` with a preset
that names the model trains it and ``neuromath.load`` answers with it. No file of neuromath is edited."""

from __future__ import annotations

import csv
import importlib
import sys
from pathlib import Path

import pytest

import neuromath
from neuromath.cli import main
from neuromath.config import ModelConfig, load_config
from neuromath.errors import ConfigError

MODULE = Path(__file__).parent / "support" / "toy_seq2seq.py"  # the one module, copied into a package

PRESET = """\
data:
  task: word_problems
  generate_train: 200
  generate_valid: 40
  generate_test: 0
model:
  name: toy_seq2seq
  d_model: 64
optim:
  lr: 0.003
train:
  max_epochs: 6
  patience: 0
  batch_size: 16
  progress: false
"""

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.fixture
def toy_package(tmp_path, monkeypatch):
    """A folder on sys.path holding the toy module and an installed distribution's metadata whose entry point of
    the group ``neuromath.models`` names it; the registration is undone afterwards."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "toy_seq2seq.py").write_text(MODULE.read_text())
    info = site / "toy_seq2seq-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-seq2seq\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[neuromath.models]\ntoy_seq2seq = toy_seq2seq\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    monkeypatch.setattr(ModelConfig, "members", dict(ModelConfig.members))
    monkeypatch.setattr(ModelConfig, "builders", dict(ModelConfig.builders))
    monkeypatch.delitem(sys.modules, "toy_seq2seq", raising=False)
    yield site
    sys.modules.pop("toy_seq2seq", None)


def train_losses(run: Path) -> list[float]:
    with open(run / "metrics.csv", newline="") as handle:
        return [float(row["train_loss_epoch"]) for row in csv.DictReader(handle) if row["train_loss_epoch"]]


def test_a_model_in_one_module_trains_from_one_preset_and_loads_by_its_run(toy_package, tmp_path, capsys):
    assert "toy_seq2seq" not in ModelConfig.members  # registered when a config names it, not before
    preset = tmp_path / "toy.yaml"
    preset.write_text(PRESET)
    run = tmp_path / "run"
    assert main(["train", "--config", str(preset), "--out", str(run)]) == 0
    assert type(load_config(str(preset)).model).__name__ == "ToyConfig"
    losses = train_losses(run)
    assert len(losses) == 6 and losses[-1] < 0.7 * losses[0]  # it learns
    solver = neuromath.load(run)
    assert type(solver.model).__name__ == "ToySeq2Seq"
    assert solver.solve("Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?")


def test_a_registration_says_what_a_model_of_its_kind_lacks(toy_package):
    import dataclasses
    from typing import ClassVar

    from neuromath.config.rules import SEQUENCE

    @dataclasses.dataclass(frozen=True)
    class Narrow(ModelConfig):
        kind: ClassVar[str] = SEQUENCE
        name: str = "narrow"

    with pytest.raises(TypeError, match="Narrow \\(sequence\\) must have the keys d_model, max_len"):
        ModelConfig.register("narrow", build="narrow:Model")(Narrow)
    with pytest.raises(TypeError, match="build must be a callable or a 'module:attribute' path"):
        ModelConfig.register("narrow", build="narrow.Model")
    with pytest.raises(ConfigError, match="unknown model 'no_such_model'"):
        load_config(None, ["model.name=no_such_model"])


@pytest.mark.parametrize("module_text, message", [
    ("raise RuntimeError('no GPU here')", r"entry point 'toy_seq2seq' .* failed to import: RuntimeError: no GPU here"),
    ("X = 1", r"entry point 'toy_seq2seq' .* imported but registered no model of that name"),
])
def test_a_broken_entry_point_is_a_config_error_naming_it(toy_package, module_text, message):
    (toy_package / "toy_seq2seq.py").write_text(module_text)
    with pytest.raises(ConfigError, match=message):
        load_config(None, ["model.name=toy_seq2seq"])
