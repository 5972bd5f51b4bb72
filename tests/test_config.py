import pytest
import yaml

from neuromath.config import Config, apply_override, config_to_dict, load_config, save_config
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
    from pathlib import Path

    paths = sorted((Path(__file__).resolve().parents[1] / "configs").rglob("*.yaml"))
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


@pytest.mark.parametrize("path", sorted(str(p) for p in __import__("pathlib").Path("configs").rglob("*.yaml")))
def test_every_preset_loads_and_builds_its_model(path):
    from neuromath.models import build_task_model
    from neuromath.tasks import get_task
    from neuromath.text import Vocabulary

    config = load_config(path)
    task = get_task(config.data.task)
    if config.data.task == "identities":  # equation classifiers: build and score one equation
        from neuromath.models.identities import CLASSIFIERS, build_classifier, node_vocabulary, predict_logits
        from neuromath.tasks.identities import EquationExample, apply, symbol

        equation = apply("Equality", apply("sin", symbol("var_0")), symbol("var_1"))
        vocab = node_vocabulary([EquationExample(equation, True)])
        model = build_classifier(config.model, vocab)
        assert config.model.name in CLASSIFIERS
        assert predict_logits(model, [EquationExample(equation, True)], vocab).shape == (1,)
        return
    from neuromath.experiments.cross_validation import RETRIEVAL_MODELS
    from neuromath.registry import MODELS

    if config.model.name in RETRIEVAL_MODELS:  # nothing to build: the baseline is fitted on the training problems
        from neuromath.models.retrieval import RetrievalBaseline

        assert RetrievalBaseline(config.model.name).similarity == config.model.name
        return
    source = Vocabulary(["n0", "n1", "had", "pens", ",", "."])
    target = Vocabulary(["+", "-", "*", "/", "^", "neg", "n0", "n1"])
    model = build_task_model(config.model, task, source, target)
    assert type(model) is MODELS.get(config.model.name) and model.config == config.model
