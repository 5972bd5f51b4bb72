"""Is one model better than another on the same examples? Paired statistics of per-example correctness: the 2×2
table of two models' right and wrong answers, McNemar's exact test (McNemar 1947; the exact binomial form on the
discordant pairs) and a paired bootstrap confidence interval of the accuracy difference (Efron and Tibshirani 1993,
the percentile interval of chapter 13; Koehn 2004 for its use in comparing two systems on one test set).

Example i is answered right or wrong by model A (``a[i]``) and by model B (``b[i]``); the pairing is what makes the
tests sharper than comparing two accuracies: examples both models get right or both get wrong say nothing about
which is better.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

BOOTSTRAP_CHUNK = 4_000_000  # resampled example indices held in memory at once (32 MB of int64)


@dataclass(frozen=True)
class PairedTable:
    """The 2×2 table of two models' answers on the same examples."""

    both_right: int
    only_a: int  # A right, B wrong: McNemar's b
    only_b: int  # A wrong, B right: McNemar's c
    both_wrong: int

    @property
    def n(self) -> int:
        return self.both_right + self.only_a + self.only_b + self.both_wrong

    def as_dict(self) -> dict:
        return asdict(self)


def check_paired(a_correct: Sequence, b_correct: Sequence) -> None:
    if len(a_correct) != len(b_correct):
        raise ValueError(f"paired scores need as many examples on each side: {len(a_correct)} and {len(b_correct)}")
    if len(a_correct) == 0:
        raise ValueError("paired scores of no examples")


def paired_table(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> PairedTable:
    """Count the examples both models answer right, only A, only B, and neither."""
    check_paired(a_correct, b_correct)
    pairs = [(bool(a), bool(b)) for a, b in zip(a_correct, b_correct)]
    return PairedTable(
        both_right=pairs.count((True, True)),
        only_a=pairs.count((True, False)),
        only_b=pairs.count((False, True)),
        both_wrong=pairs.count((False, False)),
    )


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """McNemar's exact test, two-sided: under the null hypothesis that both models are equally often right, each of
    the ``only_a + only_b`` discordant examples is won by A or by B with probability 1/2, so
    ``p = min(1, 2 * P(X <= min(only_a, only_b)))`` for X ~ Binomial(only_a + only_b, 1/2); p = 1 with no discordant
    example. (b = 1, c = 6: 2 * (1 + 7) / 2^7 = 0.125.)"""
    if only_a < 0 or only_b < 0:
        raise ValueError(f"counts must be non-negative: {only_a}, {only_b}")
    discordant = only_a + only_b
    if discordant == 0:
        return 1.0
    # the tail in exact integers, divided once: no rounding before the end, for any number of examples
    tail = sum(math.comb(discordant, wins) for wins in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / 2**discordant)


def paired_bootstrap_interval(
    a_scores: Sequence[float], b_scores: Sequence[float], samples: int = 10_000, seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """The percentile confidence interval of the mean paired difference ``mean(b - a)`` (for 0/1 correctness: the
    accuracy of B minus that of A): ``samples`` times, draw n examples with replacement (the same draw for both
    models, which keeps the pairing) and take the mean difference over the draw; the interval runs from the
    ``(1 - confidence) / 2`` to the ``(1 + confidence) / 2`` quantile of those means (numpy's linear interpolation
    between order statistics). Draws come from ``numpy.random.default_rng(seed)``, so a seed gives the same interval
    every time."""
    check_paired(a_scores, b_scores)
    if samples < 1:
        raise ValueError(f"the bootstrap needs at least one resample, not {samples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"the confidence level must be between 0 and 1 (exclusive), not {confidence}")
    differences = np.asarray(b_scores, dtype=np.float64) - np.asarray(a_scores, dtype=np.float64)
    n = len(differences)
    rng = np.random.default_rng(seed)
    rows = max(1, BOOTSTRAP_CHUNK // n)  # resamples drawn at once
    means = np.empty(samples)
    for start in range(0, samples, rows):
        count = min(rows, samples - start)
        indices = rng.integers(0, n, size=(count, n))  # (resamples, n): example indices drawn with replacement
        means[start:start + count] = differences[indices].mean(axis=1)
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1.0 - alpha / 2])
    return float(low), float(high)


def compare_paired(
    a_correct: Sequence[bool], b_correct: Sequence[bool], samples: int = 10_000, seed: int = 0,
    confidence: float = 0.95,
) -> dict:
    """Everything ``neuromath compare`` reports on two models' per-example correctness: ``{"n", "a": {"correct",
    "accuracy"}, "b": {...}, "difference"`` (accuracy of B minus A)``, "interval": {"low", "high", "confidence",
    "samples", "seed"}`` (``paired_bootstrap_interval``)``, "mcnemar": {"only_a", "only_b", "p_value"}, "table":
    {"both_right", "only_a", "only_b", "both_wrong"}}``."""
    table = paired_table(a_correct, b_correct)
    n = table.n
    a_right, b_right = table.both_right + table.only_a, table.both_right + table.only_b
    low, high = paired_bootstrap_interval([float(bool(x)) for x in a_correct], [float(bool(x)) for x in b_correct],
                                          samples=samples, seed=seed, confidence=confidence)
    return {
        "n": n,
        "a": {"correct": a_right, "accuracy": a_right / n},
        "b": {"correct": b_right, "accuracy": b_right / n},
        "difference": (b_right - a_right) / n,
        "interval": {"low": low, "high": high, "confidence": confidence, "samples": samples, "seed": seed},
        "mcnemar": {"only_a": table.only_a, "only_b": table.only_b,
                    "p_value": mcnemar_exact(table.only_a, table.only_b)},
        "table": table.as_dict(),
    }
