"""pytest-timeout beside the plugin: a question whose item it cuts stays in the results, the
aggregates and the gates as an agent error with the reason (issue 44), as a crashed agent call is."""

from __future__ import annotations

import pytest
from beside_support import live_project, load_json, results_by_id, unblocked


def test_a_question_cut_by_pytest_timeout_is_an_agent_error_in_every_count(pytester: pytest.Pytester) -> None:
    live_project(pytester, {"q2": "hang"})
    result = pytester.runpytest_subprocess(
        *unblocked("timeout"), "--timeout", "3",
        "--graphrag-corpus=corpus.yaml", "--graphrag-report=report.json", "--junitxml=junit.xml",
        "--graphrag-gate", "steps_score.mean>=0.9", "--graphrag-gate", "error_rate<=0",
    )  # fmt: skip
    result.assert_outcomes(passed=2, failed=1)
    report = load_json(pytester.path / "report.json")
    cut = results_by_id(report)["q2"]
    assert (cut["status"], cut["outcome"]) == ("error", "failed")
    assert "cut before it was scored" in cut["error"] and "Timeout" in cut["error"]
    assert cut["failures"] == [f"agent error: {cut['error']}"]
    assert report["metadata"]["questions"] == 3
    assert report["aggregates"]["micro"]["number_of_error_samples"] == 1
    assert {gate["expression"]: gate["passed"] for gate in report["gates"]} == {
        "micro:steps_score.mean>=0.9": True,
        "micro:error_rate<=0": False,  # the hung question counts; it would pass were it left out
    }
    result.stdout.fnmatch_lines(["3 questions: 2 passed, 1 failed, 1 agent error", "*FAIL*error_rate*"])
    assert "partial run" not in result.stdout.str()  # every question has its verdict
    junit = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert 'name="graphrag.steps_score"' in junit  # the scored questions keep their properties
