"""What a run folder costs before its model is built (``neuromath.models.cost``): the meta-device count is the real
model's, a config far larger than its weights file or than the memory limit is refused before anything is built
(fast: nothing is allocated), the limit is raised by its flag and keyword, decoding steps and batch x beam x length
are bounded the same way, and a batch of long inputs is cut to what fits instead of passing the limit."""

import io
import time

import pytest
import torch
import yaml
from support.run_folders import JERRY, error_line, write_classifier_run, write_sequence_run

import neuromath
import neuromath.api.equation_classifier as equation_classifier
import neuromath.api.sequence_solver as sequence_solver
from neuromath.cli import main
from neuromath.config import load_config
from neuromath.config.models import model_names
from neuromath.config.rules import CLASSIFIER_KINDS, MAJORITY, SEQUENCE
from neuromath.errors import NeuromathError
from neuromath.models import ModelInputs, build_model
from neuromath.models.classifiers import build_classifier
from neuromath.models.cost import (
    DEFAULT_DECODE_STEPS,
    GB,
    ResourceLimitError,
    check_resume_cost,
    cost_limits,
    machine_memory,
    measure_model,
    resolve_limits,
    size_text,
)
from neuromath.tasks import get_task
from neuromath.text import Vocabulary

SOURCE = Vocabulary(["tom", "has", "apples", "n0", "n1", "n2"])
TARGET = Vocabulary(["+", "-", "*", "/", "n0", "n1", "n2", "1"])
NODES = Vocabulary(["Add", "Mul", "Pow", "sin", "cos", "var_0", "1", "2", "-1"])
SEQUENCE_MODELS = list(model_names(SEQUENCE))
CLASSIFIER_MODELS = list(model_names(*CLASSIFIER_KINDS, MAJORITY))
TRANSFORMER_VARIANTS = [("tp", "sinusoidal"), ("relative", "learned"), ("tree_relative", "tree"), ("standard", "tree")]


def edit_config(run, **changes):
    """The run's config.yaml with ``section__key=value`` changes, written back as a user would edit it."""
    path = run / "config.yaml"
    config = yaml.safe_load(path.read_text())
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        config[section][key] = value
    path.write_text(yaml.safe_dump(config))
    return run


def saved_size(model) -> int:
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    return len(buffer.getvalue())


def check_meta_count(build):
    """The meta-device count of ``build()`` equals the real model's, and the weights file of the real model holds at
    least the bytes the count says a file holds."""
    size, meta = measure_model(build)
    assert all(t.device.type == "meta" for t in [*meta.parameters(), *meta.buffers()])
    torch.manual_seed(0)
    real = build()
    assert size.parameters == sum(p.numel() for p in real.parameters())
    assert size.parameter_bytes == sum(p.numel() * p.element_size() for p in real.parameters())
    assert size.buffer_bytes == sum(b.numel() * b.element_size() for b in real.buffers())
    assert size.state_bytes <= saved_size(real) <= size.state_bytes + 64 * 1024 + 1024 * len(real.state_dict())


@pytest.mark.parametrize("name", SEQUENCE_MODELS)
def test_every_sequence_model_counts_on_the_meta_device_as_built(name):
    config = load_config(None, ["data.task=word_problems", f"model.name={name}"])
    check_meta_count(lambda: build_model(config.model, ModelInputs.for_task(get_task("word_problems"), SOURCE,
                                                                             TARGET)))


@pytest.mark.parametrize("attention,positions", TRANSFORMER_VARIANTS)
def test_every_transformer_variant_counts_on_the_meta_device_as_built(attention, positions):
    config = load_config(None, ["data.task=symbolic", f"model.attention={attention}", f"model.positions={positions}"])
    vocab = Vocabulary(["add", "mul", "sin", "x", "INT+", "1", "2"])
    check_meta_count(lambda: build_model(config.model, ModelInputs.for_task(get_task("symbolic"), vocab, vocab)))


@pytest.mark.parametrize("name", CLASSIFIER_MODELS)
def test_every_classifier_counts_on_the_meta_device_as_built(name):
    config = load_config(None, ["data.task=identities", f"model.name={name}"])
    check_meta_count(lambda: build_classifier(config.model, NODES))


def test_sizes_read_in_decimal_units():
    assert [size_text(n) for n in (812, 5_200_000, 17_179_869_184, 550 * GB, 2_970 * 10**12)] == [
        "812 bytes", "5.2 MB", "17.2 GB", "550 GB", "2,970 TB"]


def test_the_default_limit_is_half_the_machine_and_the_keyword_and_context_set_it():
    total = machine_memory()
    if total is not None:
        assert resolve_limits().memory == total // 2
    assert resolve_limits(max_memory=3).memory == 3 * GB
    assert resolve_limits().decode_steps == DEFAULT_DECODE_STEPS
    with cost_limits(max_memory=2, max_decode_len=10):
        assert (resolve_limits().memory, resolve_limits().decode_steps) == (2 * GB, 10)
        assert resolve_limits(max_memory=5).memory == 5 * GB  # a keyword of the load wins
    assert resolve_limits(max_memory=3).memory == 3 * GB and resolve_limits().decode_steps == DEFAULT_DECODE_STEPS
    for bad in (0, -1, float("inf"), float("nan"), "4"):
        with pytest.raises(NeuromathError, match="max_memory"):
            resolve_limits(max_memory=bad)


def never_called(*args, **kwargs):
    raise AssertionError("the model was built")


@pytest.fixture
def never_built(monkeypatch):
    """A load that reaches the real model's construction fails the test: refusals must come before it."""
    monkeypatch.setattr(sequence_solver, "build_model", never_called)


@pytest.mark.parametrize("changes", [
    {"model__d_model": 65536, "model__d_ff": 65536, "model__n_heads": 1},  # 68.7 billion parameters
    {"model__d_model": 2048, "model__d_ff": 2048, "model__n_encoder_layers": 64, "model__n_decoder_layers": 64},
])
def test_a_huge_config_beside_small_weights_is_refused_before_anything_is_built(tmp_path, never_built, changes):
    run = edit_config(write_sequence_run(tmp_path / "run"), **changes)
    config = load_config(run / "config.yaml")
    expected, _ = measure_model(lambda: build_model(config.model, ModelInputs.for_task(
        get_task("word_problems"), Vocabulary.load(run / "source_vocab.json"),
        Vocabulary.load(run / "target_vocab.json"))))
    started = time.perf_counter()
    with pytest.raises(ResourceLimitError) as raised:
        neuromath.load(run, max_memory=100_000)  # however much memory: the weights file gives it away
    assert time.perf_counter() - started < 10
    message = str(raised.value)
    assert f"{expected.parameters:,} parameters" in message and size_text(expected.state_bytes) in message
    assert str(run / "model.pt") in message and size_text((run / "model.pt").stat().st_size) in message


def test_a_huge_config_is_refused_by_solve_serve_and_export_with_one_error_line(tmp_path, capsys, never_built):
    run = edit_config(write_sequence_run(tmp_path / "run"), model__d_model=65536, model__d_ff=65536,
                      model__n_heads=1)
    (run / "summary.json").write_text("{}")  # a finished run, as export wants it
    for command in (["solve", str(run), JERRY], ["serve", str(run)], ["export", str(run), str(tmp_path / "out")]):
        assert main(command) == (2 if command[0] == "solve" else 1), command  # solve: 2 for an error
        line = error_line(capsys)
        assert line.startswith("error: ") and "parameters" in line and "model.pt" in line, line
    assert not (tmp_path / "out").exists()


def test_the_memory_limit_refuses_a_run_and_its_flag_lets_it_through(tmp_path, capsys):
    run = write_sequence_run(tmp_path / "run")
    edit_config(run, model__d_model=256, model__d_ff=1024, model__n_heads=4)  # a few MB of weights, really saved
    config = load_config(run / "config.yaml")
    model = build_model(config.model, ModelInputs.for_task(get_task("word_problems"),
                                                           Vocabulary.load(run / "source_vocab.json"),
                                                           Vocabulary.load(run / "target_vocab.json")))
    torch.save(model.state_dict(), run / "model.pt")
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    below = weights / 2 / GB  # half the weights alone: refused whatever the decoding needs
    with pytest.raises(ResourceLimitError) as raised:
        neuromath.load(run, max_memory=below)
    message = str(raised.value)
    assert f"{sum(p.numel() for p in model.parameters()):,} parameters" in message
    assert f"more than {size_text(int(below * GB))}" in message and "--max-memory" in message
    with cost_limits(max_memory=below):  # as the commands set it
        with pytest.raises(ResourceLimitError):
            neuromath.load(run)
        assert neuromath.load(run, max_memory=1).model is not None  # the keyword wins over the context
    assert main(["solve", str(run), JERRY, "--max-memory", f"{below:.6f}"]) == 2
    assert "--max-memory" in error_line(capsys)
    assert main(["solve", str(run), JERRY, "--max-memory", "1", "--json"]) in (0, 1)


def test_an_identities_run_is_checked_the_same_way(tmp_path, monkeypatch):
    run = write_classifier_run(tmp_path / "ids")
    assert neuromath.load(run, max_memory=1).solve("sin(x)^2 + cos(x)^2 = 1").equation
    monkeypatch.setattr(equation_classifier, "build_classifier", never_called)  # refusals come before the build
    with pytest.raises(ResourceLimitError, match="--max-memory"):
        neuromath.load(run, max_memory=1e-6)
    edit_config(run, model__d_model=65536)
    with pytest.raises(ResourceLimitError, match="model.pt"):
        neuromath.load(run, max_memory=100_000)


def test_decoding_steps_are_bounded_and_the_flag_raises_the_bound(tmp_path, capsys):
    run = edit_config(write_sequence_run(tmp_path / "run"), model__max_len=100_000, decode__max_len=100_000)
    with pytest.raises(ResourceLimitError) as raised:
        neuromath.load(run, max_memory=100)
    assert "decode.max_len 100,000" in str(raised.value) and "--max-decode-len 100000" in str(raised.value)
    assert main(["solve", str(run), JERRY]) == 2 and "--max-decode-len" in error_line(capsys)
    solver = neuromath.load(run, max_memory=100, max_decode_len=100_000)  # raised: it loads (not decoded here)
    assert solver.decode.max_len == 100_000
    short = neuromath.load(run, max_memory=100, max_len=20)  # a decoding length asked for at load is checked instead
    assert short.decode.max_len == 20


def test_batch_times_beam_times_length_is_bounded_by_the_memory_limit(tmp_path):
    run = edit_config(write_sequence_run(tmp_path / "run"), model__max_len=4096, decode__max_len=4096,
                      decode__batch_size=100_000, decode__beam=1000, decode__nbest=1)
    solver = neuromath.load(run, max_memory=1_000)
    # 100,000 // 1000 problems x beam 1000 = 100,000 rows, each with the keys and values (2 x 16 floats) of its one
    # decoder layer for 4,096 tokens: 52.4 GB, held twice while a step builds the next cache
    keys_and_values = 100_000 * 4096 * 2 * 16 * 4
    assert 2 * keys_and_values <= solver.cost.total(100, 64) <= 3 * keys_and_values
    with pytest.raises(ResourceLimitError) as raised:
        neuromath.load(run, max_memory=keys_and_values / GB)
    message = str(raised.value)
    assert "beam 1000 up to 4096 tokens" in message and "a batch of 100 problems" in message
    small = neuromath.load(run, max_memory=1, beam=2, batch_size=8, max_len=16)
    with pytest.raises(ResourceLimitError, match="beam 1000"):
        small.with_decode(beam=1000, batch_size=100_000, max_len=4096)  # a wider decoding asked later: checked too
    assert small.with_decode(beam=3).decode.beam == 3


def test_a_batch_of_long_inputs_is_cut_to_what_fits_and_answers_the_same(tmp_path):
    run = edit_config(write_sequence_run(tmp_path / "run"), model__max_len=4096)
    settings = {"beam": 2, "nbest": 2, "batch_size": 8, "max_len": 8}  # batches of 8 // 2 = 4 problems
    free = neuromath.load(run, max_memory=100, **settings)
    texts = [" ".join(["Jerry had 135 pens."] * (20 + i)) + f" John took {i + 1} pens." for i in range(12)]
    examples = [free.task.prepare(text) for text in texts]
    longest = max(len(free.task.source_tokens(example)) for example in examples) + 1  # and eos
    limit = free.cost.total(3, longest) / GB  # three problems of the longest length fit, four do not
    tight = neuromath.load(run, max_memory=limit, **settings)  # four of the nominal length fit: it loads
    assert tight.cost.sources_that_fit(4, longest) == 3
    cut, whole = tight.predict_nbest(examples), free.predict_nbest(examples)
    assert [[c.tokens for c in nbest] for nbest in cut] == [[c.tokens for c in nbest] for nbest in whole]
    scores = [c.score for nbest in whole for c in nbest]
    assert [c.score for nbest in cut for c in nbest] == pytest.approx(scores, abs=1e-5)  # other padding, rounding
    very_long = " ".join(["Jerry had 135 pens."] * 100) + " John took 1 pens."
    length = len(free.task.source_tokens(free.task.prepare(very_long))) + 1
    tighter = neuromath.load(run, max_memory=0.9 * free.cost.total(1, length) / GB, beam=2, nbest=2, batch_size=2,
                             max_len=8)
    with pytest.raises(ResourceLimitError, match=f"decoding 1 problem of {length} tokens"):
        tighter.solve(very_long)  # does not fit alone: refused, not decoded past the limit
    assert tighter.solve(JERRY).text == JERRY  # a short one is still decoded


def test_resume_is_refused_for_a_config_larger_than_its_checkpoint(tmp_path):
    run = write_sequence_run(tmp_path / "run")
    (run / "checkpoints").mkdir()
    torch.save({"state_dict": torch.load(run / "model.pt")}, run / "checkpoints" / "last.ckpt")
    config = load_config(run / "config.yaml")
    check_resume_cost(config, run, max_memory=1)  # its own config: fine
    big = load_config(run / "config.yaml", ["model.d_model=4096", "model.d_ff=4096"])
    with pytest.raises(ResourceLimitError, match="last.ckpt"):
        check_resume_cost(big, run, max_memory=100_000)
    with pytest.raises(ResourceLimitError, match="--max-memory"):
        check_resume_cost(config, run, max_memory=1e-6)


def test_train_resume_stops_before_building_a_model_past_the_limit(tmp_path, capsys):
    run = write_sequence_run(tmp_path / "run")
    (run / "checkpoints").mkdir()
    torch.save({"state_dict": torch.load(run / "model.pt")}, run / "checkpoints" / "last.ckpt")
    command = ["train", "--config", str(run / "config.yaml"), "--out", str(run), "--resume"]
    assert main([*command, "--max-memory", "0.000001"]) == 1
    line = error_line(capsys)
    assert "--max-memory" in line and "gradients, optimizer moments" in line and "parameters" in line
