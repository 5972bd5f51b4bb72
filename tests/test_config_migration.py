"""One-time check of the move to one config class per model and task: every preset resolves to exactly what it
resolved to before (tests/fixtures/presets_before_config_classes.json, written by the code of the single ModelConfig
and DataConfig: ``{preset: config_to_dict(load_config(preset, strict=True), applicable_only=True)}``)."""

import json
from pathlib import Path

import pytest

from neuromath.config import config_to_dict, load_config
from neuromath.config_presets import preset_names

BEFORE = json.loads((Path(__file__).resolve().parent / "fixtures" / "presets_before_config_classes.json")
                    .read_text(encoding="utf-8"))


def test_the_same_presets():
    assert sorted(BEFORE) == preset_names()


@pytest.mark.parametrize("preset", sorted(BEFORE))
def test_each_preset_resolves_as_before(preset):
    assert config_to_dict(load_config(preset, strict=True), applicable_only=True) == BEFORE[preset]
