"""The API key never appears in error messages, reprs, stats, logs or cache files."""

from __future__ import annotations

import asyncio
import dataclasses
import logging

import pytest

from pytest_graphrag_eval.llm import JudgeClient, LLMError, LLMSettings, redact
from pytest_graphrag_eval.llm.redact import safe_url
from pytest_graphrag_eval.testing import Reply

KEY = "sk-test-SECRET-redact-9a8b7c6d"


def test_redact_masks_the_configured_key_and_key_shaped_tokens() -> None:
    settings = LLMSettings(api_key="local-secret-value")
    text = (
        "key local-secret-value, header Authorization: Bearer abc.def-123, "
        f"body {{'api_key': 'xyz987'}}, leaked {KEY} and api-key: 0123456789"
    )
    cleaned = redact(text, settings)
    for secret in ("local-secret-value", "abc.def-123", "xyz987", KEY, "0123456789"):
        assert secret not in cleaned
    assert cleaned.count("***") == 5
    assert redact("nothing secret here", settings) == "nothing secret here"


def test_redact_extra_secrets_and_short_values() -> None:
    assert redact("token hunter2hunter2 in text", secrets=["hunter2hunter2"]) == "token *** in text"
    assert redact("an x in text", LLMSettings(api_key="x")) == "an x in text"  # too short to be a secret


def test_safe_url_drops_credentials_and_query() -> None:
    assert (
        safe_url("https://user:pw@proxy.example.com:8443/v1?key=abc") == "https://proxy.example.com:8443/v1"
    )
    assert safe_url(None) == "<default endpoint>"


def test_key_is_absent_from_every_failure_output(fake_openai, llm_settings, caplog) -> None:
    key = llm_settings.api_key
    fake_openai.set_chat_handler(
        lambda body: (
            Reply.error(400, f"echoing your key {key} and Bearer {key}")
            if "echo" in body["messages"][0]["content"]
            else Reply.server_error()
        )
    )
    settings = dataclasses.replace(llm_settings, max_retries=1)
    client = JudgeClient(settings)
    errors: list[LLMError] = []

    async def fail_in_every_way():
        for content in ("echo please", "server error"):
            with pytest.raises(LLMError) as info:
                await client.chat([{"role": "user", "content": content}])
            errors.append(info.value)

    with caplog.at_level(logging.DEBUG):
        asyncio.run(fail_in_every_way())
    assert "***" in str(errors[0])  # the echoed key was there and got masked
    outputs = [str(e) for e in errors] + [repr(e) for e in errors] + [repr(client), repr(settings)]
    outputs += [str(client.stats.as_dict()), caplog.text]
    assert caplog.text  # retries and SDK debug output were logged
    for output in outputs:
        assert key not in output
    assert all(e.__cause__ is None and e.__suppress_context__ for e in errors)


def test_wrong_key_error_does_not_show_either_key(fake_openai, llm_settings) -> None:
    wrong = "sk-wrong-SECRET-55555555"
    client = JudgeClient(dataclasses.replace(llm_settings, api_key=wrong))
    with pytest.raises(LLMError) as info:
        asyncio.run(client.chat([{"role": "user", "content": "q"}]))
    assert info.value.status == 401 and "authentication" in str(info.value)
    assert wrong not in str(info.value) and llm_settings.api_key not in str(info.value)
