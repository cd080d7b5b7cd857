"""The two small interfaces between the judge client and the Batch API side, so neither imports the other."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pytest_graphrag_eval.formats.json_types import JSONValue
from pytest_graphrag_eval.llm.errors import LLMError
from pytest_graphrag_eval.llm.limits import BATCH_UNANSWERED

if TYPE_CHECKING:
    import openai

URLS = {"chat": "/v1/chat/completions", "embeddings": "/v1/embeddings"}
NOT_IN_A_BATCH = f"{BATCH_UNANSWERED} (it was not in one)"


class CallDeferred(LLMError):
    """A cache miss recorded for the next batch instead of being sent (a collecting pass only)."""


@dataclass(frozen=True)
class BatchRequest:
    """One judge request as a Batch API input line; `key` is its cache key."""

    key: str
    kind: str  # chat or embeddings
    model: str
    body: Mapping[str, object]  # sent as JSON, never read back

    def line(self) -> str:
        return json.dumps(
            {"custom_id": self.key, "method": "POST", "url": URLS[self.kind], "body": self.body},
            ensure_ascii=False,
            separators=(",", ":"),
        )


class BatchTransport(Protocol):
    """Where a batch judge's cache misses go."""

    def take(self, request: BatchRequest) -> str | None:
        """None when `request` is recorded for the next batch (the call is deferred);
        else why it gets no reply in this run (the call fails with that text)."""
        ...


class BatchStats(Protocol):
    """The counters a batch adds to."""

    batch_requests: int
    batch_failed: int


class BatchSender(Protocol):
    """What sending a batch needs of the judge client: counters, the loop's SDK client, a reply store."""

    @property
    def stats(self) -> BatchStats: ...
    def batch_sdk(self) -> openai.AsyncOpenAI: ...
    def store_batch_reply(self, request: BatchRequest, body: JSONValue) -> None: ...
    async def aclose(self) -> None: ...
