"""The loopback server speaks the OpenAI wire format to the real SDK, with scripted replies and faults."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import urllib.error
import urllib.request

import openai
import pytest

from pytest_graphrag_eval.testing import FakeOpenAIServer, Reply, bag_of_words_embedding

KEY = "sk-test-SECRET-fake-server-000111"


def sdk(server: FakeOpenAIServer, **kwargs) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0, **kwargs)


def post(server: FakeOpenAIServer, path: str, body: bytes, key: str | None = KEY) -> tuple[int, dict, bytes]:
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    request = urllib.request.Request(server.url + path, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (
        math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    )


def test_chat_completion_wire_format_through_the_sdk() -> None:
    with FakeOpenAIServer(chat_text="Paris is the capital.") as server:
        completion = sdk(server).chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "What is the capital of France?"}]
        )
    assert completion.id.startswith("chatcmpl-")
    assert completion.model == "gpt-4o-mini"
    assert completion.choices[0].message.content == "Paris is the capital."
    assert completion.choices[0].finish_reason == "stop"
    # words and punctuation: "What is the capital of France ?" / "Paris is the capital ."
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (7, 5)
    assert completion.usage.total_tokens == 12


def test_queue_then_handler_then_default() -> None:
    with FakeOpenAIServer(chat_text="default") as server:
        server.enqueue("first", Reply(content="second", prompt_tokens=100, completion_tokens=7))
        client = sdk(server)
        ask = lambda text: client.chat.completions.create(  # noqa: E731
            model="m", messages=[{"role": "user", "content": text}]
        )
        first, second = ask("a"), ask("b")
        server.set_chat_handler(lambda body: body["messages"][-1]["content"].upper())
        third = ask("shout")
        server.set_chat_handler(None)
        fourth = ask("c")
    assert [c.choices[0].message.content for c in (first, second, third, fourth)] == [
        "first",
        "second",
        "SHOUT",
        "default",
    ]
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (100, 7)


def test_embeddings_float_and_base64_agree_and_similar_texts_are_close() -> None:
    texts = ["the grid substation in Bergen", "in Bergen: the grid substation", "tomato soup recipe"]
    with FakeOpenAIServer() as server:
        client = sdk(server)
        as_base64 = client.embeddings.create(model="text-embedding-3-small", input=texts)  # SDK default
        as_float = client.embeddings.create(
            model="text-embedding-3-small", input=texts, encoding_format="float"
        )
        assert server.requests[0].body["encoding_format"] == "base64"
    vectors = [item.embedding for item in as_float.data]
    assert [item.index for item in as_float.data] == [0, 1, 2]
    for decoded, exact in zip((d.embedding for d in as_base64.data), vectors, strict=True):
        assert decoded == pytest.approx(exact, abs=1e-6)
    assert vectors[0] == pytest.approx(bag_of_words_embedding(texts[0]))
    assert cosine(vectors[0], vectors[1]) == pytest.approx(1.0)  # same bag of words
    assert cosine(vectors[0], vectors[2]) < 0.5
    assert as_float.usage.prompt_tokens == 14  # words and the colon


def test_scripted_embeddings_and_handler() -> None:
    with FakeOpenAIServer() as server:
        server.enqueue([[1.0, 0.0], [0.0, 1.0]], endpoint="embeddings")
        client = sdk(server)
        scripted = client.embeddings.create(model="e", input=["a", "b"], encoding_format="float")
        server.set_embedding_handler(lambda body: [[float(len(t))] for t in body["input"]])
        handled = client.embeddings.create(model="e", input=["abc"], encoding_format="float")
    assert [d.embedding for d in scripted.data] == [[1.0, 0.0], [0.0, 1.0]]
    assert handled.data[0].embedding == [3.0]


@pytest.mark.parametrize(
    ("reply", "error", "status"),
    [
        (Reply.rate_limited(retry_after=2), openai.RateLimitError, 429),
        (Reply.server_error(), openai.InternalServerError, 500),
        (Reply.server_error(503), openai.InternalServerError, 503),
        (Reply.bad_request("no such field"), openai.BadRequestError, 400),
    ],
)
def test_faults_reach_the_sdk_as_status_errors(reply: Reply, error: type, status: int) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(reply)
        with pytest.raises(error) as info:
            sdk(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    assert info.value.status_code == status
    if status == 429:
        assert info.value.response.headers["retry-after"] == "2"


def test_retry_after_ms_header() -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(Reply.rate_limited(retry_after=250, millis=True))
        status, headers, _ = post(server, "/v1/chat/completions", b'{"model": "m", "messages": []}')
    assert status == 429
    assert headers["retry-after-ms"] == "250"
    assert "retry-after" not in {name.lower() for name in headers}


def test_malformed_body_breaks_sdk_parsing() -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(Reply.malformed())
        with pytest.raises(json.JSONDecodeError):
            sdk(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])


def test_slow_reply_exceeds_the_client_timeout() -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(Reply.slow(3.0))
        with pytest.raises(openai.APITimeoutError):
            sdk(server, timeout=0.2).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "q"}]
            )
        server.enqueue("fast again")
        reply = sdk(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    assert reply.choices[0].message.content == "fast again"


def test_credentials_are_checked_but_never_recorded() -> None:
    with FakeOpenAIServer(expected_api_key=KEY) as server:
        sdk(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(
                base_url=server.base_url, api_key="sk-wrong-key-123456", max_retries=0
            ).embeddings.create(model="e", input="x")
        status, _, _ = post(server, "/v1/embeddings", b'{"model": "e", "input": "x"}', key=None)
        records = server.requests
    assert status == 401
    assert [r.authorized for r in records] == [True, False, False]
    assert KEY not in repr(records)
    assert "sk-wrong-key" not in repr(records)


def test_request_log_and_bad_requests() -> None:
    with FakeOpenAIServer() as server:
        assert post(server, "/v1/chat/completions", b"{not json")[0] == 400
        assert post(server, "/v1/unknown", b"{}")[0] == 404
        sdk(server).chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": "hi"}],
            response_format={"type": "json_object"},
        )
        records = server.requests
        assert server.count() == 3
        assert server.count("chat") == 2
    assert records[0].body is None
    assert records[1].endpoint == "unknown"
    assert records[2].model == "gpt-4o"
    assert records[2].body["response_format"] == {"type": "json_object"}
    assert all(r.finished is not None and r.finished >= r.started for r in records)


def test_handler_exception_becomes_a_500_and_is_recorded() -> None:
    def broken(body: dict) -> str:
        raise KeyError("oops")

    with FakeOpenAIServer() as server:
        server.set_chat_handler(broken)
        with pytest.raises(openai.InternalServerError):
            sdk(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
        assert server.handler_errors == ["KeyError: 'oops'"]


def test_azure_deployment_paths() -> None:
    with FakeOpenAIServer(chat_text="from azure") as server:
        client = openai.AzureOpenAI(
            azure_endpoint=server.url, api_key=KEY, api_version="2024-10-21", max_retries=0
        )
        reply = client.chat.completions.create(
            model="my-deployment", messages=[{"role": "user", "content": "q"}]
        )
        record = server.requests[0]
    assert reply.choices[0].message.content == "from azure"
    assert record.path == "/openai/deployments/my-deployment/chat/completions"
    assert record.query == {"api-version": ["2024-10-21"]}
    assert record.authorized


def test_many_concurrent_requests_are_served_in_parallel() -> None:
    async def burst(server: FakeOpenAIServer, n: int) -> list[str]:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)
        async with client:
            replies = await asyncio.gather(
                *(
                    client.chat.completions.create(model="m", messages=[{"role": "user", "content": str(i)}])
                    for i in range(n)
                )
            )
        return [r.choices[0].message.content for r in replies]

    with FakeOpenAIServer(latency=0.2) as server:
        server.set_chat_handler(lambda body: "echo " + body["messages"][0]["content"])
        texts = asyncio.run(burst(server, 40))
        assert server.max_in_flight >= 20  # the server answers concurrently, not one by one
    assert texts == [f"echo {i}" for i in range(40)]


def test_stop_interrupts_slow_replies_and_url_needs_a_started_server() -> None:
    server = FakeOpenAIServer()
    with pytest.raises(RuntimeError):
        _ = server.base_url
    server.start()
    server.enqueue(Reply.slow(30))
    client = sdk(server, timeout=0.3)
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    # stop() must not wait for the 30 s reply: a hang detector, not a time budget.
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    stopper.join(timeout=25)
    assert not stopper.is_alive(), "stop() waited for the slow reply"


def batch_lines(*contents: str) -> bytes:
    return "".join(
        json.dumps(
            {
                "custom_id": f"req-{index}",
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]},
            }
        )
        + "\n"
        for index, content in enumerate(contents)
    ).encode()


def test_batch_api_runs_lines_through_the_scripted_replies() -> None:
    with FakeOpenAIServer(chat_text="default") as server:
        server.batch_in_progress_polls = 2
        server.enqueue("first", Reply.bad_request("scripted refusal"))
        client = sdk(server)
        uploaded = client.files.create(file=("in.jsonl", batch_lines("a", "b", "c")), purpose="batch")
        batch = client.batches.create(
            input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        statuses = [client.batches.retrieve(batch.id).status for _ in range(3)]
        assert statuses == ["in_progress", "in_progress", "completed"]
        done = client.batches.retrieve(batch.id)
        assert (done.request_counts.total, done.request_counts.completed, done.request_counts.failed) == (
            3,
            2,
            1,
        )
        output = [json.loads(line) for line in client.files.content(done.output_file_id).text.splitlines()]
        texts = {
            line["custom_id"]: line["response"]["body"]["choices"][0]["message"]["content"] for line in output
        }
        assert texts == {"req-0": "first", "req-2": "default"}
        (error,) = [json.loads(line) for line in client.files.content(done.error_file_id).text.splitlines()]
        assert error["custom_id"] == "req-1" and error["response"]["status_code"] == 400
        assert (
            server.count("batches") == 1 and server.count("batch_status") == 4 and server.count("chat") == 0
        )


@pytest.mark.parametrize("outcome", ["failed", "expired", "cancel"])
def test_batch_outcomes_can_be_injected(outcome: str) -> None:
    with FakeOpenAIServer() as server:
        server.batch_in_progress_polls = 5
        server.batch_answered = 1
        if outcome != "cancel":
            server.batch_outcome = outcome
            server.batch_in_progress_polls = 0
        client = sdk(server)
        uploaded = client.files.create(file=("in.jsonl", batch_lines("a", "b")), purpose="batch")
        batch = client.batches.create(
            input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h"
        )
        if outcome == "cancel":
            client.batches.cancel(batch.id)
        done = client.batches.retrieve(batch.id)
        expected = {"failed": "failed", "expired": "expired", "cancel": "cancelled"}[outcome]
        assert done.status == expected
        if outcome == "failed":
            assert done.output_file_id is None and done.errors is not None and done.errors.data
        else:
            assert (done.request_counts.completed, done.request_counts.failed) == (1, 1)
            (error,) = [
                json.loads(line) for line in client.files.content(done.error_file_id).text.splitlines()
            ]
            assert error["custom_id"] == "req-1" and error["error"]["code"] == f"batch_{expected}"
