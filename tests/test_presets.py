"""The presets (neuromath/configs/, named <task>/<model>) name only what differs from the defaults, and only keys that
apply to their task and model.

tests/fixtures/presets_resolved.json is every preset as the code resolved it before the presets were shortened
(``{preset name: config_to_dict(load_config(name))}``, every key written out); the presets must still resolve to it
wherever a key applies to the preset's task and model.
"""

import json
from pathlib import Path

import pytest
import yaml

from neuromath.config import Config, config_to_dict, load_config, save_config, show_config
from neuromath.config_presets import find_config, preset_names
from neuromath.config_rules import MODEL_KEYS, MODEL_NAMES, TASK_KEYS, TASK_NAMES, applies, why_not_applicable
from neuromath.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "presets_resolved.json").read_text(encoding="utf-8"))
PRESETS = preset_names()
DEFAULTS = config_to_dict(Config())
# keys added after the snapshot was taken: an older config without them reads them at their defaults
ADDED_AFTER_SNAPSHOT = {
    "data": ("root", "lowercase", "min_count", "word_dropout", "train_extra", "streaming", "shuffle_window",
             "loader_workers", "stream_vocab_records", "candidates"),
    "model": ("numbers", "subtree_embedding", "number_encoder", "shared_words", "graph_text",
              "tree_activation", "dropout_site", "tree_leaf"),
    "optim": ("ema_decay", "step_epochs", "step_gamma"),
    "train": ("num_nodes", "strategy", "validate", "init_from", "rank_weight", "rank_groups", "rank_negatives",
              "rank_hard"),
}


# values changed on purpose since the snapshot, each backed by a measurement on the results pages (docs/):
# identities classifiers train to convergence (the 40-epoch cap with patience 6 stopped runs that were still
# improving), and the dropout of tree_lstm, tree_rnn, stack_mi_tree_lstm, stack_mtree_lstm, mtree_lstm,
# tree_smu and lstm (0.2) and mi_tree_lstm (0.1) is the one that validated best
TRAINED_TO_CONVERGENCE = {"train": {"max_epochs": 300, "patience": 30}, "optim": {"plateau_patience": 8}}
CHANGED_SINCE_SNAPSHOT = {
    **{
        f"identities/{name}": TRAINED_TO_CONVERGENCE
        for name in ("rnn", "second_order_tree_rnn", "stack_rnn")
    },
    "identities/mi_tree_lstm": {**TRAINED_TO_CONVERGENCE, "model": {"dropout": 0.1}},
    **{f"identities/{name}": {**TRAINED_TO_CONVERGENCE, "model": {"dropout": 0.2}}
       for name in ("tree_lstm", "tree_rnn", "stack_mi_tree_lstm", "stack_mtree_lstm", "mtree_lstm", "tree_smu",
                    "lstm")},
}


def snapshot(preset: str, changed: bool = True) -> dict:
    """The preset as the snapshot resolved it, with the keys added since then at their defaults and (``changed``)
    the values changed on purpose since then (``CHANGED_SINCE_SNAPSHOT``)."""
    values = {section: dict(keys) for section, keys in FIXTURE[preset].items()}
    for section, keys in ADDED_AFTER_SNAPSHOT.items():
        for key in keys:
            values[section].setdefault(key, DEFAULTS[section][key])
    for section, changes in (CHANGED_SINCE_SNAPSHOT.get(preset, {}) if changed else {}).items():
        for key, value in changes.items():
            assert values[section][key] != value, f"{preset}: {section}.{key} is already {value} in the snapshot"
            values[section][key] = value
    return values


def applying(values: dict) -> dict:
    """The keys of a full config dict that apply to its own task and model (from the applicability table)."""
    task, model = values["data"]["task"], values["model"]["name"]
    return {
        section: {
            key: value for key, value in keys.items() if why_not_applicable(f"{section}.{key}", task, model) is None
        }
        for section, keys in values.items()
    }


def test_the_presets_are_the_snapshot_presets():
    assert PRESETS == sorted(FIXTURE)
    assert len(PRESETS) >= 40


@pytest.mark.parametrize("preset", sorted(FIXTURE))
def test_each_preset_resolves_as_before_where_its_keys_apply(preset):
    before = snapshot(preset)
    config = load_config(preset, strict=True)
    after = config_to_dict(config)
    assert after["data"]["task"] == before["data"]["task"] and after["model"]["name"] == before["model"]["name"]
    assert applying(after) == applying(before)
    for section, keys in after.items():  # what does not apply is not named, so it keeps its default
        for key, value in keys.items():
            if not applies(f"{section}.{key}", config):
                assert value == DEFAULTS[section][key], f"{preset}: {section}.{key}"


def test_presets_do_not_all_apply_every_key():
    """The comparison above skips something only where the table says a key does not apply; make sure it compares
    most keys and skips the ones it should (a table that applied nothing would pass it vacuously)."""
    compared = sum(len(keys) for preset in FIXTURE for keys in applying(FIXTURE[preset]).values())
    total = sum(len(keys) for preset in FIXTURE for keys in FIXTURE[preset].values())
    assert 0.5 * total < compared < total
    word_problems = applying(FIXTURE["word_problems/transformer"])
    assert "modules" not in word_problems["data"] and "encoder_hidden" not in word_problems["model"]
    assert "d_model" in word_problems["model"] and "beam" in word_problems["decode"]
    tree_lstm = applying(FIXTURE["identities/tree_lstm"])
    assert "train_depths" in tree_lstm["data"] and "dropout" in tree_lstm["model"]
    assert "n_heads" not in tree_lstm["model"] and "beam" not in tree_lstm["decode"]
    assert "batch_size" in tree_lstm["decode"] and "beam" not in tree_lstm["decode"]


@pytest.mark.parametrize("preset", PRESETS)
def test_each_preset_names_its_task_and_model_and_only_what_differs(preset):
    text = find_config(preset).read_text(encoding="utf-8")
    assert text.startswith("#"), f"{preset}: the comment that explains the preset comes first"
    values = yaml.safe_load(text)
    assert list(values) == [section for section in DEFAULTS if section in values]  # data, model, optim, train, decode
    assert "task" in values["data"] and "name" in values["model"]
    task, model = values["data"]["task"], values["model"]["name"]
    for section, keys in values.items():
        assert list(keys) == [key for key in DEFAULTS[section] if key in keys], f"{preset}: {section} out of order"
        for key, value in keys.items():
            if (section, key) in (("data", "task"), ("model", "name")):
                continue
            assert why_not_applicable(f"{section}.{key}", task, model) is None, f"{preset}: {section}.{key}"
            assert value != DEFAULTS[section][key], f"{preset}: {section}.{key} is the default {value!r}"


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
    assert load_config(path).data.modules == "arithmetic__*"  # a run folder's config.yaml: read back as written


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
    assert config_to_dict(config) == snapshot(preset, changed=False)  # the file's own values, not today's preset
    assert applying(config_to_dict(config, applicable_only=True)) == applying(snapshot(preset, changed=False))
    with pytest.raises(ConfigError, match="does not apply"):  # a full file is no preset: strict refuses it
        load_config(path, strict=True)


def test_an_old_run_resumes_with_the_shortened_preset(tmp_path):
    """check_resume_config compares what applies: keys the shortened preset no longer names do not stop a resume,
    while the values it changed on purpose (tree_lstm's dropout and plateau patience) are named."""
    from neuromath.training.run_folder import check_resume_config

    preset = "identities/tree_lstm"
    saved = load_config(write_yaml(tmp_path / "config.yaml", FIXTURE[preset]))
    as_before = ["model.dropout=0.0", "optim.plateau_patience=2"]  # the values the preset changed on purpose since
    check_resume_config(saved, load_config(preset, as_before, strict=True))  # epochs and patience may change
    with pytest.raises(ConfigError, match="model.d_model: 50 -> 64"):
        check_resume_config(saved, load_config(preset, as_before + ["model.d_model=64"], strict=True))
    with pytest.raises(ConfigError, match=r"model.dropout: 0.0 -> 0.2; optim.plateau_patience: 2 -> 8$"):
        check_resume_config(saved, load_config(preset, strict=True))


@pytest.mark.parametrize("preset", PRESETS)
def test_save_config_writes_exactly_the_keys_that_apply_and_round_trips(tmp_path, preset):
    config = load_config(preset, strict=True)
    save_config(config, tmp_path / "config.yaml")
    saved = yaml.safe_load((tmp_path / "config.yaml").read_text(encoding="utf-8"))
    expected = {section: [key for key in keys if applies(f"{section}.{key}", config)]
                for section, keys in DEFAULTS.items()}
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


def test_the_table_names_real_keys_tasks_and_models():
    for key, names in TASK_KEYS.items():
        section, name = key.split(".")
        assert section == "data" and name in DEFAULTS["data"] and set(names) <= set(TASK_NAMES), key
    for key, names in MODEL_KEYS.items():
        section, _, name = key.partition(".")
        assert section in DEFAULTS and section != "data" and (not name or name in DEFAULTS[section]), key
        assert set(names) <= set(MODEL_NAMES), key
    assert "data.task" not in TASK_KEYS and "model.name" not in MODEL_KEYS and "model" not in MODEL_KEYS


def test_every_registered_task_and_model_is_in_the_table():
    """A new task or model must add its name to neuromath/config.py, or its keys go unchecked."""
    import neuromath.models  # noqa: F401  (registers the sequence models)
    import neuromath.models.classifiers  # noqa: F401  (registers the equation classifiers)
    import neuromath.tasks  # noqa: F401  (registers the tasks)
    from neuromath.models.retrieval import SIMILARITIES
    from neuromath.registry import CLASSIFIERS, MODELS, TASKS

    assert set(TASKS.names()) == set(TASK_NAMES)
    assert set(MODELS.names()) | set(CLASSIFIERS.names()) | set(SIMILARITIES) == set(MODEL_NAMES)
