"""Fixed-shape decoding and decode.compile (neuromath/decoding/fixed_shapes.py): the same hypotheses and scores as the
model's own decode_step, eager and compiled, greedy and beam, for every Transformer kernel that can decode in fixed
shapes; the others are refused with their reason."""

import pytest
import torch
from torch._dynamo.utils import counters

import neuromath
from neuromath.cli import main
from neuromath.config import ModelConfig
from neuromath.decoding.beam import beam_search
from neuromath.decoding.fixed_shapes import FixedShapeDecoder
from neuromath.decoding.greedy import greedy_decode
from neuromath.errors import ConfigError
from neuromath.models import ModelInputs, build_model, build_task_model
from neuromath.nn import compiling
from neuromath.tasks import get_task
from neuromath.text import Vocabulary

KERNELS = [
    {"attention": "standard"},
    {"attention": "tp"},
    {"attention": "relative"},  # reads the query's position in decoder self-attention
    {"attention": "relative", "attention_in": "encoder,decoder,cross"},  # and in cross-attention: no folded beams
    {"attention": "standard", "positions": "learned"},
]


def small_model(seed: int, **options):
    """A small untrained Transformer (its initial weights vary its outputs more than larger redrawn ones)."""
    torch.manual_seed(seed)
    config = ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=2, d_ff=32, dropout=0.0,
                         **options)
    return build_model(config, ModelInputs(11, 9)).eval()


class EndsAfter:
    """Delegates to a decoder but makes eos certain from the 4th step on after prefixes whose ids sum to a multiple of
    4, and impossible otherwise (and pad, bos and unk always), so that rows end apart (done rows leave beam search)
    and some run to the length limit."""

    def __init__(self, decoder):
        self.decoder = decoder
        self.shares_memory_across_beams = decoder.shares_memory_across_beams

    def encode(self, batch):
        return self.decoder.encode(batch)

    def reorder_cache(self, cache, index):
        return self.decoder.reorder_cache(cache, index)

    def decode_step(self, memory, prefix, cache):
        log_probs, cache = self.decoder.decode_step(memory, prefix, cache)
        log_probs = log_probs.clone()
        ends = (prefix.size(1) > 3) & (prefix.sum(dim=1) % 4 == 0)
        log_probs[:, 2] = torch.where(ends, 0.0, float("-inf"))
        log_probs[:, [0, 1, 3]] = float("-inf")  # never pad, bos or unk
        return log_probs, cache


def source_batch(seed: int, rows: int = 6) -> dict:
    generator = torch.Generator().manual_seed(seed)
    source = torch.randint(4, 11, (rows, 7), generator=generator)
    source[0, 4:] = 0  # padding
    return {"source": source}


def assert_same_search(reference, candidate):
    for reference_row, candidate_row in zip(reference, candidate, strict=True):
        assert [h.tokens for h in candidate_row] == [h.tokens for h in reference_row]
        assert [h.finished for h in candidate_row] == [h.finished for h in reference_row]
        assert [h.score for h in candidate_row] == pytest.approx([h.score for h in reference_row], abs=1e-4)


@pytest.mark.parametrize("options", KERNELS, ids=lambda options: "-".join(options.values()))
@pytest.mark.parametrize("seed", [1, 3])
def test_fixed_shape_steps_give_the_models_own_hypotheses(options, seed):
    model, batch = small_model(seed, **options), source_batch(seed)
    fixed = EndsAfter(FixedShapeDecoder(model, capacity=13))
    model = EndsAfter(model)
    greedy = greedy_decode(model, batch, max_len=12)
    assert greedy_decode(fixed, batch, max_len=12) == greedy
    reference = beam_search(model, batch, 4, max_len=12, nbest=4)
    assert len({len(h.tokens) for row in reference for h in row}) > 1  # hypotheses end apart
    assert_same_search(reference, beam_search(fixed, batch, 4, max_len=12, nbest=4))
    # without a cache every step feeds the whole prefix again, one fixed-shape step per token
    assert_same_search(reference, beam_search(fixed, batch, 4, max_len=12, nbest=4, use_cache=False))


def test_each_step_gives_the_log_probabilities_of_decode_step():
    model, batch = small_model(3, attention="tp"), source_batch(3)
    fixed = FixedShapeDecoder(model, capacity=9)
    memory, fixed_memory = model.encode(batch), fixed.encode(batch)
    prefix = torch.randint(4, 9, (6, 8), generator=torch.Generator().manual_seed(0))
    cache = fixed_cache = None
    for length in range(1, 9):
        expected, cache = model.decode_step(memory, prefix[:, :length], cache)
        found, fixed_cache = fixed.decode_step(fixed_memory, prefix[:, :length], fixed_cache)
        torch.testing.assert_close(found, expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="holds 9 positions; the prefix has 10"):
        fixed.decode_step(fixed_memory, torch.ones(6, 10, dtype=torch.long), None)


def test_bf16_autocast_keeps_the_buffers_in_bf16_and_stays_close():
    model, batch = small_model(2), source_batch(2)
    fixed = FixedShapeDecoder(model, capacity=9)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        memory = fixed.encode(batch)
        log_probs, cache = fixed.decode_step(memory, torch.ones(6, 1, dtype=torch.long), None)
    assert all(buffer.dtype == torch.bfloat16 for buffer in cache["buffers"].values())
    expected, _ = model.decode_step(model.encode(batch), torch.ones(6, 1, dtype=torch.long), None)
    torch.testing.assert_close(log_probs, expected, rtol=0.05, atol=0.05)


@pytest.mark.skipif(not compiling.has_cpu_compiler(), reason="inductor needs a C++ compiler")
def test_a_compiled_step_gives_the_eager_hypotheses_and_compiles_once_per_batch_shape():
    torch._dynamo.reset()
    model, batch = small_model(5, attention="tp"), source_batch(5)
    compiled = EndsAfter(FixedShapeDecoder(model, capacity=11, compile=True))
    model = EndsAfter(model)
    counters.clear()
    assert greedy_decode(compiled, batch, max_len=10) == greedy_decode(model, batch, max_len=10)
    assert not counters["graph_break"]  # one graph, no breaks
    frames = counters["stats"]["unique_graphs"]
    assert frames == 1  # every step of the greedy search reused the first step's graph
    assert_same_search(beam_search(model, batch, 3, max_len=10, nbest=3),
                       beam_search(compiled, batch, 3, max_len=10, nbest=3))


def tree_model(seed: int, **options):
    """A small untrained Transformer over prefix expressions, whose decoder parses its targets as trees."""
    torch.manual_seed(seed)
    config = ModelConfig(d_model=32, n_heads=2, n_encoder_layers=1, n_decoder_layers=2, d_ff=32, dropout=0.0,
                         **options)
    vocabulary = Vocabulary(["add", "mul", "sin", "x", "INT+", "1", "2", "3"])
    return build_task_model(config, get_task("symbolic"), vocabulary, vocabulary).eval()


TREE_OPTIONS = [
    {"positions": "tree", "positions_in": "decoder"},
    {"attention": "tree_relative", "attention_in": "decoder"},
    {"attention": "tree_relative", "attention_in": "encoder,decoder", "positions": "tree"},
]


@pytest.mark.parametrize("options", TREE_OPTIONS, ids=lambda options: "-".join(options.values()))
@pytest.mark.parametrize("seed", [0, 2])
def test_a_decoder_that_parses_its_targets_as_trees_decodes_the_same_in_fixed_shapes(options, seed):
    """The target's tree parse (paths for tree positions, relations for tree relative attention) runs inside the
    fixed-shape step, token by token into fixed buffers, and gives the hypotheses and scores of the growing parse."""
    model = tree_model(seed, **options)
    assert model.target_tree is not None
    generator = torch.Generator().manual_seed(seed)
    batch = {"source": torch.randint(4, 12, (5, 6), generator=generator)}
    fixed = EndsAfter(FixedShapeDecoder(model, capacity=11))
    model = EndsAfter(model)
    assert greedy_decode(fixed, batch, max_len=10) == greedy_decode(model, batch, max_len=10)
    reference = beam_search(model, batch, 4, max_len=10, nbest=4)
    assert len({len(h.tokens) for row in reference for h in row}) > 1
    assert_same_search(reference, beam_search(fixed, batch, 4, max_len=10, nbest=4))


def test_the_fixed_shape_parse_gives_the_paths_depths_and_relations_of_the_growing_parse():
    model = tree_model(1, attention="tree_relative", attention_in="decoder", positions="tree")
    parser = model.target_tree
    ids = torch.tensor([[1, 4, 5, 7, 8, 9, 10, 7],    # bos add mul x INT+ 1 2 x: the digits chain after INT+
                        [1, 6, 4, 7, 7, 2, 0, 0]])    # bos sin add x x eos pad pad
    info, _ = parser(ids, None, relations=True)
    assert info["depth"][0].tolist() == [0, 1, 2, 3, 3, 4, 5, 2]  # a real parse: the digits chain under INT+
    state = parser.fixed_state(2, 8, ids.device)
    for t in range(8):
        step = parser.fixed_step(ids[:, t : t + 1], state, torch.tensor(t), relations=True)
        assert torch.equal(step["paths"][:, 0], info["paths"][:, t])
        assert torch.equal(step["depth"][:, 0], info["depth"][:, t])
        assert torch.equal(step["relations"][:, 0, : t + 1], info["relations"][:, t, : t + 1])  # the keys so far


@pytest.mark.skipif(not compiling.has_cpu_compiler(), reason="inductor needs a C++ compiler")
def test_the_tree_parse_compiles_into_the_one_graph_of_a_step():
    torch._dynamo.reset()
    counters.clear()
    model = tree_model(2, attention="tree_relative", attention_in="encoder,decoder", positions="tree")
    batch = {"source": torch.randint(4, 12, (5, 6), generator=torch.Generator().manual_seed(2))}
    compiled = EndsAfter(FixedShapeDecoder(model, capacity=11, compile=True))
    assert greedy_decode(compiled, batch, max_len=10) == greedy_decode(EndsAfter(model), batch, max_len=10)
    assert not counters["graph_break"] and counters["stats"]["unique_graphs"] == 1


def test_models_without_fixed_shape_steps_are_refused_with_the_reason():
    recurrent = build_model(ModelConfig(name="bilstm_seq2seq", d_model=16), ModelInputs(11, 9))
    with pytest.raises(ConfigError, match="has no fixed-shape decoding step"):
        FixedShapeDecoder(recurrent, capacity=8)


@pytest.mark.skipif(not compiling.has_cpu_compiler(), reason="inductor needs a C++ compiler")
def test_a_run_loaded_with_decode_compile_solves_as_the_eager_run(tmp_path):
    run = tmp_path / "run"
    tiny = ["data.generate_train=200", "data.generate_valid=20", "data.generate_test=20", "model.d_model=16",
            "model.n_heads=2", "model.d_ff=32", "model.n_encoder_layers=1", "model.n_decoder_layers=1",
            "train.max_epochs=2", "train.progress=false", "train.num_threads=1", "decode.max_len=24"]
    assert main(["train", "--config", "word_problems/transformer", *(f"--set={item}" for item in tiny),
                 "--out", str(run)]) == 0
    problems = ["Tom has 3 apples and buys 4 more. How many apples does he have?",
                "A box holds 12 pens. How many pens are in 5 boxes?",
                "Sara had 20 dollars and spent 7. How much is left?"]
    eager, compiled = neuromath.load(run), neuromath.load(run, compile=True)
    assert isinstance(compiled.decoder(compiled.decode), FixedShapeDecoder)
    for beam in (1, 3):
        found = compiled.with_decode(beam=beam).solve_many(problems)
        expected = eager.with_decode(beam=beam).solve_many(problems)
        assert [s.equation for s in found] == [s.equation for s in expected]
    with pytest.raises(ConfigError, match="unknown decoding option"):
        neuromath.load(run, compiled=True)
