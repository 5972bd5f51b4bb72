"""neuromath/evaluation/bleu.py: corpus BLEU-4 of equations (exp smoothing, effective order) checked against
modified n-gram precisions and brevity penalties counted by hand."""

import math

import pytest

from neuromath.evaluation.bleu import (
    BLEU_DEFINITION,
    UNSMOOTHED_BLEU_DEFINITION,
    bleu_definition_of,
    bleu_label,
    bleu_metric,
    bleu_scores,
    common_definition,
    corpus_bleu,
    equation_bleu,
    reference_tokens,
)


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


def test_a_corpus_of_short_equations_is_scored_on_the_orders_it_has():
    # every prediction right but only 3 tokens long: no 4-gram anywhere; effective order scores orders 1 to 3
    short = [tokens("+ n0 n1"), tokens("* n0 n1")]
    assert corpus_bleu(short, short) == pytest.approx(100.0)
    # one wrong: unigrams 5/6, bigrams 3/4, trigrams 1/2
    assert corpus_bleu([tokens("+ n0 n1"), tokens("- n0 n1")], short) == pytest.approx(
        100 * (5 / 6 * 3 / 4 * 1 / 2) ** (1 / 3))


def test_exact_matches_without_a_matching_4_gram_score_above_0():
    # half the equations exactly right, and no predicted 4-gram in its reference: unsmoothed BLEU-4 would be 0.
    # unigrams 3/3 + 5/5, bigrams 2/2 + 1/4 (n1 n2), trigrams 1/1 + 0/3, 4-grams 0/0 + 0/2; BP = 1.
    # exp smoothing: the first order with no match is 4, p4 = 1 / (2 * 2)
    predictions = [tokens("+ n0 n1"), tokens("- * n0 n1 n2")]
    references = [tokens("+ n0 n1"), tokens("- n0 * n1 n2")]
    expected = 100 * (8 / 8 * 3 / 6 * 1 / 4 * 1 / 4) ** (1 / 4)
    assert corpus_bleu(predictions, references) == pytest.approx(expected) and expected > 0
    # each further order with no match halves again: unigrams 4/5, bigrams 2/4 (* n1, n0 n2), trigrams 0/3 and
    # 4-grams 0/2 unmatched: p3 = 1 / (2 * 3), p4 = 1 / (4 * 2)
    assert corpus_bleu([tokens("* n1 n0 n2 n1")], [tokens("* n1 n2 n0 n2")]) == pytest.approx(
        100 * (4 / 5 * 2 / 4 * 1 / 6 * 1 / 8) ** (1 / 4))


def test_the_definition_is_sacrebleus_signature_and_labels_old_scores():
    metric = bleu_metric()
    metric.corpus_score(["+ n0 n1"], [["+ n0 n1"]])  # the signature counts the references of the last scoring
    signature = metric.get_signature().format()
    assert signature.startswith(BLEU_DEFINITION + "|version:")
    assert bleu_scores([{"predicted_tokens": ["n0"], "gold_equation": ["n0"]}]) == {
        "bleu": pytest.approx(100.0), "bleu_definition": BLEU_DEFINITION}
    assert bleu_scores([{"prediction": "7"}]) == {}
    # a bleu without a definition beside it (written before it was recorded) is unsmoothed BLEU-4
    assert bleu_definition_of({"bleu": 0.0}) == UNSMOOTHED_BLEU_DEFINITION
    assert bleu_definition_of({"bleu": 1.0, "bleu_definition": BLEU_DEFINITION}) == BLEU_DEFINITION
    assert bleu_definition_of({"bleu": None}) is None
    assert common_definition([{"bleu": 1.0}, {"bleu": 2.0, "bleu_definition": BLEU_DEFINITION}]) is None
    assert common_definition([{"bleu": 1.0}, {"bleu": 2.0}]) == UNSMOOTHED_BLEU_DEFINITION
    assert bleu_label(UNSMOOTHED_BLEU_DEFINITION) == "corpus BLEU-4, 0-100, no smoothing"


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
