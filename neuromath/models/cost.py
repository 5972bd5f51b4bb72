"""What a model costs before it is built: its parameters, the bytes of its weights and of one batch of decoding,
estimated from the config alone, and the limits a run folder must keep to be loaded.

Sizes each within bounds can together ask for more memory than the machine has (``d_model`` and ``d_ff`` 65536) or
for a decoding that never ends (``decode.max_len 100000``). So before a model is built from a run folder (load,
solve, evaluate, export, serve, resume, import):

- the model is built on the ``meta`` device, which allocates nothing, and counted (``measure_model``);
- its weights are compared with the weights file (``check_weights_file``): a far larger config is not theirs;
- one batch of decoding (``decode.batch_size`` x ``decode.beam`` rows, ``decode.max_len`` tokens) is estimated per
  model family (``DECODING``); weights plus decoding must fit the memory limit (``resolve_limits``: half the
  machine's or the GPU's memory; ``--max-memory GB``, ``max_memory=GB``);
- ``decode.max_len`` is at most ``DEFAULT_DECODE_STEPS`` (``--max-decode-len N``, ``max_decode_len=N``).

The commands set their limits with ``cost_limits`` (a context reaching runs loaded inside ``evaluate`` or
``export``); a keyword of ``neuromath.load`` overrides it. Estimates count the float32 tensors the code allocates.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import re
import stat
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import torch
from torch import nn

from neuromath.config import ModelConfig
from neuromath.config.models import (
    MajorityConfig,
    RecurrentConfig,
    RetrievalConfig,
    SequenceClassifierConfig,
    TransformerConfig,
    TreeCellConfig,
    TreeDecoderConfig,
)
from neuromath.errors import NeuromathError
from neuromath.models import ModelInputs, build_model
from neuromath.models.classifiers import build_classifier
from neuromath.nn.precision import device_kind
from neuromath.tasks import get_task
from neuromath.text import Vocabulary

GB = 10**9
DEFAULT_MEMORY_FRACTION = 0.5  # of the machine's memory (the GPU's on a GPU) one loaded run may take
DEFAULT_DECODE_STEPS = 4096  # tokens one decoding may produce; the presets decode at most 256
FLOAT = 4  # bytes of a float32: weights and activations are counted at full precision
LONG = 8  # bytes of an int64 (token ids, tree positions)
COPIES = 2  # a step's cache is built anew (concatenated, or reordered by the beam) before the old one is freed
# what the load-time estimate takes for the inputs it has not seen: a source of this many tokens (the longest input
# of a batch is checked when it comes: ``DecodingCost.sources_that_fit``), an equation of this many nodes
NOMINAL_SOURCE_TOKENS = 64
NOMINAL_EQUATION_NODES = 64
# a weights file may hold 16-bit weights: a config describing more than twice its bytes and SMALL_MODEL_BYTES more is
# not theirs (a smaller model is built, and the weights reader says what is wrong with the file)
WEIGHTS_SLACK = 2
SMALL_MODEL_BYTES = 256 * 10**6


class ResourceLimitError(NeuromathError):
    """A run folder asks for more memory or decoding steps than the limit allows, or describes a model its weights
    file cannot hold; the message gives the estimate, the limit and the flag that raises it."""


def size_text(count: int | float) -> str:
    """Bytes for a reader: ``812 bytes``, ``5.2 MB``, ``17.2 GB`` (decimal units, as the limit is given)."""
    for unit, scale in (("TB", 10**12), ("GB", GB), ("MB", 10**6), ("kB", 10**3)):
        if count >= scale:
            value = count / scale
            return f"{value:,.0f} {unit}" if value >= 100 else f"{value:.3g} {unit}"
    return f"{int(count)} bytes"


# ------------------------------------------------------------------------------------------------ the limits


def machine_memory(device: str | torch.device = "cpu") -> int | None:
    """The bytes of memory of ``device``: a GPU's own, else this machine's RAM (``os.sysconf``, else
    ``/proc/meminfo``), lowered to the memory limit of the process's control group where one is set (a container).
    None when none of these can be read."""
    device = torch.device(device)
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).total_memory)
    total = None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        try:
            for line in Path("/proc/meminfo").read_text().splitlines():
                if line.startswith("MemTotal:"):
                    total = int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            pass
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) > 0:
            total = int(text) if total is None else min(total, int(text))
    return total if total and total > 0 else None


@dataclass(frozen=True)
class CostLimits:
    """The limits a run is loaded under: ``memory`` bytes for its weights and one batch of decoding (None: no limit,
    when the machine's memory cannot be read), ``decode_steps`` tokens per decoding; ``memory_source`` and
    ``steps_source`` say where each came from, for the error message."""

    memory: int | None
    memory_source: str
    decode_steps: int
    steps_source: str

    def spent(self, used: int) -> CostLimits:
        """These limits with ``used`` bytes already taken (another model loaded beside: a vote of seeds)."""
        if self.memory is None:
            return self
        return CostLimits(max(self.memory - used, 0), f"{self.memory_source}, less {size_text(used)} already "
                          "loaded", self.decode_steps, self.steps_source)


_GIVEN: ContextVar[tuple[float | None, int | None]] = ContextVar("neuromath_cost_limits", default=(None, None))


@contextlib.contextmanager
def cost_limits(max_memory: float | None = None, max_decode_len: int | None = None) -> Iterator[None]:
    """Within this context, runs are loaded with these limits (``max_memory`` in GB, ``max_decode_len`` tokens; None:
    the default) unless the load names its own: what the commands' ``--max-memory`` and ``--max-decode-len`` set."""
    token = _GIVEN.set((max_memory, max_decode_len))
    try:
        yield
    finally:
        _GIVEN.reset(token)


def resolve_limits(max_memory: float | None = None, max_decode_len: int | None = None,
                   device: str | torch.device = "cpu") -> CostLimits:
    """The limits of a load: ``max_memory`` (GB) and ``max_decode_len`` when given, else those of the enclosing
    ``cost_limits``, else the defaults (``DEFAULT_MEMORY_FRACTION`` of ``machine_memory(device)``,
    ``DEFAULT_DECODE_STEPS``)."""
    context_memory, context_steps = _GIVEN.get()
    memory_gb = max_memory if max_memory is not None else context_memory
    steps = max_decode_len if max_decode_len is not None else context_steps
    if memory_gb is not None and (isinstance(memory_gb, bool) or not isinstance(memory_gb, (int, float))
                                  or not math.isfinite(memory_gb) or memory_gb <= 0):
        raise NeuromathError(f"max_memory must be a finite number of GB > 0, not {memory_gb!r}")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise NeuromathError(f"max_decode_len must be an integer >= 1, not {steps!r}")
    if memory_gb is not None:
        memory, memory_source = int(memory_gb * GB), f"the limit of {memory_gb:g} GB given"
    else:
        total = machine_memory(device)
        where = "this GPU's" if torch.device(device).type == "cuda" else "this machine's"
        memory = None if total is None else int(total * DEFAULT_MEMORY_FRACTION)
        memory_source = (f"the default limit, half of {where} {size_text(total)}" if total is not None
                         else "no limit (the machine's memory cannot be read)")
    steps_source = "the limit given" if steps is not None else "the default limit"
    return CostLimits(memory, memory_source, steps if steps is not None else DEFAULT_DECODE_STEPS, steps_source)


# ------------------------------------------------------------------------------------------------ the model


@dataclass(frozen=True)
class ModelSize:
    """A model counted on the meta device: its parameters, the bytes of its parameters and buffers, and the bytes a
    weights file of it holds (its state dict, each tensor once, at float32)."""

    parameters: int
    parameter_bytes: int
    buffer_bytes: int
    state_bytes: int

    @property
    def resident_bytes(self) -> int:
        return self.parameter_bytes + self.buffer_bytes


def measure_model(build: Callable[[], nn.Module]) -> tuple[ModelSize, nn.Module]:
    """``build()`` run on the meta device (tensors with shapes and types, no storage: nothing is allocated), the
    model it built (for its structure only: its tensors hold no values) and its size."""
    with torch.device("meta"):
        model = build()
    parameters = list(model.parameters())  # each shared parameter once
    buffers = list(model.buffers())
    state, seen = 0, set()
    for tensor in model.state_dict(keep_vars=True).values():  # persistent buffers too; tied weights once
        if id(tensor) not in seen:
            seen.add(id(tensor))
            state += tensor.numel() * tensor.element_size()
    size = ModelSize(
        parameters=sum(p.numel() for p in parameters),
        parameter_bytes=sum(p.numel() * p.element_size() for p in parameters),
        buffer_bytes=sum(b.numel() * b.element_size() for b in buffers),
        state_bytes=state,
    )
    return size, model


def check_weights_file(size: ModelSize, weights: Path | None, config_path: Path, model_name: str) -> None:
    """Refuse a config that describes far more weights than the regular file ``weights`` holds (``WEIGHTS_SLACK``
    times its bytes, and ``SMALL_MODEL_BYTES`` more): it is not the config those weights were trained with. Nothing is
    said of a file that is not a regular file (its reader refuses it) or of ``weights`` None."""
    if weights is None:
        return
    try:
        info = os.stat(weights)
    except OSError:
        return
    if not stat.S_ISREG(info.st_mode):
        return
    if size.state_bytes > WEIGHTS_SLACK * info.st_size + SMALL_MODEL_BYTES:
        raise ResourceLimitError(
            f"{config_path} describes a {model_name} model of {size.parameters:,} parameters whose weights take "
            f"{size_text(size.state_bytes)}, but {weights} holds {size_text(info.st_size)}: the config is not the one "
            "these weights were trained with (edited, or copied from another run); nothing was built")


# ------------------------------------------------------------------------------------------------ decoding


@dataclass(frozen=True)
class Decoding:
    """What one batch of decoding is made of: ``sources`` problems, ``beam`` rows each, up to ``steps`` tokens, the
    longest source ``source_length`` tokens."""

    sources: int
    beam: int
    steps: int
    source_length: int

    @property
    def rows(self) -> int:
        return self.sources * self.beam


def relative_width(attention: nn.Module) -> int:
    """Scores per query that a relative-position kernel adds (Shaw et al.: one per clipped distance), else 0."""
    keys = getattr(attention, "relative_keys", None)
    return int(keys.shape[0]) if keys is not None else 0


def transformer_decoding(config: TransformerConfig, model: nn.Module, vocab_size: int, batch: Decoding) -> int:
    """The Transformer's decoding: per row, the self-attention keys and values of every decoder layer up to
    ``steps`` tokens (the KV cache), the target's tree parse where the decoder reads it, one step's activations and
    log-probabilities; per memory row (one per source when cross-attention serves all beams, else one per row), the
    encoder states and the cross-attention keys and values; per source, the encoder's attention scores."""
    d, heads, layers = config.d_model, config.n_heads, config.n_decoder_layers
    steps, length = batch.steps, batch.source_length
    per_row = COPIES * steps * (2 * layers * d * FLOAT + 2 * LONG)  # KV cache; the prefix and the beam's history
    if model.target_tree is not None:  # paths (steps, tree_depth), depths, stacks and relations of the parse
        per_row += COPIES * steps * (model.target_tree.path_depth + 6) * LONG
    decoder = model.decoder_layers[0] if len(model.decoder_layers) else None
    extra = relative_width(decoder.self_attention) if decoder is not None else 0
    per_row += (config.d_ff + 8 * d + heads * (steps + extra) + 3 * vocab_size) * FLOAT
    memory_rows = batch.sources if model.shares_memory_across_beams else batch.rows
    per_memory_row = length * ((2 * layers + 1) * d * FLOAT + 1)
    encoder = model.encoder_layers[0] if len(model.encoder_layers) else None
    scores = heads * (length + (relative_width(encoder.self_attention) if encoder is not None else 0))
    per_source = length * ((scores + config.d_ff + 4 * d) * FLOAT)
    if model.source_tree is not None:
        per_source += length * (model.source_tree.path_depth + 5 + (length if model.source_relations else 0)) * LONG
    return batch.rows * per_row + memory_rows * per_memory_row + batch.sources * per_source


def recurrent_decoding(config: RecurrentConfig, model: nn.Module, vocab_size: int, batch: Decoding) -> int:
    """The recurrent encoder-decoders (DNS, Bi-LSTM seq2seq, GroupATT): per row, the decoder's hidden and cell
    states, one step's attention over the memory (its keys are projected at each step) and output; per row too, the
    memory (repeated for every beam); per source, the encoder's activations and GroupATT's attention scores."""
    hidden, layers, length = config.decoder_hidden, config.n_decoder_layers, batch.source_length
    memory_size = 2 * config.encoder_hidden if model.encoder_kind == "bilstm" else hidden
    per_row = (2 * layers * hidden + 4 * hidden + memory_size + 3 * vocab_size) * FLOAT + 2 * batch.steps * LONG
    per_row += length * (hidden + 2) * FLOAT  # one step's keys and scores over the source
    per_row += length * (memory_size * FLOAT + 1)  # the memory of each row
    per_source = length * 8 * memory_size * config.n_encoder_layers * FLOAT  # the encoder's gates and states
    if model.block is not None:
        per_source += length * (config.n_heads * length + config.d_ff + 4 * memory_size) * FLOAT
    return batch.rows * per_row + batch.sources * per_source


def tree_decoding(config: TreeDecoderConfig, model: nn.Module, vocab_size: int, batch: Decoding) -> int:
    """The goal-driven tree decoders (GTS, Graph2Tree): per row, the goal stack and the stack of finished subtrees
    (as deep as the tokens decoded), one step's goal, context and scores; per row too, the memory, its attention keys
    and the leaves; per source, the encoder's activations and Graph2Tree's four graphs over the source."""
    hidden, embedding, length = config.encoder_hidden, config.d_model, batch.source_length
    per_row = COPIES * batch.steps * ((4 * hidden + embedding) * FLOAT + 6 * LONG)  # the stacks, the prefix
    per_row += (8 * hidden + length * (2 * hidden + 1) + 3 * vocab_size) * FLOAT  # one step: additive attention
    per_row += length * (3 * hidden * FLOAT + 1)  # states, keys, leaves (at most one per source token)
    per_source = length * 6 * hidden * config.n_encoder_layers * FLOAT
    if model.graph is not None:  # adjacency (4, S, S) and the convolution's activations
        per_source += length * (4 * length + 4 * config.d_ff + 8 * hidden) * FLOAT
    return batch.rows * per_row + batch.sources * per_source


def any_decoding(config: ModelConfig, model: nn.Module, vocab_size: int, batch: Decoding) -> int:
    """A model with no formula (one a user registered): a generous bound from its widest parameter dimension W."""
    width = max((max(parameter.shape) for parameter in model.parameters() if parameter.dim()), default=1)
    per_row = (4 * width * (batch.steps + batch.source_length) + 3 * vocab_size) * FLOAT + 2 * batch.steps * LONG
    return batch.rows * per_row + batch.sources * batch.source_length * 8 * width * FLOAT


DECODING: tuple[tuple[type, Callable[[ModelConfig, nn.Module, int, Decoding], int]], ...] = (  # the first match
    (TransformerConfig, transformer_decoding),
    (RecurrentConfig, recurrent_decoding),
    (TreeDecoderConfig, tree_decoding),
    (ModelConfig, any_decoding),
)


def classifier_forward(config: ModelConfig, nodes: int) -> int:
    """The activations of an equation classifier's forward pass over ``nodes`` tree nodes (or tokens): per node,
    the cell's state and gates (a stack of ``stack_depth`` slots for the stack cells, the second-order cell's
    product of its children's states) and the node's embedding."""
    if isinstance(config, (MajorityConfig, RetrievalConfig)):
        return 0
    d = config.d_model
    per_node = 12 * d
    stack_depth = getattr(config, "stack_depth", 0)
    per_node += 3 * stack_depth * d  # the stack, its pushed and popped versions
    if config.name == "second_order_tree_rnn":
        per_node += d * d
    if isinstance(config, SequenceClassifierConfig):
        per_node += 4 * d
    if isinstance(config, TreeCellConfig) and config.number_encoder:
        per_node += 4 * d
    return nodes * per_node * FLOAT


# ------------------------------------------------------------------------------------------------ the checks


@dataclass
class DecodingCost:
    """A sequence run's weights and the estimate of its decoding, with the limits it was loaded under."""

    model_name: str
    config_path: Path
    size: ModelSize
    decoding: Callable[[Decoding], int]
    limits: CostLimits
    beam: int
    steps: int
    held: str = "weights and buffers"  # what ``size.resident_bytes`` counts, for the message

    def total(self, sources: int, source_length: int) -> int:
        return self.size.resident_bytes + self.decoding(Decoding(sources, self.beam, self.steps, source_length))

    def sources_that_fit(self, wanted: int, source_length: int) -> int:
        """How many of ``wanted`` sources of ``source_length`` tokens fit one batch within the limit (0: none)."""
        if self.limits.memory is None or self.total(wanted, source_length) <= self.limits.memory:
            return wanted
        low, high = 0, wanted  # total() grows with the sources: the most that fit, by bisection
        while low < high:
            middle = (low + high + 1) // 2
            if self.total(middle, source_length) <= self.limits.memory:
                low = middle
            else:
                high = middle - 1
        return low

    def refusal(self, sources: int, source_length: int) -> str:
        """Why a batch of ``sources`` sources of ``source_length`` tokens is refused: numbers, limit and flag."""
        batch = Decoding(sources, self.beam, self.steps, source_length)
        problems = "1 problem" if sources == 1 else f"a batch of {sources} problems"
        return (f"a {self.model_name} model of {self.size.parameters:,} parameters "
                f"({size_text(self.size.resident_bytes)} of {self.held}) decoding {problems} of "
                f"{source_length} tokens x beam {batch.beam} up to {batch.steps} tokens "
                f"({size_text(self.decoding(batch))}) needs an estimated "
                f"{size_text(self.total(sources, source_length))}, more than {size_text(self.limits.memory or 0)} "
                f"({self.limits.memory_source}); raise the limit with --max-memory GB "
                "(neuromath.load: max_memory=GB)")


def batch_sources(batch_size: int, beam: int) -> int:
    """The sources of one decoding batch, as ``Solver.predict_nbest`` forms it: batch x beam rows about as many as a
    greedy batch."""
    return max(1, batch_size // beam) if beam > 1 else batch_size


def check_steps(max_len: int, limits: CostLimits, config_path: Path) -> None:
    if max_len > limits.decode_steps:
        raise ResourceLimitError(
            f"{config_path}: decode.max_len {max_len:,} asks for up to {max_len:,} decoding steps per problem, more "
            f"than {limits.decode_steps:,} ({limits.steps_source}); each step costs the same however small the "
            f"model, so such a decoding runs for minutes. Lower decode.max_len, or raise the limit with "
            f"--max-decode-len {max_len} (neuromath.load: max_decode_len={max_len})")


def check_sequence_cost(config, inputs, config_path: Path, weights: Path | None, limits: CostLimits,
                        decode=None) -> DecodingCost:
    """The checks of a sequence run before its model is built: its config (``config.model``, decoding ``decode``,
    default ``config.decode``) and vocabularies (``inputs``, ``ModelInputs``) measured on the meta device, its
    weights file compared with them, its decoding steps and the memory of its weights plus one full batch of
    decoding (of sources of ``NOMINAL_SOURCE_TOKENS`` tokens) within ``limits``. A ResourceLimitError names the
    numbers; the estimate is returned for the batches to come."""
    decode = decode if decode is not None else config.decode
    size, model = measure_model(lambda: build_model(config.model, inputs))
    check_weights_file(size, weights, config_path, config.model.name)
    cost = decoding_cost(config, size, model, inputs.target_vocab_size, config_path, limits, decode)
    check_decoding(cost, decode)
    return cost


def decoding_cost(config, size: ModelSize, model: nn.Module, vocab_size: int, config_path: Path,
                  limits: CostLimits, decode) -> DecodingCost:
    formula = next(estimate for kind, estimate in DECODING if isinstance(config.model, kind))

    def decoding(batch: Decoding) -> int:
        return formula(config.model, model, vocab_size, batch)

    return DecodingCost(config.model.name, config_path, size, decoding, limits, decode.beam, decode.max_len)


def check_decoding(cost: DecodingCost, decode, steps: bool = True) -> None:
    """Refuse decoding settings (``decode``: a ``DecodeConfig``) past the limits: more steps than allowed (unless
    ``steps`` is False), or weights plus one full batch of decoding over the memory limit."""
    if steps:
        check_steps(decode.max_len, cost.limits, cost.config_path)
    sources = batch_sources(decode.batch_size, decode.beam)
    length = NOMINAL_SOURCE_TOKENS
    if cost.sources_that_fit(sources, length) < sources:
        raise ResourceLimitError(f"{cost.config_path}: {cost.refusal(sources, length)}")


def with_decode(cost: DecodingCost, decode) -> DecodingCost:
    """``cost`` for other decoding settings (``Solver.with_decode``), checked as at load."""
    changed = dataclasses.replace(cost, beam=decode.beam, steps=decode.max_len)
    check_decoding(changed, decode)
    return changed


def check_classifier_cost(config, vocab, config_path: Path, weights: Path | None, limits: CostLimits,
                          nodes: int = NOMINAL_EQUATION_NODES, training: bool = False) -> ModelSize:
    """The checks of an equation-classifier run before its model is built (``neuromath.load``, import, resume): its
    size on the meta device against its weights file, and its weights plus the forward pass over an equation of
    ``nodes`` nodes (with ``training``: plus gradients and the optimizer's two moments) within ``limits``."""
    size, _ = measure_model(lambda: build_classifier(config.model, vocab))
    check_weights_file(size, weights, config_path, config.model.name)
    resident = size.resident_bytes + (3 * size.parameter_bytes if training else 0)
    total = resident + classifier_forward(config.model, nodes)
    if limits.memory is not None and total > limits.memory:
        what = "training it" if training else f"a forward pass over an equation of {nodes} nodes"
        raise ResourceLimitError(
            f"{config_path}: a {config.model.name} model of {size.parameters:,} parameters "
            f"({size_text(size.resident_bytes)} of weights and buffers) with {what} needs an estimated "
            f"{size_text(total)}, more than {size_text(limits.memory)} ({limits.memory_source}); raise the limit "
            "with --max-memory GB (neuromath.load: max_memory=GB)")
    return size


def check_training_cost(config, inputs, config_path: Path, checkpoint: Path | None, limits: CostLimits) -> ModelSize:
    """The checks of a sequence run whose training is resumed, before its model is built: its size against the
    checkpoint it resumes from, and its weights, their gradients and the optimizer's two moments (four times the
    parameters) plus one batch of decoding of its validation within ``limits``. The activations of a training batch
    are not counted."""
    size, model = measure_model(lambda: build_model(config.model, inputs))
    check_weights_file(size, checkpoint, config_path, config.model.name)
    training = ModelSize(size.parameters, 4 * size.parameter_bytes, size.buffer_bytes, size.state_bytes)
    cost = dataclasses.replace(decoding_cost(config, training, model, inputs.target_vocab_size, config_path, limits,
                                             config.decode), held="weights, gradients, optimizer moments and buffers")
    check_decoding(cost, config.decode, steps=False)  # the training's own config: its decoding length is the user's
    return size


SEED_FOLDER = re.compile(r"seed\d+")  # the runs of a train --seeds folder


def check_resume_cost(config, run_dir: str | Path, max_memory: float | None = None) -> None:
    """The checks of ``train --resume`` before a model is built: for each run of ``run_dir`` (or its ``seed<S>/``
    runs) with a last checkpoint and vocabularies, the model of ``config`` measured on the meta device against that
    checkpoint, and its training state (weights, gradients, two optimizer moments) plus one batch of validation
    decoding within the limit (``max_memory`` GB, else ``resolve_limits``'s); other folders are left to training."""
    limits = resolve_limits(max_memory, device=device_kind(config.train.accelerator))
    run_dir = Path(run_dir)
    seeds = sorted(path for path in run_dir.glob("seed*") if SEED_FOLDER.fullmatch(path.name) and path.is_dir())
    folders = [run_dir, *seeds] if run_dir.is_dir() else []
    for folder in folders:
        checkpoint = folder / "checkpoints" / "last.ckpt"
        if not os.path.lexists(checkpoint):
            continue
        config_path = folder / "config.yaml"
        if any(isinstance(config.model, kind) for kind, _ in DECODING):
            if not all((folder / name).is_file() for name in ("source_vocab.json", "target_vocab.json")):
                continue
            source = Vocabulary.load(folder / "source_vocab.json")
            target = Vocabulary.load(folder / "target_vocab.json")
            inputs = ModelInputs.for_task(get_task(config.data.task), source, target, folder)
            check_training_cost(config, inputs, config_path, checkpoint, limits)
        elif (folder / "node_vocab.json").is_file():
            vocab = Vocabulary.load(folder / "node_vocab.json")
            check_classifier_cost(config, vocab, config_path, checkpoint, limits, training=True)
