"""graphrag-eval's call forms: run_evaluation(reference, responses, config_file_path), its awaitable form,
and compute_aggregates(results, config_file_path), with a graphrag-eval config judged on the loopback server.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import TEST_API_KEY

from pytest_graphrag_eval import ConfigurationError, arun_evaluation, compute_aggregates, run_evaluation
from pytest_graphrag_eval.answers import llm_correctness, relevance
from pytest_graphrag_eval.answers.retrieval_judges import PRECISION_SYSTEM, RECALL_SYSTEM
from pytest_graphrag_eval.steps.scorer import StepsScorer
from pytest_graphrag_eval.testing import FakeOpenAIServer

RECORD = json.loads(
    (Path(__file__).parent / "data" / "graphrag_eval_configs" / "graphrag_eval_verdicts.json").read_text()
)
DOCUMENTS = [{"id": "d1", "text": "OSLO T1 is a transformer."}, {"id": "d2", "text": "Oslo is mild."}]
REFERENCE = [
    {
        "template_id": "transformers",
        "questions": [
            {
                "id": "q1",
                "question_text": "Which transformers are in OSLO?",
                "reference_answer": "OSLO T1 and OSLO T2.",
                "reference_steps": [
                    [{"name": "retrieval", "args": {"k": 2}, "output": json.dumps(DOCUMENTS[:1])}]
                ],
            },
            {"id": "q2", "question_text": "How many transformers has OSLO?", "reference_answer": "Two."},
        ],
    },
    {"template_id": "lines", "questions": [{"id": "q3", "question_text": "Which lines leave OSLO?"}]},
]
RESPONSES = {
    "q1": {
        "question_id": "q1",
        "actual_answer": "OSLO T1.",
        "actual_steps": [
            {
                "id": "s1",
                "name": "retrieval",
                "args": {"k": 2},
                "status": "success",
                "output": json.dumps(DOCUMENTS),
            }
        ],
    },
    "q2": {"question_id": "q2", "actual_answer": "Two transformers."},
    "q3": {"question_id": "q3", "error": "agent timed out"},
}
CORRECTNESS = {
    "reference_claims_count": 2,
    "actual_claims_count": 1,
    "matching_claims_count": 1,
    "reason": "r",
}


def judge_handler(body: dict[str, Any]) -> str:
    """Replies by task, recognised from the system message each judge sends."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    if system == llm_correctness.SYSTEM_MESSAGE:
        return json.dumps(CORRECTNESS)
    if system == relevance.SYSTEM_MESSAGE:
        return json.dumps({"question": "Which transformers are in OSLO?", "noncommittal": 0})
    if system == RECALL_SYSTEM:
        return json.dumps({"statements": [{"statement": "T1", "reason": "r", "attributed": 1}]})
    if system == PRECISION_SYSTEM:
        return json.dumps({"reason": "r", "useful": int("transformer" in user.split("<context>")[1])})
    assert "tone_score" in system, system
    return json.dumps({"tone_score": 0.8, "tone_reason": "neutral"})


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAIServer) -> Path:
    """A graphrag-eval config for the loopback server; the judge cache goes to the (temporary) cwd."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    lock = threading.Lock()

    def handler(body: dict[str, Any]) -> str:
        with lock:
            return judge_handler(body)

    fake_openai.set_chat_handler(handler)
    endpoint = {"provider": "openai", "base_url": fake_openai.base_url}
    config = {
        "llm": {
            "generation": {**endpoint, "model": "gpt-4o-mini", "api_key": TEST_API_KEY},
            "embedding": {**endpoint, "model": "text-embedding-3-small"},
        },
        "custom_evaluations": [
            {
                "name": "tone",
                "inputs": ["question", "actual_answer"],
                "instructions": "Judge whether the answer is neutral.",
                "outputs": {"tone_score": "0 to 1", "tone_reason": "why"},
            }
        ],
    }
    path = tmp_path / "eval_config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def check_results(results: list[dict[str, Any]]) -> None:
    q1, q2, q3 = results
    assert [result["status"] for result in results] == ["success", "success", "error"]
    assert q3["error"] == "agent timed out"
    for result in (q1, q2):
        assert (result["answer_recall"], result["answer_precision"]) == (0.5, 1.0)
        assert 0 < result["answer_relevance"] <= 1 + 1e-9
        assert (result["tone_score"], result["tone_reason"]) == (
            0.8,
            "neutral",
        )  # graphrag-eval's unprefixed keys
    assert q1["answer_relevance"] > 0.99  # the judge's generated question is q1's own
    step = q1["actual_steps"][0]
    assert (step["retrieval_answer_recall"], step["retrieval_answer_precision"]) == (1.0, 1.0)
    assert step["retrieval_context_recall"] == 1.0
    assert q1["retrieval_answer_f1"] == 1.0 and q1["steps_score"] == 1.0
    assert not any(key.startswith("retrieval_answer") for key in q2)  # no retrieval step


def test_positional_form_with_a_graphrag_eval_config(
    config_file: Path, fake_openai: FakeOpenAIServer
) -> None:
    results = run_evaluation(REFERENCE, RESPONSES, config_file)
    check_results(results)
    calls = fake_openai.count()
    assert calls > 0
    # graphrag-eval's quickstart passes the config by name; the cached judgments make this free
    check_results(run_evaluation(REFERENCE, RESPONSES, config_file_path=str(config_file)))
    assert fake_openai.count() == calls


def test_awaitable_form_for_async_callers(config_file: Path) -> None:
    async def main() -> list[dict[str, Any]]:
        return await arun_evaluation(REFERENCE, RESPONSES, config_file)

    check_results(asyncio.run(main()))


def test_sync_form_inside_an_event_loop_points_to_the_awaitable_one(config_file: Path) -> None:
    async def main() -> None:
        with pytest.raises(RuntimeError, match=r"use `await arun_evaluation\(\.\.\.\)`"):
            run_evaluation(REFERENCE, RESPONSES, config_file)

    asyncio.run(main())


def test_compute_aggregates_positional_and_by_name(config_file: Path) -> None:
    results = run_evaluation(REFERENCE, RESPONSES, config_file)
    aggregates = compute_aggregates(results, config_file)
    assert (
        compute_aggregates(results, config_file_path=config_file) == aggregates == compute_aggregates(results)
    )
    micro = aggregates["micro"]
    assert (micro["number_of_success_samples"], micro["number_of_error_samples"]) == (2, 1)
    assert micro["tone_score"]["mean"] == 0.8 and micro["answer_recall"]["mean"] == 0.5
    steps = aggregates["per_template"]["transformers"]["steps"]
    assert steps["retrieval_answer_recall"] == {
        "sum": 1.0,
        "mean": 1.0,
        "median": 1.0,
        "min": 1.0,
        "max": 1.0,
    }
    assert steps["total"] == {"retrieval": 1}


def test_a_bad_config_file_is_reported_by_both_functions(tmp_path: Path) -> None:
    path = tmp_path / "eval_config.yaml"
    path.write_text("custom_evaluations:\n  - name: tone\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=f"{path}: custom_evaluations"):
        run_evaluation(REFERENCE, RESPONSES, path)
    with pytest.raises(ConfigurationError, match=f"{path}: custom_evaluations"):
        compute_aggregates([], path)
    with pytest.raises(ConfigurationError, match="cannot read the answers config"):
        compute_aggregates([], tmp_path / "missing.yaml")


def test_without_llm_sections_no_judge_is_built(tmp_path: Path, fake_openai: FakeOpenAIServer) -> None:
    path = tmp_path / "eval_config.yaml"
    path.write_text("answer_correctness:\n  enabled: false\n", encoding="utf-8")
    results = run_evaluation(REFERENCE, RESPONSES, path)
    assert results[0]["steps_score"] == 1.0 and "answer_recall" not in results[0]
    assert results[1]["answer_token_f1"] > 0  # our offline answer metrics still run
    assert fake_openai.count() == 0


def test_scorers_and_a_config_file_exclude_each_other(config_file: Path) -> None:
    with pytest.raises(ConfigurationError, match="either scorers or a config file"):
        run_evaluation(REFERENCE, RESPONSES, config_file, scorers=[StepsScorer()])


def test_our_keyword_api_still_works() -> None:
    results = run_evaluation(REFERENCE, RESPONSES, steps_scope="all_groups", scorers=[StepsScorer()])
    assert results[0]["steps_score"] == 1.0 and "answer_recall" not in results[0]


@pytest.mark.parametrize(
    ("ours", "theirs"), [(run_evaluation, "run_evaluation"), (arun_evaluation, "run_evaluation")]
)
def test_parameters_line_up_with_graphrag_eval(ours: Any, theirs: str) -> None:
    """graphrag-eval 6.6.1's positional parameters (recorded) are ours, the config by the same name."""
    recorded = RECORD["api"][theirs]["parameters"]
    parameters = list(inspect.signature(ours).parameters.values())
    positional = [item for item in parameters if item.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert len(positional) == len(recorded)
    assert [item.default is inspect.Parameter.empty for item in positional] == [
        p["required"] for p in recorded
    ]
    assert positional[-1].name == recorded[-1]["name"] == "config_file_path"
    assert RECORD["api"][theirs]["coroutine"] is True and inspect.iscoroutinefunction(arun_evaluation)


def test_compute_aggregates_parameters_line_up_with_graphrag_eval() -> None:
    recorded = RECORD["api"]["compute_aggregates"]["parameters"]
    positional = list(inspect.signature(compute_aggregates).parameters.values())
    assert [item.default is inspect.Parameter.empty for item in positional] == [
        p["required"] for p in recorded
    ]
    assert positional[1].name == recorded[1]["name"] == "config_file_path"


def test_an_azure_config_reaches_the_deployment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_openai: FakeOpenAIServer
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", TEST_API_KEY)
    fake_openai.set_chat_handler(judge_handler)
    generation = {"provider": "azure", "model": "judge-deployment", "api_base": fake_openai.url}
    config = {"llm": {"generation": {**generation, "api_version": "2024-10-21"}}}
    path = tmp_path / "eval_config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    results = run_evaluation(REFERENCE, RESPONSES, path)
    assert results[1]["answer_recall"] == 0.5
    paths = {request.path for request in fake_openai.requests}
    assert any("/openai/deployments/judge-deployment/chat/completions" in item for item in paths), paths
