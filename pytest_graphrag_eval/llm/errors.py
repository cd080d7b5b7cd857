"""The exceptions the judge client raises: a call that finally failed, or one the run refused."""

from __future__ import annotations

from pytest_graphrag_eval.errors import GraphragEvalError
from pytest_graphrag_eval.report_model import Refusal


class LLMError(GraphragEvalError):
    """A chat or embeddings call failed for good (after retries, or at once for a 4xx).

    The message says what was called (kind, model, endpoint), what happened and how
    many attempts were made; it is redacted, so it never contains the API key.
    Scorers turn it into `<metric>_error` for the question at hand.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "",
        model: str = "",
        status: int | None = None,
        attempts: int = 0,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.model = model
        self.status = status
        self.attempts = attempts
        self.retryable = retryable


class CallRefused(LLMError):
    """A judge call the run did not send (a budget stop, a cache-only miss) or its batch left unanswered.

    `reason` is the value the call gives back in place of a reply: the scorer that made the call adds
    it to its question's `Usage` (`Usage.add_failure`), and the question's result names it as its
    `judge_refusal` field. Raising one changes nothing else.
    """

    def __init__(self, message: str, *, reason: Refusal, kind: str = "", model: str = "") -> None:
        super().__init__(message, kind=kind, model=model)
        self.reason = reason
