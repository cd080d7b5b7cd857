"""`--lf` beside the plugin (issue 44): a gate that passed on the whole corpus is judged on the failed
questions only, and the summary says so next to its verdict."""

from __future__ import annotations

import pytest
from beside_support import REPLAY, STRICT, load_json, replay_project


def test_last_failed_says_its_gates_saw_a_part(pytester: pytest.Pytester) -> None:
    replay_project(pytester, wrong=("q3",))
    gate = ["--graphrag-gate", "steps_score.mean>=0.5", "--graphrag-report=report.json"]
    whole = pytester.runpytest_subprocess(*REPLAY, *STRICT, *gate)
    whole.stdout.fnmatch_lines(["*PASS  micro:steps_score.mean = 0.666667 >= 0.5 (cli gate)"])
    assert "partial run" not in whole.stdout.str()
    assert "partial" not in load_json(pytester.path / "report.json")["metadata"]
    failed_only = pytester.runpytest_subprocess(*REPLAY, *STRICT, *gate, "--lf")
    failed_only.assert_outcomes(failed=1, deselected=2)
    failed_only.stdout.fnmatch_lines(
        [
            "*FAIL  micro:steps_score.mean = 0, required >= 0.5, cli gate  [[]on 1 of 3 questions[]]",
            "graphrag-eval: partial run: 1 of 3 corpus questions judged (1 selected)",
        ]
    )
    partial = load_json(pytester.path / "report.json")["metadata"]["partial"]
    assert (partial["selected_questions"], partial["not_run"]) == (1, [])
