"""What a run lets the judge client send: cache-only runs and spending limits.

A refused call is a `CallRefused` (an `LLMError`, so scorers report it as `<metric>_error`) naming
its `Refusal`, which the result keeps as `judge_refusal`: the question was not evaluated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pytest_graphrag_eval.llm.errors import CallRefused
from pytest_graphrag_eval.report_model import Refusal, refusal_of

CACHE_MISS = "no cached reply and this run is cache-only (no call is sent)"
BUDGET_REACHED = "judge budget reached (no new call is sent)"
BATCH_UNANSWERED = "no reply from the judge batch"


NOT_EVALUATED_REASONS = {
    "budget": "not evaluated: the judge budget was reached before this question was scored",
    "cache_miss": "not evaluated: a judge call of this question is missing from the cache of this "
    "cache-only run",
}


def not_evaluated_reason(results: Iterable[Mapping[str, object]]) -> str | None:
    """Why a question (its results, one per attempt) was not evaluated, or None when it was."""
    refusals = {refusal_of(result) for result in results}
    return next((text for reason, text in NOT_EVALUATED_REASONS.items() if reason in refusals), None)


@dataclass
class Budget:
    """Limits on what a run spends on judge calls: USD and number of requests (retries included).

    A request reserves its estimated cost ceiling while in flight, so the spend ends above
    `max_cost_usd` by at most one request's estimate however many run at once.
    """

    max_cost_usd: float | None = None
    max_calls: int | None = None
    calls_started: int = 0
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    in_flight: int = 0  # requests holding a reservation

    def exhausted(self) -> str | None:
        """Why no new request may start, or None while both limits hold."""
        if self.max_calls is not None and self.calls_started >= self.max_calls:
            return f"{self.calls_started} of at most {self.max_calls} judge requests sent"
        if self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd:
            return f"${self.spent_usd:.4f} spent of a ${self.max_cost_usd:g} budget"
        return None

    def admit(self, kind: str, model: str, estimate_usd: float = 0.0) -> bool:
        """Start one request reserving `estimate_usd`: True when it may be sent, False when it must
        wait for a request in flight to settle (`release`), CallRefused when a limit is reached."""
        reason = self.exhausted()
        if reason is not None:
            raise CallRefused(
                f"{kind} call to model {model!r} {BUDGET_REACHED}: {reason}",
                reason=Refusal.BUDGET,
                kind=kind,
                model=model,
            )
        if (
            self.max_cost_usd is not None
            and self.in_flight
            and self.spent_usd + self.reserved_usd >= self.max_cost_usd
        ):
            return False
        self.calls_started += 1
        self.in_flight += 1
        self.reserved_usd += estimate_usd
        return True

    def release(self, estimate_usd: float) -> None:
        """A request admitted with `estimate_usd` is over; its real cost goes to `record_cost`."""
        self.in_flight -= 1
        self.reserved_usd = self.reserved_usd - estimate_usd if self.in_flight else 0.0

    def record_cost(self, cost_usd: float) -> None:
        self.spent_usd += cost_usd
