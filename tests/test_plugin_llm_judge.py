"""The plugin with an LLM judge, through the real SDK against the loopback server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses

from pytest_graphrag_eval.testing import FakeOpenAIServer

SECRET = "sk-test-PLUGIN-SECRET-4242"
REPLAY = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]
VERDICT = json.dumps(
    {
        "reference_claims_count": 2,
        "actual_claims_count": 2,
        "matching_claims_count": 1,
        "reason": "one of two",
    }
)


@pytest.fixture
def judged(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    server = FakeOpenAIServer(expected_api_key=SECRET, chat_text=VERDICT)
    with server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        write_corpus(pytester, corpus())
        write_responses(pytester, good_responses())
        yield pytester, server


def _all_output(pytester: pytest.Pytester, result: pytest.RunResult) -> str:
    files = [
        p for p in pytester.path.rglob("*") if p.is_file() and p.suffix in (".json", ".xml", ".jsonl", ".txt")
    ]
    return result.stdout.str() + result.stderr.str() + "".join(p.read_text(errors="replace") for p in files)


def test_llm_judge_scores_answers_and_cache_makes_rerun_free(judged) -> None:
    pytester, server = judged
    args = [*REPLAY, "--graphrag-judge", "llm", "--graphrag-report", "report.json"]
    first = pytester.runpytest(*args, "--graphrag-threshold", "answer_f1>=0.4")
    first.assert_outcomes(passed=3)
    calls = server.count("chat")
    assert calls == 3
    report = json.loads((pytester.path / "report.json").read_text())
    result = report["results"][0]
    assert result["answer_recall"] == 0.5 and result["answer_precision"] == 0.5 and result["answer_f1"] == 0.5
    assert result["answer_judge"].startswith("llm")
    assert report["aggregates"]["micro"]["answer_f1"]["mean"] == 0.5
    second = pytester.runpytest(*args)
    second.assert_outcomes(passed=3)
    assert server.count("chat") == calls, "the second run is served from the cache"
    third = pytester.runpytest(*args, "--graphrag-no-cache")
    third.assert_outcomes(passed=3)
    assert server.count("chat") == calls + 3


def test_judge_failure_is_a_metric_error_never_a_pass(judged) -> None:
    pytester, server = judged
    server.set_chat_handler(lambda body: "this is not JSON at all")
    result = pytester.runpytest(
        *REPLAY,
        "--graphrag-judge",
        "llm",
        "--graphrag-threshold",
        "answer_f1>=0.1",
        "--graphrag-gate",
        "answer_f1.mean>=0.5",
        "--junitxml",
        "junit.xml",
    )
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*answer_f1 was not computed*answer_eval_error*"])
    # The gate quotes the judge's failure, not the hint to configure a judge that is configured.
    result.stdout.fnmatch_lines(
        [
            "*micro:answer_f1.mean was not computed: "
            "3 of 3 answered questions have an error for it, the first answer_eval_error: *"
        ]
    )
    assert "--graphrag-judge" not in result.stdout.str().split("graphrag-eval summary")[-1]
    assert SECRET not in _all_output(pytester, result)


def test_api_key_never_appears_in_any_output(judged) -> None:
    pytester, _server = judged
    result = pytester.runpytest(
        *REPLAY,
        "--graphrag-judge",
        "llm",
        "--graphrag-report",
        "report.json",
        "--junitxml",
        "junit.xml",
        "--graphrag-threshold",
        "answer_f1>=0.9",
        "-rA",
    )
    result.assert_outcomes(failed=3)
    assert SECRET not in _all_output(pytester, result)
    assert not any(
        SECRET in p.read_text(errors="replace") for p in Path(pytester.path).rglob("*") if p.is_file()
    )


def test_unreachable_endpoint_fails_metrics_not_the_run(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    (pytester.path / "answers.yaml").write_text("output_mode: json_object\n", encoding="utf-8")
    result = pytester.runpytest(
        *REPLAY,
        "--graphrag-judge",
        "llm",
        "--graphrag-answers-config",
        "answers.yaml",
        "--graphrag-threshold",
        "steps_score>=1",
        "--graphrag-threshold",
        "answer_f1>=0.5",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*answer_f1 was not computed*"])
    assert "Traceback" not in result.stdout.str()
    assert SECRET not in _all_output(pytester, result)


def test_llm_judge_without_a_key_is_a_usage_error(pytester: pytest.Pytester, monkeypatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    result = pytester.runpytest(*REPLAY, "--graphrag-judge", "llm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*OPENAI_API_KEY*"])
