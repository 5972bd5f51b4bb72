"""Corpus BLEU of predicted against gold equations (Papineni, Roukos, Ward and Zhu 2002, "BLEU: a Method for
Automatic Evaluation of Machine Translation", section 2: modified n-gram precision, brevity penalty, their geometric
mean), computed by sacrebleu over equation tokens.

What is computed, exactly (``corpus_bleu``):

- **corpus BLEU-4 on a 0-100 scale**: ``100 * BP * exp((log p1 + log p2 + log p3 + log p4) / 4)``, where ``p_n``
  is the modified n-gram precision of the whole corpus: the n-grams of every prediction that occur in that
  problem's reference, each clipped to its count in the reference, summed over all problems, divided by the number
  of n-grams of all predictions; ``BP = min(1, exp(1 - r / c))`` with ``r`` and ``c`` the total numbers of tokens
  of the references and of the predictions (BP = 0 when nothing is predicted). Every prediction equal to its
  reference scores 100 (when some equation has 4 tokens or more: see no smoothing).
- **one reference per problem**: the gold equation in the notation the model predicts.
- **tokens as they are**: the equation tokens (``+``, ``n0``, ``3.5``) are joined with spaces and split on them
  again (sacrebleu's ``tokenize="none"``); case is kept.
- **no smoothing**: an order ``n`` with no matching n-gram in the whole corpus makes BLEU 0, and so does a corpus
  whose predictions have no n-grams of an order at all (every prediction shorter than 4 tokens); over a test set
  of word problems some equations are longer, so this only shows on tiny corpora.
- **an empty prediction** (no tokens: the model produced nothing) has no n-grams and length 0: it matches nothing,
  its reference's tokens still count in ``r``, so it lowers the brevity penalty; a corpus of empty predictions
  scores 0. An ill-formed equation is scored by its tokens like any other.

In sacrebleu's notation these settings are ``nrefs:1|case:mixed|eff:no|tok:none|smooth:none``.
"""

from __future__ import annotations

from typing import Sequence

BLEU_SETTINGS = {"tokenize": "none", "smooth_method": "none", "max_ngram_order": 4, "effective_order": False,
                 "lowercase": False}


def bleu_metric():
    """sacrebleu's BLEU with ``BLEU_SETTINGS`` (imported here: sacrebleu takes 0.1 s to import, and the command line
    reaches this module without needing it)."""
    from sacrebleu.metrics import BLEU

    # force: the inputs are token sequences on purpose, so sacrebleu's "forgot to detokenize?" warning does not apply
    return BLEU(force=True, **BLEU_SETTINGS)


def corpus_bleu(predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> float:
    """Corpus BLEU-4 (0-100, no smoothing, one reference each; see the module docstring) of ``predictions`` against
    ``references``, both lists of token lists in the same order. A token may not be empty or hold whitespace: it
    would not survive being joined with spaces and split again."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not predictions:
        raise ValueError("corpus BLEU of no predictions")
    for tokens in (*predictions, *references):
        for token in tokens:
            if token.split() != [token]:  # empty, or holding whitespace
                raise ValueError(f"an equation token must be one non-empty word, not {token!r}")
    hypotheses = [" ".join(tokens) for tokens in predictions]
    reference_stream = [" ".join(tokens) for tokens in references]
    return float(bleu_metric().corpus_score(hypotheses, [reference_stream]).score)


def reference_tokens(record: dict) -> list[str] | None:
    """The gold equation of a prediction record in the notation of its ``predicted_tokens``: ``gold_target`` when
    the record has one (targets in another notation than the gold equation, e.g. normalised postfix), else
    ``gold_equation``; None when the record has neither or no ``predicted_tokens`` (a task without equations)."""
    if "predicted_tokens" not in record:
        return None
    reference = record.get("gold_target", record.get("gold_equation"))
    return None if reference is None else list(reference)


def equation_bleu(records: Sequence[dict]) -> float | None:
    """Corpus BLEU (``corpus_bleu``) of the predicted equations of prediction records (``evaluate_examples``,
    ``predictions.jsonl``) against their gold equations; None when there are no records or some record carries no
    equation (``reference_tokens``): BLEU applies to tasks whose records have equations (word problems)."""
    references = [reference_tokens(record) for record in records]
    if not records or any(reference is None for reference in references):
        return None
    return corpus_bleu([record["predicted_tokens"] for record in records], references)

