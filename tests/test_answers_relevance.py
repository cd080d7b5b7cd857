"""RAGAS answer relevance: arithmetic, noncommittal rule, the native judge and the ragas backend agreeing."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
import statistics
import threading
from collections.abc import Callable
from typing import Any

import pytest

from pytest_graphrag_eval.answers.metric import AnswerInputs, MetricOutcome
from pytest_graphrag_eval.answers.relevance import (
    NativeRelevance,
    cosine,
    parse_generated_question,
    relevance_score,
)
from pytest_graphrag_eval.answers.scorers import evaluate_repeated
from pytest_graphrag_eval.llm import JudgeClient, LLMSettings
from pytest_graphrag_eval.llm.replies import InvalidReply
from pytest_graphrag_eval.testing import FakeOpenAIServer, Reply, bag_of_words_embedding

QUESTION = "Which transformers are located in substation OSLO?"
ANSWER = "OSLO T1 and OSLO T2 are the transformers in substation OSLO."
INPUTS = AnswerInputs(QUESTION, None, ANSWER)
GENERATED = [
    ("Which transformers are in substation OSLO?", 0),
    ("What are the transformers of OSLO?", 0),
    ("Where is OSLO T1?", 1),
]


def generation(question: str, noncommittal: int) -> str:
    return json.dumps({"question": question, "noncommittal": noncommittal})


def cycling(replies: list[str]) -> Callable[[dict[str, Any]], str]:
    """A thread-safe chat handler serving `replies` round-robin (concurrent requests are identical)."""
    lock = threading.Lock()
    source = itertools.cycle(replies)

    def handler(body: dict[str, Any]) -> str:
        with lock:
            return next(source)

    return handler


def expected_score(generated: list[tuple[str, int]]) -> float:
    original = bag_of_words_embedding(QUESTION)
    if all(flag for _, flag in generated):
        return 0.0
    return statistics.fmean(cosine(original, bag_of_words_embedding(text)) for text, _ in generated)


def native(settings: LLMSettings, inputs: AnswerInputs = INPUTS, repeats: int = 1) -> MetricOutcome:
    async def run() -> MetricOutcome:
        async with JudgeClient(settings) as client:
            metric = NativeRelevance(client, "gpt-4o-mini", "text-embedding-3-small", questions=3)
            return await evaluate_repeated(metric, inputs, repeats)

    return asyncio.run(run())


def test_cosine() -> None:
    assert cosine([1, 0], [0, 2]) == 0.0
    assert cosine([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert cosine([1, 1], [-1, -1]) == pytest.approx(-1.0)
    assert cosine([3, 4], [4, 3]) == pytest.approx(24 / 25)
    with pytest.raises(ValueError, match="zero length"):
        cosine([0, 0], [1, 1])
    with pytest.raises(ValueError, match="different sizes"):
        cosine([1, 0], [1, 0, 0])


def test_score_is_mean_cosine_and_zero_only_when_all_noncommittal() -> None:
    original = [1.0, 0.0]
    generated = [[1.0, 0.0], [0.0, 1.0], [3.0, 4.0]]
    mean = (1.0 + 0.0 + 0.6) / 3
    assert relevance_score(original, generated, [False, False, False]) == pytest.approx(mean)
    # ragas rule: one evasive generation among several does not zero the score ...
    assert relevance_score(original, generated, [True, False, True]) == pytest.approx(mean)
    # ... every generation flagging the answer noncommittal does.
    assert relevance_score(original, generated, [True, True, True]) == 0.0


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (json.dumps({"question": " ", "noncommittal": 0}), "'question' must be a non-empty text"),
        (json.dumps({"question": "Q?"}), "'noncommittal' is missing"),
        (json.dumps({"question": "Q?", "noncommittal": "no"}), "'noncommittal' must be 0 or 1"),
    ],
)
def test_generation_replies_are_validated(reply: str, problem: str) -> None:
    with pytest.raises(InvalidReply, match=re.escape(problem)):
        parse_generated_question(reply)
    assert parse_generated_question(json.dumps({"question": "Q?", "noncommittal": True})).noncommittal is True


def test_native_relevance_through_the_server(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    fake_openai.latency = 0.1
    fake_openai.set_chat_handler(cycling([generation(*item) for item in GENERATED]))
    outcome = native(llm_settings)
    assert outcome.keys["answer_relevance"] == pytest.approx(expected_score(GENERATED), abs=1e-6)
    assert outcome.keys["answer_relevance_judge"] == "llm:gpt-4o-mini+text-embedding-3-small"
    assert (
        outcome.keys["answer_relevance_cost"] == pytest.approx(outcome.usage.cost_usd)
        and outcome.usage.cost_usd > 0
    )
    chats = [request for request in fake_openai.requests if request.endpoint == "chat"]
    embeddings = [request for request in fake_openai.requests if request.endpoint == "embeddings"]
    assert len(chats) == 3 and len(embeddings) == 1
    assert fake_openai.max_in_flight == 3  # the three generations ran concurrently
    assert embeddings[0].body["input"][0] == QUESTION
    assert sorted(embeddings[0].body["input"][1:]) == sorted(text for text, _ in GENERATED)
    body = chats[0].body
    assert body["temperature"] == 0.3
    assert f"<actual_answer>\n{ANSWER}\n</actual_answer>" == body["messages"][1]["content"]


def test_all_noncommittal_gives_zero(fake_openai: FakeOpenAIServer, llm_settings: LLMSettings) -> None:
    fake_openai.set_chat_handler(cycling([generation("What is it?", 1)]))
    assert native(llm_settings, AnswerInputs(QUESTION, None, "I don't know.")).keys["answer_relevance"] == 0.0


def test_invalid_generation_twice_is_relevance_error(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    fake_openai.set_chat_handler(cycling([generation("Which transformers?", 2)]))
    outcome = native(llm_settings)
    assert "answer_relevance" not in outcome.keys
    assert outcome.keys["answer_relevance_error"].startswith("invalid judge reply after one retry: ")
    assert outcome.keys["answer_relevance_error"].endswith("the field 'noncommittal' must be 0 or 1, got 2")
    assert outcome.keys["answer_relevance_cost"] > 0
    assert fake_openai.count("embeddings") == 0


def test_failed_embedding_call_is_relevance_error(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    fake_openai.set_chat_handler(cycling([generation("Which transformers?", 0)]))
    fake_openai.enqueue(*[Reply.bad_request("input too long")], endpoint="embeddings")
    outcome = native(llm_settings)
    assert outcome.keys["answer_relevance_error"].startswith("embedding call failed: embeddings call")
    assert "input too long" in outcome.keys["answer_relevance_error"]


def test_blank_answer_is_an_error_not_a_low_score(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    outcome = native(llm_settings, AnswerInputs(QUESTION, None, "   "))
    assert outcome.keys["answer_relevance_error"] == "the actual answer is empty"
    assert fake_openai.count() == 0


def test_second_run_is_served_from_the_cache(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    fake_openai.set_chat_handler(cycling([generation(*item) for item in GENERATED]))
    first = native(llm_settings)
    calls = fake_openai.count()
    second = native(llm_settings)
    assert fake_openai.count() == calls == 4
    assert second.keys == first.keys


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # instructor, inside ragas
def test_ragas_backend_gives_the_same_score_for_the_same_replies(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    pytest.importorskip("ragas.metrics.collections", exc_type=ImportError)
    from pytest_graphrag_eval.answers.ragas_relevance import RagasRelevance

    async def run_ragas() -> MetricOutcome:
        metric = RagasRelevance(llm_settings, "gpt-4o-mini", "text-embedding-3-small", questions=3)
        return await evaluate_repeated(metric, INPUTS, 1)

    for generated in (GENERATED, [(text, 1) for text, _ in GENERATED]):
        replies = [generation(*item) for item in generated]
        fake_openai.set_chat_handler(cycling(replies))
        ours = native(llm_settings.__class__(**{**vars(llm_settings), "use_cache": False}))
        fake_openai.set_chat_handler(cycling(replies))
        theirs = asyncio.run(run_ragas())
        assert theirs.keys["answer_relevance_judge"] == "ragas:gpt-4o-mini+text-embedding-3-small"
        assert theirs.keys["answer_relevance"] == pytest.approx(ours.keys["answer_relevance"], abs=1e-6)
        assert theirs.keys["answer_relevance"] == pytest.approx(expected_score(generated), abs=1e-6)
        assert theirs.keys["answer_relevance_cost"] > 0
    assert not math.isnan(theirs.keys["answer_relevance"])
