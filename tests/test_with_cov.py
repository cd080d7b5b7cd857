"""pytest-cov beside the plugin (issue 44): coverage is measured for the agent a live run calls, and the
run's report is the same as without coverage (timings aside)."""

from __future__ import annotations

import pytest
from beside_support import live_project, load_json, unblocked, without_volatile

ARGS = [
    "--graphrag-corpus=corpus.yaml",
    "--graphrag-threshold",
    "steps_score>=1",
    "--graphrag-report=report.json",
]


def test_coverage_of_a_live_agent_leaves_the_report_alone(pytester: pytest.Pytester) -> None:
    live_project(pytester, {})
    plain = pytester.runpytest_subprocess(*ARGS)
    expected = without_volatile(load_json(pytester.path / "report.json"))
    covered = pytester.runpytest_subprocess(
        *unblocked("pytest_cov"), "--cov=plugin_support", "--cov-report=term", *ARGS
    )
    assert plain.ret == covered.ret == pytest.ExitCode.OK
    covered.stdout.fnmatch_lines(["*coverage:*", "plugin_support.py*"])
    assert without_volatile(load_json(pytester.path / "report.json")) == expected
