"""pytest-xdist beside the plugin, with the other plugins' cases (issue 44): a question pytest-timeout
cuts on a worker, and a partial run's coverage, are what they are without xdist."""

from __future__ import annotations

import pytest
from beside_support import REPLAY, STRICT, live_project, load_json, replay_project, results_by_id, unblocked


def test_a_question_cut_on_a_worker_is_reported(pytester: pytest.Pytester) -> None:
    live_project(pytester, {"q1": "hang"})
    result = pytester.runpytest_subprocess(
        *unblocked("timeout"), "--timeout", "3", "-n", "2", "--graphrag-corpus=corpus.yaml",
        "--graphrag-report=report.json",
    )  # fmt: skip
    result.assert_outcomes(passed=2, failed=1)
    report = load_json(pytester.path / "report.json")
    assert [result["question_id"] for result in report["results"]] == ["q1", "q2", "q3"]
    assert "Timeout" in results_by_id(report)["q1"]["error"]
    assert report["aggregates"]["micro"]["number_of_error_samples"] == 1


@pytest.mark.parametrize("dist", ["load", "loadscope"])
def test_a_partial_run_under_xdist_records_what_it_judged(pytester: pytest.Pytester, dist: str) -> None:
    replay_project(pytester)
    args = [*REPLAY, *STRICT, "-k", "not q2", "--graphrag-report=report.json"]
    pytester.runpytest_subprocess(*args)
    serial = load_json(pytester.path / "report.json")["metadata"]["partial"]
    result = pytester.runpytest_subprocess(*args, "-n", "2", "--dist", dist)
    result.assert_outcomes(passed=2)
    partial = load_json(pytester.path / "report.json")["metadata"]["partial"]
    assert partial == serial == {
        "corpus_questions": 3, "selected_questions": 2, "judged_questions": 2, "not_run": [], "stopped": None,
    }  # fmt: skip
