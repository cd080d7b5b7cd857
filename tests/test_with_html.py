"""pytest-html beside the plugin (issue 44): the gates' verdict, which alone may decide the exit status,
is in pytest-html's summary, escaped; a run without pytest-html is unchanged."""

from __future__ import annotations

import pytest
from beside_support import REPLAY, replay_project, unblocked


def test_the_gates_reach_pytest_html_summary(pytester: pytest.Pytester) -> None:
    replay_project(pytester, wrong=("q3",))
    result = pytester.runpytest_subprocess(
        *unblocked("metadata", "html", "html_fixtures"), "--html=page.html", "--self-contained-html",
        *REPLAY, "--graphrag-gate", "steps_score.mean>=0.9", "--graphrag-gate", "answer_token_f1.mean>=0",
    )  # fmt: skip
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the gate alone fails the run
    page = (pytester.path / "page.html").read_text(encoding="utf-8")
    assert "graphrag-eval gate FAIL: micro:steps_score.mean = 0.666667, required &gt;= 0.9" in page
    assert "graphrag-eval gate PASS: micro:answer_token_f1.mean" in page
