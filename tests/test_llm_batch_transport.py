"""The judge client is handed its batch transport: the client and the Batch API side meet only at
`llm/batch_transport.py`'s interfaces (real SDK, loopback server)."""

from __future__ import annotations

import asyncio
import dataclasses

import grimp
import pytest

from pytest_graphrag_eval.llm import JudgeClient, LLMError, LLMSettings
from pytest_graphrag_eval.llm.batch import JudgeBatches, judge_batches
from pytest_graphrag_eval.llm.batch_transport import NOT_IN_A_BATCH, BatchRequest, CallDeferred
from pytest_graphrag_eval.testing import FakeOpenAIServer, Reply

QUESTION = [{"role": "user", "content": "Which substations feed Bergen?"}]


@pytest.fixture
def batch_settings(llm_settings: LLMSettings) -> LLMSettings:
    return dataclasses.replace(llm_settings, batch=True)


def test_a_miss_goes_to_the_transport_then_the_batch_reply_is_served_from_the_cache(
    fake_openai: FakeOpenAIServer, batch_settings: LLMSettings
) -> None:
    fake_openai.enqueue(Reply(content="Sandvika and Fana.", prompt_tokens=100, completion_tokens=10))
    batches = judge_batches(batch_settings)
    assert isinstance(batches, JudgeBatches)
    client = JudgeClient(batch_settings, batches)
    with batches.collecting() as collected, pytest.raises(CallDeferred):
        asyncio.run(client.chat(QUESTION))
    assert [request.kind for request in collected.values()] == ["chat"]
    assert fake_openai.count("chat") == 0  # nothing sent directly

    records = asyncio.run(batches.send(client, collected.values()))

    assert [(r.status, r.requests, r.answered, r.failed) for r in records] == [("completed", 1, 1, 0)]
    assert (client.stats.batch_requests, client.stats.batch_failed) == (1, 0)
    result = asyncio.run(client.chat(QUESTION))
    assert (result.text, result.cached, result.input_tokens) == ("Sandvika and Fana.", True, 100)


def test_any_transport_will_do_and_its_reason_is_the_calls_error(batch_settings: LLMSettings) -> None:
    class Refusing:
        def __init__(self) -> None:
            self.seen: list[BatchRequest] = []

        def take(self, request: BatchRequest) -> str | None:
            self.seen.append(request)
            return "no reply from the judge batch: scripted"

    transport = Refusing()
    client = JudgeClient(batch_settings, transport)
    with pytest.raises(
        LLMError, match="chat call to model 'gpt-4o-mini': no reply from the judge batch: scripted"
    ):
        asyncio.run(client.chat(QUESTION))
    assert [request.body["messages"] for request in transport.seen] == [QUESTION]
    assert client.stats.failures == 1


def test_a_batch_judge_without_a_transport_fails_each_miss(batch_settings: LLMSettings) -> None:
    client = JudgeClient(batch_settings)
    with pytest.raises(LLMError) as caught:
        asyncio.run(client.chat(QUESTION))
    assert not isinstance(caught.value, CallDeferred)
    assert str(caught.value).endswith(NOT_IN_A_BATCH)


def test_the_client_and_the_batches_do_not_import_each_other() -> None:
    graph = grimp.build_graph("pytest_graphrag_eval")
    client, batch = "pytest_graphrag_eval.llm.client", "pytest_graphrag_eval.llm.batch"
    assert not graph.direct_import_exists(importer=client, imported=batch, as_packages=False)
    assert not graph.direct_import_exists(importer=batch, imported=client, as_packages=False)
    assert graph.direct_import_exists(importer=client, imported="pytest_graphrag_eval.llm.batch_transport")
