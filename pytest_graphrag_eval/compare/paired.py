"""Paired change of one metric between two runs: estimate, interval, p-value, detectable change.

Two tests, chosen from the values:
- 0/1 metrics (pass/fail, exact match, a single-step steps_score) use the exact
  McNemar test on the discordant pairs, and an interval that inverts it: the
  Clopper-Pearson interval of the share of discordant pairs that improved,
  scaled by the discordant fraction. The interval excludes 0 exactly when the
  two-sided McNemar p-value is below 1 - confidence, so a confidence gate and the
  p-value never disagree.
- other metrics use the studentized paired bootstrap, never narrower than the
  Student t interval (see bootstrap.py for why).

min_detectable_delta (80% power, two-sided, at the chosen confidence):

    MDE = (t[1 - alpha/2, n-1] + t[power, n-1]) * s / sqrt(n)

with s the standard deviation of the paired differences and alpha = 1 - confidence.
For a 0/1 metric it is at least k/n, where k is the smallest number of discordant
pairs (all in one direction) the exact McNemar test can call significant; with few
questions that floor, not the noise, is what limits detection (above 1: no change
of a 0/1 metric is detectable on so few questions). With no spread at all (every
difference equal) it is 0 for continuous metrics: any consistent change shows.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.compare.bootstrap import studentized_intervals
from pytest_graphrag_eval.compare.numeric import numpy, scipy_special

DEFAULT_POWER = 0.8


@dataclass(frozen=True, eq=False)
class PairedSample:
    """The values of one metric on the questions both runs share, in the same order (tuples or arrays)."""

    baseline: Sequence[float]
    current: Sequence[float]

    def __post_init__(self) -> None:
        if len(self.baseline) != len(self.current):
            raise ValueError("paired samples must have the same length")

    @property
    def differences(self) -> tuple[float, ...]:
        return tuple(float(after - before) for before, after in zip(self.baseline, self.current, strict=True))


@dataclass(frozen=True)
class MetricChange:
    """One metric's paired change; interval, p-value and MDE are None with fewer than two pairs."""

    baseline: float | None
    current: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n_pairs: int
    test: str
    min_detectable_delta: float | None

    def to_dict(self) -> dict[str, float | int | str | None]:
        # The fields in their order, as `dataclasses.asdict` gives them, without its deep copy of
        # each value: a comparison writes one per metric and template (thousands).
        return {
            "baseline": self.baseline,
            "current": self.current,
            "delta": self.delta,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "n_pairs": self.n_pairs,
            "test": self.test,
            "min_detectable_delta": self.min_detectable_delta,
        }


def paired_changes(
    samples: Mapping[str, PairedSample], *, confidence: float, resamples: int, seed: int
) -> dict[str, MetricChange]:
    """The change of every metric of one scope; bootstraps of equal-length samples share one pass."""
    np = numpy()
    changes: dict[str, MetricChange] = {}
    by_length: dict[int, list[str]] = {}
    arrays = {}
    for metric, sample in samples.items():
        before, after = np.asarray(sample.baseline, dtype=float), np.asarray(sample.current, dtype=float)
        if _is_binary(np, before) and _is_binary(np, after):
            changes[metric] = binary_change(sample, confidence=confidence)
        elif before.size < 2:
            changes[metric] = _too_few(sample)
        else:
            arrays[metric] = (before, after)
            by_length.setdefault(before.size, []).append(metric)
    for metrics in by_length.values():
        columns = [arrays[metric][1] - arrays[metric][0] for metric in metrics]
        intervals = studentized_intervals(columns, confidence=confidence, resamples=resamples, seed=seed)
        for metric, column, interval in zip(metrics, columns, intervals, strict=True):
            before, after = arrays[metric]
            # A score in [0, 1] changes by at most 1; clamping at -1 and 1 never moves a bound across 0.
            limit = 1.0 if _is_unit_score(np, before) and _is_unit_score(np, after) else math.inf
            changes[metric] = MetricChange(
                baseline=float(before.mean()),
                current=float(after.mean()),
                delta=interval.mean,
                ci_low=max(interval.low, -limit),
                ci_high=min(interval.high, limit),
                p_value=interval.p_value,
                n_pairs=before.size,
                test="bootstrap",
                min_detectable_delta=min_detectable_delta(column, confidence=confidence),
            )
    return {metric: changes[metric] for metric in samples}


def binary_change(sample: PairedSample, *, confidence: float) -> MetricChange:
    """Exact McNemar p-value and its inverted (conditional Clopper-Pearson) interval for a 0/1 metric."""
    np = numpy()
    before, after = np.asarray(sample.baseline, dtype=float), np.asarray(sample.current, dtype=float)
    n = before.size
    if n == 0:
        return _too_few(sample)
    losses, gains = int(np.count_nonzero(before > after)), int(np.count_nonzero(before < after))
    discordant = losses + gains
    delta = (gains - losses) / n
    if discordant == 0:
        low = high = 0.0
    else:
        special = scipy_special()
        alpha = 1.0 - confidence
        share_low = float(special.betaincinv(gains, losses + 1, alpha / 2)) if gains else 0.0
        share_high = float(special.betaincinv(gains + 1, losses, 1 - alpha / 2)) if losses else 1.0
        scale = discordant / n
        low, high = scale * (2 * share_low - 1), scale * (2 * share_high - 1)
    return MetricChange(
        baseline=float(before.mean()),
        current=float(after.mean()),
        delta=delta,
        ci_low=min(low, delta),
        ci_high=max(high, delta),
        p_value=mcnemar_exact(losses, gains),
        n_pairs=n,
        test="mcnemar",
        min_detectable_delta=min_detectable_delta(after - before, confidence=confidence, binary=True),
    )


@functools.lru_cache(maxsize=4096)
def mcnemar_exact(losses: int, gains: int) -> float:
    """Two-sided exact McNemar p-value: the binomial test of the discordant pairs at 1/2."""
    discordant = losses + gains
    if discordant == 0:
        return 1.0
    tail = float(scipy_special().bdtr(min(losses, gains), discordant, 0.5))
    return min(1.0, 2.0 * tail)


def min_detectable_delta(
    differences: Sequence[float] | Any,
    *,
    confidence: float,
    power: float = DEFAULT_POWER,
    binary: bool = False,
) -> float | None:
    """The smallest true mean change these questions detect with `power` (formula in the module doc)."""
    n = len(differences)
    if n < 2:
        return None
    alpha = 1.0 - confidence
    factor = _t_quantile(1 - alpha / 2, n - 1) + _t_quantile(power, n - 1)
    np = numpy()
    spread = float(np.std(np.asarray(differences, dtype=float), ddof=1))
    detectable = factor * spread / math.sqrt(n)
    if binary:
        detectable = max(detectable, min_discordant_pairs(confidence) / n)
    return detectable


def min_discordant_pairs(confidence: float) -> int:
    """Smallest k with 2 * 0.5**k < 1 - confidence: k one-sided flips the exact McNemar test can detect."""
    return math.floor(math.log2(2 / (1 - confidence))) + 1


def _is_unit_score(np: Any, values: Any) -> bool:
    return bool(np.all((values >= 0.0) & (values <= 1.0)))


def _is_binary(np: Any, values: Any) -> bool:
    return bool(np.all((values == 0.0) | (values == 1.0)))


@functools.lru_cache(maxsize=1024)  # a comparison asks the same few (level, n) for every template
def _t_quantile(probability: float, degrees_of_freedom: int) -> float:
    special: Any = scipy_special()
    return float(special.stdtrit(degrees_of_freedom, probability))


def _too_few(sample: PairedSample) -> MetricChange:
    n = len(sample.baseline)
    baseline = float(sum(sample.baseline)) / n if n else None
    current = float(sum(sample.current)) / n if n else None
    delta = current - baseline if baseline is not None and current is not None else None
    return MetricChange(baseline, current, delta, None, None, None, n, "none", None)
