"""The HTML renderer without a browser: page structure, escaping, data, atomic writing, bad input."""

from __future__ import annotations

import base64
import gc
import gzip
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from html_report_support import MALICIOUS, REGRESSION, run_example, with_malicious_answer
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_support import corpus, good_responses, write_corpus, write_responses
from synthetic_report import synthetic_report

from pytest_graphrag_eval.errors import InputError
from pytest_graphrag_eval.report.html_report import render_html, write_html
from pytest_graphrag_eval.report.html_report.charts import delta_bar, delta_scale, group_histograms, histogram
from pytest_graphrag_eval.report.html_report.model import build_view
from pytest_graphrag_eval.report.step_explanations import SPARQL_JSON, explain_step_mismatch
from pytest_graphrag_eval.report_model import ReportDocument


@pytest.fixture(scope="module")
def regression_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("html") / "regression.json"
    run_example(path, "--graphrag-responses", str(REGRESSION))
    return path


@pytest.fixture(scope="module")
def regression_report(regression_json: Path) -> dict[str, Any]:
    return json.loads(regression_json.read_text(encoding="utf-8"))


def embedded(page: str, block: str) -> Any:
    match = re.search(rf'<script type="application/([a-z-]+)" id="{block}"[^>]*>(.*?)</script>', page, re.S)
    assert match, f"no {block} block"
    kind, text = match.groups()
    if kind == "octet-stream":
        lines = gzip.decompress(base64.b64decode(text)).decode("utf-8").split("\n")
        return [json.loads(line) for line in lines]
    return json.loads(text)


def position_of(report: dict[str, Any], question_id: str) -> int:
    return next(i for i, result in enumerate(report["results"]) if result["question_id"] == question_id)


def test_page_is_self_contained_and_reproducible(regression_report: dict[str, Any]) -> None:
    page = render_html(ReportDocument.from_json(regression_report, "report"))
    assert render_html(ReportDocument.from_json(regression_report, "report")) == page
    assert not re.search(r"\s(src|href)\s*=\s*[\"']?(https?:|//)", page, re.I)
    assert not re.search(r"<link[^>]+stylesheet|@import|url\(", page, re.I)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy and "default-src &#39;none&#39;" in policy.group(1)


def test_plugin_writes_the_same_page(regression_json: Path, regression_report: dict[str, Any]) -> None:
    written = regression_json.with_suffix(".html").read_text(encoding="utf-8")
    assert written == render_html(ReportDocument.from_json(regression_report, "report"))


def test_untrusted_text_stays_data(regression_report: dict[str, Any]) -> None:
    page = render_html(ReportDocument.from_json(with_malicious_answer(regression_report), "report"))
    assert "window.pwned" not in page.split('id="report-details">', 1)[0]
    assert page.count("<script") == 3 and page.count("</script>") == 3
    details = embedded(page, "report-details")
    assert details[0]["actual_answer"] == MALICIOUS
    assert details[0]["steps"]["actual"][0]["output"] == MALICIOUS
    index = embedded(page, "report-index")
    assert index["text"][0].startswith("<b>bold?</b>")


def test_a_lone_surrogate_in_untrusted_text_is_written_and_read_back(tmp_path: Path) -> None:
    """An agent's broken text (a lone surrogate, which UTF-8 cannot hold) no longer stops the page: the
    JSON blocks carry its escape, which reads back as the same text, and the file is valid UTF-8."""
    answer, question = "x \udc00 y", "bad \ud800 text?"
    report = {
        "format_version": 2,
        "results": [
            {
                "template_id": "t1",
                "question_id": "q1",
                "question_text": question,
                "reference_answer": "a",
                "actual_answer": answer,
                "status": "success",
                "outcome": "passed",
                "answer_f1": 0.5,
            },
        ],
        "aggregates": {},
        "gates": [],
        "metadata": {},
    }
    path = write_html(ReportDocument.from_json(report, "report"), tmp_path / "report.html")

    page = path.read_bytes().decode("utf-8")  # strict: every byte is UTF-8
    details = embedded(page, "report-details")
    assert details[0]["actual_answer"] == answer and details[0]["question_text"] == question
    assert embedded(page, "report-index")["text"][0] == question


def test_regression_view_matches_report(regression_report: dict[str, Any]) -> None:
    view = build_view(ReportDocument.from_json(regression_report, "report"))
    micro = regression_report["aggregates"]["micro"]
    results = regression_report["results"]
    assert view.questions == len(results)
    errors = [result for result in results if result["status"] == "error"]
    assert view.agent_errors == sum(result["outcome"] != "xfailed" for result in errors) == 1
    assert view.expected_errors == sum(result["outcome"] == "xfailed" for result in errors) == 1
    assert view.micro_means["steps_score"] == micro["steps_score"]["mean"]
    assert view.micro_means["answer_f1"] == micro["answer_f1"]["mean"]
    assert view.score_metrics[:2] == ["steps_score", "answer_f1"]
    assert "input_tokens" not in view.score_metrics
    templates = list(dict.fromkeys(result["template_id"] for result in results))
    assert [row.template_id for row in view.templates] == templates
    assert sum(row.questions for row in view.templates) == len(results)


def test_unmatched_sparql_step_carries_its_row_diff(regression_report: dict[str, Any]) -> None:
    view = build_view(ReportDocument.from_json(regression_report, "report"))
    position = position_of(regression_report, "capacity-no1")
    result = regression_report["results"][position]
    steps = view.details[position]["steps"]
    unmatched = [row for row in steps["reference"] if row["scored"] and row["matches"] is None]
    assert len(unmatched) == 1
    diff = unmatched[0]["mismatch"]
    terminal = explain_step_mismatch(result["reference_steps"][-1][0], result["actual_steps"])
    assert terminal[0].startswith(f"closest actual step: {diff['closest']} — {diff['reason']}")
    assert diff["unmapped_columns"] == ["capacity"]
    assert diff["reference_table"]["rows"] == [[3590, 13]]
    assert diff["actual_table"] == {"columns": ["count", "totalMVA"], "rows": [[13, 7180]], "total": 1}


def test_extra_rows_of_an_unmatched_step(regression_report: dict[str, Any]) -> None:
    view = build_view(ReportDocument.from_json(regression_report, "report"))
    position = position_of(regression_report, "ac-lines-no1-no2")
    (unmatched,) = [row for row in view.details[position]["steps"]["reference"] if "mismatch" in row]
    diff = unmatched["mismatch"]
    assert (diff["missing_rows_total"], diff["extra_rows_total"]) == (0, 1)
    assert diff["extra_rows"][0]["name"] == "DC450 SAUDA-DRAMMEN"


def test_matched_steps_are_paired_both_ways(regression_report: dict[str, Any]) -> None:
    view = build_view(ReportDocument.from_json(regression_report, "report"))
    steps = view.details[0]["steps"]
    matched = [row for row in steps["reference"] if row["matches"]]
    assert matched
    by_id = {row["id"]: row for row in steps["actual"]}
    for row in matched:
        assert by_id[row["matches"]]["matched_by"] == row["label"]


def test_synthetic_v2_report_outcomes_and_changes() -> None:
    report = synthetic_report(300, templates=6)
    view = build_view(ReportDocument.from_json(report, "report"))
    outcomes = [result["outcome"] for result in report["results"]]
    assert view.has_outcomes
    assert view.outcome_counts["passed"] == outcomes.count("passed")
    assert view.outcome_counts["failed"] == outcomes.count("failed")
    assert view.changes is not None
    assert view.changes.counts["regressed"] == len(report["comparison"]["regressions"]) > 0
    assert len(view.changes.lists["fixed"]) == len(report["comparison"]["fixed"])
    assert sum(view.index["flaky"]) == 3
    per_template = report["comparison"]["per_template"]
    assert [row.label for row in view.changes.per_metric[0][1]] == sorted(per_template)
    failing = next(i for i, outcome in enumerate(outcomes) if outcome == "failed")
    assert view.details[failing]["thresholds"] and view.details[failing]["failures"]


def test_drill_downs_leave_the_garbage_collector_little_to_walk() -> None:
    """A drill-down's sequences of texts and numbers are tuples, which the collector stops tracking
    once it has seen them: a 10,000-question page otherwise leaves it hundreds of thousands of lists
    to walk again in each full collection (over a merged report of tens of megabytes in memory)."""
    view = build_view(ReportDocument.from_json(synthetic_report(40, templates=4), "report"))
    gc.collect()
    gc.collect()  # a tuple of tuples may be dropped only in the collection after its items are
    changed = [detail for detail in view.details if "change" in detail]
    assert changed and all(detail["steps"] for detail in view.details)
    for detail in view.details:
        for key in ("scores", "values", "failures", "reasons"):
            assert not gc.is_tracked(detail[key]), key
        for row in (*detail["steps"]["reference"], *detail["steps"]["actual"]):
            assert not gc.is_tracked(row["args"])
    for detail in changed:
        assert not gc.is_tracked(detail["change"]["deltas"])


def test_a_changes_numbers_reach_its_drill_down_as_finite_floats_or_null() -> None:
    report = synthetic_report(20, templates=2)
    question = report["comparison"]["questions"][0]
    question["deltas"] = {
        "plain": {"baseline": 0.25, "current": 0.5, "delta": 0.25},
        "whole": {"baseline": 1, "current": 3, "delta": 2},
        "not finite": {"baseline": float("nan"), "current": 2.0, "delta": float("inf")},
        "finite, their sum not": {"baseline": -1e308, "current": 1e308, "delta": 1e308},
    }
    view = build_view(ReportDocument.from_json(report, "report"))
    detail = view.details[position_of(report, question["question_id"])]
    assert detail["change"]["deltas"] == (
        ("plain", 0.25, 0.5, 0.25),
        ("whole", 1.0, 3.0, 2.0),
        ("not finite", None, 2.0, None),
        ("finite, their sum not", -1e308, 1e308, 1e308),
    )
    assert all(type(value) in (float, type(None)) for row in detail["change"]["deltas"] for value in row[1:])


def test_run_warnings_are_listed() -> None:
    report = synthetic_report(5, templates=1)
    report["warnings"] = ["3 responses answer questions that are not in the corpus <ignored>"]
    page = render_html(ReportDocument.from_json(report, "report"))
    assert "<li>3 responses answer questions that are not in the corpus &lt;ignored&gt;</li>" in page


def test_interrupted_run_is_said_so() -> None:
    report = synthetic_report(5, templates=1)
    assert 'data-testid="interrupted"' not in render_html(ReportDocument.from_json(report, "report"))
    report["metadata"]["interrupted"] = True
    page = render_html(ReportDocument.from_json(report, "report"))
    assert "Interrupted run" in page and "the 5 questions that finished" in page


def test_interrupted_outcome_is_its_own_kind() -> None:
    """A question scored in the background whose item Ctrl-C stopped is neither passed nor unknown."""
    report = synthetic_report(5, templates=1)
    report["results"][4]["outcome"] = "interrupted"
    view = build_view(ReportDocument.from_json(report, "report"))
    assert view.outcome_counts["interrupted"] == 1 and "unknown" not in view.outcome_counts
    page = render_html(ReportDocument.from_json(report, "report"))
    assert 'data-testid="card-interrupted"' in page
    index = embedded(page, "report-index")
    assert index["outcomes"][index["outcome"][4]] == "interrupted"


def test_report_without_aggregates_or_metadata_still_renders() -> None:
    report = synthetic_report(20, templates=2)
    del report["aggregates"], report["metadata"], report["gates"], report["comparison"]
    report["results"][0]["answer_f1"] = float("nan")
    page = render_html(ReportDocument.from_json(report, "report"))
    assert embedded(page, "report-details")[0]["scores"][1] == ["answer_f1", None]
    view = build_view(ReportDocument.from_json(report, "report"))
    answered = [r["steps_score"] for r in report["results"] if r["status"] == "success"]
    assert view.micro_means["steps_score"] == pytest.approx(sum(answered) / len(answered))


@pytest.mark.parametrize(
    ("report", "field"),
    [
        ({"format_version": 2, "results": {}}, "results"),
        ({"format_version": 2, "results": ["x"]}, "results"),
        ({"format_version": 2, "results": [{"template_id": "t"}]}, "question_id"),
        ({"format_version": 2, "results": [], "gates": {}}, "gates"),
        ({"format_version": 2, "results": [], "gates": [{"expression": 3}]}, "gates[0].expression"),
        ({"format_version": 2, "results": [], "comparison": []}, "comparison"),
    ],
)
def test_bad_report_names_the_field(report: Any, field: str) -> None:
    """The page is built from a report read and checked: a malformed one is refused there, by field."""
    with pytest.raises(InputError) as error:
        ReportDocument.from_json(report, "report.json")
    assert f"field {field!r}" in str(error.value)
    assert "report.json" in str(error.value)


def test_write_is_atomic_and_honours_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.html"
    write_html(ReportDocument.from_json(synthetic_report(5, templates=1), "report"), target)
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask != 0o600
    assert [path.name for path in target.parent.iterdir()] == ["report.html"]
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_histogram_bins() -> None:
    chart = histogram([0.0, 0.05, 0.5, 1.0, 1.0, None], unit_interval=True)
    counts = [bin.count for bin in chart.bins]
    assert counts == [2, 0, 0, 0, 0, 1, 0, 0, 0, 2]
    assert (chart.count, chart.missing, chart.peak) == (5, 1, 2)
    tokens = histogram([3, 4, 4, 7], unit_interval=False)
    assert [bin.count for bin in tokens.bins] == [1, 2, 0, 0, 1]
    spread = histogram([0.5, 10.0, 1000.0], unit_interval=False)
    assert sum(bin.count for bin in spread.bins) == 3 and spread.bins[-1].count == 1


def test_delta_bar_geometry() -> None:
    scale = delta_scale([-0.33, -0.5, -0.17, 0.02])
    assert scale == 0.5
    bar = delta_bar(-0.33, -0.5, -0.17, scale)
    assert (bar.zero, bar.bar_start, bar.bar_end) == (0.5, 0.17, 0.5)
    assert (bar.ci_start, bar.ci_end, bar.direction) == (0.0, 0.33, "down")
    assert delta_bar(None, None, None, 1.0).ci_start is None


def test_odd_shapes_render_without_errors() -> None:
    report = {
        "format_version": 2,
        "results": [
            {
                "template_id": "1",
                "question_id": "2",
                "outcome": "failed",
                "question_text": None,
                "reference_steps": [
                    [{"name": "sparql_query", "output_media_type": SPARQL_JSON, "output": "{"}],
                    "not a group",
                    [None, {"name": "x", "args": ["a"], "matches": 5}],
                ],
                "actual_steps": [{"name": "sparql_query", "output": {"a": 1}, "args": None, "id": 7}, "bad"],
                "steps_score": True,
                "answer_f1": "0.5",
                "attempts": "x",
                "thresholds": [1, {"limit": "x"}],
                "failures": "not a list",
            }
        ],
        "gates": [],
        "metadata": {},
    }
    view = build_view(ReportDocument.from_json(report, "report"))
    assert view.score_metrics == []
    detail = view.details[0]
    assert detail["failures"] == ()
    assert detail["thresholds"][0]["limit"] is None
    steps = detail["steps"]
    assert [row["label"] for row in steps["reference"]] == ["[0][0]", "[2][1]"]
    assert steps["reference"][1]["matches"] == "5" and steps["actual"][0]["matched_by"] is None
    assert steps["actual"][0]["output"] == '{"a": 1}'
    assert render_html(ReportDocument.from_json(report, "report")).startswith("<!DOCTYPE html>")
    report["metadata"] = {"steps_scope": "all_groups"}
    first = build_view(ReportDocument.from_json(report, "report")).details[0]["steps"]["reference"][0]
    assert first["scored"] and "reference step is invalid" in first["mismatch"]["reason"]


def test_changes_keep_scores_and_usage_on_separate_axes() -> None:
    report = synthetic_report(60, templates=3)
    comparison = report["comparison"]
    tokens = {"baseline": 150.0, "current": 180.0, "delta": 30.0, "ci_low": 12.0, "ci_high": 48.0}
    tokens.update(p_value=0.01, n_pairs=60, test="bootstrap", min_detectable_delta=20.0)
    comparison["metrics"]["input_tokens"] = tokens
    for stats in comparison["per_template"].values():
        stats["input_tokens"] = tokens
    changes = build_view(ReportDocument.from_json(report, "report")).changes
    assert changes is not None
    assert [metric for metric, _ in changes.micro] == [
        "steps_score",
        "answer_f1",
        "answer_recall",
        "answer_precision",
    ]
    ((metric, row),) = changes.micro_other
    assert (metric, row.scale, row.neutral) == ("input_tokens", 100, True)
    assert changes.scale <= 0.5
    assert [metric for metric, _ in changes.per_metric][-1] == "input_tokens"
    regressed = changes.lists["regressed"][0]
    assert [delta[0] for delta in regressed["score_deltas"]] == ["steps_score"]


def test_usage_sums_every_judge_cost_and_token_key() -> None:
    report = synthetic_report(10, templates=1)
    del report["aggregates"]
    answered = [result for result in report["results"] if result["status"] == "success"]
    for result in answered:
        result["retrieval_judge_cost"] = 0.5
        result["retrieval_judge_input_tokens"] = 10
    view = build_view(ReportDocument.from_json(report, "report"))
    usage = {label: total for label, total, _ in view.usage}
    assert usage["retrieval judge cost (USD)"] == f"${0.5 * len(answered):,.4f}"
    assert usage["retrieval judge input tokens"] == str(10 * len(answered))
    expected = sum(result["answer_eval_cost"] + 0.5 for result in answered)
    assert view.templates[0].cost == pytest.approx(expected)
    assert "retrieval_judge_cost" not in view.score_metrics


def test_interrupted_run_still_writes_the_page(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(
        "import pytest\n"
        "@pytest.hookimpl(tryfirst=True)\n"
        "def pytest_runtest_call(item):\n"
        "    if item.name == 'q3':\n"
        "        raise KeyboardInterrupt\n"
    )
    replay = ["--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl"]
    result = pytester.runpytest_subprocess(*replay, "--graphrag-html", "out/report.html")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    page = (pytester.path / "out" / "report.html").read_text(encoding="utf-8")
    assert "Interrupted run" in page
    # The questions whose items ran are reported (a replay scores a question when its item runs).
    assert embedded(page, "report-index")["id"][:2] == ["q1", "q2"]
    assert [path.name for path in (pytester.path / "out").iterdir()] == ["report.html"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.none() | st.floats(0, 1), max_size=40),
    st.lists(st.integers(0, 3), max_size=40),
    st.booleans(),
)
def test_group_histograms_are_each_groups_own_histogram(
    values: list[float | None], labels: list[int], unit_interval: bool
) -> None:
    """Scores' bins are found once for all templates: the very histograms made template by template."""
    groups: dict[str, list[int]] = {}
    for position, label in zip(range(len(values)), labels, strict=False):
        groups.setdefault(f"t{label}", []).append(position)
    charts = group_histograms(values, groups, unit_interval=unit_interval)
    assert charts[""] == histogram(values, unit_interval=unit_interval)
    for name, members in groups.items():
        assert charts[name] == histogram([values[index] for index in members], unit_interval=unit_interval)
