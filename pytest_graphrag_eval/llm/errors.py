"""The exceptions the judge client raises: a call that finally failed, or one the run refused."""

from __future__ import annotations

from pytest_graphrag_eval.errors import GraphragEvalError
from pytest_graphrag_eval.report_model import Refusal


class LLMError(GraphragEvalError):
    """A chat or embeddings call failed for good; the message is redacted and names call, cause, attempts."""

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
    """A judge call the run did not send (budget, cache-only miss) or its batch left unanswered.

    `reason` is what the call returns in place of a reply; the scorer adds it to its question's `Usage`.
    """

    def __init__(self, message: str, *, reason: Refusal, kind: str = "", model: str = "") -> None:
        super().__init__(message, kind=kind, model=model)
        self.reason = reason
