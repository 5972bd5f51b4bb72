"""The recurrent word-problem models (dns, bilstm_seq2seq, group_attention): span roles from ids, the decoding
contract, configuration errors, and each model learning a tiny task."""

import random

import pytest
import torch

from neuromath.config import ModelConfig
from neuromath.decoding.beam import beam_search
from neuromath.decoding.greedy import greedy_decode
from neuromath.errors import ConfigError
from neuromath.models import ModelInputs, build_model
from neuromath.nn.group_attention import span_roles_from_ids
from neuromath.tasks.word_problems import MASK_REGEX, SPAN_BREAKS, span_roles
from neuromath.text import Vocabulary

pytestmark = pytest.mark.usefixtures("one_thread")

RECURRENT = ("dns", "bilstm_seq2seq", "group_attention")

ENGLISH = "tom has n0 apples , he buys n1 more . how many apples does he have now ?".split()
ENGLISH_FINAL_PERIOD = "n0 pens cost n1 dollars . find the cost of one pen .".split()
CHINESE = "小 明 有 n0 个 苹 果 ， 又 买 了 n1 个 。 他 一 共 有 多 少 个 ？".split()
NO_NUMBERS_BEFORE_QUESTION = "a farmer sells eggs , what is n0 times n1 ?".split()


def table(tokens, test):
    return torch.tensor([test(index, token) for index, token in enumerate(tokens)], dtype=torch.bool)


@pytest.mark.parametrize("problems", [[ENGLISH, CHINESE], [ENGLISH_FINAL_PERIOD, NO_NUMBERS_BEFORE_QUESTION, ENGLISH]])
def test_span_roles_from_ids_agree_with_the_token_version_in_a_padded_batch(problems):
    vocab = Vocabulary(sorted({token for problem in problems for token in problem}))
    ids = [vocab.encode(problem, add_eos=True) for problem in problems]
    length = max(map(len, ids))
    source = torch.tensor([row + [vocab.pad_id] * (length - len(row)) for row in ids])  # (B, T)
    spans, quantity, question, valid = span_roles_from_ids(
        source,
        table(vocab.tokens, lambda i, t: t in SPAN_BREAKS),
        table(vocab.tokens, lambda i, t: MASK_REGEX.fullmatch(t) is not None),
        table(vocab.tokens, lambda i, t: i not in (vocab.pad_id, vocab.bos_id, vocab.eos_id)),
        vocab.pad_id,
    )
    for row, problem in enumerate(problems):
        expected_spans, expected_quantity, expected_question = span_roles(problem)
        n = len(problem)
        assert spans[row, :n].tolist() == expected_spans
        assert quantity[row, :n].tolist() == expected_quantity
        assert question[row, :n].tolist() == expected_question
        # eos belongs to the last (question) span; padding is invalid and in no role
        assert spans[row, n] == expected_spans[-1] and bool(question[row, n]) and not bool(quantity[row, n])
        assert valid[row].tolist() == [True] * (n + 1) + [False] * (length - n - 1)
        assert not question[row, n + 1 :].any() and not quantity[row, n + 1 :].any()


def test_hand_checked_roles_of_the_chinese_problem():
    vocab = Vocabulary(dict.fromkeys(CHINESE))
    source = torch.tensor([vocab.encode(CHINESE, add_eos=True)])
    spans, quantity, question, _ = span_roles_from_ids(
        source,
        table(vocab.tokens, lambda i, t: t in SPAN_BREAKS),
        table(vocab.tokens, lambda i, t: MASK_REGEX.fullmatch(t) is not None),
        table(vocab.tokens, lambda i, t: i > 2),
    )
    # 小 明 有 n0 个 苹 果 ， | 又 买 了 n1 个 。 | 他 一 共 有 多 少 个 ？ <eos>
    assert spans[0].tolist() == [0] * 8 + [1] * 6 + [2] * 9
    assert quantity[0].tolist() == [True] * 14 + [False] * 9
    assert question[0].tolist() == [False] * 14 + [True] * 9


TOKENS = ["tom", "has", "n0", "apples", ",", "he", "buys", "sells", "n1", ".", "how", "many", "?", "gets", "times"]
TARGETS = ["+", "-", "*", "n0", "n1"]


def tiny_task(n: int, rng: random.Random):
    """A problem's verb picks the operator (buys +, sells -, gets * ), so a model must read the text to be right."""
    verbs = {"buys": "+", "sells": "-", "gets": "*"}
    examples = []
    for _ in range(n):
        verb = rng.choice(sorted(verbs))
        filler = rng.sample(["tom", "has", "apples", "many"], k=rng.randint(0, 3))
        text = ["tom", "has", "n0", "apples", ",", "he", verb, "n1", *filler, ".", "how", "many", "?"]
        examples.append((text, ["n0", "n1", verbs[verb]]))
    return examples


def batch_of(examples, source_vocab, target_vocab):
    sources = [source_vocab.encode(text, add_eos=True) for text, _ in examples]
    targets = [target_vocab.encode(target, add_bos=True, add_eos=True) for _, target in examples]

    def pad(rows):
        length = max(map(len, rows))
        return torch.tensor([row + [0] * (length - len(row)) for row in rows])

    target = pad(targets)
    return {"source": pad(sources), "target_in": target[:, :-1], "target_out": target[:, 1:]}


def small_model(name, source_vocab, target_vocab, **changes):
    values = dict(name=name, d_model=32, encoder_hidden=24, decoder_hidden=48, n_heads=4, d_ff=64, dropout=0.0)
    values = {key: value for key, value in values.items() if key in ModelConfig.member(name).__dataclass_fields__}
    values.update(changes)  # the sizes above that the model's class has (dns has no encoder_hidden), and the test's
    return build_model(
        ModelConfig(**values), ModelInputs(len(source_vocab), len(target_vocab), source_tokens=source_vocab.tokens)
    )


@pytest.mark.parametrize("name", RECURRENT)
def test_decode_step_with_cache_matches_teacher_forcing_and_beam_search_runs(name):
    torch.manual_seed(0)
    source_vocab, target_vocab = Vocabulary(TOKENS), Vocabulary(TARGETS)
    batch = batch_of(tiny_task(3, random.Random(1)), source_vocab, target_vocab)
    model = small_model(name, source_vocab, target_vocab).eval()
    with torch.no_grad():
        full = torch.log_softmax(model(batch), dim=-1)  # (B, T, V)
        memory, cache = model.encode(batch), None
        for step in range(batch["target_in"].size(1)):
            log_probs, cache = model.decode_step(memory, batch["target_in"][:, : step + 1], cache)
            assert torch.allclose(log_probs, full[:, step], atol=1e-5)
            uncached, _ = model.decode_step(memory, batch["target_in"][:, : step + 1], None)
            assert torch.allclose(uncached, log_probs, atol=1e-5)
    greedy = greedy_decode(model, batch, max_len=6)
    beams = beam_search(model, batch, beam_size=1, max_len=6)
    assert [hypotheses[0].tokens for hypotheses in beams] == [list(ids) for ids in greedy]
    wide = beam_search(model, batch, beam_size=4, max_len=6, nbest=3)
    assert all(len(hypotheses) == 3 for hypotheses in wide)


@pytest.mark.parametrize("name", RECURRENT)
def test_each_model_learns_the_tiny_task(name, fit_teacher_forced):
    torch.manual_seed(0)
    source_vocab, target_vocab = Vocabulary(TOKENS), Vocabulary(TARGETS)
    train = batch_of(tiny_task(120, random.Random(2)), source_vocab, target_vocab)
    test_examples = tiny_task(60, random.Random(3))
    test = batch_of(test_examples, source_vocab, target_vocab)
    # One layer a side: through two decoder layers DNS (no attention) needs several hundred steps to leave the
    # plateau where the operator is guessed (loss ln(3)/4); the wiring is what this test checks.
    model = small_model(name, source_vocab, target_vocab, n_encoder_layers=1, n_decoder_layers=1)
    start, final = fit_teacher_forced(model, train, steps=120)
    model.eval()
    predictions = greedy_decode(model, test, max_len=5)
    right = sum(target_vocab.decode(ids) == target for ids, (_, target) in zip(predictions, test_examples))
    assert final < 0.2 * start
    assert right / len(test_examples) > 0.9


def test_group_attention_block_follows_the_configured_groups():
    source_vocab, target_vocab = Vocabulary(TOKENS), Vocabulary(TARGETS)
    four = small_model("group_attention", source_vocab, target_vocab, n_heads=8)
    assert four.block.attention.groups == ("global", "quantity", "quantity_pair", "question")
    assert four.block.attention.heads_per_group == 2
    ablation = small_model("group_attention", source_vocab, target_vocab, n_heads=8, groups="quantity_pair")
    assert ablation.block.attention.groups == ("quantity_pair",) and ablation.block.attention.heads_per_group == 8
    assert small_model("bilstm_seq2seq", source_vocab, target_vocab).block is None


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"groups": "global,local"}, "model.groups"),
        ({"groups": "global,global"}, "model.groups"),
        ({"groups": "global,quantity,question", "n_heads": 4}, "multiple"),
    ],
)
def test_bad_group_settings_are_config_errors(changes, message):
    source_vocab, target_vocab = Vocabulary(TOKENS), Vocabulary(TARGETS)
    with pytest.raises(ConfigError, match=message):
        small_model("group_attention", source_vocab, target_vocab, **changes)


def test_group_attention_needs_the_source_tokens():
    with pytest.raises(ConfigError, match="source vocabulary"):
        build_model(
            ModelConfig(name="group_attention", d_model=16, encoder_hidden=8, decoder_hidden=16), ModelInputs(20, 8)
        )
