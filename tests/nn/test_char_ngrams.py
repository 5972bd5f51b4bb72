"""Character n-gram embeddings of source words (neuromath/nn/char_ngrams.py, model.char_ngrams): the n-grams and
their rows are fixed by the word alone, every word-problem encoder adds them, and a model with them answers problems
whose deciding word it has never seen, where the same model without them cannot."""

import random
import zlib

import pytest
import torch

from neuromath.config import ModelConfig
from neuromath.decoding.greedy import greedy_decode
from neuromath.errors import ConfigError
from neuromath.models import ModelInputs, build_model, build_task_model
from neuromath.models.batching import EncodedExamples, SourceWords, collate
from neuromath.nn.char_ngrams import CharNgramEmbedding, char_ngrams
from neuromath.tasks import get_task
from neuromath.tasks.word_problems.templates import generate
from neuromath.text import Vocabulary

ADD = ["adds", "added", "gains", "gained", "earns", "earned"]
SUBTRACT = ["loses", "lost", "drops", "dropped", "spends", "spent"]
UNSEEN = {"adding": "+", "gaining": "+", "earning": "+", "losing": "-", "dropping": "-", "spending": "-"}


def test_the_ngrams_of_a_word_and_their_rows_depend_on_the_word_alone():
    assert char_ngrams("Pens") == ["<pe", "pen", "ens", "ns>", "<pen", "pens", "ens>", "<pens", "pens>"]
    assert char_ngrams("a") == ["<a>"]  # shorter than three characters: itself
    bag = CharNgramEmbedding(4, buckets=1000)
    assert bag.rows_of("pens") == [zlib.crc32(gram.encode()) % 1000 for gram in char_ngrams("pens")]
    assert torch.equal(bag([("pens",)], 1), torch.zeros(1, 1, 4))  # untrained n-grams add nothing
    torch.nn.init.normal_(bag.bag.weight)
    vectors = bag([("pens", "pen"), ("train",)], length=3)
    assert vectors.shape == (2, 3, 4) and torch.equal(vectors[1, 1:], torch.zeros(2, 4))  # no word: zeros
    assert not torch.equal(vectors[0, 0], vectors[0, 1])


def problems(verbs, count, rng, add=ADD):
    rows = []
    for _ in range(count):
        verb = rng.choice(verbs)
        operator = "+" if verb in add or UNSEEN.get(verb) == "+" else "-"
        rows.append((["n0", verb, "n1", "."], [operator, "n0", "n1"]))
    return rows


def batch_of(rows, source_vocab, target_vocab, unknown_verbs=False):
    """The rows as a batch; ``unknown_verbs``: every other row's verb is read as <unk> (its n-grams stay), as word
    dropout does in training."""
    sources = [source_vocab.encode(words, add_eos=True) for words, _ in rows]
    if unknown_verbs:
        for source in sources[::2]:
            source[1] = source_vocab.unk_id
    targets = [target_vocab.encode(target, add_bos=True, add_eos=True) for _, target in rows]
    target = torch.tensor(targets)
    return {"source": torch.tensor(sources), "target_in": target[:, :-1], "target_out": target[:, 1:],
            "source_words": SourceWords(words for words, _ in rows)}


def accuracy_on_unseen_verbs(name, buckets, fit_teacher_forced, subwords=0, add=ADD, subtract=SUBTRACT):
    """The accuracy on the unseen verbs of a model trained on the verbs ``add`` and ``subtract``."""
    torch.manual_seed(0)
    source_vocab = Vocabulary(["n0", "n1", ".", *add, *subtract])  # the unseen verbs are <unk> for the word table
    target_vocab = Vocabulary(["+", "-", "n0", "n1"])
    values = {"name": name, "d_model": 16, "encoder_hidden": 16, "decoder_hidden": 16, "n_encoder_layers": 1,
              "n_decoder_layers": 1, "dropout": 0.0, "char_ngrams": buckets, "d_ff": 32, "n_heads": 2,
              "subwords": subwords}
    keys = ModelConfig.member(name).__dataclass_fields__
    inputs = ModelInputs(len(source_vocab), len(target_vocab), source_tokens=source_vocab.tokens,
                         target_tokens=target_vocab.tokens, source_words=True)
    model = build_model(ModelConfig(**{key: value for key, value in values.items() if key in keys}), inputs)
    train = batch_of(problems(add + subtract, 96, random.Random(1), add), source_vocab, target_vocab,
                     unknown_verbs=True)
    start, final = fit_teacher_forced(model, train, steps=150)
    assert final < 0.2 * start
    test_rows = problems(list(UNSEEN), 60, random.Random(2))
    model.eval()
    predictions = greedy_decode(model, batch_of(test_rows, source_vocab, target_vocab), max_len=4)
    return sum(target_vocab.decode(ids) == target for ids, (_, target) in zip(predictions, test_rows)) / len(test_rows)


@pytest.mark.parametrize("name", ["bilstm_seq2seq", "transformer"])
def test_a_model_with_ngrams_answers_problems_whose_verb_it_never_saw(name, fit_teacher_forced):
    with_ngrams = accuracy_on_unseen_verbs(name, 512, fit_teacher_forced)
    without = accuracy_on_unseen_verbs(name, 0, fit_teacher_forced)
    assert with_ngrams > 0.85, with_ngrams
    assert without < 0.75, without  # every unseen verb is one <unk>, trained on both operators: a coin


@pytest.mark.parametrize("name", ["dns", "group_attention", "gts", "graph2tree"])
def test_every_word_problem_encoder_adds_the_ngrams_and_the_subwords_and_trains_them(name):
    torch.manual_seed(0)
    task = get_task("word_problems")
    examples = generate(6, random.Random(0))
    source = Vocabulary.build([task.source_tokens(example) for example in examples])
    target = Vocabulary.build([task.target_tokens(example) for example in examples])
    values = {"name": name, "d_model": 16, "encoder_hidden": 16, "decoder_hidden": 16, "n_heads": 4, "d_ff": 32,
              "char_ngrams": 64, "subwords": 40}
    keys = ModelConfig.member(name).__dataclass_fields__
    model = build_task_model(ModelConfig(**{key: value for key, value in values.items() if key in keys}), task,
                             source, target)
    encoded = EncodedExamples(examples, task, source, target)
    batch = collate([encoded[index] for index in range(len(encoded))])
    model(batch).logsumexp(-1).sum().backward()
    assert model.char_ngrams.bag.weight.grad is not None and model.char_ngrams.bag.weight.grad.abs().sum() > 0
    assert model.subwords.bag.weight.grad is not None and model.subwords.bag.weight.grad.abs().sum() > 0


def test_a_task_without_words_as_written_refuses_char_ngrams():
    with pytest.raises(ConfigError, match="model.char_ngrams reads the source words as written"):
        build_model(ModelConfig(name="transformer", d_model=16, n_heads=2, d_ff=32, char_ngrams=64),
                    ModelInputs(10, 10))
