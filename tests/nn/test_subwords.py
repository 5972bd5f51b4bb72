"""Subword pieces of source words (neuromath/nn/subwords.py, model.subwords): byte-pair merges learned from the source
vocabulary's words alone (so a loaded run learns them again), pieces that spell the word back, and a model that reads
a verb it never saw from the pieces it shares with training verbs."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from neuromath.config import ModelConfig
from neuromath.errors import ConfigError
from neuromath.models import ModelInputs, build_model
from neuromath.nn.subwords import SubwordEmbedding, learn_merges, segment
from tests.nn.test_char_ngrams import ADD, SUBTRACT, accuracy_on_unseen_verbs

WORDS = ["low", "lower", "lowest", "newest", "widest", "n0", "<unk>", ".", "12"]


def test_the_merges_are_the_most_frequent_pairs_of_the_word_types_in_a_fixed_order():
    merges = learn_merges(WORDS, 4)
    # each type counts once; "<l", "lo", "ow", "es", "st", "t>", "we" occur in 3 words; ties go to the first pair
    assert merges == [("<", "l"), ("<l", "o"), ("<lo", "w"), ("e", "s")]
    assert learn_merges(reversed(WORDS), 4) == merges  # the order of the vocabulary does not matter
    ranks = {pair: rank for rank, pair in enumerate(merges)}
    assert segment("Lowest", ranks) == ["<low", "es", "t", ">"]
    assert segment("slowest", ranks) == ["<", "s", "l", "o", "w", "es", "t", ">"]  # "<l" only starts a word
    assert len(learn_merges(WORDS, 1000)) < 1000  # it stops when no pair occurs twice


@given(st.lists(st.text(alphabet="abcdeé", min_size=1, max_size=9), min_size=1, max_size=30),
       st.integers(0, 60), st.text(alphabet="abcdefé", min_size=1, max_size=12))
def test_property_pieces_spell_the_word_and_learned_words_keep_their_training_spelling(words, merges, other):
    learned = learn_merges(words, merges)
    ranks = {pair: rank for rank, pair in enumerate(learned)}
    for word in [*words, other]:
        assert "".join(segment(word, ranks)) == f"<{word.lower()}>"
    assert learned == learn_merges(sorted(words, reverse=True), merges)


def test_the_embedding_skips_tokens_that_are_no_words_and_starts_at_zero():
    bag = SubwordEmbedding(4, WORDS, 10)
    assert bag.pieces_of("n0") == [] and bag.pieces_of("12") == [] and bag.pieces_of(".") == []
    assert "u" not in bag.piece_index and "k" not in bag.piece_index  # specials (<unk>) are not words to learn from
    assert bag.rows_of("lowest") and all(0 <= row < len(bag.piece_index) for row in bag.rows_of("lowest"))
    assert bag.rows_of("zzz") == [bag.piece_index[piece] for piece in ("<", ">")]  # unseen characters left out
    assert torch.equal(bag([("lowest",)], 1), torch.zeros(1, 1, 4))
    torch.nn.init.normal_(bag.bag.weight)
    vectors = bag([("lowest", "n0"), ("widest",)], length=3)
    assert vectors.shape == (2, 3, 4) and torch.equal(vectors[0, 1], torch.zeros(4))
    assert torch.equal(vectors[1, 1:], torch.zeros(2, 4)) and not torch.equal(vectors[0, 0], vectors[1, 0])
    again = SubwordEmbedding(4, list(reversed(WORDS)), 10)  # a loaded run: the same vocabulary, the same table
    assert again.piece_index == bag.piece_index
    again.load_state_dict(bag.state_dict())
    assert torch.equal(again([("lowest", "n0"), ("widest",)], length=3), vectors)


@pytest.mark.parametrize("name", ["bilstm_seq2seq", "transformer"])
def test_a_model_with_subwords_answers_problems_whose_verb_it_never_saw(name, fit_teacher_forced):
    # the training verbs hold "-ing" words of both operators, so that "ing>" is a piece and says nothing about the
    # operator: an unseen "adding" is "<add" + "ing>". (With no "-ing" word, "i", "n", "g" and ">" are pieces that
    # only some verbs of one operator have, and a dozen training words teach that noise: BPE needs a vocabulary.)
    add, subtract = [*ADD, "winning", "finding"], [*SUBTRACT, "missing", "paying"]
    accuracy = accuracy_on_unseen_verbs(name, 0, fit_teacher_forced, subwords=40, add=add, subtract=subtract)
    assert accuracy > 0.85, accuracy
    without = accuracy_on_unseen_verbs(name, 0, fit_teacher_forced, add=add, subtract=subtract)
    assert without < 0.75, without


def test_a_task_without_words_as_written_refuses_subwords():
    with pytest.raises(ConfigError, match="model.subwords reads the source words as written"):
        build_model(ModelConfig(name="transformer", d_model=16, n_heads=2, d_ff=32, subwords=64),
                    ModelInputs(10, 10))
