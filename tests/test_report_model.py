"""The typed report model: results parsed once into fields, reports of this and the previous version read.

tests/data/previous_version/example_baseline.json is the example project's recorded replay as the
version before the typed model wrote it (format_version 2, paths made relative); it must still
load and compare as a baseline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from comparison_support import compare_reports
from synthetic_report import synthetic_report

from pytest_graphrag_eval.compare.baseline import read_report
from pytest_graphrag_eval.errors import InputError
from pytest_graphrag_eval.report.json_report import json_bytes
from pytest_graphrag_eval.report.markdown_summary import render_markdown
from pytest_graphrag_eval.report.run_terminal import summary_table
from pytest_graphrag_eval.report_model import (
    REFUSAL_KEY,
    Outcome,
    QuestionResult,
    Refusal,
    ReportDocument,
    outcome_counts,
    refusal_of,
)

sys.path.insert(0, str(Path(__file__).parent))

ROOT = Path(__file__).resolve().parents[1]
PREVIOUS = ROOT / "tests" / "data" / "previous_version" / "example_baseline.json"


def record(**fields: object) -> dict[str, object]:
    return {"template_id": "t", "question_id": "q", "status": "success", **fields}


def test_a_result_says_its_outcome_errors_and_refusal_in_fields() -> None:
    budget = QuestionResult.from_record(
        record(outcome="not_evaluated", answer_eval_error="refused", **{REFUSAL_KEY: "budget"})
    )
    assert budget.outcome is Outcome.NOT_EVALUATED and budget.not_evaluated and not budget.scored
    assert refusal_of(budget.record) is Refusal.BUDGET and budget.scorer_errors == {
        "answer_eval_error": "refused"
    }
    agent = QuestionResult.from_record(record(status="error", error="timed out", outcome="failed"))
    assert agent.agent_error == "timed out" and agent.passed is False
    # An error text that merely mentions a budget is not a refusal: only the field says so.
    plain = QuestionResult.from_record(record(outcome="passed", answer_eval_error="budget reached"))
    assert refusal_of(plain.record) is None and plain.passed is True


def test_one_vocabulary_counts_outcomes_and_agent_errors_apart() -> None:
    results = [
        QuestionResult.from_record(record(outcome="passed")),
        QuestionResult.from_record(record(question_id="a", status="error", error="x", outcome="failed")),
        QuestionResult.from_record(
            record(question_id="b", outcome="not_evaluated", **{REFUSAL_KEY: "budget"})
        ),
        QuestionResult.from_record(
            record(question_id="c", outcome="not_evaluated", **{REFUSAL_KEY: "cache_miss"})
        ),
    ]
    assert outcome_counts(results) == [
        "1 passed",
        "1 failed",
        "2 not evaluated (1 judge budget, 1 cache miss)",
        "1 agent error",
    ]
    assert outcome_counts(results[2:3]) == ["1 not evaluated (judge budget)"]


def test_the_document_writes_its_keys_in_the_order_every_version_wrote_them() -> None:
    data = json.loads(PREVIOUS.read_text(encoding="utf-8"))
    document = ReportDocument.from_json(data, str(PREVIOUS))
    assert json.dumps(document.to_json()) == json.dumps(data)
    assert all(result.outcome is not None for result in document.results)


def test_a_shard_or_baseline_is_named_as_what_it_was_read_as(tmp_path: Path) -> None:
    broken = tmp_path / "shard-1.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="the shard report is not JSON"):
        read_report(broken, what="shard report")


@pytest.mark.parametrize("version", [1, 0])
def test_a_report_older_than_version_2_is_refused_with_how_to_regenerate(version: int) -> None:
    data = {"format_version": version, "results": []}
    with pytest.raises(InputError, match="regenerate it"):
        ReportDocument.from_json(data, "old.json")


def test_a_baseline_written_by_the_previous_version_still_compares(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    command = [
        sys.executable, "-m", "pytest", "example_project", "-q", "-p", "no:cacheprovider",
        "--graphrag-responses", "example_project/recordings/regression.jsonl",
        f"--graphrag-baseline={PREVIOUS}", "--graphrag-report", str(report),
    ]  # fmt: skip
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert report.is_file(), run.stdout[-3000:] + run.stderr[-3000:]
    comparison = json.loads(report.read_text(encoding="utf-8"))["comparison"]
    regressed = [str(question) for question in comparison["regressions"]]
    assert len(regressed) == 9 and any("connected-roros" in question for question in regressed), regressed
    assert "since baseline" in run.stdout and "9 regressions" in run.stdout


@pytest.mark.parametrize(
    "value",
    [
        {"a": [], "b": {}, "c": [1, 2.5, 1e-05, 1e300, -0.0, "Zürich \u2028 東京", {"x": None, "y": True}]},
        {"lone surrogate": "x\ud800y", "quote": '"\\'},  # msgspec declines: the standard library indents
        {"nan": float("nan"), "inf": [float("inf")]},
        {"not json": Path("a/b"), "nested": [[[]], [{}]]},  # default=str
    ],
)
def test_the_report_text_is_the_standard_librarys_indented_json_byte_for_byte(value: object) -> None:
    expected = json.dumps(value, indent=2, ensure_ascii=False, default=str).encode(
        "utf-8", "backslashreplace"
    )
    assert json_bytes(value, indent=2) == expected


def _verdict(question_id: str, outcome: str, **fields: object) -> dict[str, object]:
    return record(question_id=question_id, outcome=outcome, nodeid=f"corpus.yaml::t::{question_id}", **fields)


def test_the_terminal_counts_a_budget_stop_as_not_evaluated_not_as_an_error() -> None:
    results = [
        _verdict("ok", "passed", answer_f1=1.0),
        _verdict("cut", "not_evaluated", answer_eval_error="refused", **{REFUSAL_KEY: "budget"}),
        _verdict("down", "failed", status="error", error="agent timed out"),
    ]
    header, *_, overall = (
        line.split()
        for line in summary_table([QuestionResult.from_record(r) for r in results], ["answer_f1"])
    )
    assert header[:4] == ["template", "questions", "agent_errors", "not_evaluated"]
    assert overall[:4] == ["overall", "3", "1", "1"] and overall[4] == "1"


def test_the_markdown_summary_names_the_failed_questions_and_why_without_a_baseline() -> None:
    results = [
        _verdict("ok", "passed"),
        _verdict("low", "failed", failures=["answer_f1 = 0.5, required >= 0.8"]),
        _verdict("down", "failed", status="error", error="agent timed out"),
    ]
    markdown = render_markdown(
        ReportDocument.from_json({"format_version": 2, "results": results, "metadata": {}}, "report")
    )
    assert "### Failed questions (2 of 2)" in markdown
    assert "corpus.yaml::t::low | answer_f1 = 0.5, required >= 0.8" in markdown
    assert "corpus.yaml::t::down | agent error: agent timed out" in markdown
    assert "corpus.yaml::t::ok" not in markdown


def _spend_and_gates_report() -> dict[str, object]:
    """A report whose gates and judge spend have every optional part, as a batch, cache-only run writes."""
    from pytest_graphrag_eval.gates.suite_gates import evaluate_gates, parse_gate_list
    from pytest_graphrag_eval.report.judge_spend import spend_section

    results = [
        {"template_id": "t", "question_id": "q1", "outcome": "passed", "answer_f1": 1.0},
        {"template_id": "t", "question_id": "q2", "outcome": "not_evaluated", "judge_refusal": "batch"},
    ]
    gates = evaluate_gates(
        parse_gate_list(["answer_f1.mean>=0.5", "template[t]:answer_f1.mean>=2"], "cli"),
        {"micro": {"answer_f1": {"mean": 1.0}}, "per_template": {"t": {"answer_f1": {"mean": 1.0}}}},
    )
    spend = spend_section(
        {"calls_made": 3, "cost_usd": 0.25, "batch_requests": 2, "cache_miss_keys": ["k"]},
        results,
        max_calls=10,
        cache_only=True,
        batches=[{"id": "b1", "status": "completed", "answered": 2, "requests": 2}],
    )
    assert spend is not None
    return {
        "format_version": 2,
        "results": results,
        "aggregates": {},
        "gates": [gate.record().to_json() for gate in gates],
        "metadata": {},
        "judge_spend": spend.to_json(),
    }


def test_typed_gates_and_judge_spend_are_written_back_as_they_were_read() -> None:
    report = _spend_and_gates_report()
    document = ReportDocument.from_json(report, "report.json")
    assert [gate.passed for gate in document.gates] == [True, False]
    assert document.judge_spend is not None and document.judge_spend.batch is not None
    assert document.judge_spend.batch.unanswered_ids == ("q2",)
    assert json_bytes(document.to_json()) == json_bytes(report)


@pytest.mark.parametrize(
    ("section", "change", "field"),
    [
        ("gates", lambda gates: gates[1].update(limit="2"), "gates[1].limit"),
        ("gates", lambda gates: gates[0].pop("passed"), "gates[0].passed"),
        ("gates", lambda gates: gates.append("x"), "gates[2]"),
        ("judge_spend", lambda spend: spend.update(requests=1.5), "judge_spend.requests"),
        (
            "judge_spend",
            lambda spend: spend["batch"].update(unanswered_ids=[1]),
            "judge_spend.batch.unanswered_ids",
        ),
    ],
)
def test_a_malformed_gate_line_or_judge_spend_is_refused_naming_the_file_and_field(
    section: str, change: Any, field: str
) -> None:
    report = _spend_and_gates_report()
    change(report[section])
    with pytest.raises(InputError) as error:
        ReportDocument.from_json(report, "baseline.json")
    assert str(error.value).startswith("baseline.json") and f"field {field!r}" in str(error.value)


def _compared_report() -> dict[str, Any]:
    """A report with aggregates and a comparison as the plugin computes them, as its file holds them."""
    report = synthetic_report(40, templates=4)
    baseline = synthetic_report(40, templates=4, seed=1)
    report["comparison"] = compare_reports(baseline, report["results"], resamples=200).to_json()
    loaded: dict[str, Any] = json.loads(json_bytes(report))
    return loaded


def test_typed_aggregates_and_comparison_are_written_back_as_they_were_read() -> None:
    report = _compared_report()
    document = ReportDocument.from_json(report, "report.json")
    assert document.comparison is not None and document.aggregates.micro is not None
    assert document.comparison.regressions == report["comparison"]["regressions"]
    assert (
        document.aggregates.micro.stat("steps_score", "mean")
        == report["aggregates"]["micro"]["steps_score"]["mean"]
    )
    assert json_bytes(document.to_json()) == json_bytes(report)


@pytest.mark.parametrize(
    ("section", "change", "field"),
    [
        (
            "comparison",
            lambda comparison: comparison["questions"][3].update(classification="worse"),
            "comparison.questions[3].classification",
        ),
        (
            "comparison",
            lambda comparison: comparison["questions"][0].update(deltas={"steps_score": {"delta": "x"}}),
            "comparison.questions[0].deltas",
        ),
        (
            "comparison",
            lambda comparison: comparison["metrics"]["steps_score"].update(n_pairs="7"),
            "comparison.metrics.steps_score.n_pairs",
        ),
        ("comparison", lambda comparison: comparison.pop("outcomes"), "comparison.outcomes"),
        (
            "aggregates",
            lambda aggregates: aggregates["micro"]["steps_score"].update(mean="high"),
            "aggregates.micro.steps_score",
        ),
        (
            "aggregates",
            lambda aggregates: aggregates["micro"]["steps_score"].update(max=True),
            "aggregates.micro.steps_score",
        ),
        (
            "aggregates",
            lambda aggregates: aggregates["per_template"].update(t=[1]),
            "aggregates.per_template.t",
        ),
    ],
)
def test_a_malformed_comparison_or_aggregate_is_refused_naming_the_file_and_field(
    section: str, change: Any, field: str
) -> None:
    report = _compared_report()
    change(report[section])
    with pytest.raises(InputError) as error:
        ReportDocument.from_json(report, "baseline.json")
    assert str(error.value).startswith("baseline.json") and f"field {field!r}" in str(error.value)
