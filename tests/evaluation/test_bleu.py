"""neuromath/evaluation/bleu.py: corpus BLEU-4 of equations checked against modified n-gram precisions and brevity
penalties counted by hand."""

import math

import pytest

from neuromath.evaluation.bleu import corpus_bleu, equation_bleu, reference_tokens


def tokens(text):
    return text.split()


def test_a_small_corpus_by_hand():
    predictions = [tokens("+ n0 n1"), tokens("* - n0 n1 n2"), tokens("/ * n0 n1 n2")]
    references = [tokens("+ n0 n1"), tokens("* + n0 n1 n2"), tokens("/ * n0 n1 - n2 n3")]
    # matched / predicted n-grams, problem by problem:
    #   unigrams 3/3 + 4/5 (- is not in the reference) + 5/5                    = 12/13
    #   bigrams  2/2 + 2/4 (n0 n1, n1 n2) + 3/4 (/ *, * n0, n0 n1)               =  7/10
    #   trigrams 1/1 + 1/3 (n0 n1 n2) + 2/3 (/ * n0, * n0 n1)                    =  4/7
    #   4-grams  0/0 + 0/2 + 1/2 (/ * n0 n1)                                     =  1/4
    # prediction length c = 13, reference length r = 3 + 5 + 7 = 15: BP = exp(1 - 15/13)
    precisions = [12 / 13, 7 / 10, 4 / 7, 1 / 4]
    expected = 100 * math.exp(1 - 15 / 13) * math.exp(sum(map(math.log, precisions)) / 4)
    assert corpus_bleu(predictions, references) == pytest.approx(expected)  # 47.26
    assert 47.2 < expected < 47.3


def test_counts_are_clipped_to_the_reference_and_longer_predictions_pay_no_brevity_penalty():
    # "+ + n0 n1 n2" against "- + n0 n1 n2": + occurs twice but once in the reference, so 4 of 5 unigrams match;
    # bigrams 3/4 (+ n0, n0 n1, n1 n2), trigrams 2/3, 4-grams 1/2; equal lengths: BP = 1
    assert corpus_bleu([tokens("+ + n0 n1 n2")], [tokens("- + n0 n1 n2")]) == pytest.approx(
        100 * (4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25)
    # a prediction longer than its reference: every precision 4/5 .. 1/2 of its n-grams match, BP = 1 (c > r)
    longer = corpus_bleu([tokens("* n0 n1 n2 n3")], [tokens("* n0 n1 n2")])
    assert longer == pytest.approx(100 * (4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25)


def test_perfect_disjoint_and_empty_corpora():
    references = [tokens("+ n0 n1"), tokens("- * n0 n1 n2"), tokens("/ n0 + n1 n2")]
    assert corpus_bleu(references, references) == pytest.approx(100.0)
    assert corpus_bleu([tokens("n5 n6 n7 n8")] * 3, references) == 0.0  # no token in common
    assert corpus_bleu([[], [], []], references) == 0.0  # nothing predicted
    # an empty prediction adds nothing to the n-gram counts but lowers the length c: precisions stay 1, BP falls
    # from 1 to exp(1 - r / c) with r = 3 + 5 + 5 = 13 and c = 5 + 5 = 10
    assert corpus_bleu([[], references[1], references[2]], references) == pytest.approx(100 * math.exp(1 - 13 / 10))


def test_without_smoothing_a_corpus_of_short_equations_has_no_4_grams_and_scores_0():
    # every prediction right but only 3 tokens long: no 4-gram anywhere, BLEU-4 without smoothing is 0 (documented)
    short = [tokens("+ n0 n1"), tokens("* n0 n1")]
    assert corpus_bleu(short, short) == 0.0


def test_tokens_are_compared_as_given_and_must_be_single_words():
    assert corpus_bleu([tokens("+ N0 n1 n2 n3")], [tokens("+ n0 n1 n2 n3")]) < 100  # case is kept
    with pytest.raises(ValueError, match="one non-empty word"):
        corpus_bleu([["+", "n0 n1"]], [["+", "n0", "n1"]])
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        corpus_bleu([["n0"], ["n1"]], [["n0"]])


def test_equation_bleu_reads_records_in_the_predicted_notation():
    prefix = [{"predicted_tokens": tokens("- * n0 n1 n2"), "gold_equation": tokens("- * n0 n1 n2")},
              {"predicted_tokens": tokens("+ n0 n1"), "gold_equation": tokens("+ n0 n1")}]
    assert equation_bleu(prefix) == pytest.approx(100.0)
    # normalised postfix targets: the records' gold_target (postfix) is the reference, not the prefix gold_equation
    postfix = [{"predicted_tokens": tokens("n0 n1 * n2 -"), "gold_equation": tokens("- * n0 n1 n2"),
                "gold_target": tokens("n0 n1 * n2 -")}]
    assert reference_tokens(postfix[0]) == tokens("n0 n1 * n2 -")
    assert equation_bleu(postfix) == pytest.approx(100.0)
    # records without equations (Mathematics Dataset, symbolic), or no records: no BLEU
    assert equation_bleu([{"prediction": "7", "answer": "7", "correct": True}]) is None
    assert equation_bleu([]) is None
