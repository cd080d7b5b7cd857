"""`-k` beside the plugin (issue 44): the gates are judged on the selected questions, and the summary
says how many of how many; a run that gates nothing says so, and how to gate."""

from __future__ import annotations

import pytest
from beside_support import REPLAY, STRICT, load_json, replay_project


def test_keyword_selection_is_a_partial_run(pytester: pytest.Pytester) -> None:
    replay_project(pytester, wrong=("q3",))
    result = pytester.runpytest_subprocess(
        *REPLAY, *STRICT, "-k", "others", "--graphrag-gate", "steps_score.mean>=0.9",
        "--graphrag-report=report.json",
    )  # fmt: skip
    result.assert_outcomes(failed=1, deselected=2)
    result.stdout.fnmatch_lines(
        [
            "*FAIL  micro:steps_score.mean = 0, * [[]on 1 of 3 questions[]]",
            "graphrag-eval: partial run: 1 of 3 corpus questions judged (1 selected)",
            "graphrag-eval: the gates were decided on the 1 question(s) judged, not on the whole corpus",
        ]
    )
    assert load_json(pytester.path / "report.json")["metadata"]["interrupted"] is False


def test_a_run_without_thresholds_or_gates_says_nothing_was_gated(pytester: pytest.Pytester) -> None:
    replay_project(pytester, wrong=("q3",))
    result = pytester.runpytest_subprocess(*REPLAY)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ['graphrag-eval: nothing was gated (no threshold, no gate): this run passes whatever its scores, *'
         '--graphrag-threshold "steps_score>=1"*--graphrag-gate "steps_score.mean>=0.9"*']
    )  # fmt: skip
    gated = pytester.runpytest_subprocess(*REPLAY, *STRICT)
    assert "nothing was gated" not in gated.stdout.str()
