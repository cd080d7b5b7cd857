"""The judge client for OpenAI-compatible endpoints (chat and embeddings).

The client module (and with it the OpenAI SDK, about 0.7 s to import) loads on first use of one of
its names, so runs that configure no judge never pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_graphrag_eval.lazy_names import lazy_names
from pytest_graphrag_eval.llm.cache import clear_cache
from pytest_graphrag_eval.llm.errors import LLMError
from pytest_graphrag_eval.llm.judge import Judge
from pytest_graphrag_eval.llm.pricing import DEFAULT_PRICES, ModelPrice, load_prices, parse_prices, price_for
from pytest_graphrag_eval.llm.redact import redact
from pytest_graphrag_eval.llm.settings import LLMSettings

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.client import (
        ChatResult,
        ClientStats,
        EmbeddingResult,
        JudgeClient,
        make_sdk_client,
    )

_CLIENT_NAMES = ("ChatResult", "ClientStats", "EmbeddingResult", "JudgeClient", "make_sdk_client")

__all__ = [
    "DEFAULT_PRICES",
    "ChatResult",
    "ClientStats",
    "EmbeddingResult",
    "Judge",
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
__getattr__ = lazy_names(__name__, globals(), dict.fromkeys(_CLIENT_NAMES, "pytest_graphrag_eval.llm.client"))
