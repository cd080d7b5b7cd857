"""Paired change of one metric between two runs: estimate, interval, p-value, detectable change.

0/1 metrics use the exact McNemar test and the interval that inverts it, so a confidence gate and the
p-value never disagree; others use the bootstrap of bootstrap.py. min_detectable_delta is at 80% power,
floored for 0/1 metrics by the fewest discordant pairs McNemar can call significant.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, TypeVar

from pytest_graphrag_eval.compare.bootstrap import studentized_intervals
from pytest_graphrag_eval.compare.numeric import numpy, one_blas_thread, scipy_special
from pytest_graphrag_eval.report_model import MetricChange

DEFAULT_POWER = 0.8
# Columns bootstrapped in one pass at most: its arrays are resamples x columns (x 2) floats.
_BOOTSTRAP_COLUMNS = 256
Scope = TypeVar("Scope")  # what a comparison's samples are grouped by: a template id, or None for all


@dataclass(frozen=True, eq=False)
class PairedSample:
    """The values of one metric on the questions both runs share, in the same order (tuples or arrays)."""

    baseline: Sequence[float]
    current: Sequence[float]

    def __post_init__(self) -> None:
        if len(self.baseline) != len(self.current):
            raise ValueError("paired samples must have the same length")


def paired_changes(
    samples: Mapping[str, PairedSample], *, confidence: float, resamples: int, seed: int
) -> dict[str, MetricChange]:
    """The change of every metric of one scope; bootstraps of equal-length samples share one pass."""
    return scoped_paired_changes({None: samples}, confidence=confidence, resamples=resamples, seed=seed)[None]


def scoped_paired_changes(
    scopes: Mapping[Scope, Mapping[str, PairedSample]], *, confidence: float, resamples: int, seed: int
) -> dict[Scope, dict[str, MetricChange]]:
    """`paired_changes` of many small scopes at once: the 0/1 metrics of all scopes in one pass of array
    operations per metric, where per-sample calls cost more than their arithmetic."""
    np = numpy()
    binary: dict[Scope, dict[str, MetricChange]] = {scope: {} for scope in scopes}
    for metric in dict.fromkeys(chain.from_iterable(scopes.values())):
        holding = [scope for scope, samples in scopes.items() if metric in samples]
        samples = _Samples(np, [scopes[scope][metric] for scope in holding])
        changes = _binary_changes(np, samples, samples.binary(np), confidence=confidence)
        for scope, change in zip(holding, changes, strict=True):
            if change is not None:
                binary[scope][metric] = change
    return _with_bootstraps(np, scopes, binary, confidence=confidence, resamples=resamples, seed=seed)


def _with_bootstraps(
    np: Any,
    scopes: Mapping[Scope, Mapping[str, PairedSample]],
    binary: Mapping[Scope, Mapping[str, MetricChange]],
    *,
    confidence: float,
    resamples: int,
    seed: int,
) -> dict[Scope, dict[str, MetricChange]]:
    """Each scope's changes; samples of one length share one bootstrap pass, as they draw the same
    counts, so templates take one pass per size instead of one each."""
    changes = {scope: dict(binary[scope]) for scope in scopes}
    by_length: dict[int, list[tuple[Scope, str, Any, Any]]] = {}
    for scope, samples in scopes.items():
        for metric, sample in samples.items():
            if metric in changes[scope]:
                continue
            before, after = np.asarray(sample.baseline, dtype=float), np.asarray(sample.current, dtype=float)
            if before.size < 2:
                changes[scope][metric] = _too_few(sample)
            else:
                by_length.setdefault(before.size, []).append((scope, metric, before, after))
    batches = (
        pending[start : start + _BOOTSTRAP_COLUMNS]
        for pending in by_length.values()
        for start in range(0, len(pending), _BOOTSTRAP_COLUMNS)
    )
    with one_blas_thread():
        for pending in batches:
            columns = [after - before for _, _, before, after in pending]
            intervals = studentized_intervals(columns, confidence=confidence, resamples=resamples, seed=seed)
            for (scope, metric, before, after), column, interval in zip(
                pending, columns, intervals, strict=True
            ):
                # A score in [0, 1] changes by at most 1; clamping at -1 and 1 never moves a bound across 0.
                limit = 1.0 if _is_unit_score(np, before) and _is_unit_score(np, after) else math.inf
                changes[scope][metric] = MetricChange(
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
    return {
        scope: {metric: changes[scope][metric] for metric in samples} for scope, samples in scopes.items()
    }


def binary_change(sample: PairedSample, *, confidence: float) -> MetricChange:
    """Exact McNemar p-value and its inverted (conditional Clopper-Pearson) interval for a 0/1 metric."""
    np = numpy()
    samples = _Samples(np, [sample])
    change = _binary_changes(np, samples, np.ones(1, dtype=bool), confidence=confidence)[0]
    assert change is not None
    return change


class _Samples:
    """Samples of one metric (one per scope) laid end to end, so that one array call counts them all."""

    def __init__(self, np: Any, samples: Sequence[PairedSample]) -> None:
        self.before = [np.asarray(sample.baseline, dtype=float) for sample in samples]
        self.after = [np.asarray(sample.current, dtype=float) for sample in samples]
        self._owner = np.repeat(np.arange(len(samples)), [len(values) for values in self.before])
        self._joined = np.concatenate(self.before), np.concatenate(self.after)

    def totals(self, np: Any, values: Any) -> Any:
        """The sum of `values` (one per pair, end to end) in each sample, as floats."""
        return np.bincount(self._owner, weights=values, minlength=len(self.before))

    def binary(self, np: Any) -> Any:
        """Whether each sample holds only 0 and 1, in both runs (an empty one does)."""
        before, after = self._joined
        return self.totals(np, ~(_binary_values(np, before) & _binary_values(np, after))) == 0

    def counts(self, np: Any) -> tuple[Any, Any, Any, Any]:
        """Per sample: pairs that got worse, better, and the sums of the values before and after."""
        before, after = self._joined
        return (
            self.totals(np, before > after),
            self.totals(np, before < after),
            self.totals(np, before),
            self.totals(np, after),
        )


def _binary_changes(
    np: Any, samples: _Samples, binary: Any, *, confidence: float
) -> list[MetricChange | None]:
    """The McNemar change of each sample that `binary` marks (None for the others), with one
    `betaincinv` call for all the bounds."""
    losses, gains, before_sums, after_sums = samples.counts(np)
    alpha = 1.0 - confidence
    low_share, high_share = np.zeros(len(binary)), np.ones(len(binary))
    if (binary & (gains > 0)).any() or (binary & (losses > 0)).any():
        special = scipy_special()
        wanted = binary & (gains > 0)
        low_share[wanted] = special.betaincinv(gains[wanted], losses[wanted] + 1, alpha / 2)
        wanted = binary & (losses > 0)
        high_share[wanted] = special.betaincinv(gains[wanted] + 1, losses[wanted], 1 - alpha / 2)
    changes: list[MetricChange | None] = []
    for index, is_binary in enumerate(binary.tolist()):
        if not is_binary:
            changes.append(None)
            continue
        before, after = samples.before[index], samples.after[index]
        n = before.size
        if n == 0:
            changes.append(_too_few(PairedSample(before, after)))
            continue
        worse, better = int(losses[index]), int(gains[index])
        delta = (better - worse) / n
        scale = (worse + better) / n
        low = scale * (2 * float(low_share[index]) - 1) if worse + better else 0.0
        high = scale * (2 * float(high_share[index]) - 1) if worse + better else 0.0
        changes.append(
            MetricChange(
                baseline=float(before_sums[index] / n),
                current=float(after_sums[index] / n),
                delta=delta,
                ci_low=min(low, delta),
                ci_high=max(high, delta),
                p_value=mcnemar_exact(worse, better),
                n_pairs=n,
                test="mcnemar",
                min_detectable_delta=min_detectable_delta(after - before, confidence=confidence, binary=True),
            )
        )
    return changes


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
    detectable = factor * _spread(np, np.asarray(differences, dtype=float)) / math.sqrt(n)
    if binary:
        detectable = max(detectable, min_discordant_pairs(confidence) / n)
    return detectable


def _spread(np: Any, values: Any) -> float:
    """`np.std(values, ddof=1)` of a float array by numpy's own steps (the same bits), without the
    cost of its generic wrappers: a comparison asks for thousands of small samples' spreads."""
    deviations = values - np.add.reduce(values) / len(values)
    return math.sqrt(np.add.reduce(deviations * deviations) / (len(values) - 1))


def min_discordant_pairs(confidence: float) -> int:
    """Smallest k with 2 * 0.5**k < 1 - confidence: k one-sided flips the exact McNemar test can detect."""
    return math.floor(math.log2(2 / (1 - confidence))) + 1


def _is_unit_score(np: Any, values: Any) -> bool:
    return bool(np.all((values >= 0.0) & (values <= 1.0)))


def _binary_values(np: Any, values: Any) -> Any:
    return (values == 0.0) | (values == 1.0)


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
