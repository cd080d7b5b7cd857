"""pytest-repeat beside the plugin (issue 44): `--count` repeats test functions, not questions; the
summary says each question ran once and names --graphrag-agent-repeats (attempts, pass@k)."""

from __future__ import annotations

import pytest
from beside_support import REPLAY, STRICT, load_json, replay_project, unblocked


def test_count_is_said_to_leave_questions_once_and_names_agent_repeats(pytester: pytest.Pytester) -> None:
    replay_project(pytester)
    result = pytester.runpytest_subprocess(
        *unblocked("repeat"), "--count", "3", *REPLAY, *STRICT, "--graphrag-report=report.json"
    )
    result.assert_outcomes(passed=3)
    assert len(load_json(pytester.path / "report.json")["results"]) == 3
    result.stdout.fnmatch_lines(
        ["*pytest-repeat's --count 3 repeats test functions, not corpus questions: each question ran once; "
         "to ask the agent 3 times a question and gate on pass@k, use --graphrag-agent-repeats 3*"]
    )  # fmt: skip
