"""The plugin reading a graphrag-eval 6.x evaluation config through --graphrag-answers-config."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import yaml
from plugin_support import corpus, good_responses, write_corpus, write_responses

from pytest_graphrag_eval.answers import llm_correctness
from pytest_graphrag_eval.testing import FakeOpenAIServer

SECRET = "sk-test-GE-CONFIG-SECRET-5151"
REPLAY = [
    "--graphrag-corpus",
    "corpus.yaml",
    "--graphrag-responses",
    "responses.jsonl",
    "-p",
    "no:cacheprovider",
]
CONFIG = {
    "llm": {"generation": {"provider": "openai", "model": "gpt-4o-mini", "temperature": 0.0}},
    "custom_evaluations": [
        {
            "name": "tone",
            "inputs": ["question", "actual_answer"],
            "instructions": "Is the answer neutral?",
            "outputs": {"tone_score": "0 to 1"},
        }
    ],
}


def handler() -> Any:
    lock = threading.Lock()

    def reply(body: dict[str, Any]) -> str:
        with lock:
            if body["messages"][0]["content"] == llm_correctness.SYSTEM_MESSAGE:
                counts = {"reference_claims_count": 2, "actual_claims_count": 2, "matching_claims_count": 2}
                return json.dumps({**counts, "reason": "all match"})
            return json.dumps({"tone_score": 0.9})

    return reply


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    with FakeOpenAIServer(expected_api_key=SECRET) as server:
        server.set_chat_handler(handler())
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        write_corpus(pytester, corpus())
        write_responses(pytester, good_responses())
        yield pytester, server


def write_config(pytester: pytest.Pytester, config: dict[str, Any]) -> None:
    (pytester.path / "eval_config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def test_graphrag_eval_config_runs_unchanged(project) -> None:
    pytester, server = project
    write_config(pytester, CONFIG)
    result = pytester.runpytest(
        *REPLAY,
        "--graphrag-answers-config",
        "eval_config.yaml",
        "--graphrag-threshold",
        "answer_f1>=0.9",
        "--graphrag-threshold",
        "tone_score>=0.8",
        "--graphrag-report",
        "report.json",
    )
    result.assert_outcomes(passed=3)
    report = json.loads((pytester.path / "report.json").read_text())
    first = report["results"][0]
    assert (first["answer_f1"], first["tone_score"]) == (1.0, 0.9)
    assert report["aggregates"]["micro"]["tone_score"]["mean"] == 0.9
    assert server.count("chat") == 6  # correctness and tone for three questions; no retrieval steps


def test_options_override_the_config(project) -> None:
    pytester, server = project
    write_config(pytester, CONFIG)
    result = pytester.runpytest(
        *REPLAY, "--graphrag-answers-config", "eval_config.yaml", "--graphrag-judge", "lexical"
    )
    result.assert_outcomes(passed=3)
    assert server.count("chat") == 3  # only the custom evaluation is judged by the LLM


def test_a_bad_graphrag_eval_config_is_a_usage_error(project) -> None:
    pytester, _ = project
    write_config(pytester, {"llm": {"generation": {"provider": "openai"}}})
    result = pytester.runpytest(*REPLAY, "--graphrag-answers-config", "eval_config.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*eval_config.yaml: llm.generation.model: required*"])
    assert "Traceback" not in result.stderr.str()


def test_ignored_keys_are_reported(project) -> None:
    pytester, _ = project
    write_config(pytester, {**CONFIG, "llm": {**CONFIG["llm"], "cache": True}})
    # Issued as a pytest config-time warning: in the run's warnings summary, not this suite's.
    result = pytester.runpytest(*REPLAY, "--graphrag-answers-config", "eval_config.yaml", "-W", "always")
    result.assert_outcomes(passed=3)
    assert "llm.cache (graphrag-eval reads only generation and embedding)" in result.stdout.str()
