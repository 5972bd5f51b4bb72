"""Spans of a problem's tokens for group attention (Li et al. 2019, "Modeling Intra-Relation in Math Word Problems
with Different Functional Multi-Head Attentions", Sec. 3.2): which span each token is in, which spans hold
quantities and which is the question (``neuromath.nn.group_attention`` reads these roles).
"""

from __future__ import annotations

from collections.abc import Sequence

from neuromath.tasks.word_problems.records import MASK_REGEX

SPAN_BREAKS = frozenset({",", ".", "，", "。"})  # English and Chinese commas and full stops end a span


def split_spans(tokens: Sequence[str]) -> list[int]:
    """The span of every token: spans end after a comma or period (English or Chinese), which belongs to the span
    it ends. The last span is the question; a final break with nothing after it does not open an empty span."""
    spans, current = [], 0
    for position, token in enumerate(tokens):
        spans.append(current)
        if token in SPAN_BREAKS and position < len(tokens) - 1:
            current += 1
    return spans


def span_roles(tokens: Sequence[str]) -> tuple[list[int], list[bool], list[bool]]:
    """``(span ids, in a quantity span, in the question span)`` per token. A quantity span is a span before the
    question that holds a masked number (``n0``, ``n1``, ...); the question span is the last span."""
    spans = split_spans(tokens)
    question = spans[-1] if spans else 0
    with_numbers = {span for span, token in zip(spans, tokens) if MASK_REGEX.fullmatch(token) and span != question}
    return spans, [span in with_numbers for span in spans], [span == question for span in spans]
