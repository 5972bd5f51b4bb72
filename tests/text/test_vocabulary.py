import pytest

from neuromath.errors import DataFormatError
from neuromath.text import BOS, EOS, PAD, UNK, Vocabulary, char_tokens, word_tokens


def test_build_orders_by_frequency_and_keeps_specials_first():
    vocab = Vocabulary.build([["b", "a", "a"], ["c", "a", "b"]])
    assert vocab.tokens[:4] == [PAD, BOS, EOS, UNK]
    assert vocab.tokens[4:] == ["a", "b", "c"]


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
