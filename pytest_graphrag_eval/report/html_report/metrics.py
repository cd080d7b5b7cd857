"""Which numbers of a report are quality scores (drawn as bars), which are usage (summed as costs),
and how a question ended."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from math import isfinite

from pytest_graphrag_eval.aggregates import NEVER_METRIC_TYPES, NOT_METRIC_KEYS
from pytest_graphrag_eval.report_model import is_finite_number
from pytest_graphrag_eval.result_keys import CATALOGUE
from pytest_graphrag_eval.scoring import BASE_KEYS

# "interrupted": scored, but Ctrl-C stopped the run before its item gave a verdict.
OUTCOMES = (
    "passed",
    "failed",
    "error",
    "xfailed",
    "xpassed",
    "skipped",
    "interrupted",
    "not_evaluated",
    "unknown",
)
PASSING = frozenset({"passed", "xpassed"})
FAILING = frozenset({"failed", "error"})
LEADING_METRICS = ("steps_score", "answer_f1", "answer_recall", "answer_precision")
# The agent's own token counts, as every result carries them.
TOKEN_KEYS = tuple(key.name for key in BASE_KEYS if key.role == "tokens")


def finite(value: object) -> float | None:
    """A JSON-safe number: NaN and infinities (which JSON.parse rejects) become None."""
    if type(value) is float:  # a report's numbers are exact floats: the common case first, no isinstance
        return value if isfinite(value) else None
    if value is None or type(value) is str:
        return None
    return float(value) if is_finite_number(value) else None  # 10**400: no float holds it


def is_number(value: object) -> bool:
    """Real numbers only: booleans are flags, not metrics."""
    kind = type(value)
    if kind is float or kind is int:
        return True
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def cost_keys(keys: Iterable[str]) -> list[str]:
    """Model cost keys in USD (`answer_eval_cost`, `answer_relevance_cost`, `retrieval_judge_cost`, ...)."""
    return sorted(key for key in keys if CATALOGUE.role(key) == "cost")


def judge_token_keys(keys: Iterable[str]) -> list[str]:
    """Tokens spent by judges and other evaluation models, apart from the agent's own."""
    return sorted(key for key in keys if CATALOGUE.role(key) == "tokens" and key not in TOKEN_KEYS)


def numeric_keys(results: Iterable[Mapping[str, object]]) -> list[str]:
    """Every metric key of the results, in first-seen order."""
    seen: dict[str, None] = {}
    for result in results:
        for key, value in result.items():
            # A result's texts, lists and nulls are told apart by their exact type before any call.
            if (
                key not in seen
                and type(value) not in NEVER_METRIC_TYPES
                and key not in NOT_METRIC_KEYS
                and is_number(value)
            ):
                seen[key] = None
    return list(seen)


def score_metrics(keys: Sequence[str], columns: Mapping[str, Sequence[float | None]]) -> list[str]:
    """Keys whose values (`columns[key]`: `finite` of each question's) all lie in [0, 1] and are not
    usage (tokens, durations, counts, dollars and spreads, by the scorers' declarations in
    `result_keys.CATALOGUE`): the quality scores, leading ones first."""
    scores = [
        key
        for key in keys
        if CATALOGUE.role(key) == "score"
        and all(value is None or 0.0 <= value <= 1.0 for value in columns[key])
    ]
    leading = [key for key in LEADING_METRICS if key in scores]
    return leading + [key for key in scores if key not in leading]


def outcome_of(result: Mapping[str, object]) -> str:
    """The pytest outcome (report format 2); format 1 reports only know agent errors."""
    outcome = result.get("outcome")
    if outcome in OUTCOMES:
        return str(outcome)
    return "error" if result.get("status") == "error" else "unknown"


def is_flaky(result: Mapping[str, object]) -> bool:
    """Some repeated agent attempts passed and some failed."""
    if isinstance(result.get("flaky"), bool):
        return bool(result["flaky"])
    attempts = result.get("attempts")
    if not isinstance(attempts, list):
        return False
    verdicts = {_attempt_passed(attempt) for attempt in attempts if isinstance(attempt, Mapping)}
    return {True, False} <= verdicts


def _attempt_passed(attempt: Mapping[str, object]) -> bool | None:
    if isinstance(attempt.get("passed"), bool):
        return bool(attempt["passed"])
    outcome = outcome_of(attempt)
    if outcome in PASSING:
        return True
    if outcome in FAILING:
        return False
    return None
