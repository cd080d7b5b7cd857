"""One question's pass/fail verdict from its scored result (or repeated attempts) and its thresholds,
pure data so the pytest item, the shard merge and library users decide a question the same way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.compare.repeats import AttemptSummary, combine_attempts
from pytest_graphrag_eval.gates.thresholds import Threshold, ThresholdCheck, check_thresholds

if TYPE_CHECKING:
    from pytest_graphrag_eval.judging.reviews import ReviewDecision

REVIEW_KEY = "review"  # a result's reviewers' decision (ReviewDecision.to_dict), when it has reviews


@dataclass(frozen=True)
class Attempt:
    """One attempt of a repeated question: its scored result, or why there is none."""

    result: dict[str, Any] | None
    problem: str | None = None


@dataclass(frozen=True)
class FailingAttempt:
    """The first attempt that failed, shown when the repeat policy fails the question."""

    number: int  # from 1
    result: dict[str, Any]
    checks: list[ThresholdCheck]


@dataclass(frozen=True)
class QuestionVerdict:
    """The question's result (attempts combined), its threshold checks (none when the agent did not
    answer) and pass/fail; with repeats, `summary` and `failing_attempt` say how the policy decided."""

    result: dict[str, Any]
    checks: list[ThresholdCheck]
    passed: bool
    summary: AttemptSummary | None = None
    failing_attempt: FailingAttempt | None = None

    @property
    def failures(self) -> list[str]:
        """Why the question failed, one line each, as the JSON report keeps them."""
        return failure_lines(self.result, self.checks)


def judge_question(
    result: dict[str, Any],
    thresholds: Mapping[str, Threshold],
    *,
    attempts: Sequence[Attempt] = (),
    policy: str = "all",
    review: ReviewDecision | None = None,
) -> QuestionVerdict:
    """Decide one question: a single result against its thresholds, or attempts under `policy`; an
    applied `review` decides an answered question (thresholds still reported), a lapsed one is noted."""
    verdict = _judged(result, thresholds, attempts, policy)
    if review is None:
        return verdict
    reviewed = {**verdict.result, REVIEW_KEY: review.to_dict()}
    decided = review.applied and reviewed.get("status") == "success"
    return replace(verdict, result=reviewed, passed=review.passed if decided else verdict.passed)


def _judged(
    result: dict[str, Any], thresholds: Mapping[str, Threshold], attempts: Sequence[Attempt], policy: str
) -> QuestionVerdict:
    if not attempts:
        checks = _checks(result, thresholds)
        return QuestionVerdict(result, checks, passed=_passes(result, checks))
    results = [
        attempt.result
        if attempt.result is not None
        else {**result, "status": "error", "error": attempt.problem or "no response"}
        for attempt in attempts
    ]
    attempt_checks = [_checks(one, thresholds) for one in results]
    passes = [_passes(one, checks) for one, checks in zip(results, attempt_checks, strict=True)]
    combined, summary = combine_attempts(results, passes, policy=policy)
    failing = None
    if not summary.passed:
        index = passes.index(False)
        failing = FailingAttempt(index + 1, results[index], attempt_checks[index])
    return QuestionVerdict(
        combined,
        _checks(combined, thresholds),
        passed=bool(summary.passed),
        summary=summary,
        failing_attempt=failing,
    )


def failure_lines(result: Mapping[str, Any], checks: Sequence[ThresholdCheck]) -> list[str]:
    """Why a question failed, one line each: the agent's error, then every threshold that did not hold;
    a reviewer's decision on the answer comes first (a pass by review leaves no failure)."""
    review = result.get(REVIEW_KEY)
    if (
        isinstance(review, Mapping)
        and review.get("status") == "applied"
        and result.get("status") == "success"
    ):
        if review.get("verdict") == "pass":
            return []
        return [str(review.get("note"))] + [check.message for check in checks if not check.passed]
    error = (
        [f"agent error: {result.get('error') or 'no error message'}"]
        if result.get("status") != "success"
        else []
    )
    return error + [check.message for check in checks if not check.passed]


def _checks(result: Mapping[str, Any], thresholds: Mapping[str, Threshold]) -> list[ThresholdCheck]:
    """Thresholds are checked only on answered questions: an agent error is its own failure."""
    return check_thresholds(result, thresholds) if result["status"] == "success" else []


def _passes(result: Mapping[str, Any], checks: Sequence[ThresholdCheck]) -> bool:
    return result["status"] == "success" and all(check.passed for check in checks)
