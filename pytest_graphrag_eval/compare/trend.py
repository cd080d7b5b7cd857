"""The slope of a metric over the last runs, per run, with its interval (for `trend:` gates).

A least-squares line with Student's t interval; a gate fails only when the whole interval lies
beyond its bound, so noise fails it at most (1 - confidence) / 2 of runs
(benchmarks/bench_trend_calibration.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_graphrag_eval.compare.numeric import scipy_special

MIN_RUNS_FOR_INTERVAL = 3  # two points fit any line exactly: no residual, no spread to measure


@dataclass(frozen=True)
class Trend:
    """A slope per run over `runs` values (None below two values), its interval (None below three)."""

    slope: float | None
    low: float | None
    high: float | None
    runs: int
    confidence: float


def slope_trend(values: Sequence[float | None], confidence: float = 0.95) -> Trend:
    """Least-squares slope of `values` (oldest first; None = that run has no value) and its t interval."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    points = [(float(index), float(value)) for index, value in enumerate(values) if value is not None]
    n = len(points)
    line = least_squares_line(values)
    if line is None:
        return Trend(None, None, None, n, confidence)
    slope, intercept = line
    if n < MIN_RUNS_FOR_INTERVAL:
        return Trend(slope, None, None, n, confidence)
    mean_x = sum(x for x, _ in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    residual = sum((y - intercept - slope * x) ** 2 for x, y in points)
    standard_error = math.sqrt(residual / (n - 2) / sxx)
    half_width = float(scipy_special().stdtrit(n - 2, (1 + confidence) / 2)) * standard_error
    return Trend(slope, slope - half_width, slope + half_width, n, confidence)


def least_squares_line(values: Sequence[float | None]) -> tuple[float, float] | None:
    """(slope, intercept) of the least-squares line through the values at their positions; None below two."""
    points = [(float(index), float(value)) for index, value in enumerate(values) if value is not None]
    n = len(points)
    if n < 2:
        return None
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    return slope, mean_y - slope * mean_x
