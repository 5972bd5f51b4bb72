import itertools
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from neuromath.config import ModelConfig
from neuromath.decoding.beam import Hypothesis, beam_search, keep_children_in_place
from neuromath.decoding.constraints import GrammarConstraint
from neuromath.decoding.greedy import greedy_decode
from neuromath.expr.grammar import TreeGrammar
from neuromath.models import ModelInputs, build_model
from neuromath.models.contracts import SequenceModelParts
from neuromath.text import Vocabulary

EOS = Vocabulary.eos_id
WORD_GRAMMAR = TreeGrammar(arities={"+": 2, "*": 2, "neg": 1}, notation="prefix")
WORD_VOCABULARY = Vocabulary(["+", "*", "neg", "n0", "n1"])  # 9 ids, the tiny Transformer's target size
LAMPLE_GRAMMAR = TreeGrammar(
    arities={"add": 2, "mul": 2, "sin": 1}, notation="postfix", number_starts=frozenset({"INT+", "INT-"})
)
LAMPLE_VOCABULARY = Vocabulary(["INT+", "INT-", *"0123456789", "add", "mul", "sin", "x"])


def constraint_for(grammar, vocabulary):
    return GrammarConstraint(grammar.token_classes(vocabulary.tokens))


def parses(ids, grammar, vocabulary):
    """True when the ids (no eos) are one complete expression: numbers are folded into leaves first."""
    tokens = vocabulary.decode(ids, strip_specials=False)
    arities, position = [], 0
    while position < len(tokens):
        if tokens[position] in grammar.number_starts:
            end = position + 1
            while end < len(tokens) and tokens[end] in grammar.digits:
                end += 1
            if end == position + 1:
                return False
            arities.append(0)
            position = end
            continue
        if tokens[position].startswith("<") or (grammar.number_starts and tokens[position] in grammar.digits):
            return False
        arities.append(grammar.arity(tokens[position]))
        position += 1
    count = 1 if grammar.notation == "prefix" else 0
    for arity in arities:
        if grammar.notation == "prefix":
            if count == 0:
                return False
            count += arity - 1
        else:
            if count < arity:
                return False
            count += 1 - arity
    return count == (0 if grammar.notation == "prefix" else 1)


class PrefixHashModel(SequenceModelParts):
    """A toy sequence model: next-token log-probs from a fixed random table indexed by the source's
    first id and a hash of the whole generated prefix. The hash is kept in the cache, so a cache
    reordered wrongly gives wrong log-probs. Records the batch size and cache of every call."""

    def __init__(self, vocab_size, n_sources=4, n_states=101, seed=0, eos_log_odds=None):
        generator = torch.Generator().manual_seed(seed)
        logits = torch.randn(n_sources, n_states, vocab_size, generator=generator) * 2.0
        if eos_log_odds is not None:  # per source: added to the eos logit
            logits[:, :, EOS] += torch.tensor(eos_log_odds)[:, None]
        self.table = torch.log_softmax(logits, dim=-1)  # (sources, states, V)
        self.n_states = n_states
        self.batch_sizes, self.cache_was_none = [], []

    def encode(self, batch):
        source = batch["source"]
        return {"source_id": source[:, 0], "source": source}

    def extend_hash(self, hash_value, tokens):
        for column in tokens.unbind(1):
            hash_value = (hash_value * 31 + column + 1) % self.n_states
        return hash_value

    def hash_of(self, tokens):  # plain Python, for the reference searches
        value = 0
        for token in tokens:
            value = (value * 31 + token + 1) % self.n_states
        return value

    def decode_step(self, memory, prefix, cache):
        self.batch_sizes.append(prefix.size(0))
        self.cache_was_none.append(cache is None)
        if cache is None or "hash" not in cache:
            cache, done, hash_value = {}, 1, torch.zeros(prefix.size(0), dtype=torch.long)
        else:
            done, hash_value = int(cache["length"][0]), cache["hash"]
        cache["hash"] = self.extend_hash(hash_value, prefix[:, done:])
        cache["length"] = torch.full((prefix.size(0),), prefix.size(1), dtype=torch.long)
        return self.table[memory["source_id"], cache["hash"]], cache

    def log_probs(self, source_id, tokens):
        return self.table[source_id, self.hash_of(tokens)]


def sources(*ids):
    return {"source": torch.tensor([[i, 5, 6] for i in ids])}


def brute_force(model, source_id, max_len, nbest, length_penalty):
    """Every sequence that ends in eos within max_len tokens, ranked by normalized score."""
    vocab_size = model.table.size(-1)
    others = [v for v in range(vocab_size) if v != EOS]
    ranked = []
    for length in range(max_len):
        for tokens in itertools.product(others, repeat=length):
            tokens = list(tokens)
            score = sum(float(model.log_probs(source_id, tokens[:i])[t]) for i, t in enumerate(tokens))
            score += float(model.log_probs(source_id, tokens)[EOS])
            ranked.append((score / (length + 1) ** length_penalty, score, tokens))
    ranked.sort(key=lambda item: item[0], reverse=True)
    return ranked[:nbest]


@pytest.mark.parametrize("length_penalty", [0.0, 1.0])
def test_exhaustive_beam_finds_the_exact_top_n(length_penalty):
    model = PrefixHashModel(vocab_size=6, seed=1)
    max_len, nbest = 4, 8
    beam = 5**3 * 6  # every candidate of the last step fits in the first K ranks
    results = beam_search(model, sources(0, 2), beam, max_len, nbest=nbest, length_penalty=length_penalty)
    for source_id, hypotheses in zip([0, 2], results):
        expected = brute_force(model, source_id, max_len, nbest, length_penalty)
        assert [h.tokens for h in hypotheses] == [tokens for _, _, tokens in expected]
        assert all(h.finished for h in hypotheses)
        for hypothesis, (normalized, score, tokens) in zip(hypotheses, expected):
            assert hypothesis.score == pytest.approx(score, abs=1e-4)
            assert hypothesis.normalized == pytest.approx(normalized, abs=1e-4)
            assert hypothesis.normalized == pytest.approx(score / (len(tokens) + 1) ** length_penalty, abs=1e-6)


def reference_beam_search(model, source_id, beam, max_len, length_penalty, constraint=None):
    """One source at a time, with plain lists: the fairseq rules beam_search implements."""
    beams = [([], torch.tensor(0.0))]  # (tokens, float32 score) of the live beams
    finished = []
    for step in range(max_len):
        candidates = []
        for parent, (tokens, score) in enumerate(beams):
            log_probs = model.log_probs(source_id, tokens)
            if constraint is not None:
                state = constraint.start(1, "cpu")
                for token in tokens:
                    state = constraint.advance(state, torch.tensor([token]))
                allowed = constraint.allowed(state, max_len - step - 1)[0]
                log_probs = log_probs.masked_fill(~allowed, float("-inf"))
            totals = score + log_probs
            candidates += [(totals[v], parent, v) for v in range(len(totals)) if math.isfinite(totals[v])]
        candidates.sort(key=lambda candidate: float(candidate[0]), reverse=True)
        top = candidates[: 2 * beam]
        for total, parent, token in top[:beam]:
            if token == EOS and len(finished) < beam:
                score = float(total)
                finished.append(Hypothesis(beams[parent][0], score, score / (step + 1) ** length_penalty, True))
        continuing = [candidate for candidate in top if candidate[2] != EOS][:beam]
        beams = [(beams[parent][0] + [token], total) for total, parent, token in continuing]
        if len(finished) >= beam:
            break
    else:
        for tokens, score in beams:
            finished.append(Hypothesis(tokens, float(score), float(score) / max_len**length_penalty, False))
    finished.sort(key=lambda h: (h.finished, h.normalized), reverse=True)
    return finished


CASES = [
    (None, None, 9),
    (WORD_GRAMMAR, WORD_VOCABULARY, len(WORD_VOCABULARY)),
    (LAMPLE_GRAMMAR, LAMPLE_VOCABULARY, len(LAMPLE_VOCABULARY)),
]


@pytest.mark.parametrize("grammar, vocabulary, vocab_size", CASES)
@pytest.mark.parametrize("beam, length_penalty", [(1, 1.0), (2, 0.0), (3, 1.0), (5, 0.6)])
def test_matches_a_one_source_reference_loop(grammar, vocabulary, vocab_size, beam, length_penalty):
    # Source 1 favours eos, so its row finishes early and leaves the batch while the others go on.
    model = PrefixHashModel(vocab_size, seed=beam, eos_log_odds=[0.0, 3.0, -1.0, 0.0])
    constraint = constraint_for(grammar, vocabulary) if grammar is not None else None
    max_len = 9
    results = beam_search(
        model, sources(0, 1, 2), beam, max_len, nbest=2 * beam, length_penalty=length_penalty, constraint=constraint
    )
    for source_id, hypotheses in zip([0, 1, 2], results):
        expected = reference_beam_search(model, source_id, beam, max_len, length_penalty, constraint)
        assert hypotheses == expected[: 2 * beam]
        if constraint is not None:
            assert all(h.finished and parses(h.tokens, grammar, vocabulary) for h in hypotheses)


def test_done_rows_leave_the_active_batch():
    model = PrefixHashModel(9, seed=3, eos_log_odds=[0.0, 8.0, -8.0, 0.0])
    beam = 3
    results = beam_search(model, sources(1, 2), beam, max_len=8, nbest=beam)
    # The first step runs once per source (its beams all hold bos alone); source 1 has its 3 eos hypotheses after
    # two steps; source 2 runs to max_len on its own.
    assert model.batch_sizes == [2, 2 * beam] + [beam] * 6
    assert all(h.finished for h in results[0]) and len(results[0]) == beam
    assert results[0] == reference_beam_search(model, 1, beam, 8, 1.0)
    assert results[1] == reference_beam_search(model, 2, beam, 8, 1.0)[:beam]


def test_uncached_search_passes_no_cache_and_agrees():
    cached_model = PrefixHashModel(9, seed=4, eos_log_odds=[0.0, 2.0, 0.0, 0.0])
    uncached_model = PrefixHashModel(9, seed=4, eos_log_odds=[0.0, 2.0, 0.0, 0.0])
    cached = beam_search(cached_model, sources(0, 1, 3), 4, 7, nbest=4)
    uncached = beam_search(uncached_model, sources(0, 1, 3), 4, 7, nbest=4, use_cache=False)
    assert cached == uncached
    assert all(uncached_model.cache_was_none)
    assert cached_model.cache_was_none.count(True) == 1


def greedy_reference(model, source_id, max_len, constraint=None):
    tokens = []
    for step in range(max_len):
        log_probs = model.log_probs(source_id, tokens)
        if constraint is not None:
            state = constraint.start(1, "cpu")
            for token in tokens:
                state = constraint.advance(state, torch.tensor([token]))
            log_probs = log_probs.masked_fill(~constraint.allowed(state, max_len - step - 1)[0], float("-inf"))
        token = int(log_probs.argmax())
        if token == EOS:
            break
        tokens.append(token)
    return tokens


@pytest.mark.parametrize("grammar, vocabulary, vocab_size", CASES)
def test_greedy_with_a_constraint_takes_the_best_allowed_token(grammar, vocabulary, vocab_size):
    model = PrefixHashModel(vocab_size, seed=5, eos_log_odds=[-2.0, 0.0, 1.0, -3.0])
    constraint = constraint_for(grammar, vocabulary) if grammar is not None else None
    outputs = greedy_decode(model, sources(0, 1, 2, 3), max_len=10, constraint=constraint)
    assert outputs == [greedy_reference(model, i, 10, constraint) for i in range(4)]
    if constraint is not None:
        assert all(parses(tokens, grammar, vocabulary) for tokens in outputs)


@pytest.mark.parametrize("grammar, vocabulary, vocab_size", CASES)
def test_beam_one_is_greedy_on_the_toy_model(grammar, vocabulary, vocab_size):
    model = PrefixHashModel(vocab_size, seed=8, eos_log_odds=[-2.0, 0.0, 3.0, -3.0])
    constraint = constraint_for(grammar, vocabulary) if grammar is not None else None
    greedy = greedy_decode(model, sources(0, 1, 2, 3), max_len=10, constraint=constraint)
    results = beam_search(model, sources(0, 1, 2, 3), 1, max_len=10, constraint=constraint)
    assert [hypotheses[0].tokens for hypotheses in results] == greedy
    assert len({len(tokens) for tokens in greedy}) > 1  # rows stop at different steps


def tiny_transformer(seed=0, weight_std=None):
    """The tiny Transformer; with ``weight_std`` every parameter is redrawn from N(0, std^2) so the
    untrained model's outputs vary more (some rows stop early, others do not)."""
    torch.manual_seed(seed)
    config = ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32, dropout=0.0)
    model = build_model(config, ModelInputs(11, 9)).eval()
    if weight_std is not None:
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * weight_std)
    return model


def transformer_batch(seed=0, rows=5):
    generator = torch.Generator().manual_seed(seed)
    source = torch.randint(4, 11, (rows, 6), generator=generator)
    source[0, 3:] = 0  # padding
    return {"source": source}


@pytest.mark.parametrize("constrained", [False, True])
@pytest.mark.parametrize("seed, weight_std", [(0, None), (1, 1.0), (7, 1.0), (11, 1.0)])
def test_beam_one_is_greedy_on_a_transformer(constrained, seed, weight_std):
    model, batch = tiny_transformer(seed, weight_std), transformer_batch(seed, rows=6)
    constraint = constraint_for(WORD_GRAMMAR, WORD_VOCABULARY) if constrained else None
    greedy = greedy_decode(model, batch, max_len=12, constraint=constraint)
    results = beam_search(model, batch, 1, max_len=12, constraint=constraint)
    assert [hypotheses[0].tokens for hypotheses in results] == greedy
    assert all(len(hypotheses) == 1 for hypotheses in results)
    for hypotheses, tokens in zip(results, greedy):
        assert hypotheses[0].finished == (len(tokens) < 12 or constrained)


def test_cached_and_uncached_transformer_search_agree():
    model, batch = tiny_transformer(2), transformer_batch(2)
    cached = beam_search(model, batch, 4, max_len=8, nbest=4)
    uncached = beam_search(model, batch, 4, max_len=8, nbest=4, use_cache=False)
    for cached_row, uncached_row in zip(cached, uncached):
        assert [h.tokens for h in cached_row] == [h.tokens for h in uncached_row]
        assert [h.finished for h in cached_row] == [h.finished for h in uncached_row]
        assert [h.score for h in cached_row] == pytest.approx([h.score for h in uncached_row], abs=1e-4)


class LateEosModel:
    """Delegates to ``model`` but forbids eos before ``first_eos`` generated tokens, so hypotheses grow long;
    from then on eos is certain after the tokens 4 and 5 and impossible after others, so rows end apart."""

    def __init__(self, model, first_eos: int):
        self.model, self.first_eos, self.reordered = model, first_eos, False
        self.shares_memory_across_beams = model.shares_memory_across_beams

    def encode(self, batch):
        return self.model.encode(batch)

    def reorder_cache(self, cache, index):
        self.reordered = True
        return self.model.reorder_cache(cache, index)

    def decode_step(self, memory, prefix, cache):
        log_probs, cache = self.model.decode_step(memory, prefix, cache)
        log_probs = log_probs.clone()
        ends = (prefix.size(1) > self.first_eos) & ((prefix[:, -1] == 4) | (prefix[:, -1] == 5))
        log_probs[:, EOS] = torch.where(ends, 0.0, float("-inf"))
        return log_probs, cache


@pytest.mark.parametrize("attention", ["standard", "tp"])
@pytest.mark.parametrize("seed", [1, 7])
def test_one_memory_row_per_source_gives_the_search_of_repeated_memory(attention, seed):
    """Beam search folds a source's beams into one row of cross-attention queries over one memory row; with the
    fold switched off the same model repeats the memory per beam. Both must find the same hypotheses, also when
    rows finish at different steps (done rows leave both memories) and past the cache buffers' first capacity."""
    torch.manual_seed(seed)
    config = ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=2, d_ff=32, dropout=0.0,
                         attention=attention)
    model = build_model(config, ModelInputs(11, 9)).eval()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.7)
    batch = transformer_batch(seed, rows=6)
    assert model.shares_memory_across_beams
    late = LateEosModel(model, first_eos=34)
    folded = beam_search(late, batch, 4, max_len=40, nbest=4)
    model.shares_memory_across_beams = False
    repeated = beam_search(LateEosModel(model, first_eos=34), batch, 4, max_len=40, nbest=4)
    assert late.reordered  # the model's own reorder_cache ran
    ends = {len(row[0].tokens) for row in folded}
    assert len(ends) > 1 and min(ends) >= 34  # rows finished apart, after the cache outgrew its first 32 positions
    for folded_row, repeated_row in zip(folded, repeated):
        assert [h.tokens for h in folded_row] == [h.tokens for h in repeated_row]
        assert [h.score for h in folded_row] == pytest.approx([h.score for h in repeated_row], abs=1e-4)


def test_kernels_that_read_query_positions_keep_a_memory_row_per_beam():
    """Relative attention in cross-attention gives a query's weights by its position, so the beams of a source
    cannot be folded into one row of queries: the memory is repeated per beam, and the search still agrees with
    the uncached one."""
    config = ModelConfig(d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=32, dropout=0.0,
                         attention="relative", attention_in="encoder,decoder,cross")
    torch.manual_seed(3)
    model = build_model(config, ModelInputs(11, 9)).eval()
    assert not model.shares_memory_across_beams
    batch = transformer_batch(3)
    cached = beam_search(model, batch, 3, max_len=8, nbest=3)
    uncached = beam_search(model, batch, 3, max_len=8, nbest=3, use_cache=False)
    assert [[h.tokens for h in row] for row in cached] == [[h.tokens for h in row] for row in uncached]


def assert_ranked(hypotheses, nbest):
    assert 0 < len(hypotheses) <= nbest
    keys = [(h.finished, h.normalized) for h in hypotheses]
    assert keys == sorted(keys, reverse=True)
    assert all(math.isfinite(h.score) and h.score <= 0 for h in hypotheses)
    assert len({tuple(h.tokens) for h in hypotheses}) == len(hypotheses)  # no duplicate beams
    assert all(EOS not in h.tokens for h in hypotheses)


@pytest.mark.parametrize("constrained", [False, True])
def test_width_100_on_a_transformer(constrained):
    model, batch = tiny_transformer(3), transformer_batch(3, rows=2)
    constraint = constraint_for(WORD_GRAMMAR, WORD_VOCABULARY) if constrained else None
    results = beam_search(model, batch, 100, max_len=10, nbest=7, length_penalty=1.0, constraint=constraint)
    assert len(results) == 2
    for hypotheses in results:
        assert_ranked(hypotheses, 7)
        assert len(hypotheses) == 7
        if constrained:
            assert all(h.finished and parses(h.tokens, WORD_GRAMMAR, WORD_VOCABULARY) for h in hypotheses)


def test_constrained_transformer_hypotheses_all_parse():
    model, batch = tiny_transformer(4), transformer_batch(4)
    constraint = constraint_for(WORD_GRAMMAR, WORD_VOCABULARY)
    for max_len in (2, 3, 6):
        for hypotheses in beam_search(model, batch, 5, max_len=max_len, nbest=5, constraint=constraint):
            assert_ranked(hypotheses, 5)
            for h in hypotheses:
                assert h.finished and len(h.tokens) < max_len
                assert parses(h.tokens, WORD_GRAMMAR, WORD_VOCABULARY), WORD_VOCABULARY.decode(h.tokens)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError):
        beam_search(PrefixHashModel(6), sources(0), 0, 5)


@given(st.integers(1, 12).flatmap(lambda beam: st.lists(
    st.lists(st.integers(0, beam - 1), min_size=beam, max_size=beam), min_size=1, max_size=4)))
def test_property_each_parent_keeps_its_first_child_in_its_own_slot(parents):
    parents = torch.tensor(parents)
    order = keep_children_in_place(parents)
    beam = parents.size(1)
    for row, slots in zip(parents.tolist(), order.tolist()):
        assert sorted(slots) == list(range(beam))  # a permutation of the candidates
        first_child = {}
        for rank, parent in enumerate(row):
            first_child.setdefault(parent, rank)
        for parent, rank in first_child.items():
            assert slots[parent] == rank  # the parent's slot holds its best child: that row is not copied
        later = [slots[s] for s in range(beam) if s not in first_child]
        assert later == sorted(later)  # the other children fill the free slots in rank order
