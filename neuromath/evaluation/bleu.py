"""Corpus BLEU of predicted against gold equations (Papineni, Roukos, Ward and Zhu 2002, "BLEU: a Method for
Automatic Evaluation of Machine Translation", section 2: modified n-gram precision, brevity penalty, their geometric
mean), computed by sacrebleu over equation tokens, smoothed for short equations.

What is computed, exactly (``corpus_bleu``), in sacrebleu's signature notation ``BLEU_DEFINITION``
(``nrefs:1|case:mixed|eff:yes|tok:none|smooth:exp``):

- **corpus BLEU-4 on a 0-100 scale**: ``100 * BP * exp((log p1 + ... + log pN) / N)``, where ``p_n`` is the
  modified n-gram precision of the whole corpus: the n-grams of every prediction that occur in that problem's
  reference, each clipped to its count in the reference, summed over all problems, divided by the number of n-grams
  of all predictions; ``BP = min(1, exp(1 - r / c))`` with ``r`` and ``c`` the total numbers of tokens of the
  references and of the predictions (BP = 0 when nothing is predicted).
- **effective order** (``eff:yes``): ``N`` is 4, or the longest order that some prediction has (a corpus of 3-token
  equations such as ``+ n0 n1`` is scored on orders 1 to 3). Every prediction equal to its reference scores 100.
- **exponential smoothing** (``smooth:exp``, sacrebleu's default, the NIST mteval smoothing; Chen and Cherry 2014,
  method 3): an order whose n-grams match nowhere in the corpus counts ``1 / (2^k * total)`` instead of 0, ``k``
  counting such orders from 1. Equations are short, so a corpus can get equations right and still share no 4-gram
  with the references; unsmoothed, it would score 0. This smoothing has no constant to choose (``floor`` and
  ``add-k`` do), and it keeps such a corpus far below one whose 4-grams match.
- **one reference per problem**: the gold equation in the notation the model predicts.
- **tokens as they are**: the equation tokens (``+``, ``n0``, ``3.5``) are joined with spaces and split on them
  again (sacrebleu's ``tokenize="none"``); case is kept.
- **an empty prediction** (no tokens: the model produced nothing) has no n-grams and length 0: it matches nothing,
  its reference's tokens still count in ``r``, so it lowers the brevity penalty. A corpus with no matching token
  scores 0. An ill-formed equation is scored by its tokens like any other.

Orders stay 1 to 4: the usual BLEU-4, comparable with it elsewhere; effective order and smoothing handle short
equations, and a lower cap would stop BLEU from seeing token order past a few tokens.

A summary or report writes ``bleu_definition`` (``BLEU_DEFINITION``) beside ``bleu``. A ``bleu`` without it was
computed without smoothing or effective order (``UNSMOOTHED_BLEU_DEFINITION``): ``bleu_definition_of`` reads it.
"""

from __future__ import annotations

from typing import Mapping, Sequence

BLEU_SETTINGS = {"tokenize": "none", "smooth_method": "exp", "max_ngram_order": 4, "effective_order": True,
                 "lowercase": False}
# sacrebleu's signature of BLEU_SETTINGS with one reference, less the version
BLEU_DEFINITION = "nrefs:1|case:mixed|eff:yes|tok:none|smooth:exp"
# what a ``bleu`` with no ``bleu_definition`` beside it means: BLEU-4 without smoothing or effective order
UNSMOOTHED_BLEU_DEFINITION = "nrefs:1|case:mixed|eff:no|tok:none|smooth:none"
LABELS = {BLEU_DEFINITION: "corpus BLEU-4, 0-100, exp smoothing",
          UNSMOOTHED_BLEU_DEFINITION: "corpus BLEU-4, 0-100, no smoothing"}


def bleu_metric():
    """sacrebleu's BLEU with ``BLEU_SETTINGS`` (imported here: sacrebleu takes 0.1 s to import, and the command line
    reaches this module without needing it)."""
    from sacrebleu.metrics import BLEU

    # force: the inputs are token sequences on purpose, so sacrebleu's "forgot to detokenize?" warning does not apply
    return BLEU(force=True, **BLEU_SETTINGS)


def corpus_bleu(predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> float:
    """Corpus BLEU-4 (0-100, ``BLEU_DEFINITION``: exp smoothing, effective order, one reference each; see the module
    docstring) of ``predictions`` against ``references``, both lists of token lists in the same order. A token may
    not be empty or hold whitespace: it would not survive being joined with spaces and split again."""
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


def bleu_scores(records: Sequence[dict]) -> dict:
    """``{"bleu": equation_bleu(records), "bleu_definition": BLEU_DEFINITION}`` to add to a summary's test scores, or
    ``{}`` where ``equation_bleu`` gives None."""
    bleu = equation_bleu(records)
    return {} if bleu is None else {"bleu": bleu, "bleu_definition": BLEU_DEFINITION}


def bleu_definition_of(scores: Mapping) -> str | None:
    """The definition of the ``bleu`` of a summary's test scores, a report or a report's row: its
    ``bleu_definition``, ``UNSMOOTHED_BLEU_DEFINITION`` when it has a ``bleu`` without one, None without ``bleu``."""
    if scores.get("bleu") is None:
        return None
    return scores.get("bleu_definition") or UNSMOOTHED_BLEU_DEFINITION


def common_definition(rows: Sequence[Mapping]) -> str | None:
    """The one BLEU definition (``bleu_definition_of``) of rows that all have a ``bleu``; None when some row has none,
    or rows differ (a fold reused from a run scored under another definition): no mean of their BLEU is taken."""
    definitions = {bleu_definition_of(row) for row in rows}
    return definitions.pop() if len(definitions) == 1 else None


def bleu_label(definition: str | None) -> str:
    """BLEU's definition in a few words for reports: ``corpus BLEU-4, 0-100, exp smoothing``; the sacrebleu signature
    of a definition without words; ``corpus BLEU, 0-100`` for None (no BLEU, or BLEUs of several definitions)."""
    if definition is None:
        return "corpus BLEU, 0-100"
    return LABELS.get(definition, f"corpus BLEU, 0-100, sacrebleu {definition}")
