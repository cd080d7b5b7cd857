"""pytest-json-report beside the plugin (issue 44): its report carries our verdict under `graphrag_eval`
(the gates, whether they passed, a partial run's coverage), so a reader of that file sees why the run
failed when every test passed."""

from __future__ import annotations

import pytest
from beside_support import REPLAY, load_json, replay_project, unblocked


def test_the_verdict_is_in_pytest_json_report(pytester: pytest.Pytester) -> None:
    replay_project(pytester, wrong=("q3",))
    result = pytester.runpytest_subprocess(
        *unblocked("pytest_jsonreport"), "--json-report", "--json-report-file=tests.json",
        *REPLAY, "--graphrag-gate", "steps_score.mean>=0.9", "-k", "not q2",
    )  # fmt: skip
    result.assert_outcomes(passed=2, deselected=1)
    report = load_json(pytester.path / "tests.json")
    assert report["summary"]["passed"] == 2  # pytest-json-report's own view: all green
    assert report["exitcode"] == 1  # the gate's, set before pytest-json-report wrote its report
    verdict = report["graphrag_eval"]
    assert verdict["gates_passed"] is False and verdict["failed"] is True
    assert [(gate["expression"], gate["passed"]) for gate in verdict["gates"]] == [
        ("micro:steps_score.mean>=0.9", False)
    ]
    assert verdict["partial"]["judged_questions"] == 2 and verdict["partial"]["corpus_questions"] == 3
