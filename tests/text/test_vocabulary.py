import pytest

from neuromath.errors import DataFormatError
from neuromath.text import BOS, EOS, PAD, UNK, Vocabulary, char_tokens, word_tokens


def test_build_orders_by_frequency_and_keeps_specials_first():
    vocab = Vocabulary.build([["b", "a", "a"], ["c", "a", "b"]])
    assert vocab.tokens[:4] == [PAD, BOS, EOS, UNK]
    assert vocab.tokens[4:] == ["a", "b", "c"]


def test_build_keeps_reserved_tokens_whatever_their_counts_and_appends_the_unseen():
    texts = [["b", "a", "a", "n1"], ["c", "a", "b", "rare"]]
    assert Vocabulary.build(texts, min_count=2).tokens[4:] == ["a", "b"]
    vocab = Vocabulary.build(texts, min_count=2, reserved=["n3", "n1", "n0", "n1"])
    assert vocab.tokens[4:] == ["a", "b", "n1", "n3", "n0"]  # n1 seen once: by frequency; n3, n0 unseen: as given
    assert vocab.encode(["rare", "n0"]) == [vocab.unk_id, 8]
    assert Vocabulary.build([], reserved=["n0"]).tokens == [PAD, BOS, EOS, UNK, "n0"]
    assert Vocabulary.build(texts, reserved=[UNK]).tokens[4:] == ["a", "b", "c", "n1", "rare"]  # no second <unk>


def test_word_tokens_lower_case_unless_told_not_to():
    assert word_tokens("Tom has n0 Pens .") == ["tom", "has", "n0", "pens", "."]
    assert word_tokens("Tom has n0 Pens .", lowercase=False) == ["Tom", "has", "n0", "Pens", "."]


def test_encode_decode_with_unknown_and_specials():
    vocab = Vocabulary(["n0", "-", "n1"])
    ids = vocab.encode(["-", "n0", "zzz"], add_bos=True, add_eos=True)
    assert ids == [1, 5, 4, 3, 2]
    assert vocab.decode(ids) == ["-", "n0", UNK]
    assert vocab.decode([5, 2, 4]) == ["-"]  # stops at eos
    assert vocab.decode(ids, strip_specials=False) == [BOS, "-", "n0", UNK, EOS]
    assert vocab.count_unknown(["zzz", "n1", "yyy"]) == 2


def test_save_and_load(tmp_path):
    vocab = Vocabulary.build([list("héllo wörld")], level="char")
    vocab.save(tmp_path / "v.json")
    loaded = Vocabulary.load(tmp_path / "v.json")
    assert loaded.tokens == vocab.tokens and loaded.level == "char"


def test_load_rejects_a_file_that_is_not_a_vocabulary(tmp_path):
    path = tmp_path / "v.json"
    path.write_text('{"tokens": ["a"], "level": "word"}')
    with pytest.raises(DataFormatError, match="special tokens"):
        Vocabulary.load(path)
    path.write_text("not json")
    with pytest.raises(DataFormatError, match="v.json"):
        Vocabulary.load(path)


def test_tokenizers():
    assert word_tokens("Jerry had n0 pens .") == ["jerry", "had", "n0", "pens", "."]
    assert char_tokens("1+2") == ["1", "+", "2"]
