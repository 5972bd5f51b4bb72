import math

import pytest

from neuromath.evaluation.spread import mean_std, mean_std_cell


def test_mean_and_sample_standard_deviation_by_hand():
    assert mean_std([0.5, 0.7, 0.9]) == pytest.approx({"mean": 0.7, "std": 0.2})  # sqrt((0.04 + 0 + 0.04) / 2)
    # (2.25 + .25 + .25 + 2.25) / 3: n - 1 in the denominator, not n (which would give sqrt(5 / 4))
    assert mean_std([1, 2, 3, 4]) == pytest.approx({"mean": 2.5, "std": math.sqrt(5 / 3)})
    assert mean_std([0.4]) == {"mean": 0.4, "std": 0.0}


def test_missing_values_are_left_out_and_none_gives_no_mean():
    assert mean_std([0.5, None, 0.9]) == pytest.approx({"mean": 0.7, "std": math.sqrt(0.08)})
    assert mean_std([]) == {"mean": None, "std": None}
    assert mean_std([None, None]) == {"mean": None, "std": None}


def test_a_cell_shows_percent_and_no_spread_for_one_run():
    assert mean_std_cell({"mean": 0.7512, "std": 0.0049}, runs=3) == "75.1 ± 0.5"
    assert mean_std_cell({"mean": 0.7512, "std": 0.0}, runs=1) == "75.1"
    assert mean_std_cell({"mean": None, "std": None}, runs=2) == ""
    assert mean_std_cell(None) == ""
