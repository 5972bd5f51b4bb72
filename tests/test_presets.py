"""The presets (neuromath/configs/, named <task>/<model>) load strictly, name only what differs from the defaults of
their task's and model's classes, and only keys that apply to their task and model.

tests/fixtures/presets_resolved.json is every preset as an earlier version resolved and saved it, every key of every
section written out (``{preset name: config_to_dict(load_config(name))}`` when there was one ModelConfig and one
DataConfig): the config.yaml of a run folder of that time, which must still load.
"""

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from neuromath.config import (
    MODEL_NAMES,
    SECTIONS,
    TASK_NAMES,
    Config,
    DataConfig,
    ModelConfig,
    applies,
    config_to_dict,
    load_config,
    save_config,
    section_keys,
    show_config,
    why_not_applicable,
)
from neuromath.config.presets import find_config, preset_names
from neuromath.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "presets_resolved.json").read_text(encoding="utf-8"))
PRESETS = preset_names()


def class_defaults(task: str, model: str) -> dict:
    """Every key of a run of ``task`` with ``model`` at its default: the task's and model's classes, the shared
    sections."""
    values = config_to_dict(Config(data=DataConfig(task=task), model=ModelConfig(name=model)))
    return values


def test_there_are_presets_for_every_task():
    assert len(PRESETS) >= 40
    assert {name.split("/")[0] for name in PRESETS} == set(TASK_NAMES) - {"word_problems_normalized"}


@pytest.mark.parametrize("preset", PRESETS)
def test_each_preset_loads_strictly_and_names_its_task_and_model_and_only_what_differs(preset):
    config = load_config(preset, strict=True)
    text = find_config(preset).read_text(encoding="utf-8")
    assert text.startswith("#"), f"{preset}: the comment that explains the preset comes first"
    values = yaml.safe_load(text)
    base = values.pop("extends", None)  # a variant names only what differs from the preset it extends
    assert list(values) == [section for section in SECTIONS if section in values]  # data, model, optim, train, decode
    if base is None:
        assert "task" in values["data"] and "name" in values["model"]
        defaults = class_defaults(values["data"]["task"], values["model"]["name"])
    else:
        assert base in PRESETS, f"{preset}: extends {base}, not a shipped preset"
        defaults = config_to_dict(load_config(base, strict=True))
    task, model = config.data.task, config.model.name
    for section, keys in values.items():
        assert list(keys) == [key for key in defaults[section] if key in keys], f"{preset}: {section} out of order"
        for key, value in keys.items():
            if (section, key) in (("data", "task"), ("model", "name")):
                continue
            assert why_not_applicable(f"{section}.{key}", task, model) is None, f"{preset}: {section}.{key}"
            assert value != defaults[section][key], f"{preset}: {section}.{key} is the default {value!r}"


def test_the_model_and_data_classes_have_exactly_the_keys_that_apply():
    """A key that does not belong to a model or task does not exist on its class; every key of the section exists
    on some class."""
    for task in TASK_NAMES:
        keys = {item.name for item in dataclasses.fields(DataConfig.member(task))}
        assert keys == {key for key in section_keys("data") if why_not_applicable(f"data.{key}", task, "transformer")
                        is None}, task
    for model in MODEL_NAMES:
        keys = {item.name for item in dataclasses.fields(ModelConfig.member(model))}
        assert keys == {key for key in section_keys("model")
                        if why_not_applicable(f"model.{key}", "word_problems", model) is None}, model
    assert "n_heads" not in {item.name for item in dataclasses.fields(ModelConfig.member("tree_lstm"))}
    assert "modules" not in {item.name for item in dataclasses.fields(DataConfig.member("word_problems"))}
    assert {"stack_depth", "dropout_site", "tree_leaf", "number_encoder"} <= {
        item.name for item in dataclasses.fields(ModelConfig.member("stack_mi_tree_lstm"))}


def write_yaml(path: Path, values: dict) -> Path:
    path.write_text(yaml.safe_dump(values, sort_keys=False), encoding="utf-8")
    return path


def test_a_file_with_a_key_that_does_not_apply_is_refused(tmp_path):
    path = write_yaml(tmp_path / "mine.yaml", {"data": {"task": "word_problems", "modules": "arithmetic__*"},
                                               "model": {"name": "transformer"}})
    with pytest.raises(ConfigError) as error:
        load_config(path, strict=True)
    assert str(error.value) == (
        f"{path}: data.modules does not apply to the word_problems task (it applies to: mathematics_dataset)"
    )
    # a run folder's config.yaml of an earlier version: read back, the key of another task left out
    assert not hasattr(load_config(path).data, "modules")
    with pytest.raises(ConfigError, match=r"^--set data.modules=x: data.modules does not apply"):
        load_config(None, ["data.modules=x"])  # a key asked for now, not strict: refused, not left out


def test_model_keys_are_refused_for_models_that_do_not_read_them_default_values_included(tmp_path):
    path = write_yaml(tmp_path / "tree.yaml", {"data": {"task": "identities"},
                                               "model": {"name": "tree_lstm", "attention": "tp", "n_heads": 4},
                                               "decode": {"beam": 4}})
    with pytest.raises(ConfigError) as error:
        load_config(path, strict=True)
    message = str(error.value)
    for key in ("model.attention", "model.n_heads", "decode.beam"):
        assert f"{path}: {key} does not apply to the tree_lstm model" in message
    assert "model.n_heads does not apply to the tree_lstm model (it applies to: transformer, group_attention)" \
        in message


def test_set_of_a_key_that_does_not_apply_is_refused():
    preset = "word_problems/transformer"
    with pytest.raises(ConfigError) as error:
        load_config(preset, ["data.modules=x"], strict=True)
    assert str(error.value) == (
        f"{preset}, --set data.modules=x: data.modules does not apply to the word_problems task "
        "(it applies to: mathematics_dataset)"
    )
    no_groups = r"^--set model.groups=global: model.groups does not apply to the transformer model"
    with pytest.raises(ConfigError, match=no_groups):
        load_config(None, ["model.groups=global"], strict=True)
    with pytest.raises(ConfigError, match="data.modules does not apply"):
        show_config(preset, ["data.modules=x"])


def test_the_final_task_and_model_decide_and_the_message_names_who_gave_the_key():
    preset = "word_problems/tp_transformer"  # model.attention: tp
    with pytest.raises(ConfigError) as error:
        load_config(preset, ["model.name=dns"], strict=True)
    assert str(error.value) == f"{preset}: model.attention does not apply to the dns model (it applies to: transformer)"
    changed = load_config("word_problems/transformer",
                          ["data.task=mathematics_dataset", "data.modules=numbers__*"], strict=True)
    assert changed.data.modules == "numbers__*"


@pytest.mark.parametrize(("override", "known"),
                         [("model.name=gtss", MODEL_NAMES), ("data.task=word_problem", TASK_NAMES)])
def test_an_unknown_model_or_task_is_an_error_that_names_the_known_ones(override, known):
    with pytest.raises(ConfigError, match="unknown") as error:
        load_config("word_problems/gts", [override], strict=True)
    message = str(error.value)
    assert f"--set {override}" in message and all(name in message for name in known)
    with pytest.raises(ConfigError, match="unknown"):  # also where nothing is strict: a run folder's config.yaml
        load_config(None, [override])


@pytest.mark.parametrize("preset", ["identities/tree_lstm", "word_problems/dns",
                                    "word_problems/jaccard", "symbolic/tree_relative_paper"])
def test_a_run_config_written_in_full_by_earlier_versions_still_loads(tmp_path, preset):
    old = FIXTURE[preset]  # every key, some that do not apply with values other than the defaults
    path = write_yaml(tmp_path / "config.yaml", old)
    config = load_config(path)
    loaded = config_to_dict(config, applicable_only=True)
    defaults = class_defaults(old["data"]["task"], old["model"]["name"])
    for section, keys in loaded.items():  # the file's own values where it has the key (not today's preset)
        assert list(keys) == [key for key in defaults[section] if applies(f"{section}.{key}", config)], section
        for key, value in keys.items():
            assert value == old[section].get(key, defaults[section][key]), f"{section}.{key}"
    assert not set(config_to_dict(config)["model"]) >= set(old["model"])  # the other models' keys are left out
    with pytest.raises(ConfigError, match="does not apply"):  # a full file is no preset: strict refuses it
        load_config(path, strict=True)


def test_an_old_run_resumes_with_the_shortened_preset(tmp_path):
    """check_resume_config compares what applies: keys the shortened preset no longer names do not stop a resume,
    while the values it changed on purpose (tree_lstm's dropout, plateau patience, learning rate and batch size) are
    named."""
    from neuromath.training.run_folder import check_resume_config

    preset = "identities/tree_lstm"
    saved = load_config(write_yaml(tmp_path / "config.yaml", FIXTURE[preset]))
    # the values the preset changed on purpose since
    as_before = ["model.dropout=0.0", "optim.plateau_patience=2", "optim.lr=0.001", "train.batch_size=50"]
    check_resume_config(saved, load_config(preset, as_before, strict=True))  # epochs and patience may change
    with pytest.raises(ConfigError, match="model.d_model: 50 -> 64"):
        check_resume_config(saved, load_config(preset, as_before + ["model.d_model=64"], strict=True))
    with pytest.raises(ConfigError, match=r"model.dropout: 0.0 -> 0.2; optim.lr: 0.001 -> 0.0015; "
                                          r"optim.plateau_patience: 2 -> 8; train.batch_size: 50 -> 100$"):
        check_resume_config(saved, load_config(preset, strict=True))


@pytest.mark.parametrize("preset", PRESETS)
def test_save_config_writes_exactly_the_keys_that_apply_and_round_trips(tmp_path, preset):
    config = load_config(preset, strict=True)
    save_config(config, tmp_path / "config.yaml")
    saved = yaml.safe_load((tmp_path / "config.yaml").read_text(encoding="utf-8"))
    expected = {section: [key for key in keys if applies(f"{section}.{key}", config)]
                for section, keys in config_to_dict(config).items()}
    assert {section: list(keys) for section, keys in saved.items()} == expected
    assert load_config(tmp_path / "config.yaml", strict=True) == config
    assert yaml.safe_load(show_config(preset)) == saved


def test_show_config_resolves_overrides_and_lists_every_applying_key():
    shown = yaml.safe_load(show_config("word_problems/transformer", ["model.d_model=64"]))
    assert shown["model"]["d_model"] == 64 and shown["data"]["generate_train"] == 4000
    assert shown["optim"]["betas"] == [0.9, 0.98] and shown["decode"]["beam"] == 1
    assert "modules" not in shown["data"] and "stack_depth" not in shown["model"]
    assert "plateau_factor" not in shown["optim"]
    jaccard = yaml.safe_load(show_config("word_problems/jaccard"))
    assert jaccard["model"] == {"name": "jaccard"} and jaccard["optim"] == jaccard["train"] == jaccard["decode"] == {}


def test_every_registered_task_has_a_config_class_and_every_model_a_builder():
    """A new task needs its class in neuromath/config/tasks.py, and a class needs a task; a model's one registration
    (neuromath/config/models.py) names a builder that imports."""
    import neuromath.tasks  # noqa: F401  (registers the tasks)
    from neuromath.config import ModelConfig
    from neuromath.registry import TASKS

    assert set(TASKS.names()) == set(TASK_NAMES)
    assert set(ModelConfig.builders) == set(MODEL_NAMES)
    for name in MODEL_NAMES:
        assert callable(ModelConfig(name=name).builder()), name
