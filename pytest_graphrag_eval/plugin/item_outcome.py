"""A question item's record for the report; an item cut before its result existed (pytest-timeout,
Ctrl-C) is an agent error with the reason, so it counts in the aggregates and gates instead of vanishing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from pytest_graphrag_eval.evaluation import base_result
from pytest_graphrag_eval.formats.json_types import JsonObject, Order
from pytest_graphrag_eval.plugin.items import QuestionItem
from pytest_graphrag_eval.report.failure_report import printable
from pytest_graphrag_eval.report.json_report import ResultCollector
from pytest_graphrag_eval.run.pipeline import interrupted_record, question_record
from pytest_graphrag_eval.run.runner import QuestionRunner


def item_outcome(report: pytest.TestReport) -> str:
    """The pytest outcome as people say it: xfail and xpass are told apart from skip and pass."""
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    return report.outcome


def question_report_record(item: QuestionItem, report: pytest.TestReport) -> JsonObject:
    """The question's result plus what pytest decided about it, for the report and baselines."""
    assert item.result is not None
    outcome = "not_evaluated" if item.not_evaluated else item_outcome(report)
    return question_record(item.result, nodeid=item.nodeid, outcome=outcome, checks=item.checks)


def numbered_attempts(responses: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What a recording keeps of one question: its response, or every attempt numbered from 1."""
    if len(responses) == 1:
        return {"responses": list(responses)}
    return {"responses": [{**response, "attempt": number} for number, response in enumerate(responses, 1)]}


def cut_reason(when: str, excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """Why an item ended before its question had a result, in one line naming what cut it."""
    error = excinfo.value
    message = str(getattr(error, "msg", None) or error).strip().splitlines()
    first = printable(message[0]) if message else ""
    kind = type(error).__name__
    where = "while its item ran" if when == "call" else f"in the item's {when}"
    return f"the question was cut before it was scored ({kind} {where}){': ' + first if first else ''}"


def cut_question_record(item: QuestionItem, reason: str, outcome: str = "failed") -> JsonObject:
    """The report record of a question whose item was cut: an agent error with `reason`."""
    result = {**base_result(item.question, None), "error": reason}
    return question_record(result, nodeid=item.nodeid, outcome=outcome, checks=[])


def collect_finished_unreported(
    session: pytest.Session,
    runner: QuestionRunner,
    collector: ResultCollector,
    order_of: Callable[[QuestionItem], Order],
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
