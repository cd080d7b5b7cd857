"""A partial run's coverage (issue 44): what the report records and how the summaries word it."""

from __future__ import annotations

from pytest_graphrag_eval.report.markdown_summary import render_markdown
from pytest_graphrag_eval.report.run_coverage import RunCoverage
from pytest_graphrag_eval.report_model import Aggregates, GateRecord, QuestionResult, ReportDocument


def test_the_report_record_reads_back_and_a_whole_run_has_none() -> None:
    stopped = RunCoverage(
        25, 25, 10, tuple(f"q{n}" for n in range(11, 26)), "pytest stopped: stopping after 1 failures"
    )
    assert RunCoverage.from_metadata({"partial": stopped.to_json()}) == stopped
    assert stopped.partial and stopped.interrupted
    assert RunCoverage.from_metadata({}) is None
    assert RunCoverage.from_metadata({"partial": {"corpus_questions": "25"}}) is None  # malformed: ignored
    whole = RunCoverage(3, 3, 3)
    assert not whole.partial and not whole.interrupted


def test_the_lines_say_how_many_of_how_many_and_what_the_gates_saw() -> None:
    coverage = RunCoverage(
        25, 25, 10, tuple(f"q{n}" for n in range(11, 26)), "pytest stopped: stopping after 1 failures"
    )
    lines = coverage.lines(gated=True, gates_deferred=False)
    assert lines[0] == "partial run: 10 of 25 corpus questions judged (25 selected)"
    assert lines[1] == (
        "15 selected question(s) never ran (pytest stopped: stopping after 1 failures): "
        "q11, q12, q13, q14, q15, q16, q17, q18, q19, q20 and 5 more"
    )
    assert lines[2] == "the gates were decided on the 10 question(s) judged, not on the whole corpus"
    assert coverage.lines(gated=True, gates_deferred=True) == lines[:2]  # a shard's gates are the merge's
    assert coverage.lines(gated=False, gates_deferred=False) == lines[:2]
    assert coverage.gates_note() == "on 10 of 25 questions"


def test_the_markdown_summary_says_a_deselected_run_is_partial() -> None:
    record = {
        "template_id": "t",
        "question_id": "q1",
        "status": "success",
        "outcome": "passed",
        "steps_score": 1,
    }
    gate = GateRecord(
        expression="micro:steps_score.mean>=0.9",
        gate="steps_score.mean>=0.9",
        passed=True,
        actual=1.0,
        scope="micro",
        template=None,
        metric="steps_score",
        stat="mean",
        op=">=",
        limit=0.9,
        change=None,
        confidence=None,
        source="cli",
        message="ok",
    )
    report = ReportDocument(
        results=[QuestionResult.from_record(record)],
        aggregates=Aggregates(),
        gates=[gate],
        metadata={"interrupted": False, "partial": RunCoverage(3, 1, 1).to_json()},
    )
    markdown = render_markdown(report)
    assert (
        "⚠️ partial run: 1 of 3 corpus questions judged (1 selected); the gates were decided on the 1"
        in markdown
    )
    assert "### Gates (on 1 of 3 questions)" in markdown
    del report.metadata["partial"]
    whole = render_markdown(report)
    assert "partial" not in whole and "### Gates\n" in whole
