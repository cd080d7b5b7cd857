"""pytest-rerunfailures beside the plugin (issue 44): a rerun asks a live agent again and the report
says which run decided; a replayed question's rerun repeats its verdict, and the summary says so and
names --graphrag-agent-repeats. Either way a question is counted once."""

from __future__ import annotations

import pytest
from beside_support import (
    REPLAY,
    STRICT,
    calls,
    live_project,
    load_json,
    replay_project,
    results_by_id,
    unblocked,
)


def test_a_rerun_asks_the_live_agent_again_and_the_last_run_decides(pytester: pytest.Pytester) -> None:
    live_project(pytester, {"q3": "wrong_once"})
    result = pytester.runpytest_subprocess(
        *unblocked("rerunfailures"), "--reruns", "2", "--graphrag-corpus=corpus.yaml", *STRICT,
        "--graphrag-report=report.json",
    )  # fmt: skip
    assert result.parseoutcomes() == {"passed": 3, "rerun": 1}
    assert sorted(calls(pytester)) == ["q1", "q2", "q3", "q3"]  # asked again on its rerun only
    report = load_json(pytester.path / "report.json")
    results = results_by_id(report)
    assert len(report["results"]) == 3
    assert results["q3"]["outcome"] == "passed" and results["q3"]["steps_score"] == 1
    assert results["q3"]["rerun"] == {"run": 2, "agent_asked_again": True}
    assert "rerun" not in results["q1"]
    result.stdout.fnmatch_lines(
        ["*pytest-rerunfailures ran 1 question(s) again, asking the live agent each time; "
         "the last run decided: q3 (run 2, passed)*--graphrag-agent-repeats N*"]
    )  # fmt: skip


def test_a_replayed_question_rerun_repeats_its_verdict_and_says_so(pytester: pytest.Pytester) -> None:
    replay_project(pytester, wrong=("q3",))
    result = pytester.runpytest_subprocess(
        *unblocked("rerunfailures"), "--reruns", "2", *REPLAY, *STRICT, "--graphrag-report=report.json"
    )
    assert result.parseoutcomes() == {"passed": 2, "failed": 1, "rerun": 2}
    report = load_json(pytester.path / "report.json")
    assert [result["question_id"] for result in report["results"]] == ["q1", "q2", "q3"]  # counted once
    assert results_by_id(report)["q3"]["rerun"] == {"run": 3, "agent_asked_again": False}
    result.stdout.fnmatch_lines(
        ["3 questions: 2 passed, 1 failed",
         "*ran 1 replayed question(s) again (q3): a recorded response cannot change, so each rerun "
         "repeated its verdict; to measure a flaky agent, ask it live with --graphrag-agent-repeats N*"]
    )  # fmt: skip
