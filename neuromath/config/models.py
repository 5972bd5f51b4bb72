"""The model section of the run configuration, and the one place a model is registered.

A model is one registration: ``@ModelConfig.register(name, ..., build="module:attribute")`` on its config class binds
the name (``model.name``), the keys the model reads with their defaults and allowed values (the class), how it trains
(the class's ``kind``: ``neuromath.config.rules``; it picks the optim, train and decode keys that apply and the
training procedure) and its builder. The builder is a callable or a ``"module:attribute"`` path imported on first
use, so config stays importable without torch. Every other list of models (``model_names(kind)``, the builders) is
read from here. Adding a model: one module with its config class, its model and this registration, and a preset
(docs/design.md, "Adding a model").
"""

from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

from neuromath.config.rules import (
    ATTENTION_GROUPS,
    ATTENTION_KERNELS,
    ATTENTION_PLACES,
    DEPTH,
    DROPOUT_SITES,
    LENGTH,
    MAJORITY,
    MAX_LAYERS,
    MAX_LENGTH,
    NONNEGATIVE,
    POSITION_ENCODINGS,
    POSITION_SIDES,
    PROBABILITY,
    RETRIEVAL,
    SEQUENCE,
    SEQUENCE_CLASSIFIER,
    TREE_ACTIVATION_NAMES,
    TREE_CLASSIFIER,
    TREE_LEAF_NAMES,
    WIDTH,
    WORD_VECTOR_SOURCES,
    Range,
    heads_divide_among_the_groups,
    heads_divide_the_memory,
    heads_divide_the_states,
    heads_divide_the_width,
    pretrained_encoder_is_named,
    relevance_reads_pointers,
    tree_positions_fit,
)
from neuromath.config.sections import ChosenSection, family, list_of, one_of, ranged
from neuromath.errors import ConfigError

# the keys every model of a kind has: a sequence model's width (the warm-up schedule scales by it) and the longest
# input it reads (solve refuses a longer one)
KIND_REQUIRES = {SEQUENCE: ("d_model", "max_len")}
PLUGIN_GROUP = "neuromath.models"  # entry points of installed packages that register models
CHAR_NGRAM_BUCKETS = Range(low=0, high=2**24, high_closed=True)  # rows of the n-gram table; 0: none
SUBWORD_MERGES = Range(low=0, high=2**20, high_closed=True)  # byte-pair merges learned; 0: none


@family("model", "name", "model")
@dataclass(frozen=True)
class ModelConfig(ChosenSection):
    """The root of the model family: ``ModelConfig(name=..., **keys)`` builds the class of that model."""

    name: str = "transformer"
    kind: ClassVar[str]
    bounded_positions: ClassVar[bool] = False  # reads and writes at most max_len positions (a position table)
    builders: ClassVar[dict[str, Any]] = {}  # model name -> builder, or its "module:attribute" path

    @classmethod
    def register(cls, *names: str, build: Callable | str) -> Callable[[type], type]:
        """Class decorator: the config class configures the models ``names`` (its default name first), each built by
        ``build``. A sequence model's builder is called as ``build(config, inputs)`` (``neuromath.models.ModelInputs``),
        a classifier's as ``build(config, vocab)``, a retrieval baseline's as ``build(config)``."""
        if isinstance(build, str) and (build.count(":") != 1 or not all(build.split(":"))):
            raise TypeError(f"build must be a callable or a 'module:attribute' path, not {build!r}")
        configures = super().register(*names)

        def decorate(member: type) -> type:
            if not isinstance(getattr(member, "kind", None), str):
                raise TypeError(f"{member.__name__} must set kind (one of neuromath.config.rules.KINDS)")
            missing = [key for key in KIND_REQUIRES.get(member.kind, ()) if key not in member.__dataclass_fields__]
            if missing:
                raise TypeError(f"{member.__name__} ({member.kind.replace('_', ' ')}) must have the keys "
                                f"{', '.join(missing)}")
            configures(member)
            cls.family_root().builders.update(dict.fromkeys(names, build))
            return member

        return decorate

    @classmethod
    def member(cls, value: Any) -> type:
        """The config class of the model ``value``; a name not registered yet is looked up among the installed
        packages' entry points of the group ``neuromath.models`` (``name = "module"``), whose module registers it."""
        if isinstance(value, str) and value not in cls.family_root().members:
            for entry in importlib.metadata.entry_points(group=PLUGIN_GROUP, name=value):
                module = entry.value.partition(":")[0]
                try:
                    importlib.import_module(module)
                except Exception as error:  # a broken plugin: say which, not a traceback from its import
                    raise ConfigError(f"model.name {value!r}: its entry point {module!r} (group {PLUGIN_GROUP}) "
                                      f"failed to import: {type(error).__name__}: {error}") from error
                if value not in cls.family_root().members:
                    raise ConfigError(f"model.name {value!r}: its entry point {module!r} (group {PLUGIN_GROUP}) "
                                      f"imported but registered no model of that name")
        return super().member(value)

    def builder(self) -> Callable:
        """What builds this model (its registered builder, imported on first use)."""
        build = self.family_root().builders.get(self.name)
        if build is None:
            raise ConfigError(f"model {self.name!r} is registered without a builder")
        if isinstance(build, str):
            module, _, attribute = build.partition(":")
            build = getattr(importlib.import_module(module), attribute)
        return build


@dataclass(frozen=True)
class PretrainedWordsKeys(ModelConfig):
    """The word-problem models whose word vectors may come from a pretrained encoder."""

    # where the source words' vectors come from: embedding (the model's own table, as the papers) or pretrained, a
    # Transformer encoder read through Hugging Face transformers from model.pretrained (a hub name or a local folder;
    # neuromath.nn.pretrained), whose state at each word's first piece replaces its embedding; freeze_embeddings stops
    # training the encoder's embedding tables, freeze_layers N its lowest N layers as well (and its embeddings)
    encoder: str = one_of("embedding", *WORD_VECTOR_SOURCES)
    pretrained: str | None = None
    freeze_embeddings: bool = False
    freeze_layers: int = ranged(0, Range(low=0, high=MAX_LAYERS, high_closed=True))


# ------------------------------------------------------------------------------------------ encoder-decoders


@ModelConfig.register("transformer", build="neuromath.models.transformer:Transformer")
@dataclass(frozen=True)
class TransformerConfig(PretrainedWordsKeys):
    """The Transformer with a choice of attention kernel and positions: standard, TP-Transformer (Schlag et al.),
    relative positions (Shaw et al.), tree positions (Shiv & Quirk) and tree relative attention."""

    kind: ClassVar[str] = SEQUENCE
    bounded_positions: ClassVar[bool] = True
    rules: ClassVar = (heads_divide_the_width, tree_positions_fit, pretrained_encoder_is_named)
    name: str = "transformer"
    d_model: int = ranged(128, WIDTH)
    n_heads: int = ranged(4, WIDTH)  # at most d_model (heads divide it)
    n_encoder_layers: int = ranged(2, DEPTH)
    n_decoder_layers: int = ranged(2, DEPTH)
    d_ff: int = ranged(256, WIDTH)
    dropout: float = ranged(0.1, PROBABILITY)
    norm_first: bool = True  # pre-LayerNorm (True) or post-LayerNorm (False)
    attention: str = one_of("standard", *ATTENTION_KERNELS)  # the kernel (nn.attention registers each)
    # where the kernel is used: comma list of encoder, decoder, cross; auto -> the kernel's own default
    attention_in: str = list_of("auto", *ATTENTION_PLACES, alone=("auto",))
    positions: str = one_of("sinusoidal", *POSITION_ENCODINGS)  # nn.positions and nn.tree_structure register them
    # comma list of encoder, decoder; the other side gets sinusoidal; auto -> every side it applies to
    positions_in: str = list_of("auto", *POSITION_SIDES, alone=("auto",))
    embedding: str = one_of("auto", "auto", "plain", "role")  # role: TP-Transformer eq. 2; auto: role with tp
    # relative positions (Shaw et al.): distances clipped to [-k, k]; 0: every distance shares one embedding
    relative_k: int = ranged(16, Range(low=0, high=MAX_LENGTH, high_closed=True))
    # tree positions (Shiv & Quirk): levels of the one-hot path stack (the presets: 32)
    tree_depth: int = ranged(16, Range(low=1, high=1024, high_closed=True))
    # tree positions: child indices 0 .. width-1 (larger ones are clipped)
    tree_width: int = ranged(2, Range(low=1, high=1024, high_closed=True))
    # tree relative attention: relation ids, the most frequent paths + one shared "other" (so at least two)
    tree_relations: int = ranged(64, Range(low=2, high=MAX_LENGTH, high_closed=True))
    tree_relative_form: str = one_of("multiplicative", "multiplicative", "additive")  # a_ij * r_ij or a_ij + r_ij
    share_embeddings: bool = True  # tie the target embedding and the output projection
    max_len: int = ranged(512, LENGTH)  # positions of the Transformer's tables
    char_ngrams: int = ranged(0, CHAR_NGRAM_BUCKETS)  # see RecurrentConfig
    subwords: int = ranged(0, SUBWORD_MERGES)  # see RecurrentConfig


@ModelConfig.register("dns", build="neuromath.models.recurrent:DeepNeuralSolver")
@dataclass(frozen=True)
class RecurrentConfig(PretrainedWordsKeys):
    """The recurrent encoder-decoders of word problems (DNS: a GRU encoder and decoder); d_model is the embedding
    size."""

    kind: ClassVar[str] = SEQUENCE
    rules: ClassVar = (pretrained_encoder_is_named,)
    name: str = "dns"
    d_model: int = ranged(128, WIDTH)
    n_encoder_layers: int = ranged(2, DEPTH)
    n_decoder_layers: int = ranged(2, DEPTH)
    dropout: float = ranged(0.1, PROBABILITY)
    decoder_hidden: int = ranged(512, WIDTH)  # units of the decoder (the GRU of dns: of its one direction)
    max_len: int = ranged(512, LENGTH)  # the longest input the model reads
    # rows of the hashed character 3-5-gram embeddings whose mean joins each source word's embedding, so that a word
    # the vocabulary lacks still has a vector (fastText's idea; neuromath.nn.char_ngrams); 0: off. Word problems only
    char_ngrams: int = ranged(0, CHAR_NGRAM_BUCKETS)
    # byte-pair merges learned from the source vocabulary's words, whose pieces' mean embedding joins each source
    # word's (Sennrich et al. 2016; neuromath.nn.subwords), the other way to give unseen words a vector; 0: off
    subwords: int = ranged(0, SUBWORD_MERGES)


@ModelConfig.register("bilstm_seq2seq", build="neuromath.models.recurrent:BiLSTMSeq2Seq")
@dataclass(frozen=True)
class BiLSTMSeq2SeqConfig(RecurrentConfig):
    """A Bi-LSTM encoder and an LSTM decoder with attention."""

    name: str = "bilstm_seq2seq"
    encoder_hidden: int = ranged(256, WIDTH)  # units of each encoder direction


@ModelConfig.register("group_attention", build="neuromath.models.recurrent:GroupAttentionSeq2Seq")
@dataclass(frozen=True)
class GroupAttentionConfig(BiLSTMSeq2SeqConfig):
    """Group attention (Li et al. 2019): the Bi-LSTM encoder-decoder whose attention heads are split into groups."""

    rules: ClassVar = (pretrained_encoder_is_named, heads_divide_the_memory, heads_divide_among_the_groups)
    name: str = "group_attention"
    n_heads: int = ranged(4, WIDTH)  # shared equally by the groups; they divide both encoder directions
    d_ff: int = ranged(256, WIDTH)
    groups: str = list_of(",".join(ATTENTION_GROUPS), *ATTENTION_GROUPS)


@ModelConfig.register("gts", build="neuromath.models.tree_decoders:GoalDrivenTreeSolver")
@dataclass(frozen=True)
class TreeDecoderConfig(PretrainedWordsKeys):
    """The goal-driven tree decoders of word problems (GTS): a Bi-GRU encoder; goals and subtrees are
    encoder_hidden wide."""

    kind: ClassVar[str] = SEQUENCE
    rules: ClassVar = (relevance_reads_pointers, pretrained_encoder_is_named)
    name: str = "gts"
    d_model: int = ranged(128, WIDTH)
    n_encoder_layers: int = ranged(2, DEPTH)
    dropout: float = ranged(0.1, PROBABILITY)
    encoder_hidden: int = ranged(256, WIDTH)
    # for ablations: how a number leaf is embedded (pointer: the encoder state at its position in the problem; slot:
    # a learned embedding per slot n0, n1, ..., like a constant), and whether goals and parents read the embeddings of
    # finished subtrees (False: a right goal and a merged parent see zeros instead)
    numbers: str = one_of("pointer", "pointer", "slot")
    subtree_embedding: bool = True
    max_len: int = ranged(512, LENGTH)  # the longest input the model reads
    char_ngrams: int = ranged(0, CHAR_NGRAM_BUCKETS)  # see RecurrentConfig
    subwords: int = ranged(0, SUBWORD_MERGES)  # see RecurrentConfig
    # weight of an auxiliary training loss: from each number's encoder state, predict whether the gold equation uses
    # it (binary cross-entropy over the problem's numbers), so the encoder learns which numbers the question needs
    # from the corpus's own problems; 0: off. Decoding is unchanged.
    number_relevance: float = ranged(0.0, NONNEGATIVE)
    # teacher forcing: nodes builds one node of every tree per step (target-length steps); levels builds one depth
    # of every tree per step and scores all nodes at once (tree-depth steps, the same function;
    # neuromath.nn.goal_tree_levels)
    tree_forcing: str = one_of("nodes", "nodes", "levels")


@ModelConfig.register("graph2tree", build="neuromath.models.tree_decoders:GraphToTreeSolver")
@dataclass(frozen=True)
class Graph2TreeConfig(TreeDecoderConfig):
    """Graph2Tree (Zhang et al. 2020): the tree decoder over a graph-convolved encoder."""

    rules: ClassVar = (relevance_reads_pointers, pretrained_encoder_is_named, heads_divide_the_states)
    name: str = "graph2tree"
    d_ff: int = ranged(256, WIDTH)
    # also link each word of a number's quantity cell to the other occurrences of that word in the problem (the
    # question's words reach the numbers; neuromath.tasks.word_problems.graphs.shared_word_links)
    shared_words: bool = False
    # build the graphs from the problem's words as written, not from the vocabulary's tokens, so a word the vocabulary
    # does not know is still a content word, equal to its other occurrences (needs a task with source_words)
    graph_text: bool = False


# ------------------------------------------------------------------------------------------ equation classifiers

TREE_CLASSIFIER_BUILDER = "neuromath.models.classifiers:tree_classifier"  # the cell model.name names, in the engine


@ModelConfig.register("rnn", "lstm", build="neuromath.models.classifiers:sequence_classifier")
@dataclass(frozen=True)
class SequenceClassifierConfig(ModelConfig):
    """A recurrent encoder over an equation's pre-order tokens (identities); d_model is its hidden size."""

    kind: ClassVar[str] = SEQUENCE_CLASSIFIER
    name: str = "rnn"
    d_model: int = ranged(128, WIDTH)
    dropout: float = ranged(0.1, PROBABILITY)  # on each side's output


@ModelConfig.register("stack_rnn", build="neuromath.models.classifiers:sequence_classifier")
@dataclass(frozen=True)
class StackRNNConfig(SequenceClassifierConfig):
    """The RNN with a soft stack (Joulin & Mikolov)."""

    name: str = "stack_rnn"
    stack_depth: int = ranged(8, Range(low=1, high=4096, high_closed=True))  # slots of the soft stack


@dataclass(frozen=True)
class TreeCellConfig(ModelConfig):
    """What every recursive cell over an equation's two trees reads (identities); d_model is the hidden size."""

    kind: ClassVar[str] = TREE_CLASSIFIER
    d_model: int = ranged(128, WIDTH)
    dropout: float = ranged(0.1, PROBABILITY)  # on each tree node's output (or the candidate: dropout_site)
    number_encoder: bool = False  # read every number leaf's value with a small network (numbers as evidence)


@ModelConfig.register("tree_rnn", "second_order_tree_rnn", build=TREE_CLASSIFIER_BUILDER)
@dataclass(frozen=True)
class TreeRNNConfig(TreeCellConfig):
    """The Tree-RNN cells (the second-order one multiplies its children's states through a tensor)."""

    name: str = "tree_rnn"
    tree_activation: str = one_of("tanh", *TREE_ACTIVATION_NAMES)  # sigmoid: Arabshahi et al.'s code


@ModelConfig.register("tree_lstm", "mtree_lstm", "mi_tree_lstm", build=TREE_CLASSIFIER_BUILDER)
@dataclass(frozen=True)
class TreeLSTMConfig(TreeCellConfig):
    """The Tree-LSTM cells (Tai et al.), multiplicative (MTree-LSTM) and multiplicative-integration (MI-Tree-LSTM):
    a memory c and a candidate u."""

    name: str = "tree_lstm"
    # where model.dropout applies: output (every node's h, where its parent reads it) | candidate (only the candidate u
    # of c = i*u + f_l*c_l + f_r*c_r, as Arabshahi et al.'s code does for its Tree-LSTM)
    dropout_site: str = one_of("output", *DROPOUT_SITES)
    # how a leaf's state is made: gated (a node without children, Tai et al.: [i, o, u] from the embedding x, c = i*u,
    # h = o*tanh(c)) | embedding (h = x, c = 0, as Arabshahi et al.'s code; their released Tree-LSTM, imported by
    # neuromath import released, needs it)
    tree_leaf: str = one_of("gated", *TREE_LEAF_NAMES)


@ModelConfig.register("stack_mtree_lstm", "stack_mi_tree_lstm", "tree_smu_lstm", build=TREE_CLASSIFIER_BUILDER)
@dataclass(frozen=True)
class StackTreeLSTMConfig(TreeLSTMConfig):
    """The Tree-LSTM cells with a soft stack per node."""

    name: str = "stack_mtree_lstm"
    stack_depth: int = ranged(8, Range(low=1, high=4096, high_closed=True))  # slots of the soft stack


@ModelConfig.register("tree_smu", build=TREE_CLASSIFIER_BUILDER)
@dataclass(frozen=True)
class TreeSMUConfig(TreeCellConfig):
    """The tree stack memory unit: a recursive cell whose state is a soft stack."""

    name: str = "tree_smu"
    stack_depth: int = ranged(8, Range(low=1, high=4096, high_closed=True))  # slots of the soft stack


@ModelConfig.register("majority", build="neuromath.models.classifiers:majority_classifier")
@dataclass(frozen=True)
class MajorityConfig(ModelConfig):
    """The majority class of the training labels (identities): no parameters."""

    kind: ClassVar[str] = MAJORITY
    name: str = "majority"


@ModelConfig.register("jaccard", "cosine", build="neuromath.models.retrieval:retrieval_baseline")
@dataclass(frozen=True)
class RetrievalConfig(ModelConfig):
    """The retrieval baselines of word problems (neuromath.models.retrieval): nothing trained, only the data read."""

    kind: ClassVar[str] = RETRIEVAL
    name: str = "jaccard"


def model_names(*kinds: str) -> tuple[str, ...]:
    """The model names of these kinds (every kind when none is given), in registration order."""
    return tuple(name for name, member in ModelConfig.members.items() if not kinds or member.kind in kinds)
