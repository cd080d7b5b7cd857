"""The library scores every attempt of a recording of repeated runs, as the plugin does (issue 28)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from plugin_support import corpus, response, write_corpus, write_responses

from pytest_graphrag_eval import corpus_from_data, load_response_attempts, load_responses, run_evaluation

pytest_plugins = ["pytester"]
VOLATILE = {"elapsed_sec", "nodeid", "outcome", "content_hash", "thresholds", "failures"}


def two_attempts() -> list[dict[str, Any]]:
    """Each question answered twice; q1's second attempt returns the wrong rows."""
    records = []
    for question_id in ("q1", "q2", "q3"):
        second = (
            response(question_id, rows=[["s9", "Omega"]]) if question_id == "q1" else response(question_id)
        )
        records += [{**response(question_id), "attempt": 1}, {**second, "attempt": 2}]
    return records


def kept(result: dict[str, Any]) -> dict[str, Any]:
    """Without timings and the plugin's own fields, and without the lexical answer metrics, which the
    plugin's default scorers add and the library's do not (the same in every attempt)."""
    return {
        key: [kept(attempt) for attempt in value] if key == "attempts" else value
        for key, value in result.items()
        if key not in VOLATILE and not key.startswith("answer_")
    }


def by_id(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(result["question_id"]): kept(result) for result in results}


def test_every_attempt_is_scored_and_combined(pytester: pytest.Pytester) -> None:
    results = by_id(run_evaluation(corpus_from_data(corpus()), two_attempts()))
    q1 = results["q1"]
    assert (q1["agent_attempts"], q1["agent_passes"]) == (2, 2)
    assert [attempt["attempt"] for attempt in q1["attempts"]] == [1, 2]
    first, second = (attempt["steps_score"] for attempt in q1["attempts"])
    assert first == 1.0 and second < 1.0
    assert q1["steps_score"] == pytest.approx((first + second) / 2)
    assert q1["steps_score_agent_std"] > 0
    assert results["q2"]["steps_score_agent_std"] == 0.0


def test_the_library_gives_the_plugins_report_for_repeated_attempts(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, two_attempts())
    run = pytester.runpytest(
        "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl",
        "--graphrag-agent-repeats", "2", "--graphrag-report", "report.json", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert run.ret == pytest.ExitCode.OK, run.stdout.str()
    plugin = by_id(json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))["results"])

    reference = corpus_from_data(corpus())
    attempts = load_response_attempts(pytester.path / "responses.jsonl")
    from_file = by_id(run_evaluation(reference, attempts))
    in_memory = by_id(run_evaluation(reference, two_attempts()))

    assert from_file == plugin
    assert in_memory == plugin


def test_one_attempt_keeps_graphrag_evals_flat_dict(pytester: pytest.Pytester) -> None:
    write_responses(pytester, two_attempts())
    reference = corpus_from_data(corpus())
    first_only = run_evaluation(reference, load_responses(pytester.path / "responses.jsonl"))
    assert all("attempts" not in result and "agent_attempts" not in result for result in first_only)
    assert by_id(first_only)["q1"]["steps_score"] == 1.0


def test_a_list_of_attempts_per_question_id_is_numbered_in_order() -> None:
    q1_attempts = [response("q1"), response("q1", rows=[["s9", "Omega"]])]
    results = by_id(run_evaluation(corpus_from_data(corpus()), {"q1": q1_attempts, "q2": response("q2")}))
    assert [attempt["attempt"] for attempt in results["q1"]["attempts"]] == [1, 2]
    assert "attempts" not in results["q2"]
    assert results["q3"]["status"] == "error"
