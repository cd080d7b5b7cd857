"""A refused judge call reaches its question's result as a value: the failed call names its refusal,
the metric's outcome carries it, and the evaluation writes the most telling one as `judge_refusal`."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Coroutine
from typing import Any

import pytest

from pytest_graphrag_eval.answers import AnswerSettings
from pytest_graphrag_eval.evaluation import arun_evaluation
from pytest_graphrag_eval.llm import ChatResult, EmbeddingResult, JudgeClient, LLMSettings
from pytest_graphrag_eval.llm.errors import CallRefused
from pytest_graphrag_eval.llm.judge import Usage
from pytest_graphrag_eval.report_model import REFUSAL_KEY, Refusal
from pytest_graphrag_eval.scorer_factory import build_scorers
from pytest_graphrag_eval.testing import FakeOpenAIServer, Reply

CORPUS = [
    {
        "template_id": "zones",
        "questions": [
            {"id": f"q{n}", "question_text": f"Which zone is substation S{n} in?", "reference_answer": "NO1"}
            for n in (1, 2)
        ],
    }
]
RESPONSES = {"q1": {"actual_answer": "NO1."}, "q2": {"actual_answer": "NO2."}}
VERDICT = json.dumps(
    {"reference_claims_count": 1, "actual_claims_count": 1, "matching_claims_count": 1, "reason": "same"}
)


class OneWorkerJudge:
    """A judge whose calls all run on one worker task, started by the first call (as a user's
    rate-limiting or logging wrapper may run them): inside the first question's scoring."""

    def __init__(self, client: JudgeClient) -> None:
        self.client = client
        self._queue: asyncio.Queue[tuple[Coroutine[Any, Any, Any], asyncio.Future[Any]]] | None = None
        self._worker: asyncio.Task[None] | None = None

    @property
    def settings(self) -> LLMSettings:
        return self.client.settings

    async def chat(self, messages: list[dict[str, str]], **options: Any) -> ChatResult:
        result: ChatResult = await self._on_worker(self.client.chat(messages, **options))
        return result

    async def embed(self, texts: list[str], *, model: str | None = None) -> EmbeddingResult:
        result: EmbeddingResult = await self._on_worker(self.client.embed(texts, model=model))
        return result

    async def _on_worker(self, call: Coroutine[Any, Any, Any]) -> Any:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._worker = asyncio.create_task(self._work(self._queue))
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self._queue.put((call, done))
        return await done

    @staticmethod
    async def _work(queue: asyncio.Queue[tuple[Coroutine[Any, Any, Any], asyncio.Future[Any]]]) -> None:
        while True:
            call, done = await queue.get()
            try:
                done.set_result(await call)
            except Exception as error:
                done.set_exception(error)


def score(judge: Any, responses: dict[str, Any]) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        scorers = build_scorers(AnswerSettings(judge="llm"), judge)
        return await arun_evaluation(CORPUS, responses, scorers=scorers)

    return asyncio.run(run())


@pytest.fixture
def cache_only(fake_openai: FakeOpenAIServer, llm_settings: LLMSettings) -> LLMSettings:
    """A cache-only judge whose cache holds q1's verdict and not q2's."""
    fake_openai.set_chat_handler(lambda body: Reply(content=VERDICT, prompt_tokens=50, completion_tokens=20))
    (q1, _) = score(JudgeClient(llm_settings), {"q1": RESPONSES["q1"]})
    assert q1["answer_f1"] == 1.0
    return dataclasses.replace(llm_settings, cache_only=True, api_key=None)


def test_questions_scored_at_once_through_one_worker_each_get_their_own_refusal(
    cache_only: LLMSettings,
) -> None:
    # q1 calls first, so the worker task is started inside q1's scoring; q2's call is the one refused.
    q1, q2 = score(OneWorkerJudge(JudgeClient(cache_only)), RESPONSES)
    assert q1["answer_f1"] == 1.0 and REFUSAL_KEY not in q1
    assert "cache-only" in q2["answer_eval_error"]
    assert q2[REFUSAL_KEY] == "cache_miss" and list(q2)[-1] == REFUSAL_KEY


def test_a_refusal_outside_any_scoring_leaves_nothing_behind(cache_only: LLMSettings) -> None:
    client = JudgeClient(cache_only)
    with pytest.raises(CallRefused) as refused:
        asyncio.run(client.chat([{"role": "user", "content": "never cached"}]))
    assert refused.value.reason is Refusal.CACHE_MISS
    q1, _ = score(client, {"q1": RESPONSES["q1"]})
    assert q1["answer_f1"] == 1.0 and REFUSAL_KEY not in q1


def test_the_most_telling_refusal_of_a_question_wins() -> None:
    usage, other = Usage(), Usage()
    usage.add_failure(CallRefused("no batch reply", reason=Refusal.BATCH))
    other.add_failure(CallRefused("cache miss", reason=Refusal.CACHE_MISS))
    assert usage.refusal_keys() == {REFUSAL_KEY: "batch"}
    usage.add(other)
    assert usage.refusal_keys() == {REFUSAL_KEY: "cache_miss"}
    usage.add_failure(CallRefused("budget", reason=Refusal.BUDGET))
    assert usage.refusal_keys() == {REFUSAL_KEY: "budget"}
    assert Usage().refusal_keys() == {}
