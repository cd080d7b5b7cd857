"""A question item's record for the report: its result with what pytest decided about it.

Also the Ctrl-C salvage: questions the runner finished whose items never reported still go in the
report, marked interrupted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_graphrag_eval.plugin.items import QuestionItem
from pytest_graphrag_eval.report.json_report import ResultCollector
from pytest_graphrag_eval.report.pipeline import interrupted_record, question_record
from pytest_graphrag_eval.run.runner import QuestionRunner


def item_outcome(report: pytest.TestReport) -> str:
    """The pytest outcome as people say it: xfail and xpass are told apart from skip and pass."""
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    return report.outcome


def question_report_record(item: QuestionItem, report: pytest.TestReport) -> dict[str, Any]:
    """The question's result plus what pytest decided about it, for the report and baselines."""
    assert item.result is not None
    outcome = "not_evaluated" if item.not_evaluated else item_outcome(report)
    return question_record(item.result, nodeid=item.nodeid, outcome=outcome, checks=item.checks)


def collect_finished_unreported(
    session: pytest.Session,
    runner: QuestionRunner,
    collector: ResultCollector,
    order_of: Callable[[QuestionItem], tuple[Any, ...]],
) -> None:
    """After Ctrl-C: finished questions whose items never reported still go in the report."""
    finished = runner.finished()
    for item in session.items:
        if not isinstance(item, QuestionItem):
            continue
        outcome = finished.get(item.question.question_id)
        order = order_of(item)
        if outcome is not None and outcome.result is not None and order not in collector.results:
            collector.add(order, interrupted_record(outcome.result, nodeid=item.nodeid))
