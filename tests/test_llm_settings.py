"""LLMSettings from the environment, validation, and the SDK clients they build (offline)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import openai
import pytest

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.llm import LLMSettings, make_sdk_client

KEY = "sk-test-SECRET-settings-424242"


def test_defaults() -> None:
    settings = LLMSettings()
    assert (settings.model, settings.embedding_model) == ("gpt-4o-mini", "text-embedding-3-small")
    assert (settings.concurrency, settings.timeout, settings.max_retries) == (8, 60.0, 4)
    assert settings.cache_dir == Path(".graphrag-cache") and settings.use_cache
    assert not settings.is_azure and settings.endpoint == "https://api.openai.com/v1"


def test_from_env_openai_compatible() -> None:
    settings = LLMSettings.from_env({"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://localhost:11434/v1"})
    assert settings.api_key == KEY and settings.base_url == "http://localhost:11434/v1"
    assert not settings.is_azure


def test_from_env_overrides_win_and_empty_variables_are_unset() -> None:
    settings = LLMSettings.from_env(
        {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": ""}, model="gpt-4.1", concurrency=16, cache_dir="cache"
    )
    assert settings.base_url is None
    assert (settings.model, settings.concurrency, settings.cache_dir) == ("gpt-4.1", 16, Path("cache"))
    with pytest.raises(ConfigurationError, match="unknown LLM settings: modle"):
        LLMSettings.from_env({}, modle="x")


def test_from_env_azure() -> None:
    env = {
        "AZURE_OPENAI_API_KEY": KEY,
        "AZURE_OPENAI_ENDPOINT": "https://myres.openai.azure.com",
        "OPENAI_API_VERSION": "2024-10-21",
        "OPENAI_API_KEY": "sk-not-this-one-0000",
        "OPENAI_BASE_URL": "http://ignored/v1",
    }
    settings = LLMSettings.from_env(env, model="judge-deployment")
    assert settings.is_azure and settings.api_key == KEY and settings.base_url is None
    assert (settings.azure_endpoint, settings.api_version) == ("https://myres.openai.azure.com", "2024-10-21")
    assert settings.endpoint == "https://myres.openai.azure.com"
    fallback = LLMSettings.from_env({"AZURE_OPENAI_ENDPOINT": "https://x", "OPENAI_API_KEY": KEY})
    assert fallback.api_key == KEY


def test_azure_settings_build_an_azure_client() -> None:
    settings = LLMSettings.from_env(
        {
            "AZURE_OPENAI_API_KEY": KEY,
            "AZURE_OPENAI_ENDPOINT": "https://myres.openai.azure.com/",
            "OPENAI_API_VERSION": "2024-10-21",
        }
    )

    async def build():
        client = make_sdk_client(settings)
        await client.close()
        return client

    client = asyncio.run(build())
    assert isinstance(client, openai.AsyncAzureOpenAI)
    assert str(client.base_url).startswith("https://myres.openai.azure.com/openai")
    assert client.max_retries == 0 and client.timeout == 60.0
    assert client._custom_query == {"api-version": "2024-10-21"}


def test_openai_settings_build_a_plain_client_that_ignores_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://from-env.invalid/v1")
    client = make_sdk_client(LLMSettings(api_key=KEY, timeout=5.0))
    assert type(client) is openai.AsyncOpenAI
    assert str(client.base_url) == "https://api.openai.com/v1/"
    assert (client.max_retries, client.timeout) == (0, 5.0)


def test_repr_never_shows_the_key() -> None:
    settings = LLMSettings(api_key=KEY)
    assert KEY not in repr(settings) and KEY not in str(settings)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("concurrency", 0, "concurrency"),
        ("timeout", 0, "timeout"),
        ("max_retries", -1, "max_retries"),
        ("backoff_base", -1.0, "backoff"),
        ("model", "", "model"),
    ],
)
def test_invalid_values_are_configuration_errors(field: str, value: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        LLMSettings(**{field: value})


@pytest.mark.parametrize(
    ("overrides", "says"),
    [
        ({"use_cache": False}, "stores its replies in the cache"),
        ({"cache_dir": None}, "stores its replies in the cache"),
        ({"cache_only": True}, "a cache-only judge never does"),
        ({"max_cost_usd": 1.0}, "billed as a whole"),
        ({"max_calls": 10}, "billed as a whole"),
    ],
)
def test_batch_judge_refuses_what_contradicts_it(overrides: dict, says: str) -> None:
    with pytest.raises(ConfigurationError, match=says):
        LLMSettings(api_key="sk-test", batch=True, **overrides)
