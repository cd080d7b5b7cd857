"""Settings of the judge client, built from the environment plus overrides.

The API key and endpoint come only from the environment, never from ini files or the command line,
where they would end up in shell history and CI logs.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.llm.pricing import ModelPrice

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class LLMSettings:
    """Everything the judge client needs; `api_key` is never in repr or printed.

    With `azure_endpoint`, models are deployment names and `api_version` is required; `backoff_max` also
    caps a server's Retry-After; limits and batches are llm/limits.py's and llm/batch.py's.
    """

    model: str = "gpt-4o-mini"
    embedding_model: str = "text-embedding-3-small"
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 4
    cache_dir: Path | None = Path(".graphrag-cache")
    use_cache: bool = True
    prices: Mapping[str, ModelPrice] | None = None
    azure_endpoint: str | None = None
    api_version: str | None = None
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_tokens: int | None = None
    cache_only: bool = False
    max_cost_usd: float | None = None
    max_calls: int | None = None
    dry_run: bool = False
    batch: bool = False

    def __post_init__(self) -> None:
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1
        ):
            raise ConfigurationError(f"LLM max_tokens must be an integer >= 1, got {self.max_tokens!r}")
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ConfigurationError(f"LLM concurrency must be an integer >= 1, got {self.concurrency!r}")
        if not self.timeout > 0:
            raise ConfigurationError(f"LLM timeout must be > 0 seconds, got {self.timeout!r}")
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ConfigurationError(f"LLM max_retries must be an integer >= 0, got {self.max_retries!r}")
        if self.backoff_base < 0 or self.backoff_max < 0:
            raise ConfigurationError("LLM backoff_base and backoff_max must be >= 0")
        if not self.model or not self.embedding_model:
            raise ConfigurationError("LLM model and embedding_model must be non-empty")
        if self.max_cost_usd is not None and (
            isinstance(self.max_cost_usd, bool)
            or not isinstance(self.max_cost_usd, int | float)
            or not 0 <= self.max_cost_usd < float("inf")
        ):
            raise ConfigurationError(
                f"LLM max_cost_usd must be a number of USD >= 0, got {self.max_cost_usd!r}"
            )
        if self.max_calls is not None and (
            isinstance(self.max_calls, bool) or not isinstance(self.max_calls, int) or self.max_calls < 0
        ):
            raise ConfigurationError(f"LLM max_calls must be an integer >= 0, got {self.max_calls!r}")
        if self.cache_only and (self.cache_dir is None or not self.use_cache):
            raise ConfigurationError(
                "a cache-only judge needs its cache: give a cache folder and leave it on"
            )
        if self.batch and (self.cache_dir is None or not self.use_cache):
            raise ConfigurationError(
                "a batch judge stores its replies in the cache: give a cache folder and leave it on"
            )
        if self.batch and self.cache_only:
            raise ConfigurationError(
                "a batch judge sends requests, which a cache-only judge never does; use one"
            )
        if self.batch and (self.max_cost_usd is not None or self.max_calls is not None):
            raise ConfigurationError(
                "a judge batch is billed as a whole once it ends, so a budget cannot stop it midway; "
                "drop the budget (a dry run shows what the batch would cost)"
            )
        if self.cache_dir is not None and not isinstance(self.cache_dir, Path):
            object.__setattr__(self, "cache_dir", Path(self.cache_dir))

    @property
    def is_azure(self) -> bool:
        return self.azure_endpoint is not None

    @property
    def endpoint(self) -> str:
        """The endpoint calls go to, for messages (the SDK default when unset)."""
        return self.azure_endpoint or self.base_url or OPENAI_DEFAULT_BASE_URL

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ, **overrides: Any) -> LLMSettings:
        """Settings from `OPENAI_*` / `AZURE_OPENAI_*` variables (empty ones unset), then `overrides`."""
        env = {name: value for name, value in environ.items() if value}
        values: dict[str, Any] = {}
        if "AZURE_OPENAI_ENDPOINT" in env or overrides.get("azure_endpoint"):
            values["azure_endpoint"] = env.get("AZURE_OPENAI_ENDPOINT")
            values["api_key"] = env.get("AZURE_OPENAI_API_KEY") or env.get("OPENAI_API_KEY")
            values["api_version"] = env.get("OPENAI_API_VERSION")
        else:
            values["api_key"] = env.get("OPENAI_API_KEY")
            values["base_url"] = env.get("OPENAI_BASE_URL")
        unknown = set(overrides) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigurationError(f"unknown LLM settings: {', '.join(sorted(unknown))}")
        values.update(overrides)
        return cls(**values)


def budget_share(settings: LLMSettings, processes: int) -> LLMSettings:
    """One of `processes` equal shares of the judge budget (xdist workers): the total stays within it."""
    if processes == 1 or (settings.max_cost_usd is None and settings.max_calls is None):
        return settings
    return dataclasses.replace(
        settings,
        max_cost_usd=settings.max_cost_usd / processes if settings.max_cost_usd is not None else None,
        max_calls=settings.max_calls // processes if settings.max_calls is not None else None,
    )
