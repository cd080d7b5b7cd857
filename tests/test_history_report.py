"""The report's history section and what shows it: JSON, Markdown, terminal lines and the HTML view.

The earlier runs are plain `RunHistory` values built from synthetic reports (the store's side is
tested with real recorded runs in test_history_in_run.py).
"""

from __future__ import annotations

import html
import json
import re
import time
from typing import Any

import pytest
from synthetic_report import synthetic_report

from pytest_graphrag_eval.compare.past_runs import PastRun, RunHistory, flaky_questions
from pytest_graphrag_eval.errors import InputError
from pytest_graphrag_eval.gates.suite_gates import parse_gate
from pytest_graphrag_eval.report.history_summary import history_lines, outcome_strip
from pytest_graphrag_eval.report.html_report.render import render_html
from pytest_graphrag_eval.report.json_report import json_bytes
from pytest_graphrag_eval.report.markdown_summary import render_markdown
from pytest_graphrag_eval.report.run_terminal import since_baseline_lines
from pytest_graphrag_eval.report_model import ReportDocument
from pytest_graphrag_eval.run.pipeline import RunSettings, finish_run

QUESTIONS = 40
GATES = (
    parse_gate("trend:steps_score.mean>=-0.2/run@5"),
    parse_gate("micro:answer_f1.mean>=0.1"),
    parse_gate("regressions<=0 excluding flaky"),
)


def past_runs(count: int) -> RunHistory:
    """Earlier runs of the same corpus; the corpus changed before run 3."""
    runs = []
    for index in range(count):
        report = synthetic_report(QUESTIONS, templates=4, seed=index + 1)
        runs.append(
            PastRun(
                run_id=str(index + 1),
                started_at=f"2026-11-{index + 1:02d}T02:00:00Z",
                aggregates=report["aggregates"],
                outcomes={result["question_id"]: result["outcome"] for result in report["results"]},
                commit=f"commit{index}",
                branch="main",
                passed=index % 2 == 0,
                identities={"corpus": "v1" if index < 3 else "v2", "graph": "g1", "settings": "s1"},
            )
        )
    return RunHistory(tuple(runs), flaky_runs=6, flaky_flips=2)


@pytest.fixture(scope="module")
def finished() -> Any:
    current = synthetic_report(QUESTIONS, templates=4, seed=99)
    history = past_runs(7)
    settings = RunSettings(
        gates=GATES,
        history=history,
        current_run=PastRun("8", "", {}, {}, commit="commit7", identities=history.runs[-1].identities),
    )
    return finish_run(current["results"], settings, started=time.time(), interrupted=False), history


def test_the_history_section_holds_the_window_flaky_questions_and_series(finished: Any) -> None:
    run, history = finished
    section = run.report["history"]
    assert [entry["run_id"] for entry in section["runs"]] == ["3", "4", "5", "6", "7", "8"]
    assert [entry["changed"] for entry in section["runs"]] == [[], ["corpus"], [], [], [], []]
    expected = flaky_questions(history, run.results, "commit7")
    assert [entry["question_id"] for entry in section["flaky"]] == [found.question_id for found in expected]
    assert expected, "the synthetic runs should have some questions that flip"
    first = section["flaky"][0]
    assert first["outcomes"] == section["questions"][first["question_id"]][-6:]
    assert set(section["questions"]) == {result["question_id"] for result in run.results}
    assert [series["target"] for series in section["series"]] == [
        "micro:steps_score.mean",
        "micro:answer_f1.mean",
    ]
    steps = section["series"][0]["values"]
    assert steps[-1] == run.aggregates["micro"]["steps_score"]["mean"]
    assert steps[0] == history.runs[2].aggregates["micro"]["steps_score"]["mean"]
    trend_gate = run.gate_results[0]
    assert trend_gate.gate.over == "trend" and "over 5 run(s)" in trend_gate.message


def test_a_shard_leaves_the_history_to_the_merge(finished: Any) -> None:
    _, history = finished
    current = synthetic_report(QUESTIONS, templates=4, seed=99)
    shard = finish_run(
        current["results"],
        RunSettings(gates=GATES, history=history, defer_gates=True),
        started=time.time(),
        interrupted=False,
    )
    assert "history" not in shard.report and shard.gate_results == []


def test_markdown_and_terminal_mark_the_flaky_questions(finished: Any) -> None:
    run, _ = finished
    flaky = run.report["history"]["flaky"]
    markdown = render_markdown(ReportDocument.from_json(run.report, "report"))
    assert f"### Flaky questions ({len(flaky)})" in markdown
    for entry in flaky[:3]:
        assert f"`{outcome_strip(entry['outcomes'])}`" in markdown
    lines = history_lines(run.document)
    assert lines[0][0].startswith(f"history: {len(flaky)} flaky question(s) over the last 6 run(s)")
    assert all(colour == "yellow" for _, colour in lines)
    nodeid = next(
        result.get("nodeid", result["question_id"])
        for result in run.results
        if result["question_id"] == flaky[0]["question_id"]
    )
    assert lines[1][0].startswith(f"  flaky  {nodeid}  {outcome_strip(flaky[0]['outcomes'])}")


def test_a_report_without_history_shows_none_of_it() -> None:
    report = synthetic_report(10, templates=2)
    assert "Flaky questions" not in render_markdown(ReportDocument.from_json(report, "report"))
    assert history_lines(ReportDocument.from_json(report, "report")) == []
    assert 'id="history"' not in render_html(ReportDocument.from_json(report, "report"))


def test_the_html_history_view_draws_each_gated_value_and_the_changes(finished: Any) -> None:
    run, _ = finished
    page = render_html(ReportDocument.from_json(run.report, "report"))
    section = page[page.index('<section id="history"') : page.index('<section id="questions"')]
    assert section.count('data-testid="trend-chart"') == 2
    assert section.count('data-testid="change-mark"') == 2  # one per chart: the corpus changed once
    assert 'data-changed="corpus"' in section
    assert section.count('data-testid="trend-fit"') == 1  # the trend gate's window only
    points = re.findall(
        r'<circle class="point[^"]*" cx="[^"]+" cy="[^"]+" r="3" data-value="([^"]+)"', section
    )
    assert len(points) == 12
    flaky = run.report["history"]["flaky"]
    rows = re.findall(r'<tr data-question="([^"]+)">', section)
    assert rows == [entry["question_id"] for entry in flaky]
    strip = re.search(r'data-outcomes="([^"]*)"', section)
    assert strip is not None and strip.group(1) == " ".join(flaky[0]["outcomes"])
    assert 'href="#history"' in page


def test_a_flaky_regression_is_marked_as_flaky() -> None:
    def result(question: str, outcome: str) -> dict[str, Any]:
        score = 1.0 if outcome == "passed" else 0.0
        return {
            "template_id": "t",
            "question_id": question,
            "nodeid": f"corpus.yaml::t::{question}",
            "status": "success",
            "outcome": outcome,
            "steps_score": score,
            "question_text": f"question {question}",
        }

    baseline = {"format_version": 2, "results": [result(q, "passed") for q in ("q0", "q1", "q2")]}
    strips = {"q0": "PFP", "q1": "PPP", "q2": "PPP"}
    word = {"P": "passed", "F": "failed"}
    history = RunHistory(
        tuple(
            PastRun(str(run), "", {}, {q: word[strip[run]] for q, strip in strips.items()}, commit=f"c{run}")
            for run in range(3)
        )
    )
    current = [result("q0", "failed"), result("q1", "failed"), result("q2", "passed")]
    run = finish_run(
        current,
        RunSettings(baseline=baseline, baseline_path="base.json", history=history),
        started=time.time(),
        interrupted=False,
    )
    assert run.comparison is not None and sorted(run.comparison.regressions) == ["q0", "q1"]
    markdown = render_markdown(ReportDocument.from_json(run.report, "report"))
    assert "corpus.yaml::t::q0 (flaky)" in markdown and "q1 (flaky)" not in markdown
    assert run.document.history is not None
    lines = since_baseline_lines(
        run.comparison,
        {r["question_id"]: r for r in baseline["results"]},
        {r["question_id"]: r for r in current},
        ["steps_score"],
        run.document.history.flaky_ids,
    )
    regressed = [text for text, _ in lines if "::q0" in text or "::q1" in text]
    assert regressed[0].startswith("  corpus.yaml::t::q0 (flaky)") and "(flaky)" not in regressed[1]


def test_the_html_gates_table_explains_history_gates(finished: Any) -> None:
    run, _ = finished
    page = render_html(ReportDocument.from_json(run.report, "report"))
    details = re.findall(r'<div class="gate-detail muted" data-testid="gate-detail">([^<]*)</div>', page)
    trend = next(gate for gate in run.gate_results if gate.gate.over == "trend")
    assert any(detail.startswith("trend:micro:steps_score.mean = ") for detail in details)
    assert html.escape(trend.message, quote=True) in details


def test_the_typed_history_section_is_written_back_as_it_was_read(finished: Any) -> None:
    run, _ = finished
    report = json.loads(json_bytes(run.report))
    document = ReportDocument.from_json(report, "report.json")
    assert document.history is not None and len(document.history.runs) == 6
    assert json_bytes(document.to_json()) == json_bytes(report)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda history: history["runs"][0].update(passed="yes"), "history.runs[0].passed"),
        (lambda history: history["flaky_rule"].update(runs=2.5), "history.flaky_rule.runs"),
        (lambda history: history["series"][0].update(values=["x"]), "history.series[0].values"),
        (lambda history: history["questions"].update(q0="passed"), "history.questions.q0"),
    ],
)
def test_a_malformed_history_section_is_refused_naming_the_file_and_field(
    finished: Any, change: Any, field: str
) -> None:
    run, _ = finished
    report = json.loads(json_bytes(run.report))
    change(report["history"])
    with pytest.raises(InputError) as error:
        ReportDocument.from_json(report, "report.json")
    assert str(error.value).startswith("report.json") and f"field {field!r}" in str(error.value)
