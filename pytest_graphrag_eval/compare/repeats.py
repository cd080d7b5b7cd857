"""Repeated attempts of one question: spread of each metric, pass@k, pass^k, flakiness, verdict.

With n attempts of which c passed, the unbiased estimators (as in the HumanEval paper):

    pass@k = 1 - C(n - c, k) / C(n, k)    chance that at least one of k attempts drawn from the n passes
    pass^k = C(c, k) / C(n, k)            chance that all k drawn attempts pass

An attempt passes by its `outcome` (passed/xpassed; skipped and xfailed attempts
are not counted) or, when it has none, by an empty `failures` list.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from pytest_graphrag_eval.compare.classify import passed
from pytest_graphrag_eval.compare.metrics import metric_values
from pytest_graphrag_eval.errors import ConfigurationError, InputError

Policy = Literal["all", "any", "majority"]
POLICIES: tuple[str, ...] = get_args(Policy)


@dataclass(frozen=True)
class MetricSpread:
    """Mean and sample standard deviation (0 for a single value) of one metric over the attempts."""

    mean: float
    std: float
    n: int


@dataclass(frozen=True)
class AttemptSummary:
    """One question's attempts; `passed` is the verdict under `policy` (None if no attempt counted)."""

    attempts: int
    passes: int
    k: int
    pass_at_k: float | None
    pass_hat_k: float | None
    flaky: bool
    passed: bool | None
    policy: str
    metrics: dict[str, MetricSpread]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased chance that at least one of k attempts (out of n, c passing) passes."""
    _check_counts(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased chance that all k attempts (out of n, c passing) pass: pass^k."""
    _check_counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def attempt_passed(attempt: Mapping[str, Any]) -> bool | None:
    """Pass/fail of one attempt; None when it is not counted (skipped, xfailed)."""
    if "outcome" in attempt:
        return passed(attempt["outcome"])
    failures = attempt.get("failures")
    if isinstance(failures, list):
        return not failures
    raise InputError("an attempt has neither `outcome` nor a `failures` list", field="attempts")


def verdict(passes: int, attempts: int, policy: str) -> bool | None:
    """The question's pass/fail under `all` (every attempt), `any` (one) or `majority` (more than half)."""
    if policy not in POLICIES:
        raise ConfigurationError(f"repeat policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if attempts == 0:
        return None
    if policy == "all":
        return passes == attempts
    if policy == "any":
        return passes > 0
    return 2 * passes > attempts


def summarize_attempts(
    attempts: Sequence[Mapping[str, Any]], *, k: int | None = None, policy: str = "all"
) -> AttemptSummary:
    """Summary of one question's attempts; k defaults to the number of counted attempts."""
    outcomes = [result for result in (attempt_passed(attempt) for attempt in attempts) if result is not None]
    n, c = len(outcomes), sum(outcomes)
    k = n if k is None else k
    if k < 1 and n > 0:
        raise ConfigurationError(f"k must be at least 1, got {k}")
    estimable = 1 <= k <= n
    return AttemptSummary(
        attempts=n,
        passes=c,
        k=k,
        pass_at_k=pass_at_k(n, c, k) if estimable else None,
        pass_hat_k=pass_hat_k(n, c, k) if estimable else None,
        flaky=0 < c < n,
        passed=verdict(c, n, policy),
        policy=policy,
        metrics=_spreads(attempts),
    )


def flaky_rate(summaries: Iterable[AttemptSummary]) -> float | None:
    """Share of questions with both passing and failing attempts (None for no questions)."""
    flags = [summary.flaky for summary in summaries]
    return sum(flags) / len(flags) if flags else None


def _spreads(attempts: Sequence[Mapping[str, Any]]) -> dict[str, MetricSpread]:
    values: dict[str, list[float]] = {}
    for attempt in attempts:
        for metric, value in metric_values(attempt).items():
            values.setdefault(metric, []).append(value)
    return {
        metric: MetricSpread(
            mean=statistics.fmean(series),
            std=statistics.stdev(series) if len(series) > 1 else 0.0,
            n=len(series),
        )
        for metric, series in values.items()
    }


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
