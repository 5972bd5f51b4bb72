"""Corpus BLEU of predicted against gold equations (Papineni, Roukos, Ward and Zhu 2002, "BLEU: a Method for
Automatic Evaluation of Machine Translation", section 2: modified n-gram precision, brevity penalty, their geometric
mean), computed by sacrebleu over equation tokens. ``corpus_bleu`` computes, in sacrebleu's signature notation
``BLEU_DEFINITION`` (``nrefs:1|case:mixed|eff:yes|tok:none|smooth:exp``):

- **corpus BLEU-4, 0-100**: ``100 * BP * exp((log p1 + ... + log pN) / N)``; ``p_n`` is the corpus-wide modified
  n-gram precision (each prediction's n-grams clipped to their count in its reference, summed over problems, over
  all predicted n-grams); ``BP = min(1, exp(1 - r / c))``, ``r``/``c`` the total reference/prediction tokens (BP = 0
  when nothing is predicted).
- **effective order** (``eff:yes``): ``N`` is 4, or the longest order some prediction has (3-token equations such
  as ``+ n0 n1`` score on orders 1-3). A prediction equal to its reference scores 100.
- **exponential smoothing** (``smooth:exp``, NIST mteval; Chen and Cherry 2014, method 3): an order matching
  nowhere counts ``1 / (2^k * total)``, ``k`` counting such orders from 1. Short equations may share no 4-gram and
  would otherwise score 0; no constant to choose (unlike ``floor``, ``add-k``), and such a corpus stays far below
  one whose 4-grams match.
- **one reference per problem**: the gold equation in the notation the model predicts.
- **tokens as they are**: joined and split on spaces (``tokenize="none"``); case kept.
- **an empty prediction** matches nothing and its reference still counts in ``r``, lowering BP. No matching token
  scores 0; an ill-formed equation is scored by its tokens.

Orders 1-4 keep it comparable with BLEU-4 elsewhere; a lower cap would hide token order past a few tokens.

Summaries and reports write ``bleu_definition`` beside ``bleu``; a ``bleu`` without it is
``UNSMOOTHED_BLEU_DEFINITION`` (no smoothing, no effective order): see ``bleu_definition_of``.
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
    """sacrebleu's BLEU with ``BLEU_SETTINGS`` (imported lazily: the command line reaches this module without it)."""
    from sacrebleu.metrics import BLEU

    # force: token sequences on purpose; silences sacrebleu's "forgot to detokenize?" warning
    return BLEU(force=True, **BLEU_SETTINGS)


def corpus_bleu(predictions: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> float:
    """Corpus BLEU-4 (0-100, ``BLEU_DEFINITION``) of ``predictions`` against ``references``, aligned lists of token
    lists. A token may not be empty or hold whitespace: it would not survive the join and split on spaces."""
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
    """A prediction record's gold equation in the notation of its ``predicted_tokens``: ``gold_target`` if present
    (e.g. normalised postfix), else ``gold_equation``; None without either or without ``predicted_tokens``."""
    if "predicted_tokens" not in record:
        return None
    reference = record.get("gold_target", record.get("gold_equation"))
    return None if reference is None else list(reference)


def equation_bleu(records: Sequence[dict]) -> float | None:
    """``corpus_bleu`` of prediction records (``evaluate_examples``, ``predictions.jsonl``) against their gold
    equations; None when there are no records or one has no equation (``reference_tokens``)."""
    references = [reference_tokens(record) for record in records]
    if not records or any(reference is None for reference in references):
        return None
    return corpus_bleu([record["predicted_tokens"] for record in records], references)


def bleu_scores(records: Sequence[dict]) -> dict:
    """``{"bleu": equation_bleu(records), "bleu_definition": BLEU_DEFINITION}`` for a summary's test scores; ``{}``
    when ``equation_bleu`` is None."""
    bleu = equation_bleu(records)
    return {} if bleu is None else {"bleu": bleu, "bleu_definition": BLEU_DEFINITION}


def bleu_definition_of(scores: Mapping) -> str | None:
    """The definition of ``scores["bleu"]`` (summary, report or row): ``bleu_definition``, else
    ``UNSMOOTHED_BLEU_DEFINITION``; None without ``bleu``."""
    if scores.get("bleu") is None:
        return None
    return scores.get("bleu_definition") or UNSMOOTHED_BLEU_DEFINITION


def common_definition(rows: Sequence[Mapping]) -> str | None:
    """The BLEU definition shared by all ``rows``; None when a row has no ``bleu`` or definitions differ (then no
    mean BLEU is taken)."""
    definitions = {bleu_definition_of(row) for row in rows}
    return definitions.pop() if len(definitions) == 1 else None


def bleu_label(definition: str | None) -> str:
    """A report label: ``LABELS[definition]``, else its sacrebleu signature; ``corpus BLEU, 0-100`` for None."""
    if definition is None:
        return "corpus BLEU, 0-100"
    return LABELS.get(definition, f"corpus BLEU, 0-100, sacrebleu {definition}")
