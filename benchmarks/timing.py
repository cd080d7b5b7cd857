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


def median_phases(action: Callable[[], dict[str, float]], runs: int) -> dict[str, float]:
    """The median of each phase's seconds over `runs` calls of `action` (which returns them by phase
    name), plus the median of their sums as "total"."""
    measured = [action() for _ in range(runs)]
    for phases in measured:
        phases["total"] = sum(phases.values())
    return {name: statistics.median(phases[name] for phases in measured) for name in measured[0]}
