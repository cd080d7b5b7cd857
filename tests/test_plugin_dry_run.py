"""--graphrag-dry-run: the calls a run would make, estimated without making any."""

from __future__ import annotations

import json
import re

import pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses

from pytest_graphrag_eval.testing import FakeOpenAIServer

SECRET = "sk-test-DRY-4242"
REPLAY = [
    "--graphrag-corpus",
    "corpus.yaml",
    "--graphrag-responses",
    "responses.jsonl",
    "-p",
    "no:cacheprovider",
]
VERDICT = json.dumps(
    {
        "reference_claims_count": 2,
        "actual_claims_count": 2,
        "matching_claims_count": 1,
        "reason": "The actual answer names one of the two substations of the reference.",
    }
)
GENERATED = json.dumps({"question": "Which substations feed the names of set one?", "noncommittal": 0})
TOTAL = re.compile(r"^total\s+(\d+)\s+(\d+)\s+(\d+)-(\d+)\s+(\d+)-(\d+)\s+([\d.]+)-([\d.]+)$", re.MULTILINE)


@pytest.fixture
def judged(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    with FakeOpenAIServer(expected_api_key=SECRET, chat_text=VERDICT) as server:
        server.set_chat_handler(
            lambda body: GENERATED if "relevance" in json.dumps(body.get("response_format")) else VERDICT
        )
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        write_corpus(pytester, corpus())
        write_responses(pytester, good_responses())
        yield pytester, server


def totals(output: str) -> tuple[int, ...]:
    match = TOTAL.search(output)
    assert match, output
    return tuple(int(group) for group in match.groups()[:6])


def test_dry_run_range_contains_what_the_real_run_reports(judged) -> None:
    pytester, server = judged
    args = [*REPLAY, "--graphrag-judge", "llm", "--graphrag-relevance"]
    dry = pytester.runpytest(*args, "--graphrag-dry-run")
    assert dry.ret == pytest.ExitCode.OK
    assert server.connections == 0 and server.count() == 0
    output = dry.stdout.str()
    assert "graphrag-eval dry run (no call was made)" in output
    assert "3 questions; no agent calls (recorded responses are replayed)" in output
    dry.stdout.re_match_lines(
        [
            r"^answer_correctness\s+gpt-4o-mini\s+3\s+0\s.*",
            r"^embeddings\s+text-embedding-3-small\s+3\s+0\s.*",
        ]
    )
    assert "approximated as words and punctuation marks" in output
    calls, cached, input_low, input_high, output_low, output_high = totals(output)
    assert (calls, cached) == (3 + 9 + 3, 0)  # correctness, 3 generated questions each, 1 embedding each

    real = pytester.runpytest(*args, "--graphrag-report", "report.json")
    real.assert_outcomes(passed=3)
    assert server.count() == calls
    spend = json.loads((pytester.path / "report.json").read_text())["judge_spend"]
    assert input_low <= spend["input_tokens"] <= input_high
    assert output_low <= spend["output_tokens"] <= output_high

    again = pytester.runpytest(*args, "--graphrag-dry-run")  # everything is cached now
    assert totals(again.stdout.str())[:2] == (0, calls)
    assert server.count() == calls


def test_dry_run_of_a_live_agent_asks_no_agent(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    pytester.makeconftest(
        """
        def pytest_graphrag_respond(question, config):
            raise AssertionError("a dry run must not call the agent")
        """
    )
    result = pytester.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-dry-run", "--graphrag-agent-repeats", "2"
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["3 questions; 6 agent calls*", "no judge calls: no LLM judge is configured"])
    assert "a dry run must not call the agent" not in result.stdout.str()


def test_dry_run_needs_no_api_key(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    result = pytester.runpytest(*REPLAY, "--graphrag-judge", "llm", "--graphrag-dry-run")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.re_match_lines([r"^total\s+3\s+0\s.*"])
