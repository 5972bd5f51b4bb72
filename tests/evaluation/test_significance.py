"""neuromath/evaluation/significance.py: McNemar's exact test against binomial tails summed by hand, the 2×2 table,
and the paired bootstrap interval against cases whose resampling distribution is known."""

import math
import random

import pytest

from neuromath.evaluation.significance import (
    compare_paired,
    mcnemar_exact,
    paired_bootstrap_interval,
    paired_table,
)


def two_sided_exact(b, c):
    """2 * P(X <= min(b, c)) for X ~ Binomial(b + c, 1/2), summed from binomial coefficients, at most 1."""
    n = b + c
    return min(1.0, 2 * sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2 ** n)


def test_mcnemar_exact_by_hand():
    assert mcnemar_exact(1, 6) == pytest.approx(0.125)  # 2 * (1 + 7) / 128
    assert mcnemar_exact(6, 1) == pytest.approx(0.125)  # symmetric
    assert mcnemar_exact(0, 0) == 1.0  # no discordant pair: no evidence either way
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(2, 10) == pytest.approx(2 * (1 + 12 + 66) / 4096)
    assert mcnemar_exact(3, 3) == 1.0  # 2 * 42/64 > 1 is capped
    assert mcnemar_exact(0, 1) == 1.0  # 2 * 1/2
    for b, c in ((4, 9), (17, 30), (40, 25), (100, 130)):
        assert mcnemar_exact(b, c) == pytest.approx(two_sided_exact(b, c), rel=1e-9)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_paired_table_counts_each_cell():
    a = [True, True, False, False, True, False, True]
    b = [True, False, True, False, True, True, False]
    table = paired_table(a, b)
    assert (table.both_right, table.only_a, table.only_b, table.both_wrong) == (2, 2, 2, 1)
    assert table.n == 7
    with pytest.raises(ValueError, match="as many examples"):
        paired_table([True], [True, False])
    with pytest.raises(ValueError, match="no examples"):
        paired_table([], [])


def test_bootstrap_interval_of_a_constant_difference_is_that_constant():
    n = 50
    assert paired_bootstrap_interval([0] * n, [1] * n) == (1.0, 1.0)  # B right everywhere A is wrong
    assert paired_bootstrap_interval([1] * n, [0] * n) == (-1.0, -1.0)
    assert paired_bootstrap_interval([1, 0, 1, 0], [1, 0, 1, 0]) == (0.0, 0.0)  # same answers: difference 0
    assert paired_bootstrap_interval([0.2, 0.5, 0.1], [0.45, 0.75, 0.35]) == pytest.approx((0.25, 0.25))


def test_bootstrap_interval_of_two_examples_by_hand():
    # differences (1, 0): a resample's mean is 0, 1/2 or 1 with probabilities 1/4, 1/2, 1/4, so the 2.5% and 97.5%
    # quantiles of 10,000 resample means are 0 and 1, and the 30% and 70% quantiles (confidence 0.4) both 1/2
    assert paired_bootstrap_interval([0, 0], [1, 0]) == (0.0, 1.0)
    assert paired_bootstrap_interval([0, 0], [1, 0], confidence=0.4) == (0.5, 0.5)


def test_bootstrap_interval_is_reproducible_follows_the_seed_and_holds_the_observed_difference():
    rng = random.Random(5)
    a = [rng.random() < 0.7 for _ in range(300)]
    b = [rng.random() < 0.78 for _ in range(300)]
    observed = (sum(b) - sum(a)) / 300
    interval = paired_bootstrap_interval(a, b, samples=2000, seed=3)
    assert interval == paired_bootstrap_interval(a, b, samples=2000, seed=3)
    assert interval != paired_bootstrap_interval(a, b, samples=2000, seed=4)
    assert interval[0] < observed < interval[1]
    # a wider confidence level gives a wider interval around the same resamples
    wide = paired_bootstrap_interval(a, b, samples=2000, seed=3, confidence=0.99)
    assert wide[0] <= interval[0] and wide[1] >= interval[1]


def test_bootstrap_interval_matches_the_normal_approximation_on_many_examples():
    # 1920 examples: 200 only B right (+1), 100 only A right (-1), the rest equal (0). The mean difference has standard
    # error sqrt(var / n) with var = 300/1920 - (100/1920)^2, so the 95% interval is close to mean ± 1.96 se
    a = [True] * 1500 + [True] * 100 + [False] * 200 + [False] * 120
    b = [True] * 1500 + [False] * 100 + [True] * 200 + [False] * 120
    n, mean = 1920, 100 / 1920
    se = math.sqrt((300 / n - mean ** 2) / n)
    low, high = paired_bootstrap_interval(a, b)
    assert low == pytest.approx(mean - 1.96 * se, abs=0.002) and high == pytest.approx(mean + 1.96 * se, abs=0.002)


def test_bootstrap_refuses_bad_settings():
    with pytest.raises(ValueError, match="at least one resample"):
        paired_bootstrap_interval([1], [0], samples=0)
    for confidence in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="confidence level"):
            paired_bootstrap_interval([1], [0], confidence=confidence)


def test_compare_paired_puts_the_pieces_together():
    a = [True, True, False, False, True, False, True, False]
    b = [True, False, True, True, True, True, True, True]  # only A: 1, only B: 4, both right: 3, both wrong: 0
    result = compare_paired(a, b, samples=500, seed=1)
    assert result["n"] == 8
    assert result["a"] == {"correct": 4, "accuracy": 0.5} and result["b"] == {"correct": 7, "accuracy": 7 / 8}
    assert result["difference"] == pytest.approx(3 / 8)
    assert result["table"] == {"both_right": 3, "only_a": 1, "only_b": 4, "both_wrong": 0}
    assert result["mcnemar"] == {"only_a": 1, "only_b": 4, "p_value": pytest.approx(2 * (1 + 5) / 32)}
    interval = result["interval"]
    assert (interval["low"], interval["high"]) == paired_bootstrap_interval(a, b, samples=500, seed=1)
    assert interval["low"] <= 3 / 8 <= interval["high"]
    assert (interval["confidence"], interval["samples"], interval["seed"]) == (0.95, 500, 1)
