"""The judge client for OpenAI-compatible endpoints (chat and embeddings).

The client module (and with it the OpenAI SDK, about 0.7 s to import) loads on first use of one of
its names, so runs that configure no judge never pay for it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

_CLIENT_NAMES = frozenset({"ChatResult", "ClientStats", "EmbeddingResult", "JudgeClient", "make_sdk_client"})

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


def __getattr__(name: str) -> Any:
    """Load the client module when one of its names is first asked for (PEP 562)."""
    if name in _CLIENT_NAMES:
        return getattr(importlib.import_module("pytest_graphrag_eval.llm.client"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
