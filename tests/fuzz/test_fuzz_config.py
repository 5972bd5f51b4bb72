"""Property tests of config loading: random ``--set`` overrides on a preset and random YAML config files
end in a ``Config`` that satisfies every range and rule between keys, or in a ``ConfigError``; never another
exception. The ranges are checked here again from the bounds each field declares, without ``Range.__contains__``."""

import dataclasses
import math
from pathlib import Path

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from neuromath.config import SECTIONS as SECTION_CLASSES
from neuromath.config import Config, key_range, load_config, section_keys
from neuromath.config.models import GroupAttentionConfig, TransformerConfig
from neuromath.config.presets import PRESETS as PRESET_FOLDER
from neuromath.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
PRESETS = sorted(PRESET_FOLDER.rglob("*.yaml"))
SECTIONS = list(SECTION_CLASSES)
KNOWN_KEYS = [f"{section}.{key}" for section in SECTIONS for key in section_keys(section)]  # of every model and task
RANGES = {key: key_range(key) for key in KNOWN_KEYS if key_range(key) is not None}

numbers = st.one_of(
    st.integers(min_value=-10, max_value=10),
    st.integers(),
    st.sampled_from([10**18, 10**30, 10**400, -(10**400)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 0.5, 1.0, 2**32, 2**32 - 1, -(2**63)]),
)
words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
scalars = st.one_of(numbers, words, st.booleans(), st.none())
yaml_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.one_of(words, st.integers()), inner, max_size=3)
), max_leaves=6)
odd_texts = st.sampled_from([
    "", " ", "nan", ".nan", "inf", "-inf", ".inf", "-.inf", "1e400", "-1e400", "1e-400", "1_000", "0x10", "0o17",
    "~", "null", "true", "yes", "[1, 2]", "[0.9]", "[0.9, 0.98, 1]", "{a: 1}", "{", "[", "!!int x", "!!float y",
    "!!python/object:os.system", "2021-02-30", "2021-02-03", "&a [*a]", "'quoted'", "a: b: c", "- 1\n- 2",
    "\x00", "=", "1=2",
])


def rendered(value) -> str:
    """A value as a user would type it after ``key=``: numbers as Python writes them, the rest as flow YAML."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return value
    return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True).strip()


keys = st.one_of(
    st.sampled_from(KNOWN_KEYS),
    st.sampled_from(SECTIONS),
    st.builds(lambda section, name: f"{section}.{name}", st.sampled_from(SECTIONS), words),
    words,
)
overrides = st.builds(lambda key, value: f"{key}={value}", keys,
                      st.one_of(odd_texts, numbers.map(rendered), yaml_values.map(rendered), words))
overrides = st.one_of(overrides, words, odd_texts)  # some without "=" at all

# Values near the edges of the ranges for the numeric keys, and the choices that bring in the rules between keys, so
# that a good share of the configs is accepted and checked against the ranges rather than refused for a typo.
NUMERIC_KEYS = [key for key in KNOWN_KEYS if key in RANGES]
edge_numbers = st.one_of(st.integers(min_value=-3, max_value=600), st.floats(min_value=-1, max_value=2),
                         st.sampled_from([0, 1, 2, -1, 0.0, 1.0, 0.999, "nan", "inf", "-inf", 4294967295, 2**32]))
CHOICES = ["model.name=group_attention", "model.name=dns", "model.name=tree_lstm", "model.positions=tree",
           "model.attention=tp", "data.task=identities", "data.task=symbolic", "data.task=mathematics_dataset"]
near_edges = st.one_of(
    st.builds(lambda key, value: f"{key}={value}", st.sampled_from(NUMERIC_KEYS), edge_numbers),
    st.builds(lambda low, high: f"optim.betas=[{low}, {high}]", edge_numbers, edge_numbers),
    st.sampled_from(CHOICES),
)
overrides = st.one_of(near_edges, overrides)


def in_range(value, allowed) -> bool:
    """The range check, written out from the bounds of a ``Range``."""
    if allowed.sentinel is not None and value == allowed.sentinel[0]:
        return True
    if isinstance(value, float) and not math.isfinite(value):
        return False
    if allowed.low is not None and not (value > allowed.low if allowed.low_open else value >= allowed.low):
        return False
    return allowed.high is None or (value <= allowed.high if allowed.high_closed else value < allowed.high)


def assert_satisfies_the_ranges(config: Config) -> None:
    checked = 0
    for section in SECTIONS:
        values = getattr(config, section)
        for item in dataclasses.fields(values):
            key = f"{section}.{item.name}"
            if key not in RANGES:
                continue
            checked += 1
            value = getattr(values, item.name)
            for number in value if isinstance(value, tuple) else (value,):
                assert isinstance(number, (int, float)) and not isinstance(number, bool), (key, number)
                assert in_range(number, RANGES[key]), (key, number)
    assert checked >= 25  # every config has numeric keys in each of its sections
    model, train, decode = config.model, config.train, config.decode
    if isinstance(model, TransformerConfig):
        assert model.d_model % model.n_heads == 0
        assert model.positions != "tree" or model.d_model >= model.tree_depth * model.tree_width
    if isinstance(model, GroupAttentionConfig):
        assert 2 * model.encoder_hidden % model.n_heads == 0
    assert decode.nbest <= decode.beam
    assert train.max_steps <= 0 or train.val_every_steps == 0 or train.max_steps % train.val_every_steps == 0
    assert train.max_epochs == -1 or train.min_epochs <= train.max_epochs


def load_or_refuse(path, sets, strict) -> Config | None:
    """The config, checked against the ranges, or None when it is refused with a ConfigError (and nothing else)."""
    try:
        config = load_config(path, sets, strict=strict)
    except ConfigError as error:
        assert str(error).strip(), "a ConfigError says why"
        event("refused")
        return None
    event("accepted")  # --hypothesis-show-statistics: how many of each, so the properties are not vacuous
    assert isinstance(config, Config)
    assert_satisfies_the_ranges(config)
    return config


@settings(max_examples=1500, deadline=None)
@given(preset=st.sampled_from(PRESETS), sets=st.lists(overrides, min_size=1, max_size=4), strict=st.booleans())
def test_random_overrides_on_a_preset_give_a_config_in_range_or_a_config_error(preset, sets, strict):
    load_or_refuse(preset, sets, strict)


@settings(max_examples=1000, deadline=None)
@given(key=st.sampled_from([key for key in KNOWN_KEYS if key in RANGES]), value=numbers)
def test_random_numbers_for_numeric_keys_are_in_range_or_refused(key, value):
    load_or_refuse(None, [f"{key}={rendered(value)}"], strict=False)


sections = st.dictionaries(
    st.one_of(st.sampled_from([key.split(".")[1] for key in KNOWN_KEYS]), words),
    st.one_of(numbers, yaml_values), max_size=4,
)
near_edge_sections = st.dictionaries(st.sampled_from(NUMERIC_KEYS), edge_numbers.filter(
    lambda value: not isinstance(value, str)), max_size=5).map(lambda values: {
        "data": {"task": "word_problems"},
        **{section: {key.split(".")[1]: value for key, value in values.items() if key.startswith(f"{section}.")}
           for section in SECTIONS if section != "data"},
    })
documents = st.one_of(
    near_edge_sections,
    st.dictionaries(st.sampled_from(SECTIONS), sections, max_size=5).map(
        lambda values: {"data": {"task": "word_problems"}, **values} if values else values),
    st.dictionaries(st.one_of(words, st.sampled_from(SECTIONS)), yaml_values, max_size=4),
    yaml_values,
)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=documents, strict=st.booleans())
def test_random_yaml_config_files_give_a_config_in_range_or_a_config_error(tmp_path, document, strict):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    load_or_refuse(path, [], strict)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(odd_texts, st.text(max_size=60), st.binary(max_size=60)))
def test_random_text_and_bytes_as_a_config_file_give_a_config_error(tmp_path, text):
    path = tmp_path / "config.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    load_or_refuse(path, [], strict=True)
