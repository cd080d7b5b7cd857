"""graphrag-eval custom evaluations and LLM options at work: unprefixed keys, untyped outputs, reference
and actual steps filtered by name and keys, temperature and max_tokens in the requests."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from typing import Any

import pytest

from pytest_graphrag_eval import compute_aggregates
from pytest_graphrag_eval.answers import AnswerSettings
from pytest_graphrag_eval.answers.config_file import translate
from pytest_graphrag_eval.evaluation import arun_evaluation
from pytest_graphrag_eval.llm import JudgeClient, LLMSettings
from pytest_graphrag_eval.scorer_factory import build_scorers
from pytest_graphrag_eval.testing import FakeOpenAIServer

QUERY_OUTPUT = {"head": {"vars": ["t"]}, "results": {"bindings": [{"t": {"type": "literal", "value": "T1"}}]}}
CORPUS = [
    {
        "template_id": "t",
        "questions": [
            {
                "id": "q1",
                "question_text": "Which transformers are in OSLO?",
                "reference_answer": "OSLO T1",
                "reference_steps": [
                    [
                        {
                            "name": "sparql_query",
                            "args": {"query": "SELECT REF"},
                            "output": json.dumps(QUERY_OUTPUT),
                        }
                    ]
                ],
            }
        ],
    }
]
RESPONSES = {
    "q1": {
        "actual_answer": "OSLO T1.",
        "actual_steps": [
            {"id": "a", "name": "autocomplete_search", "status": "success", "output": "OSLO"},
            {
                "id": "b",
                "name": "sparql_query",
                "args": {"query": "SELECT ACTUAL"},
                "status": "success",
                "output": json.dumps(QUERY_OUTPUT),
            },
        ],
    }
}
CONFIG = {
    "llm": {
        "generation": {"provider": "openai", "model": "gpt-4o-mini", "temperature": 0.3, "max_tokens": 300}
    },
    "answer_correctness": {"enabled": False},
    "custom_evaluations": [
        {
            "name": "query_check",
            "inputs": ["question", "reference_steps", "actual_steps"],
            "steps_name": "sparql_query",
            "steps_keys": ["output"],
            "instructions": "Do the actual query results match the reference ones?",
            "outputs": {"query_match": "1 if they match, else 0", "query_reason": "why"},
        }
    ],
}


def evaluate(fake_openai: FakeOpenAIServer, llm_settings: LLMSettings, *replies: str) -> dict[str, Any]:
    """Score q1 with CONFIG's custom evaluation, the judge serving `replies` in order."""
    translated = translate(CONFIG, "eval.yaml")
    answers = AnswerSettings.from_mapping(translated.answers, source="eval.yaml")
    settings = dataclasses.replace(llm_settings, max_tokens=translated.llm["max_tokens"])
    source = iter(replies)
    lock = threading.Lock()

    def handler(body: dict[str, Any]) -> str:
        with lock:
            return next(source)

    async def main() -> list[dict[str, Any]]:
        async with JudgeClient(settings) as client:
            return await arun_evaluation(CORPUS, RESPONSES, scorers=build_scorers(answers, client))

    fake_openai.set_chat_handler(handler)
    return asyncio.run(main())[0]


def test_custom_evaluation_keys_prompt_and_options(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    result = evaluate(fake_openai, llm_settings, json.dumps({"query_match": 1, "query_reason": "same rows"}))
    assert (result["query_match"], result["query_reason"]) == (1, "same rows")
    assert result["query_check_judge"] == "llm:gpt-4o-mini"
    assert "answer_recall" not in result  # answer_correctness switched off
    (request,) = [r.body for r in fake_openai.requests]
    assert (request["temperature"], request["max_tokens"]) == (0.3, 300)
    prompt = request["messages"][1]["content"]
    assert prompt.startswith("Do the actual query results match the reference ones?\n\n<question>")
    assert prompt.index("<reference_steps>") < prompt.index("<steps>")
    # only the sparql_query steps, only their output, shown as JSON rather than an escaped string
    assert "SELECT" not in prompt and "OSLO\n" not in prompt.split("<steps>")[1]
    assert prompt.count('"value": "T1"') == 2
    schema = request["response_format"]["json_schema"]
    assert schema["name"] == "query_check"
    assert schema["schema"]["properties"]["query_match"] == {"type": ["number", "string", "boolean"]}
    assert "- query_match: a number or a text, 1 if they match, else 0" in request["messages"][0]["content"]


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ('{"query_match": 0.5, "query_reason": "half"}', 0.5),
        ('{"query_match": "yes", "query_reason": "r"}', "yes"),
    ],
)
def test_untyped_outputs_keep_the_json_type(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings, reply: str, value: Any
) -> None:
    assert evaluate(fake_openai, llm_settings, reply)["query_match"] == value


def test_a_structured_value_is_rejected_then_an_error(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    bad = json.dumps({"query_match": [1], "query_reason": "r"})
    result = evaluate(fake_openai, llm_settings, bad, bad)
    assert result["query_check_error"] == (
        "invalid judge reply after one retry: the field 'query_match' must be a number or a text, got [1]"
    )
    assert "query_match" not in result


def test_boolean_outputs_are_kept_but_not_aggregated(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    result = evaluate(fake_openai, llm_settings, json.dumps({"query_match": True, "query_reason": "same"}))
    assert result["query_match"] is True
    assert "query_match" not in compute_aggregates([result])["micro"]


def test_inline_correctness_prompt_is_the_user_message_with_data_blocks(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings
) -> None:
    prompt = "Compare the answers to {question}.\nReference: {reference_answer}\nCandidate: {actual_answer}\n"
    config = {"llm": CONFIG["llm"], "answer_correctness": {"prompt": prompt}}
    answers = AnswerSettings.from_mapping(translate(config, "eval.yaml").answers, source="eval.yaml")
    verdict = {
        "reference_claims_count": 1,
        "actual_claims_count": 1,
        "matching_claims_count": 1,
        "reason": "ok",
    }
    fake_openai.set_chat_handler(lambda body: json.dumps(verdict))

    async def main() -> list[dict[str, Any]]:
        async with JudgeClient(llm_settings) as client:
            return await arun_evaluation(CORPUS, RESPONSES, scorers=build_scorers(answers, client))

    assert asyncio.run(main())[0]["answer_f1"] == 1.0
    (request,) = [r.body for r in fake_openai.requests]
    user = request["messages"][1]["content"]
    assert user.startswith("Compare the answers to <question>\nWhich transformers are in OSLO?\n</question>.")
    assert "Candidate: <actual_answer>\nOSLO T1.\n</actual_answer>" in user
    assert request["temperature"] == 0.3


@pytest.mark.parametrize("number", ["1" + "0" * 400, "1e400", "NaN"])
def test_a_number_no_float_holds_is_rejected_then_an_error(
    fake_openai: FakeOpenAIServer, llm_settings: LLMSettings, number: str
) -> None:
    """JSON reads 401 digits as an int (no float holds it) and 1e400 as infinity: neither is a score."""
    bad = '{"query_match": ' + number + ', "query_reason": "r"}'
    result = evaluate(fake_openai, llm_settings, bad, bad)
    assert result["query_check_error"].startswith(
        "invalid judge reply after one retry: the field 'query_match' must be a number or a text, got "
    )
    assert "query_match" not in result
    assert "query_match" not in compute_aggregates([result])["micro"]
