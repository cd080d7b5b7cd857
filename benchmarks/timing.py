"""Timing shared by the benchmark scripts (not a benchmark itself: .ci/run runs only bench_*.py)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

QUICK_NOTE = (
    "quick mode: a smoke run that checks this benchmark works; its figures are small-sized and not "
    "compared with any budget (run it without --quick for the budgets)"
)


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


def announce_quick(quick: bool) -> None:
    """Say once, first, that a --quick run is a smoke run, so its figures do not read as verdicts."""
    if quick:
        print(QUICK_NOTE)
