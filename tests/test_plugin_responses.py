"""Response sources: replay files, the live agent hook, recording."""

from __future__ import annotations

import json

import pytest
from plugin_support import corpus, good_responses, response, write_corpus, write_responses

LIVE_CONFTEST = """
import json, pathlib
LINES = pathlib.Path(__file__).with_name("responses.jsonl").read_text().splitlines()
RESPONSES = {{r["question_id"]: r for r in map(json.loads, LINES)}}

{kind}def pytest_graphrag_respond(question, config):
    response = dict(RESPONSES[question.question_id])
    response.pop("elapsed_sec", None)
    return response
"""


@pytest.mark.parametrize("kind", ["", "async "])
def test_live_hook_sync_and_async(pytester: pytest.Pytester, kind: str) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(LIVE_CONFTEST.format(kind=kind))
    result = pytester.runpytest("--graphrag-corpus", "corpus.yaml", "--graphrag-report", "report.json")
    result.assert_outcomes(passed=3)
    report = json.loads((pytester.path / "report.json").read_text())
    assert all(isinstance(r["elapsed_sec"], float) for r in report["results"]), (
        "elapsed measured by the plugin"
    )


def test_record_then_replay_gives_the_same_results(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(LIVE_CONFTEST.format(kind=""))
    live = pytester.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-record", "rec.jsonl", "--graphrag-report", "live.json"
    )
    live.assert_outcomes(passed=3)
    recorded = [json.loads(line) for line in (pytester.path / "rec.jsonl").read_text().splitlines()]
    assert [r["question_id"] for r in recorded] == ["q1", "q2", "q3"]
    (pytester.path / "conftest.py").unlink()
    replay = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "rec.jsonl",
        "--graphrag-report",
        "replay.json",
    )
    replay.assert_outcomes(passed=3)
    live_results = json.loads((pytester.path / "live.json").read_text())["results"]
    replay_results = json.loads((pytester.path / "replay.json").read_text())["results"]
    assert live_results == replay_results


def test_no_response_source_is_a_usage_error_naming_the_options(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    result = pytester.runpytest("--graphrag-corpus", "corpus.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--graphrag-responses*pytest_graphrag_respond*"])


def test_question_without_response_fails_clearly(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses()[:2])
    result = pytester.runpytest("--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*no response for this question*"])
    assert "Traceback" not in result.stdout.str()


def test_agent_error_fails_item_and_counts_as_error_sample(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    responses = good_responses()
    responses[0] = {"question_id": "q1", "status": "error", "error": "LLM quota exceeded"}
    write_responses(pytester, responses)
    result = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-report",
        "report.json",
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*LLM quota exceeded*"])
    aggregates = json.loads((pytester.path / "report.json").read_text())["aggregates"]
    assert aggregates["micro"]["number_of_error_samples"] == 1
    assert aggregates["per_template"]["names"]["number_of_error_samples"] == 1


def test_agent_hook_raising_fails_only_that_question(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(
        LIVE_CONFTEST.format(kind="") + "\n_original = pytest_graphrag_respond\n"
        "def pytest_graphrag_respond(question, config):\n"
        "    if question.question_id == 'q2':\n"
        "        raise RuntimeError('agent crashed')\n"
        "    return _original(question, config)\n"
    )
    result = pytester.runpytest("--graphrag-corpus", "corpus.yaml")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*agent hook raised RuntimeError: agent crashed*"])


def test_malformed_live_response_is_reported_not_crashed(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    pytester.makeconftest(
        "def pytest_graphrag_respond(question, config):\n"
        "    return {'actual_answer': 'x', 'actual_steps': 'not a list'}\n"
    )
    result = pytester.runpytest("--graphrag-corpus", "corpus.yaml")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*malformed response*actual_steps*must be a list of steps*"])


def test_wrong_rows_fail_with_sparql_diff(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    responses = good_responses()
    responses[0] = response("q1", rows=[["s1", "Alpha"], ["s9", "Omega"]])
    write_responses(pytester, responses)
    result = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-threshold",
        "steps_score>=1",
    )
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "Names of set one?" in out
    assert "steps_score = 0" in out
    assert "missing rows (1)" in out and "Beta" in out
    assert "extra rows (1)" in out and "Omega" in out
    assert "Traceback" not in out


def test_questions_are_answered_concurrently_within_the_bound(pytester: pytest.Pytester) -> None:
    data = corpus()
    data[1]["questions"] += [
        {"id": f"extra{i}", "question_text": f"Extra question {i}?", "reference_answer": "x"}
        for i in range(6)
    ]
    write_corpus(pytester, data)
    pytester.makeconftest(
        "import threading, time\n"
        "LOCK = threading.Lock()\n"
        "STATE = {'now': 0, 'max': 0}\n"
        "def pytest_graphrag_respond(question, config):\n"
        "    with LOCK:\n"
        "        STATE['now'] += 1\n"
        "        STATE['max'] = max(STATE['max'], STATE['now'])\n"
        "    time.sleep(0.2)\n"
        "    with LOCK:\n"
        "        STATE['now'] -= 1\n"
        "    return {'actual_answer': 'x'}\n"
        "def pytest_sessionfinish(session):\n"
        "    print('MAX_IN_FLIGHT', STATE['max'])\n"
    )
    result = pytester.runpytest("--graphrag-corpus", "corpus.yaml", "--graphrag-agent-concurrency", "3", "-s")
    result.assert_outcomes(passed=9)
    result.stdout.fnmatch_lines(["*MAX_IN_FLIGHT 3*"])


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_responses_for_unknown_questions_are_a_warning_in_summary_and_report(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    """graphrag-eval ignores them (a subset corpus against a full recording); we say so, also under xdist."""
    write_corpus(pytester, corpus())
    write_responses(pytester, [*good_responses(), {**response("q1"), "question_id": "q9"}])
    result = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-report",
        "r.json",
        *workers,
    )
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["*warning: 1 response(s) for questions the corpus does not have, not scored: 'q9'"]
    )
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert report["warnings"] == ["1 response(s) for questions the corpus does not have, not scored: 'q9'"]
