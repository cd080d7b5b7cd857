"""When to retry a failed call and how long to wait.

408, 409, 429, 5xx, timeouts, connection failures and malformed bodies are retried; other answers
fail at once, as a retry cannot fix the request. Waits grow with jitter, honour Retry-After, capped.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

import openai

RETRYABLE_STATUS = frozenset({408, 409, 429})
_STATUS_HINTS = {
    400: "bad request",
    401: "authentication failed, check the API key environment variable",
    403: "permission denied",
    404: "not found, check the model or deployment name and the base URL",
    408: "request timeout",
    409: "conflict",
    422: "unprocessable request",
    429: "rate limited",
}
_DETAIL_LIMIT = 300


class MalformedResponse(Exception):
    """A 200 answer whose body is unusable; `retryable=False` when a retry cannot change it (a refusal)."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class Failure:
    """One failed attempt, described for retry decisions and error messages."""

    description: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None


def connection_error_in(exc: BaseException) -> ConnectionError | None:
    """The refused or reset connection behind an SDK error: aiohttp reports a refusal as a connect timeout."""
    if not isinstance(exc, openai.APIConnectionError):
        return None
    seen: BaseException | None = exc
    for _ in range(10):  # chains are short; a cycle must not loop forever
        if seen is None:
            return None
        if isinstance(seen, ConnectionError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def classify(exc: BaseException, timeout: float) -> Failure | None:
    """Describe a failed attempt; None when `exc` is not a transport/API failure (a bug to propagate)."""
    refused = connection_error_in(exc)
    if refused is not None:
        return Failure(f"connection failed ({type(refused).__name__}: {refused})", retryable=True)
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return Failure(f"no complete reply within the {timeout:g} s timeout", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return Failure(f"connection failed ({type(cause).__name__}: {cause})", retryable=True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        hint = _STATUS_HINTS.get(status, "server error" if status >= 500 else "error")
        detail = _error_detail(exc.body) or exc.response.reason_phrase
        return Failure(
            f"HTTP {status} ({hint}): {detail}",
            retryable=status in RETRYABLE_STATUS or status >= 500,
            status=status,
            retry_after=parse_retry_after(exc.response.headers),
        )
    if isinstance(exc, json.JSONDecodeError | openai.APIResponseValidationError):
        return Failure(f"malformed response body ({exc})", retryable=True)
    if isinstance(exc, openai.OpenAIError):
        return Failure(f"{type(exc).__name__}: {exc}", retryable=False)
    return None


def _error_detail(body: object) -> str:
    if isinstance(body, Mapping):
        body = body.get("message", body)
    text = body if isinstance(body, str) else json.dumps(body, default=str) if body is not None else ""
    return text[:_DETAIL_LIMIT]


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a server asked us to wait, from `retry-after-ms` or `Retry-After`; None if absent/invalid."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000
            if value >= 0:
                return value
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
        return value if value >= 0 else None
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_delay(failure: Failure, attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Seconds before retry number `attempt` (0-based): Retry-After plus up to 10 % jitter, or half-jittered
    exponential steps; both capped at `cap`."""
    if failure.retry_after is not None:
        return min(cap, failure.retry_after * (1 + rng.uniform(0, 0.1)))
    step = min(cap, base * 2.0**attempt)
    return step / 2 + rng.uniform(0, step / 2)
