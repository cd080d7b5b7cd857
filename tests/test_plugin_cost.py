"""Cost control of a judged run: cache-only mode and budgets, through the real SDK on loopback."""

from __future__ import annotations

import json
import re

import pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses

from pytest_graphrag_eval.llm.limits import CACHE_MISS
from pytest_graphrag_eval.report.judge_spend import (
    add_process_stats,
    cache_only_incomplete,
    merge_spend,
    spend_section,
)
from pytest_graphrag_eval.testing import FakeOpenAIServer

SECRET = "sk-test-COST-4242"
JUDGED = [
    "--graphrag-corpus",
    "corpus.yaml",
    "--graphrag-responses",
    "responses.jsonl",
    "--graphrag-judge",
    "llm",
    "--graphrag-report",
    "report.json",
    "-p",
    "no:cacheprovider",
]
VERDICT = json.dumps(
    {"reference_claims_count": 2, "actual_claims_count": 2, "matching_claims_count": 2, "reason": "all"}
)


@pytest.fixture
def judged(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    with FakeOpenAIServer(expected_api_key=SECRET, chat_text=VERDICT) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        write_corpus(pytester, corpus())
        write_responses(pytester, good_responses())
        yield pytester, server


def report(pytester: pytest.Pytester, name: str = "report.json") -> dict:
    return json.loads((pytester.path / name).read_text(encoding="utf-8"))


def test_cache_only_run_is_served_from_the_cache_and_connects_nowhere(judged, monkeypatch) -> None:
    pytester, server = judged
    pytester.runpytest(*JUDGED).assert_outcomes(passed=3)
    warm = report(pytester)
    before = server.connections
    monkeypatch.delenv("OPENAI_API_KEY")  # an offline CI job has no key
    offline = pytester.runpytest(*JUDGED, "--graphrag-cache-only")
    offline.assert_outcomes(passed=3)
    assert server.connections == before, "a cache-only run opens no connection"
    again = report(pytester)
    assert [r["answer_f1"] for r in again["results"]] == [r["answer_f1"] for r in warm["results"]]
    assert again["judge_spend"]["cache_hits"] == 3 and again["judge_spend"]["requests"] == 0
    assert again["judge_spend"]["cache_miss_questions"] == 0


def test_cache_only_miss_is_not_evaluated_and_fails_the_run(judged) -> None:
    pytester, server = judged
    pytester.runpytest(*JUDGED).assert_outcomes(passed=3)
    responses = good_responses()
    responses[1]["actual_answer"] = "An answer the judge never saw."  # q2's judge call is not cached
    write_responses(pytester, responses)
    before = server.connections
    result = pytester.runpytest(*JUDGED, "--graphrag-cache-only", "--graphrag-threshold", "answer_f1>=0.5")
    result.assert_outcomes(passed=2, skipped=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert server.connections == before
    data = report(pytester)
    [key] = data["judge_spend"]["cache_miss_keys"]
    result.stdout.fnmatch_lines(
        [
            "*cache-only: 1 questions not evaluated, their judge calls are missing from the cache: q2*",
            f"*cache-only: 1 missing cache keys (all in the JSON report's judge_spend.*): {key}*",
            "*graphrag-eval: cache-only run incomplete: 1 questions not evaluated*so this run fails*",
        ]
    )
    q2 = next(r for r in data["results"] if r["question_id"] == "q2")
    assert q2["outcome"] == "not_evaluated" and q2["thresholds"] == []
    assert "this run is cache-only" in q2["answer_eval_error"] and key in q2["answer_eval_error"]
    assert data["judge_spend"]["cache_miss_ids"] == ["q2"] and data["judge_spend"]["not_evaluated"] == 1
    assert data["aggregates"]["micro"]["number_of_not_evaluated_samples"] == 1


def test_cache_only_on_an_empty_cache_evaluates_nothing_and_is_red_without_any_threshold(judged) -> None:
    """No threshold on a judged metric: each question used to pass on a judge error, exit 0."""
    pytester, server = judged
    result = pytester.runpytest(*JUDGED, "--graphrag-cache-only", "--graphrag-markdown", "summary.md")
    result.assert_outcomes(skipped=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED and server.count() == 0
    data = report(pytester)
    spend = data["judge_spend"]
    assert [r["outcome"] for r in data["results"]] == ["not_evaluated"] * 3
    assert spend["cache_miss_ids"] == ["q1", "q2", "q3"] and len(spend["cache_miss_keys"]) == 3
    for key in spend["cache_miss_keys"]:  # each names the entry a warm run stores
        assert re.fullmatch(r"[0-9a-f]{64}", key)
    result.stdout.fnmatch_lines(["*cache-only: 3 missing cache keys*", "*cache-only run incomplete*"])
    markdown = (pytester.path / "summary.md").read_text(encoding="utf-8")
    assert "3 missing cache keys" in markdown and "questions not evaluated" in markdown
    pytester.runpytest(*JUDGED).assert_outcomes(passed=3)  # the warm run stores exactly those entries
    stored = {path.stem for path in (pytester.path / ".graphrag-cache").rglob("*.json")}
    assert set(spend["cache_miss_keys"]) <= stored


def test_cache_only_and_no_cache_together_is_a_usage_error(judged) -> None:
    pytester, _server = judged
    result = pytester.runpytest(*JUDGED, "--graphrag-cache-only", "--graphrag-no-cache")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--graphrag-cache-only*--graphrag-no-cache*"])


def test_budget_stop_leaves_not_evaluated_questions_and_no_false_regressions(judged) -> None:
    pytester, server = judged
    pytester.runpytest(*JUDGED, "--graphrag-report", "baseline.json").assert_outcomes(passed=3)
    assert all(r["outcome"] == "passed" for r in report(pytester, "baseline.json")["results"])
    server.reset()
    result = pytester.runpytest(
        *JUDGED,
        "--graphrag-no-cache",  # every judge call costs again
        "--graphrag-max-calls",
        "1",
        "--graphrag-concurrency",
        "1",
        "--graphrag-threshold",
        "answer_f1>=0.5",
        "--graphrag-baseline",
        "baseline.json",
        "--graphrag-markdown",
        "summary.md",
        "--graphrag-html",
        "report.html",
    )
    result.assert_outcomes(passed=1, skipped=2)
    assert result.ret == pytest.ExitCode.OK  # nothing that was evaluated failed (docs: cost.md)
    assert server.count("chat") == 1
    data = report(pytester)
    outcomes = sorted(r["outcome"] for r in data["results"])
    assert outcomes == ["not_evaluated", "not_evaluated", "passed"]
    spend = data["judge_spend"]
    assert (spend["requests"], spend["max_calls"], spend["not_evaluated"]) == (1, 1, 2)
    assert spend["budget_reached"] and spend["refused_calls"] == 2
    comparison = data["comparison"]
    assert comparison["regressions"] == [] and comparison["fixed"] == []
    assert len(comparison["not_evaluated"]) == 2 and len(comparison["unchanged"]) == 1
    assert comparison["outcomes"]["n_pairs"] == 1, "not-evaluated questions are left out of paired statistics"
    assert all(change["n_pairs"] == 1 for change in comparison["metrics"].values())
    micro = data["aggregates"]["micro"]
    assert micro["number_of_not_evaluated_samples"] == 2 and micro["number_of_success_samples"] == 1
    result.stdout.fnmatch_lines(
        [
            "*judge spend: $0.0* 1 requests of at most 1, 0 cache hits*",
            "*budget reached: 2 questions not evaluated (2 judge calls not sent)*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "since baseline *: 0 regressions, 0 fixed, 0 new, 0 removed, 0 edited, "
            "2 not evaluated (judge budget)"
        ]
    )
    markdown = (pytester.path / "summary.md").read_text(encoding="utf-8")
    assert "**3 questions**: 1 passed, 2 not evaluated (judge budget)" in markdown
    assert "2 not evaluated (judge budget)" in markdown.split("### Changes since the baseline")[1]
    assert "budget reached: 2 questions not evaluated" in markdown
    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert "budget reached: 2 questions not evaluated" in html


def test_gate_on_not_evaluated_fails_a_budget_stopped_run(judged) -> None:
    pytester, _server = judged
    result = pytester.runpytest(*JUDGED, "--graphrag-max-cost", "0", "--graphrag-gate", "not_evaluated<=0")
    result.assert_outcomes(skipped=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAIL*micro:not_evaluated = 3*"])
    passing = pytester.runpytest(*JUDGED, "--graphrag-gate", "not_evaluated<=0")
    passing.assert_outcomes(passed=3)
    passing.stdout.fnmatch_lines(["*PASS*micro:not_evaluated = 0*"])


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        (
            "--graphrag-max-cost",
            "-1",
            "*--graphrag-max-cost (ini graphrag_max_cost) must be a number of USD >= 0, got '-1'*",
        ),
        ("--graphrag-max-cost", "abc", "*--graphrag-max-cost * must be a number of USD >= 0, got 'abc'*"),
        ("--graphrag-max-cost", "inf", "*--graphrag-max-cost * must be a number of USD >= 0, got 'inf'*"),
        (
            "--graphrag-max-calls",
            "-1",
            "*--graphrag-max-calls * must be a whole number of calls >= 0, got '-1'*",
        ),
        (
            "--graphrag-max-calls",
            "1.5",
            "*--graphrag-max-calls * must be a whole number of calls >= 0, got '1.5'*",
        ),
    ],
)
def test_bad_budget_is_a_usage_error(judged, option: str, value: str, message: str) -> None:
    pytester, server = judged
    result = pytester.runpytest(*JUDGED, option, value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()
    assert server.count() == 0


def test_budget_under_xdist_is_shared_so_the_run_stays_within_it(judged) -> None:
    pytester, server = judged
    result = pytester.runpytest(
        *JUDGED, "-n", "2", "--graphrag-max-calls", "2", "--graphrag-concurrency", "1"
    )
    assert server.count("chat") <= 2
    data = report(pytester)
    spend = data["judge_spend"]
    assert spend["requests"] == server.count("chat") and spend["max_calls"] == 2
    outcomes = [r["outcome"] for r in data["results"]]
    assert outcomes.count("not_evaluated") == 3 - server.count("chat") and "failed" not in outcomes
    result.assert_outcomes(passed=server.count("chat"), skipped=3 - server.count("chat"))


def test_cache_only_misses_under_xdist_are_listed_as_in_one_process(judged) -> None:
    pytester, server = judged
    pytester.runpytest(*JUDGED, "--graphrag-cache-only").assert_outcomes(skipped=3)
    alone = report(pytester)["judge_spend"]
    result = pytester.runpytest(*JUDGED, "--graphrag-cache-only", "-n", "2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED and server.count() == 0
    spread = report(pytester)["judge_spend"]
    for key in ("cache_miss_keys", "cache_miss_ids", "not_evaluated_ids"):
        assert spread[key] == alone[key] and len(spread[key]) == 3, key


def test_missing_cache_keys_of_workers_and_shards_are_joined_and_a_merged_cache_only_run_fails() -> None:
    """xdist workers and shards each list their own misses: the run's list is their union."""
    first = {"calls_made": 0, "cache_miss_keys": ["b" * 64, "a" * 64], "unpriced_models": ["m1"]}
    second = {"calls_made": 0, "cache_miss_keys": ["a" * 64, "c" * 64], "unpriced_models": ["m2"]}
    total: dict = {}
    add_process_stats(total, first)
    add_process_stats(total, second)
    assert total["cache_miss_keys"] == ["a" * 64, "b" * 64, "c" * 64]
    assert total["unpriced_models"] == ["m1", "m2"]
    error = f"judge call failed: chat call: {CACHE_MISS}; cache key {'a' * 64}"
    results = [
        {"question_id": "q1", "outcome": "not_evaluated", "answer_eval_error": error},
        {"question_id": "q2", "outcome": "passed"},
    ]
    shards = [
        spend_section(stats, results[i : i + 1], cache_only=True) for i, stats in enumerate((first, second))
    ]
    merged = merge_spend(shards, results)
    assert merged is not None and merged.cache_miss_keys == ("a" * 64, "b" * 64, "c" * 64)
    assert merged.cache_miss_ids == ("q1",)
    assert "1 questions not evaluated" in (cache_only_incomplete(merged) or "")
    assert cache_only_incomplete(spend_section(second, results[1:], cache_only=True)) is None
