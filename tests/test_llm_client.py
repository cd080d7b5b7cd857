"""JudgeClient through the real SDK against the loopback server: faults, retries, concurrency, cost."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import logging
import socket
import time
from email.utils import formatdate

import pytest

from pytest_graphrag_eval.errors import ConfigurationError, GraphragEvalError
from pytest_graphrag_eval.llm import JudgeClient, LLMError, LLMSettings, ModelPrice
from pytest_graphrag_eval.testing import FakeOpenAIServer, Reply, bag_of_words_embedding

QUESTION = [{"role": "user", "content": "Which substations feed Bergen?"}]


def run(coro):
    return asyncio.run(coro)


async def ask(client: JudgeClient, content: str = "Which substations feed Bergen?", **kwargs):
    return await client.chat([{"role": "user", "content": content}], **kwargs)


def gaps(server: FakeOpenAIServer) -> list[float]:
    """Seconds between the end of each request and the start of the next one."""
    records = server.requests
    return [b.started - a.finished for a, b in itertools.pairwise(records)]


def test_chat_returns_text_tokens_and_cost(fake_openai, llm_settings) -> None:
    fake_openai.enqueue(Reply(content="Sandvika and Fana.", prompt_tokens=1000, completion_tokens=500))
    client = JudgeClient(llm_settings)
    result = run(ask(client))
    assert result.text == "Sandvika and Fana."
    assert (result.input_tokens, result.output_tokens) == (1000, 500)
    assert result.cost_usd == pytest.approx(1000 * 0.15 / 1e6 + 500 * 0.60 / 1e6)
    assert not result.cached and result.price_known and result.model == "gpt-4o-mini"
    assert fake_openai.requests[0].body == {"model": "gpt-4o-mini", "messages": QUESTION, "temperature": 0.0}
    stats = client.stats
    assert (stats.calls_made, stats.retries, stats.input_tokens, stats.output_tokens) == (1, 0, 1000, 500)
    assert stats.cost_usd == pytest.approx(result.cost_usd)


def test_chat_parameters_are_forwarded(fake_openai, llm_settings) -> None:
    schema = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    fake_openai.enqueue("{not valid json")  # structured-output validation is the caller's job
    client = JudgeClient(llm_settings)
    result = run(ask(client, model="o3-mini", response_format=schema, temperature=None))
    body = fake_openai.requests[0].body
    assert result.text == "{not valid json"
    assert body["model"] == "o3-mini" and body["response_format"] == schema
    assert "temperature" not in body


def test_embed_returns_vectors_in_order_with_cost(fake_openai, llm_settings) -> None:
    texts = ["first text here", "second", "third one"]
    client = JudgeClient(llm_settings)
    result = run(client.embed(texts))
    assert len(result.vectors) == 3
    for vector, text in zip(result.vectors, texts, strict=True):
        assert vector == pytest.approx(bag_of_words_embedding(text), abs=1e-6)
    assert result.input_tokens == 6
    assert result.cost_usd == pytest.approx(6 * 0.02 / 1e6)
    assert run(client.embed([])).vectors == []
    assert client.stats.calls_made == 1


def test_unknown_model_costs_zero_and_is_flagged(fake_openai, llm_settings, caplog) -> None:
    client = JudgeClient(llm_settings)
    with caplog.at_level(logging.WARNING):
        result = run(ask(client, model="llama3.1:8b"))
    assert result.cost_usd == 0.0 and not result.price_known
    assert client.stats.unpriced_models == {"llama3.1:8b"}
    assert "llama3.1:8b" in caplog.text


def test_price_override_from_settings(fake_openai, llm_settings) -> None:
    settings = dataclasses.replace(llm_settings, prices={"gpt-4o-mini": ModelPrice(1.0, 2.0)})
    fake_openai.enqueue(Reply(content="x", prompt_tokens=2_000_000, completion_tokens=1_000_000))
    assert run(ask(JudgeClient(settings))).cost_usd == pytest.approx(4.0)


@pytest.mark.parametrize(
    "rate_limit",
    [Reply.rate_limited(retry_after=0.4), Reply.rate_limited(retry_after=400, millis=True)],
    ids=["seconds", "milliseconds"],
)
def test_429_waits_as_long_as_retry_after_says(fake_openai, llm_settings, rate_limit) -> None:
    fake_openai.enqueue(rate_limit, "finally")
    client = JudgeClient(llm_settings)
    assert run(ask(client)).text == "finally"
    assert fake_openai.count() == 2
    assert 0.4 <= gaps(fake_openai)[0] < 1.5  # backoff alone would wait about 0.01 s
    assert (client.stats.retries, client.stats.calls_made) == (1, 2)


def test_retry_after_as_http_date(fake_openai, llm_settings) -> None:
    fake_openai.enqueue(Reply.rate_limited(retry_after=formatdate(time.time() + 2, usegmt=True)), "ok")
    settings = dataclasses.replace(llm_settings, backoff_max=3.0)
    assert run(ask(JudgeClient(settings))).text == "ok"
    # The wait honours the date (at least half a second: HTTP dates have whole-second resolution);
    # no upper bound on wall time, which a loaded machine stretches (backoff_max=3 caps the wait itself).
    assert gaps(fake_openai)[0] >= 0.5


def test_retry_after_is_capped(fake_openai, llm_settings) -> None:
    fake_openai.enqueue(Reply.rate_limited(retry_after=3600), "ok")
    settings = dataclasses.replace(llm_settings, backoff_max=0.2)
    assert run(ask(JudgeClient(settings))).text == "ok"
    # Uncapped, the retry would wait an hour: a minute apart still proves the cap on any machine.
    assert gaps(fake_openai)[0] < 60


def test_500_then_success(fake_openai, llm_settings) -> None:
    fake_openai.enqueue(Reply.server_error(), Reply.server_error(502), "recovered")
    client = JudgeClient(llm_settings)
    assert run(ask(client)).text == "recovered"
    assert (fake_openai.count(), client.stats.retries, client.stats.failures) == (3, 2, 0)


def test_persistent_500_gives_up_after_max_retries(fake_openai, llm_settings) -> None:
    fake_openai.set_chat_handler(lambda body: Reply.server_error(503))
    settings = dataclasses.replace(llm_settings, max_retries=2)
    client = JudgeClient(settings)
    with pytest.raises(LLMError) as info:
        run(ask(client))
    error = info.value
    assert isinstance(error, GraphragEvalError)
    assert fake_openai.count() == 3
    assert (error.status, error.attempts, error.model, error.kind) == (503, 3, "gpt-4o-mini", "chat")
    message = str(error)
    assert "failed after 3 attempts" in message and "HTTP 503" in message and "'gpt-4o-mini'" in message
    assert fake_openai.base_url in message
    assert (client.stats.calls_made, client.stats.retries, client.stats.failures) == (3, 2, 1)


def test_backoff_grows_exponentially(fake_openai, llm_settings) -> None:
    fake_openai.enqueue(Reply.server_error(), Reply.server_error(), Reply.server_error(), "ok")
    settings = dataclasses.replace(llm_settings, backoff_base=0.1, backoff_max=5.0)
    run(ask(JudgeClient(settings)))
    waits = gaps(fake_openai)
    # retry n waits between half and all of base * 2**n
    for n, wait in enumerate(waits):
        assert 0.1 * 2**n / 2 <= wait < 0.1 * 2**n + 0.3


def test_slower_than_timeout_is_retried_then_fails(fake_openai, llm_settings) -> None:
    fake_openai.set_chat_handler(lambda body: Reply.slow(5.0))
    settings = dataclasses.replace(llm_settings, timeout=0.2, max_retries=1)
    client = JudgeClient(settings)
    with pytest.raises(LLMError) as info:
        run(ask(client))
    assert fake_openai.count() == 2
    assert "0.2 s timeout" in str(info.value) and info.value.status is None
    assert client.stats.calls_made == 2


def test_slow_reply_then_success(fake_openai, llm_settings) -> None:
    fake_openai.enqueue(Reply.slow(5.0), "in time")
    settings = dataclasses.replace(llm_settings, timeout=0.3)
    assert run(ask(JudgeClient(settings))).text == "in time"


def test_malformed_json_body_is_retried(fake_openai, llm_settings) -> None:
    fake_openai.enqueue(Reply.malformed(), Reply(body='{"object": "chat.completion", "choices": []}'), "ok")
    client = JudgeClient(llm_settings)
    assert run(ask(client)).text == "ok"
    assert (client.stats.calls_made, client.stats.retries) == (3, 2)


def test_malformed_json_body_every_time_fails(fake_openai, llm_settings) -> None:
    fake_openai.set_chat_handler(lambda body: Reply.malformed())
    with pytest.raises(LLMError, match="malformed response body"):
        run(ask(JudgeClient(dataclasses.replace(llm_settings, max_retries=1))))


def test_malformed_embeddings_are_rejected(fake_openai, llm_settings) -> None:
    fake_openai.set_embedding_handler(lambda body: [[1.0]])  # one vector for two texts
    with pytest.raises(LLMError, match="expected 2 vectors"):
        run(JudgeClient(dataclasses.replace(llm_settings, max_retries=0)).embed(["a", "b"]))


@pytest.mark.parametrize(
    ("status", "hint"), [(400, "bad request"), (401, "authentication"), (404, "not found")]
)
def test_non_retryable_4xx_fails_at_once(fake_openai, llm_settings, status, hint) -> None:
    fake_openai.enqueue(Reply.error(status, "the server explains"), "never reached")
    client = JudgeClient(llm_settings)
    with pytest.raises(LLMError) as info:
        run(ask(client))
    assert fake_openai.count() == 1
    assert info.value.status == status and not info.value.retryable
    assert (
        "not retryable" in str(info.value)
        and hint in str(info.value)
        and "the server explains" in str(info.value)
    )
    assert client.stats.retries == 0


def test_refusal_is_not_retried(fake_openai, llm_settings) -> None:
    body = {
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": None, "refusal": "I can't help"},
            }
        ],
    }
    fake_openai.enqueue(Reply(body=json.dumps(body)))
    with pytest.raises(LLMError, match="refused: I can't help"):
        run(ask(JudgeClient(llm_settings)))
    assert fake_openai.count() == 1


def test_connection_refused_is_retried_and_not_counted_as_a_call(llm_settings) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = dataclasses.replace(llm_settings, base_url=f"http://127.0.0.1:{port}/v1", max_retries=2)
    client = JudgeClient(settings)
    with pytest.raises(LLMError, match="connection failed"):
        run(ask(client))
    assert (client.stats.calls_made, client.stats.retries, client.stats.failures) == (0, 2, 1)


def test_sdk_retries_are_disabled(fake_openai, llm_settings) -> None:
    fake_openai.set_chat_handler(lambda body: Reply.server_error())
    with pytest.raises(LLMError):
        run(ask(JudgeClient(dataclasses.replace(llm_settings, max_retries=0))))
    assert fake_openai.count() == 1


def test_concurrency_bound_is_observed_at_the_server(fake_openai, llm_settings) -> None:
    fake_openai.latency = 0.05
    client = JudgeClient(dataclasses.replace(llm_settings, concurrency=5))

    async def many():
        return await asyncio.gather(*(ask(client, f"question {i}") for i in range(30)))

    assert len(run(many())) == 30
    assert fake_openai.max_in_flight == 5


def test_requests_overlap_up_to_the_concurrency(fake_openai, llm_settings) -> None:
    """Requests overlap up to the bound (the wall-time figure is benchmarks/bench_answers.py's)."""
    calls, latency, concurrency = 48, 0.1, 16
    fake_openai.latency = latency
    client = JudgeClient(dataclasses.replace(llm_settings, concurrency=concurrency))

    async def many():
        return await asyncio.gather(*(ask(client, f"question {i}") for i in range(calls)))

    assert len(run(many())) == calls
    assert fake_openai.max_in_flight == concurrency


def test_client_serves_several_event_loops_in_sequence(fake_openai, llm_settings) -> None:
    client = JudgeClient(llm_settings)

    async def batch(tag: str):
        results = await asyncio.gather(ask(client, f"{tag} a"), ask(client, f"{tag} b"))
        await client.aclose()
        return results

    for tag in ("one", "two", "three"):
        assert len(run(batch(tag))) == 2
    assert client.stats.calls_made == 6


def test_usable_as_async_context_manager(fake_openai, llm_settings) -> None:
    async def use():
        async with JudgeClient(llm_settings) as client:
            return await ask(client)

    assert run(use()).text == "ok"


def test_missing_key_or_azure_version_is_a_configuration_error(tmp_path) -> None:
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        JudgeClient(LLMSettings(cache_dir=tmp_path))
    with pytest.raises(ConfigurationError, match="OPENAI_API_VERSION"):
        JudgeClient(
            LLMSettings(api_key="k" * 10, azure_endpoint="https://x.openai.azure.com", cache_dir=tmp_path)
        )


def test_an_endpoint_url_with_credentials_is_refused_before_any_call(fake_openai, llm_settings) -> None:
    """The HTTP client refused every call to such a URL: each was retried as a refused connection, then
    every judged metric of the run failed, instead of one clear error at start-up."""
    host = fake_openai.base_url.split("://", 1)[1]
    settings = dataclasses.replace(llm_settings, base_url=f"http://judge:s3cret-pw@{host}")
    with pytest.raises(ConfigurationError, match="must not carry credentials") as error:
        JudgeClient(settings)
    assert "s3cret-pw" not in str(error.value) and fake_openai.count() == 0


def test_azure_client_end_to_end(fake_openai, llm_settings) -> None:
    settings = dataclasses.replace(
        llm_settings,
        base_url=None,
        azure_endpoint=fake_openai.url,
        api_version="2024-10-21",
        model="judge-deploy",
    )
    fake_openai.enqueue("azure says hi")
    assert run(ask(JudgeClient(settings))).text == "azure says hi"
    record = fake_openai.requests[0]
    assert record.path == "/openai/deployments/judge-deploy/chat/completions" and record.authorized
