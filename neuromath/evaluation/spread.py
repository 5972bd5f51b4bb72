"""The spread of a result over runs (seeds, folds): mean and sample standard deviation, and how a table shows
them. One definition for every report that combines runs: ``--seeds``, ``analyze seeds``, sweeps and
cross-validation."""

from __future__ import annotations

import statistics
from typing import Sequence


def mean_std(values: Sequence[float | None]) -> dict:
    """``{"mean", "std"}`` of the values that are not None (sample standard deviation, n - 1 in the denominator;
    0 for one value; both None for none)."""
    values = [v for v in values if v is not None]
    if not values:
        return {"mean": None, "std": None}
    return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0}


def mean_std_cell(values: dict | None, runs: int | None = None) -> str:
    """A ``mean_std`` result as a table cell, ``mean ± std`` in percent (empty when there is none); the mean alone
    when it comes from ``runs`` = 1, whose spread was not measured."""
    if not values or values["mean"] is None:
        return ""
    if runs == 1:
        return f"{100 * values['mean']:.1f}"
    return f"{100 * values['mean']:.1f} ± {100 * values['std']:.1f}"
