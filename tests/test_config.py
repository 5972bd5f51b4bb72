import dataclasses
import re

import pytest
import yaml

from neuromath.config import Config, apply_override, config_to_dict, load_config, save_config
from neuromath.config.presets import PRESETS
from neuromath.errors import ConfigError


def test_defaults_round_trip_through_yaml(tmp_path):
    path = tmp_path / "config.yaml"
    config = load_config(None, ["model.d_model=64", "optim.betas=[0.8, 0.9]", "data.train=train.jsonl"])
    save_config(config, path)
    again = load_config(path)
    assert again == config
    assert again.model.d_model == 64 and again.optim.betas == (0.8, 0.9) and again.data.train == "train.jsonl"


def test_override_reads_values_as_yaml_and_ints_widen_to_float():
    config = load_config(None, ["optim.lr=1", "train.progress=false", "data.valid=null"])
    assert config.optim.lr == 1.0 and isinstance(config.optim.lr, float)
    assert config.train.progress is False
    assert config.data.valid is None


def test_unknown_key_names_the_key(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"model": {"d_modle": 3}}))
    with pytest.raises(ConfigError, match=r"bad.yaml.*unknown key in model: d_modle"):
        load_config(path)


@pytest.mark.parametrize(
    "override, message",
    [
        ("model.d_model=big", "model.d_model: expected int"),
        ("model.d_model=2.5", "model.d_model: expected int"),
        ("train.progress=3", "train.progress: expected bool"),
        ("optim.betas=[0.9]", "optim.betas: expected a list of 2"),
        ("model=3", "model: expected a mapping"),
        ("nonsense", "not of the form key=value"),
    ],
)
def test_wrong_types_are_errors(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, [override])


def test_apply_override_does_not_mutate_its_input():
    values = {"model": {"d_model": 8}}
    changed = apply_override(values, "model.n_heads=2")
    assert values == {"model": {"d_model": 8}}
    assert changed == {"model": {"d_model": 8, "n_heads": 2}}


def test_shipped_configs_load():

    paths = sorted(PRESETS.rglob("*.yaml"))
    assert paths, "no configs shipped"
    for path in paths:
        assert isinstance(load_config(path, strict=True), Config)  # every key a preset names applies to it


def test_config_to_dict_is_plain():
    values = config_to_dict(Config())
    assert values["optim"]["betas"] == [0.9, 0.98]
    assert yaml.safe_load(yaml.safe_dump(values)) == values


def test_override_reads_exponent_numbers_without_a_dot():
    config = load_config(None, ["optim.lr=1e-4", "optim.betas=[0.9, 0.995]"])
    assert config.optim.lr == 1e-4 and config.optim.betas == (0.9, 0.995)
    with pytest.raises(ConfigError, match="model.attention"):
        load_config(None, ["model.attention=1e-4"])


@pytest.mark.parametrize("path", sorted(str(p) for p in PRESETS.rglob("*.yaml")))
def test_every_preset_loads_and_builds_its_model(path, tmp_path):
    from neuromath.models import build_task_model
    from neuromath.tasks import get_task
    from neuromath.text import Vocabulary

    config = load_config(path)
    if config.model.option("encoder") == "pretrained":  # hub weights cannot be fetched here: a tiny local encoder
        pytest.importorskip("transformers")
        from support.tiny_pretrained import tiny_encoder

        local = tiny_encoder(tmp_path / "encoder", "roberta", ["Tom had n0 pens , n1 ."] * 4)
        config = dataclasses.replace(config, model=dataclasses.replace(config.model, pretrained=str(local)))
    task = get_task(config.data.task)
    if config.data.task == "identities":  # equation classifiers: build and score one equation
        from neuromath.models.classifiers import build_classifier, node_vocabulary, predict_logits
        from neuromath.tasks.identities import EquationExample, apply, symbol

        equation = apply("Equality", apply("sin", symbol("var_0")), symbol("var_1"))
        vocab = node_vocabulary([EquationExample(equation, True)])
        model = build_classifier(config.model, vocab)
        assert type(model).__name__ == {"majority": "MajorityClassifier"}.get(
            config.model.name, "TreeClassifier" if config.model.kind == "tree_classifier" else "SequenceClassifier")
        assert predict_logits(model, [EquationExample(equation, True)], vocab).shape == (1,)
        return
    if config.model.kind == "retrieval":  # nothing to train: the baseline is fitted on the training problems
        from neuromath.models.retrieval import RetrievalBaseline

        baseline = config.model.builder()(config.model)
        assert type(baseline) is RetrievalBaseline and baseline.similarity == config.model.name
        return
    source = Vocabulary(["n0", "n1", "had", "pens", ",", "."])
    target = Vocabulary(["+", "-", "*", "/", "^", "neg", "n0", "n1"])
    model = build_task_model(config.model, task, source, target)
    assert type(model) is config.model.builder() and model.config == config.model


# ---- ranges: every numeric key is checked when a config is built


@pytest.mark.parametrize("override, message", [
    ("train.max_epochs=-5", "train.max_epochs must be -1 (no limit) or >= 1, got -5"),
    ("train.max_steps=0", "train.max_steps must be -1 (no limit) or >= 1, got 0"),
    ("model.d_model=0", "model.d_model must be in [1, 65536], got 0"),
    ("model.n_heads=5", "model.n_heads (5) must divide model.d_model (128)"),
    ("model.dropout=2", "model.dropout must be in [0, 1), got 2"),
    ("model.dropout=-0.1", "model.dropout must be in [0, 1), got -0.1"),
    ("optim.lr=nan", "optim.lr must be a finite number > 0, got nan"),
    ("optim.lr=inf", "optim.lr must be a finite number > 0, got inf"),
    ("optim.lr=.inf", "optim.lr must be a finite number > 0, got inf"),
    ("optim.lr=0", "optim.lr must be a finite number > 0, got 0"),
    ("optim.betas=[0.9, 1]", "optim.betas[1] must be in [0, 1), got 1"),
    ("optim.warmup_steps=0", "optim.warmup_steps must be >= 1, got 0"),
    ("optim.plateau_factor=1", "optim.plateau_factor must be in (0, 1), got 1"),
    ("decode.length_penalty=nan", "decode.length_penalty must be in [-10, 10], got nan"),
    ("decode.beam=0", "decode.beam must be in [1, 1000], got 0"),
    ("decode.nbest=3", "decode: nbest (3) cannot exceed the beam width (1)"),
    ("train.seed=-1", "train.seed must be in [0, 4294967295], got -1"),
    ("train.devices=0", "train.devices must be -1 (every device) or >= 1, got 0"),
    ("train.num_nodes=0", "train.num_nodes must be >= 1, got 0"),
    ("train.strategy=ddp_spawn", "train.strategy must be one of auto, ddp, ddp_find_unused_parameters_true, got "
                                 "'ddp_spawn'"),
    ("data.valid_fraction=1", "data.valid_fraction must be in (0, 1), got 1"),
    ("data.per_module=-1", "data.per_module must be >= 0, got -1"),
    ("model.tree_relations=1", "model.tree_relations must be in [2, 100000], got 1"),
    ("model.tree_activation=relu", "model.tree_activation must be one of tanh, sigmoid, got 'relu'"),
    ("data.min_count=0", "data.min_count must be >= 1, got 0"),
    ("data.word_dropout=1", "data.word_dropout must be in [0, 1), got 1"),
    ("data.word_dropout=-0.5", "data.word_dropout must be in [0, 1), got -0.5"),
    ("optim.lr=1" + "0" * 400, "optim.lr: an integer of 401 digits is too large for a float"),
])
def test_values_out_of_range_are_refused_with_the_range(override, message):
    with pytest.raises(ConfigError, match=f"^{re.escape(f'--set {override}: {message}')}$"):
        load_config(None, [*owner(override), override])


# a task and model whose classes have the key (the defaults, word_problems and transformer, do not have them all)
OWNERS = {
    "data.per_module": ["data.task=mathematics_dataset"],
    "data.symbolic_max_ops": ["data.task=symbolic"],
    "data.loader_workers": ["data.task=symbolic"],
    "model.tree_activation": ["data.task=identities", "model.name=tree_rnn"],
    "model.stack_depth": ["data.task=identities", "model.name=stack_rnn"],
    "model.encoder_hidden": ["model.name=bilstm_seq2seq"],
    "model.decoder_hidden": ["model.name=dns"],
}


def owner(override: str) -> list[str]:
    return OWNERS.get(override.split("=", 1)[0], [])


# ---- upper bounds: sizes no run needs fail before anything is built, not inside torch seconds later


@pytest.mark.parametrize("override, message", [
    ("model.d_model=4000000", "model.d_model must be in [1, 65536], got 4000000"),
    ("model.d_ff=4000000", "model.d_ff must be in [1, 65536], got 4000000"),
    ("model.encoder_hidden=65537", "model.encoder_hidden must be in [1, 65536], got 65537"),
    ("model.decoder_hidden=65537", "model.decoder_hidden must be in [1, 65536], got 65537"),
    ("model.n_heads=100000", "model.n_heads must be in [1, 65536], got 100000"),
    ("model.n_encoder_layers=100000", "model.n_encoder_layers must be in [1, 256], got 100000"),
    ("model.n_decoder_layers=257", "model.n_decoder_layers must be in [1, 256], got 257"),
    ("model.max_len=1000000000", "model.max_len must be in [1, 100000], got 1000000000"),
    ("model.relative_k=100001", "model.relative_k must be in [0, 100000], got 100001"),
    ("model.tree_depth=1025", "model.tree_depth must be in [1, 1024], got 1025"),
    ("model.stack_depth=4097", "model.stack_depth must be in [1, 4096], got 4097"),
    ("data.max_source_len=100001", "data.max_source_len must be in [1, 100000], got 100001"),
    ("data.max_target_len=100001", "data.max_target_len must be in [1, 100000], got 100001"),
    ("data.generate_train=1000000000", "data.generate_train must be in [1, 100000000], got 1000000000"),
    ("data.symbolic_max_ops=1001", "data.symbolic_max_ops must be in [1, 1000], got 1001"),
    ("data.loader_workers=5000", "data.loader_workers must be in [0, 4096], got 5000"),
    ("train.batch_size=100001", "train.batch_size must be in [1, 100000], got 100001"),
    ("train.num_threads=5000", "train.num_threads must be in [0, 4096], got 5000"),
    ("decode.beam=1000000", "decode.beam must be in [1, 1000], got 1000000"),
    ("decode.batch_size=100001", "decode.batch_size must be in [1, 100000], got 100001"),
    ("decode.max_len=100001", "decode.max_len must be in [1, 100000], got 100001"),
    ("decode.length_penalty=1e308", "decode.length_penalty must be in [-10, 10], got 1e+308"),
    ("decode.length_penalty=-10.5", "decode.length_penalty must be in [-10, 10], got -10.5"),
])
def test_values_above_the_upper_bounds_are_refused_naming_the_key(override, message):
    with pytest.raises(ConfigError, match=f"^{re.escape(f'--set {override}: {message}')}$"):
        load_config(None, [*owner(override), override])


def test_the_upper_bounds_are_inclusive_and_leave_room_above_every_preset():
    from neuromath.config.presets import preset_names
    from neuromath.config.rules import MAX_BEAM, MAX_LAYERS, MAX_LENGTH, MAX_WIDTH

    config = load_config(None, [f"model.d_model={MAX_WIDTH}", f"model.d_ff={MAX_WIDTH}", f"model.max_len={MAX_LENGTH}",
                                f"model.n_encoder_layers={MAX_LAYERS}", f"decode.beam={MAX_BEAM}",
                                f"decode.max_len={MAX_LENGTH}", "decode.length_penalty=10"])
    assert (config.model.d_model, config.decode.beam, config.decode.max_len) == (MAX_WIDTH, MAX_BEAM, MAX_LENGTH)
    for name in preset_names():
        preset = load_config(name, strict=True)
        model = config_to_dict(preset)["model"]  # the keys its class has
        assert 4 * model.get("d_model", 0) <= MAX_WIDTH and 4 * model.get("d_ff", 0) <= MAX_WIDTH, name
        assert 10 * max(model.get("n_encoder_layers", 0), model.get("n_decoder_layers", 0)) <= MAX_LAYERS, name
        assert 10 * max(model.get("max_len", 0), preset.decode.max_len) <= MAX_LENGTH, name
        assert 10 * preset.decode.beam <= MAX_BEAM, name


def test_the_schedule_follows_the_models_kind_and_a_wrong_one_fails_when_the_config_is_built():
    assert load_config(None, []).optim.schedule == "warmup"  # a sequence model
    assert load_config(None, ["data.task=identities", "model.name=tree_lstm"]).optim.schedule == "plateau"
    assert load_config(None, ["data.task=identities", "model.name=lstm", "optim.schedule=constant"]).optim.schedule \
        == "constant"
    assert load_config(None, ["model.name=jaccard"]).optim.schedule is None  # trains nothing: no schedule
    with pytest.raises(ConfigError, match=r"optim.schedule 'warmup' does not apply to 'tree_lstm' \(tree classifier\): "
                                          r"use plateau or constant"):
        load_config(None, ["data.task=identities", "model.name=tree_lstm", "optim.schedule=warmup"])
    with pytest.raises(ConfigError, match=r"--set optim.schedule=warmpu: optim.schedule 'warmpu' does not apply"):
        load_config(None, ["optim.schedule=warmpu"])


def test_decode_max_len_cannot_exceed_model_max_len(tmp_path):
    with pytest.raises(ConfigError, match=r"^--set decode.max_len=600: decode.max_len \(600\) cannot exceed "
                                          r"model.max_len \(512\): the model writes at most model.max_len tokens$"):
        load_config(None, ["decode.max_len=600"])
    with pytest.raises(ConfigError, match=r"^decode.max_len \(64\) cannot exceed model.max_len \(32\)"):
        load_config(None, ["model.max_len=32"])  # the default decode.max_len
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"data": {"task": "word_problems"}, "model": {"max_len": 40},
                                    "decode": {"max_len": 41}}))
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: decode.max_len \(41\) cannot exceed"):
        load_config(path)
    assert load_config(None, ["model.max_len=64", "decode.max_len=64"]).decode.max_len == 64
    # the equation classifiers decode nothing: neither key applies to them, so a run folder's config holding them
    # loads whatever they are, and asking for one is refused rather than dropped
    classifier = tmp_path / "classifier.yaml"
    classifier.write_text(yaml.safe_dump({"data": {"task": "identities"}, "model": {"name": "tree_lstm"},
                                          "decode": {"max_len": 600}}))
    assert load_config(classifier).decode.max_len == 600
    with pytest.raises(ConfigError, match=r"--set decode.max_len=600: decode.max_len does not apply to the tree_lstm"):
        load_config(classifier, ["decode.max_len=600"])
    # a recurrent decoder has no position table: a run folder of one loads whatever the two lengths are
    assert load_config(None, ["model.name=gts", "decode.max_len=600"]).decode.max_len == 600
    import dataclasses

    with pytest.raises(ConfigError, match=r"decode.max_len \(513\) cannot exceed model.max_len \(512\)"):
        dataclasses.replace(Config(), decode=dataclasses.replace(Config().decode, max_len=513))


def test_a_value_out_of_range_in_a_file_names_the_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({"data": {"task": "word_problems"}, "model": {"dropout": 2}}))
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: model.dropout must be in \[0, 1\), got 2$"):
        load_config(path)
    preset = "word_problems/transformer"
    with pytest.raises(ConfigError,
                       match=rf"^{preset}, --set model.d_model=0: model.d_model must be in \[1, 65536\], got 0$"):
        load_config(preset, ["model.d_model=0"], strict=True)


@pytest.mark.parametrize("overrides, message", [
    (["model.d_model=30", "model.n_heads=4"], r"model.n_heads \(4\) must divide model.d_model \(30\)"),
    (["model.name=group_attention", "model.encoder_hidden=9", "model.n_heads=4"],
     r"model.n_heads \(4\) must divide 2 \* model.encoder_hidden \(18\)"),
    (["model.positions=tree", "model.d_model=16", "model.n_heads=2", "model.tree_depth=16"],
     r"model.d_model \(16\) must be at least model.tree_depth \* model.tree_width \(32\) for tree positions"),
    (["train.max_steps=1200", "train.val_every_steps=500"], "must be a multiple of train.val_every_steps"),
    (["train.max_epochs=2", "train.min_epochs=3"],
     r"train.min_epochs \(3\) cannot exceed train.max_epochs \(2\): for a shorter run, set both "
     r"\(--set train.min_epochs=2\)"),
])
def test_keys_that_must_agree_are_checked_together(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)


def test_the_heads_rule_is_only_for_the_models_that_split_heads():
    config = load_config(None, ["data.task=identities", "model.name=tree_lstm", "model.d_model=50"])
    assert not hasattr(config.model, "n_heads") and config.model.d_model == 50  # a tree LSTM has no n_heads
    assert load_config(None, ["train.max_epochs=-1", "train.min_epochs=12"]).train.max_epochs == -1


def test_every_numeric_key_has_a_range_and_the_defaults_are_in_it():
    """Every numeric field of every section class (each model's and each task's included) declares its range, and
    every class builds with its defaults."""
    import dataclasses

    from neuromath.config import SECTIONS
    from neuromath.config.sections import ChosenSection

    numeric = 0
    for section in SECTIONS.values():
        classes = list(section.members.values()) if issubclass(section, ChosenSection) else [section]
        for cls in classes:
            cls()  # the defaults pass their own checks
            for item in dataclasses.fields(cls):
                if item.type in ("int", "float", "tuple[float, float]"):
                    numeric += 1
                    assert "range" in item.metadata, f"{cls.__name__}.{item.name}"
    assert numeric > 60
    Config()


def test_sections_built_in_python_are_checked_too():
    import dataclasses

    from neuromath.config import DecodeConfig, ModelConfig

    with pytest.raises(ConfigError, match=r"nbest \(4\) cannot exceed the beam width \(2\)"):
        dataclasses.replace(DecodeConfig(), beam=2, nbest=4)
    with pytest.raises(ConfigError, match="model.dropout must be in"):
        ModelConfig(dropout=1.5)
    with pytest.raises(ConfigError, match="decode.beam: expected int"):
        DecodeConfig(beam=2.5)


def test_an_empty_config_file_is_refused_it_names_no_task(tmp_path):
    for text in ("", "# only a comment\n", "{}\n"):
        path = tmp_path / "empty.yaml"
        path.write_text(text)
        with pytest.raises(ConfigError, match=r"empty.yaml: the config file is empty: it names no task \(data.task, "
                                              "one of word_problems, .*identities\\)"):
            load_config(path, strict=True)


def test_a_config_file_that_names_no_task_is_refused_unless_a_set_names_it(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("model:\n  d_model: 64\n")
    with pytest.raises(ConfigError, match=r"mine.yaml: the config names no task: set data.task \(one of"):
        load_config(path, strict=True)
    assert load_config(path, ["data.task=symbolic"], strict=True).data.task == "symbolic"


@pytest.mark.parametrize("content, message", [
    (b"\xff\xfe\x00", "not a config file \\(not UTF-8 text at byte 0\\)"),
    (b"model: !!int abc\n", "not valid YAML"),
    (b"data: {1: 2, task: symbolic}\n", "unknown key in data: 1"),
])
def test_config_files_of_odd_bytes_are_config_errors(tmp_path, content, message):
    path = tmp_path / "odd.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


# ---- vocabulary robustness of the word-problem tasks


def test_vocabulary_keys_parse_and_keep_todays_behaviour_by_default(tmp_path):
    config = load_config(None, ["data.lowercase=false", "data.min_count=3", "data.word_dropout=0.25"], strict=True)
    assert (config.data.lowercase, config.data.min_count, config.data.word_dropout) == (False, 3, 0.25)
    default = Config().data
    assert (default.lowercase, default.min_count, default.word_dropout) == (True, 1, 0.0)
    save_config(config, tmp_path / "config.yaml")
    assert load_config(tmp_path / "config.yaml", strict=True) == config
    with pytest.raises(ConfigError, match="data.lowercase: expected bool, got 'sometimes'"):
        load_config(None, ["data.lowercase=sometimes"])
    with pytest.raises(ConfigError, match="data.min_count: expected int, got 1.5"):
        load_config(None, ["data.min_count=1.5"])


@pytest.mark.parametrize("key", ["data.lowercase=false", "data.min_count=2", "data.word_dropout=0.1"])
def test_vocabulary_keys_apply_to_the_word_problem_tasks_only(tmp_path, key):
    for task in ("word_problems", "word_problems_normalized"):
        load_config(None, [f"data.task={task}", key], strict=True)
    for task in ("mathematics_dataset", "symbolic", "identities"):
        name = key.split("=")[0]
        with pytest.raises(ConfigError, match=rf"{name} does not apply to the {task} task \(it applies to: "
                                              r"word_problems, word_problems_normalized\)"):
            load_config(None, [f"data.task={task}", key], strict=True)
        save_config(load_config(None, [f"data.task={task}"]), tmp_path / "config.yaml")
        assert name.split(".")[1] not in yaml.safe_load((tmp_path / "config.yaml").read_text())["data"]


def test_a_config_extends_a_preset_or_a_file_beside_it_and_names_only_what_differs(tmp_path):
    base = load_config("word_problems/graph2tree")
    (tmp_path / "mine.yaml").write_text("extends: word_problems/graph2tree\nmodel:\n  dropout: 0.3\n", encoding="utf-8")
    mine = load_config(tmp_path / "mine.yaml", ["train.max_epochs=3", "train.min_epochs=1"], strict=True)
    assert mine.model.dropout == 0.3 and base.model.dropout == 0.5
    assert mine.model.d_ff == base.model.d_ff == 512 and mine.data.train == base.data.train  # kept from the preset
    assert mine.train.max_epochs == 3
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "child.yaml").write_text("extends: ../mine.yaml\ntrain:\n  patience: 2\n", encoding="utf-8")
    child = load_config(tmp_path / "sub" / "child.yaml")
    assert child.model.dropout == 0.3 and child.train.patience == 2


@pytest.mark.parametrize("text, message", [
    ("extends: [word_problems/graph2tree]\n", "extends names one preset"),
    ("extends: word_problems/graph2tre\n", "did you mean word_problems/graph2tree"),
    ("extends: loop.yaml\n", "in a circle"),
])
def test_a_bad_extends_is_one_clear_error(tmp_path, text, message):
    (tmp_path / "loop.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path / "loop.yaml")



@pytest.mark.parametrize("override, message", [
    ("train.max_epoch=1", "unknown key in train: max_epoch; did you mean train.max_epochs?"),
    ("trian.max_epochs=1", "unknown key: trian; did you mean train.max_epochs?"),
    ("model.d_modle=8", "unknown key in model: d_modle; did you mean model.d_model?"),
])
def test_a_mistyped_key_or_section_is_answered_with_the_closest_one(override, message):
    with pytest.raises(ConfigError) as raised:
        load_config("word_problems/graph2tree", [override])
    assert message in str(raised.value) and "known:" not in str(raised.value)


def test_a_mistyped_key_in_a_file_is_answered_with_the_closest_one_and_a_far_one_with_the_list(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text("train:\n  max_epoch: 1\n  colour: red\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    message = str(raised.value)
    assert "unknown keys in train: colour, max_epoch; did you mean train.max_epochs?" in message
    assert "; known: " in message and "patience" in message  # colour has no close key: the keys are listed
