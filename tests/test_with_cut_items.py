"""A question whose item another plugin cuts (an error in its setup or its call) is in the report as
an agent error naming what cut it, never left out (issue 44)."""

from __future__ import annotations

import pytest
from beside_support import REPLAY, load_json, replay_project, results_by_id

FAILING_PLUGIN = """
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.name == "q1":
        raise RuntimeError("the fixture server is down")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if item.name == "q3":
        raise OSError("disk full <b>")
"""


def test_questions_cut_in_setup_or_call_by_another_plugin_are_reported(pytester: pytest.Pytester) -> None:
    replay_project(pytester)
    pytester.makeconftest(FAILING_PLUGIN)
    result = pytester.runpytest_subprocess(
        *REPLAY, "--graphrag-report=report.json", "--graphrag-markdown=s.md"
    )
    result.assert_outcomes(passed=1, failed=1, errors=1)
    results = results_by_id(load_json(pytester.path / "report.json"))
    assert list(results) == ["q1", "q2", "q3"]
    assert results["q1"]["status"] == results["q3"]["status"] == "error"
    assert results["q1"]["error"] == (
        "the question was cut before it was scored (RuntimeError in the item's setup): "
        "the fixture server is down"
    )
    assert results["q3"]["error"].endswith("(OSError while its item ran): disk full <b>")
    assert (results["q2"]["status"], results["q2"]["outcome"]) == ("success", "passed")
    markdown = (pytester.path / "s.md").read_text(encoding="utf-8")
    assert "disk full \\<b>" in markdown  # the reason is data, escaped like any agent error
