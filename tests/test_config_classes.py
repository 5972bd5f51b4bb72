"""The model and data sections as families of classes (neuromath.config.models, .tasks, .sections):
the name chooses the class, a class has exactly its keys, and adding a model is one class and its registration."""

import dataclasses
import pickle
from typing import ClassVar

import pytest
import yaml

import neuromath.models.classifiers  # noqa: F401  (registers the tree cells)
from neuromath.config import Config, DataConfig, ModelConfig, load_config, show_config, why_not_applicable
from neuromath.config.models import (
    GroupAttentionConfig,
    StackTreeLSTMConfig,
    TransformerConfig,
    TreeCellConfig,
    TreeLSTMConfig,
    TreeRNNConfig,
)
from neuromath.config.rules import (
    ATTENTION_GROUPS,
    ATTENTION_KERNELS,
    MATHEMATICS_SPLITS,
    MATHEMATICS_TEST_SPLITS,
    POSITION_ENCODINGS,
    SEQUENCE,
    WIDTH,
    WORD_PROBLEM_FORMATS,
)
from neuromath.config.sections import ranged
from neuromath.config.tasks import IdentitiesData, MathematicsDatasetData, WordProblemsData
from neuromath.errors import ConfigError
from neuromath.registry import ATTENTION, POSITIONS, TREE_CELLS


def test_the_name_chooses_the_class_and_the_class_has_only_its_keys():
    assert type(ModelConfig()) is TransformerConfig and type(DataConfig()) is WordProblemsData
    model = ModelConfig(name="stack_mi_tree_lstm", d_model=50, stack_depth=4)
    assert type(model) is StackTreeLSTMConfig and (model.d_model, model.stack_depth) == (50, 4)
    assert isinstance(model, ModelConfig) and isinstance(model, TreeLSTMConfig)
    assert not hasattr(model, "n_heads") and not hasattr(model, "attention")
    assert type(ModelConfig(name="group_attention")) is GroupAttentionConfig
    assert type(DataConfig(task="identities")) is IdentitiesData
    assert type(DataConfig(task="mathematics_dataset", modules="numbers__*")) is MathematicsDatasetData


def test_a_key_of_another_model_or_an_unknown_name_is_a_config_error_that_says_where_it_belongs():
    with pytest.raises(ConfigError, match=r"^model.n_heads does not apply to the tree_lstm model \(it applies to: "
                                          r"transformer, group_attention\)$") as error:
        ModelConfig(name="tree_lstm", n_heads=4)
    assert error.value.key == "model.n_heads"
    with pytest.raises(ConfigError, match=r"^data.modules does not apply to the identities task"):
        DataConfig(task="identities", modules="x")
    with pytest.raises(ConfigError, match=r"unknown model 'gtss'; the models are: transformer, dns, .*graph2tree"):
        ModelConfig(name="gtss")
    with pytest.raises(ConfigError, match=r"unknown key in model: widht; known: .*d_model"):
        ModelConfig(name="transformer", widht=3)
    with pytest.raises(ConfigError, match=r"'tree_rnn' is not configured by TreeLSTMConfig .*build ModelConfig"):
        dataclasses.replace(ModelConfig(name="tree_lstm"), name="tree_rnn")
    with pytest.raises(TypeError, match="keywords only"):
        ModelConfig("transformer")


def test_the_classes_pickle_copy_and_replace_as_themselves():
    config = load_config("identities/stack_mi_tree_lstm", strict=True)
    assert pickle.loads(pickle.dumps(config)) == config  # DDP and data-loader workers pickle it
    changed = dataclasses.replace(config.model, stack_depth=3)
    assert type(changed) is StackTreeLSTMConfig and changed.stack_depth == 3 and changed != config.model
    with pytest.raises(ConfigError, match=r"model.stack_depth must be in \[1, 4096\], got 0"):
        dataclasses.replace(config.model, stack_depth=0)


def test_each_tree_cells_options_are_the_keys_of_its_config_class():
    """The classifier builder reads a cell's options from its class: a cell that takes the activation, the leaf, the
    candidate dropout or the stack depth must be configured by a class that has those keys, and no other."""
    for cell in TREE_CELLS.names():
        cls, flags = ModelConfig.member(cell), TREE_CELLS.get(cell)
        keys = set(cls.__dataclass_fields__)
        assert issubclass(cls, TreeCellConfig), cell
        assert flags.uses_stack == ("stack_depth" in keys), cell
        assert flags.takes_activation == ("tree_activation" in keys) == issubclass(cls, TreeRNNConfig), cell
        assert flags.takes_leaf == ("tree_leaf" in keys), cell
        assert flags.takes_candidate_dropout == ("dropout_site" in keys), cell


def test_the_config_names_the_kernels_and_positions_that_nn_registers_and_refuses_others_when_built():
    import neuromath.nn.attention  # noqa: F401  (registers the kernels)
    import neuromath.nn.positions  # noqa: F401
    import neuromath.nn.tree_structure  # noqa: F401

    assert sorted(ATTENTION.names()) == sorted(ATTENTION_KERNELS)
    assert sorted(POSITIONS.names()) == sorted(POSITION_ENCODINGS)
    for setting, message in (("model.attention=tpr", "model.attention must be one of standard, tp, relative"),
                             ("model.positions=rotary", "model.positions must be one of sinusoidal, learned, tree"),
                             ("model.embedding=roles", "model.embedding must be one of auto, plain, role"),
                             ("model.tree_relative_form=sum", "tree_relative_form must be one of multiplicative")):
        with pytest.raises(ConfigError, match=message):
            load_config(None, [setting])
    with pytest.raises(ConfigError, match="model.numbers must be one of pointer, slot, got 'slots'"):
        load_config(None, ["model.name=gts", "model.numbers=slots"])


@pytest.mark.parametrize("overrides, message", [
    (["model.attention_in=encodr"], r"model.attention_in must be auto or a comma list of encoder, decoder, cross"),
    (["model.attention_in=encoder,encoder"], r"model.attention_in must be .* \(each once\)"),
    (["model.positions_in=cross"], r"model.positions_in must be auto or a comma list of encoder, decoder \(each"),
    (["model.name=group_attention", "model.groups=global,quantty"], r"model.groups must be a comma list of global"),
    (["data.format=xml"], r"data.format must be one of null, svamp_csv, svamp_json, mwptoolkit_json"),
    (["data.task=symbolic", "data.format=jsonl"], r"data.format must be one of null, lample_charton, got 'jsonl'"),
    (["data.task=mathematics_dataset", "data.test_splits=interp"], r"data.test_splits must be a comma list of inter"),
    (["data.task=mathematics_dataset", "data.train_splits=train-easy,,train-hard"], r"data.train_splits must be a"),
    (["train.accelerator=tpu"], r"train.accelerator must be one of cpu, gpu, cuda, auto, got 'tpu'"),
    (["data.task=identities", "data.test_depths=9-8"], r"data.test_depths must be depth ranges like '1-7'"),
    (["data.task=identities", "data.train_depths=,"], r"data.train_depths names no depth"),
    (["model.name=graph2tree", "model.encoder_hidden=30"], r"model.encoder_hidden \(30\) must be a multiple of 4"),
    (["model.name=gts", "model.numbers=slot", "model.number_relevance=0.5"], r"it needs model.numbers pointer"),
    (["model.name=group_attention", "model.groups=global,quantity,question", "model.n_heads=4"],
     r"model.n_heads \(4\) must be a multiple of the 3 groups"),
])
def test_every_field_of_fixed_names_is_checked_when_the_config_is_built(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)


def test_the_fixed_names_of_the_config_are_those_the_code_reads():
    from neuromath.config.rules import GRAPH2TREE_GRAPHS
    from neuromath.models.tree_decoders import GRAPHS as GRAPH2TREE
    from neuromath.nn.group_attention import GROUPS
    from neuromath.tasks.mathematics_dataset.mathematics_generator import TEST_SPLITS, TRAIN_SPLITS
    from neuromath.tasks.word_problems import FORMATS

    assert set(FORMATS) == set(WORD_PROBLEM_FORMATS) and len(GRAPH2TREE) == GRAPH2TREE_GRAPHS
    assert GROUPS == ATTENTION_GROUPS and TRAIN_SPLITS == MATHEMATICS_SPLITS and TEST_SPLITS == MATHEMATICS_TEST_SPLITS
    config = load_config(None, ["model.attention_in=decoder,cross", "data.format=jsonl"])
    assert config.model.attention_in == "decoder,cross" and config.data.format == "jsonl"


def test_a_registered_models_keys_are_checked_and_apply_to_it_alone(monkeypatch):
    monkeypatch.setattr(ModelConfig, "members", dict(ModelConfig.members))  # the registration is undone afterwards
    monkeypatch.setattr(ModelConfig, "builders", dict(ModelConfig.builders))

    @ModelConfig.register("toy", build="toy_module:Toy")  # imported when the model is built (tests/test_adding_a_model)
    @dataclasses.dataclass(frozen=True)
    class ToyConfig(ModelConfig):
        kind: ClassVar[str] = SEQUENCE
        name: str = "toy"
        width: int = ranged(8, WIDTH)
        d_model: int = ranged(8, WIDTH)
        max_len: int = ranged(64, WIDTH)

    config = load_config(None, ["model.name=toy", "model.width=16", "decode.beam=4"], strict=True)
    assert type(config.model) is ToyConfig and config.model.width == 16 and config.decode.beam == 4
    with pytest.raises(ConfigError, match=r"^--set model.width=0: model.width must be in \[1, 65536\], got 0$"):
        load_config(None, ["model.name=toy", "model.width=0"], strict=True)
    with pytest.raises(ConfigError, match=r"model.n_heads does not apply to the toy model"):
        load_config(None, ["model.name=toy", "model.n_heads=3"], strict=True)
    assert why_not_applicable("model.width", "word_problems", "transformer") == (
        "model.width does not apply to the transformer model (it applies to: toy)")
    shown = yaml.safe_load(show_config(None, ["model.name=toy"]))
    assert shown["model"] == {"name": "toy", "width": 8, "d_model": 8, "max_len": 64}
    assert shown["decode"]["beam"] == 1  # a sequence model decodes
    with pytest.raises(TypeError, match="already"):
        ModelConfig.register("toy", build="toy_module:Toy")(ToyConfig)
    with pytest.raises(ModuleNotFoundError, match="toy_module"):
        config.model.builder()


def test_the_shared_sections_apply_by_the_models_kind():
    tree = yaml.safe_load(show_config("identities/tree_lstm"))
    assert "plateau_patience" in tree["optim"] and "warmup_steps" not in tree["optim"]
    assert tree["decode"] == {"batch_size": 256} and "rank_weight" in tree["train"]
    lstm = yaml.safe_load(show_config("identities/lstm"))
    assert "rank_weight" not in lstm["train"] and "plateau_patience" in lstm["optim"]
    majority = yaml.safe_load(show_config("identities/majority"))
    assert majority["optim"] == {} and "batch_size" in majority["train"]
    assert Config().decode.beam == 1
