"""neuromath/models/retrieval.py: Jaccard and cosine nearest neighbours on a toy set, with hand-computed
similarities and the template filled with the test problem's numbers."""

import math

import pytest

from neuromath.errors import ConfigError
from neuromath.models.retrieval import RetrievalBaseline, problem_words
from neuromath.tasks.word_problems import example_from_equation, is_correct

TRAIN = [
    example_from_equation("a", "tom has 5 apples and buys 3 more apples", "x=5+3"),
    example_from_equation("b", "tom has 9 apples and eats 4 apples", "x=9-4"),
    example_from_equation("c", "a box holds 6 pens each and there are 7 boxes", "x=6*7"),
]


def test_words_leave_out_the_numbers():
    assert problem_words(TRAIN[0]) == ["tom", "has", "apples", "and", "buys", "more", "apples"]


def test_jaccard_by_hand_and_the_template_filled_with_the_test_numbers():
    test = example_from_equation("t", "sue has 10 apples and eats 2 apples", "x=10-2")
    baseline = RetrievalBaseline("jaccard").fit(TRAIN)
    # test words {sue, has, apples, and, eats}; a: {tom, has, apples, and, buys, more} -> 3/8;
    # b: {tom, has, apples, and, eats} -> 4/6; c: {a, box, holds, pens, each, and, there, are, boxes} -> 1/13
    assert baseline.scores(test) == pytest.approx([3 / 8, 4 / 6, 1 / 13])
    assert baseline.nearest(test).id == "b"
    assert baseline.predict(test) == ("-", "n0", "n1")
    assert is_correct(baseline.predict(test), test)  # 10 - 2 = 8 with the test problem's numbers


def test_cosine_uses_idf_weights():
    test = example_from_equation("t", "there are 4 boxes with 5 pens each", "x=4*5")
    baseline = RetrievalBaseline("cosine").fit(TRAIN)
    scores = baseline.scores(test)
    assert max(range(3), key=lambda i: scores[i]) == 2 and scores[0] == scores[1] == 0.0
    # by hand: 'and' is in all 3 problems (idf log(4/4) + 1 = 1), every other word of c in c alone (log(4/2) + 1);
    # c = a box holds pens each and there are boxes, test = there are boxes with pens each ('with' unseen: idf 0)
    rare = math.log(4 / 2) + 1
    c_weights = {"a": rare, "box": rare, "holds": rare, "pens": rare, "each": rare, "and": 1.0, "there": rare,
                 "are": rare, "boxes": rare}
    t_weights = {"there": rare, "are": rare, "boxes": rare, "with": 0.0, "pens": rare, "each": rare}
    dot = sum(t_weights[w] * c_weights.get(w, 0.0) for w in t_weights)
    norm = math.sqrt(sum(v * v for v in t_weights.values())) * math.sqrt(sum(v * v for v in c_weights.values()))
    assert scores[2] == pytest.approx(dot / norm)
    # the template n0 * n1 with this problem's numbers 4 and 5 gives the answer 20
    assert is_correct(baseline.predict(test), test)


def test_ties_go_to_the_earliest_problem_and_errors():
    twin = example_from_equation("d", "tom has 5 apples and buys 3 more apples", "x=5*3")
    baseline = RetrievalBaseline("jaccard").fit(TRAIN + [twin])
    assert baseline.nearest(TRAIN[0]).id == "a"
    with pytest.raises(ConfigError, match="one of jaccard, cosine"):
        RetrievalBaseline("bm25")
    with pytest.raises(ConfigError, match="at least one"):
        RetrievalBaseline().fit([])
