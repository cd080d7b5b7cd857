"""The one exception the judge client raises: a call that finally failed."""

from __future__ import annotations

from pytest_graphrag_eval.errors import GraphragEvalError


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
