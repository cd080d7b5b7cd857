"""Repeated attempts of one question: spread of each metric, pass@k, pass^k, flakiness, verdict.

pass@k and pass^k are the unbiased estimators (HumanEval); an attempt passes by its `outcome`, else
by an empty `failures` list.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.compare import POLICIES
from pytest_graphrag_eval.compare.classify import passed
from pytest_graphrag_eval.compare.metrics import metric_values
from pytest_graphrag_eval.errors import ConfigurationError, InputError


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


def replay_warnings(recorded: Mapping[str, int], repeats: int) -> tuple[str, ...]:
    """Warnings about a recording's attempt counts against `repeats`: a question recorded fewer times is
    judged on what it has (never flaky for missing attempts), and extra attempts are not replayed."""
    warnings = []
    short = {question_id: count for question_id, count in recorded.items() if 0 < count < repeats}
    if short:
        fewest = min(short.values())
        example = next(question_id for question_id, count in sorted(short.items()) if count == fewest)
        warnings.append(
            f"--graphrag-agent-repeats {repeats}, but the responses file holds fewer attempts for "
            f"{len(short)} of {len(recorded)} question(s) (as few as {fewest}, e.g. {example!r}): each is "
            "judged on the attempts recorded, and pass@k, pass^k and flaky count only those"
        )
    most = max(recorded.values(), default=1)
    if most > repeats:
        warnings.append(
            f"the responses file holds up to {most} attempts per question; this run replays {repeats} "
            f"(pass --graphrag-agent-repeats {most} to replay them all)"
        )
    return tuple(warnings)


def combine_attempts(
    results: Sequence[Mapping[str, Any]], passes: Sequence[bool], *, policy: str = "all"
) -> tuple[dict[str, Any], AttemptSummary]:
    """One question's result from its attempts: each metric's mean and `<metric>_agent_std`, the pass
    counts and estimators, `flaky`, and every attempt under `attempts`."""
    if not results or len(results) != len(passes):
        raise ValueError("one pass/fail verdict per attempt is needed")
    marked = [
        {**result, "outcome": "passed" if passed_ else "failed"}
        for result, passed_ in zip(results, passes, strict=True)
    ]
    summary = summarize_attempts(marked, policy=policy)
    succeeded = [result for result in results if result.get("status") == "success"]
    combined = dict(succeeded[0] if succeeded else results[0])
    for metric, spread in summary.metrics.items():
        combined[metric] = spread.mean
        combined[f"{metric}_agent_std"] = spread.std
    combined.update(
        agent_attempts=summary.attempts,
        agent_passes=summary.passes,
        pass_at_k=summary.pass_at_k,
        pass_hat_k=summary.pass_hat_k,
        flaky=int(summary.flaky),
        attempts=[
            {
                "attempt": number,
                "status": attempt.get("status"),
                "outcome": marked_attempt["outcome"],
                **({"error": attempt["error"]} if attempt.get("error") else {}),
                **metric_values(attempt),
            }
            for number, (attempt, marked_attempt) in enumerate(zip(results, marked, strict=True), start=1)
        ],
    )
    return combined, summary
