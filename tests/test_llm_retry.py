"""Retry decisions and delays, independent of any server."""

from __future__ import annotations

import random
from email.utils import formatdate

import pytest

from pytest_graphrag_eval.llm.retry import Failure, parse_retry_after, retry_delay


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),
        ({"retry-after": "-1"}, None),
        ({"retry-after": "whenever"}, None),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after({"retry-after": formatdate(now + 7, usegmt=True)}, now=now) == pytest.approx(7.0)
    assert parse_retry_after({"retry-after": formatdate(now - 7, usegmt=True)}, now=now) == 0.0


def test_retry_after_is_followed_with_small_jitter_and_capped() -> None:
    rng = random.Random(1)
    failure = Failure("429", retryable=True, status=429, retry_after=2.0)
    delays = [retry_delay(failure, 0, base=0.5, cap=30.0, rng=rng) for _ in range(200)]
    assert all(2.0 <= d <= 2.2 for d in delays) and len(set(delays)) > 1
    assert retry_delay(Failure("429", True, 429, retry_after=600.0), 0, base=0.5, cap=30.0, rng=rng) == 30.0


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    rng = random.Random(2)
    failure = Failure("500", retryable=True, status=500)
    for attempt in range(8):
        step = min(10.0, 0.5 * 2**attempt)
        delays = [retry_delay(failure, attempt, base=0.5, cap=10.0, rng=rng) for _ in range(100)]
        assert all(step / 2 <= d <= step for d in delays)
        assert max(delays) - min(delays) > step / 10
