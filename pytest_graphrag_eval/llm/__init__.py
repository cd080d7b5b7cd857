"""The judge client for OpenAI-compatible endpoints (chat and embeddings).

Scorers receive a `JudgeClient` through `ScoringContext.judge` and call
`chat()` / `embed()`; a final failure is an `LLMError`, which they report as
`<metric>_error`.
"""

from pytest_graphrag_eval.llm.cache import clear_cache
from pytest_graphrag_eval.llm.client import (
    ChatResult,
    ClientStats,
    EmbeddingResult,
    JudgeClient,
    make_sdk_client,
)
from pytest_graphrag_eval.llm.errors import LLMError
from pytest_graphrag_eval.llm.pricing import DEFAULT_PRICES, ModelPrice, load_prices, parse_prices, price_for
from pytest_graphrag_eval.llm.redact import redact
from pytest_graphrag_eval.llm.settings import LLMSettings

__all__ = [
    "DEFAULT_PRICES",
    "ChatResult",
    "ClientStats",
    "EmbeddingResult",
    "JudgeClient",
    "LLMError",
    "LLMSettings",
    "ModelPrice",
    "clear_cache",
    "load_prices",
    "make_sdk_client",
    "parse_prices",
    "price_for",
    "redact",
]
