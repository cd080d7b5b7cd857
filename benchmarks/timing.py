"""Timing shared by the benchmark scripts (not a benchmark itself: .ci/run runs only bench_*.py)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def median_seconds(action: Callable[[], Any], runs: int) -> float:
    """The median wall time of `runs` calls: steadier than the mean on a shared machine."""
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)
