"""pytest-sugar beside the plugin (issue 44): sugar replaces pytest's last line, which counts a failed
gate; ours follows it, so the end of a CI log still says why the run failed."""

from __future__ import annotations

import pytest
from beside_support import REPLAY, replay_project, unblocked


def test_the_failed_gate_is_the_last_line_under_sugar(pytester: pytest.Pytester) -> None:
    replay_project(pytester, wrong=("q3",))
    result = pytester.runpytest_subprocess(
        *unblocked("sugar"), "--force-sugar", *REPLAY, "--graphrag-gate", "steps_score.mean>=0.9"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = [line for line in result.stdout.lines if line.strip()]
    assert "Results (" in result.stdout.str()  # sugar's own summary ran
    assert "gate failed" not in result.stdout.str().split("Results (")[-1].splitlines()[1]
    assert lines[-1].strip() == "graphrag-eval: 1 of 1 gate(s) FAILED"
