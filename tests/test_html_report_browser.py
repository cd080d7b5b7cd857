"""The HTML report in a real headless Chromium (Debian's package), with every network request blocked.

Each page is opened from a file; a route aborts any request that is not the file
itself and records it, so the tests can assert that no request was attempted.
Console errors (including Content-Security-Policy violations) fail the test.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from html_report_support import MALICIOUS, REGRESSION, run_example, with_malicious_answer
from synthetic_report import synthetic_report

from pytest_graphrag_eval.generate.coverage import RDF_TYPE, Coverage, GraphTerms
from pytest_graphrag_eval.report.html_report import write_html
from pytest_graphrag_eval.report_model import ReportDocument

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
expect = sync_api.expect
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (install Debian's package: apt-get install -y chromium)"
)


@dataclass
class OpenedPage:
    page: Any
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def assert_clean(self, url: str) -> None:
        assert self.blocked == [], f"the page tried to reach the network: {self.blocked}"
        assert self.requests == [url]
        assert self.errors == []

    def count_text(self) -> str:
        return str(self.page.locator("#f-count").inner_text())


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield instance
        instance.close()


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("reports")
    good = run_example(folder / "good.json")
    baseline = ("--graphrag-baseline", str(folder / "good.json"))
    return {
        "good": good,
        "regression": run_example(folder / "regression.json", "--graphrag-responses", str(REGRESSION)),
        "compared": run_example(
            folder / "compared.json",
            "--graphrag-responses",
            str(REGRESSION),
            *baseline,
            "--graphrag-gate=delta:answer_f1.mean>=-0.02@95",
        ),
        "synthetic": synthetic_report(400, templates=8),
    }


@pytest.fixture
def open_report(browser: Any, tmp_path: Path) -> Iterator[Any]:
    contexts = []

    def opener(report: dict[str, Any], fragment: str = "", color_scheme: str = "light") -> OpenedPage:
        path = write_html(
            ReportDocument.from_json(report, "report"), tmp_path / f"report-{len(contexts)}.html"
        )
        url = path.resolve().as_uri()
        context = browser.new_context(color_scheme=color_scheme, viewport={"width": 1400, "height": 900})
        contexts.append(context)
        opened = OpenedPage(context.new_page())

        def route(request_route: Any) -> None:
            if request_route.request.url == url:
                request_route.continue_()
            else:
                opened.blocked.append(request_route.request.url)
                request_route.abort()

        context.route("**/*", route)
        opened.page.on("request", lambda request: opened.requests.append(request.url))
        opened.page.on(
            "console", lambda message: opened.errors.append(message.text) if message.type == "error" else None
        )
        opened.page.on("pageerror", lambda error: opened.errors.append(str(error)))
        opened.page.goto(url + fragment)
        opened.page.wait_for_selector("html[data-ready]")
        return opened

    yield opener
    for context in contexts:
        context.close()


def card(opened: OpenedPage, key: str) -> str:
    return str(opened.page.locator(f'[data-testid="card-{key}"]').inner_text())


def searchable(result: dict[str, Any]) -> str:
    return (result["question_id"] + "\n" + result["question_text"]).lower()


def test_overview_numbers_equal_the_json_report(open_report: Any, reports: dict[str, Any]) -> None:
    report = reports["regression"]
    opened = open_report(report)
    results = report["results"]
    assert card(opened, "questions") == str(len(results))
    errors = [result for result in results if result["status"] == "error"]
    expected = sum(result.get("outcome") == "xfailed" for result in errors)
    assert card(opened, "agent-errors") == str(len(errors) - expected)
    if expected:
        assert card(opened, "expected-errors") == str(expected)
    gates = report["gates"]
    assert card(opened, "gates-passed") == f"{sum(gate['passed'] for gate in gates)} / {len(gates)}"
    gate_values = opened.page.locator('[data-testid="gate-value"]').evaluate_all(
        "cells => cells.map(cell => Number(cell.dataset.value))"
    )
    assert gate_values == [gate["actual"] for gate in gates]
    micro = report["aggregates"]["micro"]
    for metric in ("steps_score", "answer_f1", "answer_recall"):
        cell = opened.page.locator(f'[data-testid="micro-row"] td[data-metric="{metric}"] .score')
        assert float(cell.get_attribute("data-value")) == micro[metric]["mean"]
    rows = opened.page.locator('[data-testid="templates"] tbody tr').count()
    assert rows == len(report["aggregates"]["per_template"])
    assert opened.page.locator('[data-testid="verdict"]').text_content() == "Failed"
    outcomes = [result.get("outcome") for result in results]
    if all(outcomes):  # reports that record each question's pytest outcome
        assert card(opened, "passed") == str(outcomes.count("passed"))
        assert card(opened, "failed") == str(outcomes.count("failed"))
    opened.assert_clean(opened.page.url)


def test_overview_links_and_histogram_template(open_report: Any, reports: dict[str, Any]) -> None:
    report = reports["regression"]
    opened = open_report(report)
    page = opened.page
    template = report["results"][-2]["template_id"]
    page.locator(f'[data-testid="templates"] tr[data-template="{template}"] a').click()
    expect(page.locator("#questions")).to_be_visible()
    members = [r["question_id"] for r in report["results"] if r["template_id"] == template]
    expect(page.locator("#f-count")).to_have_text(re.compile(rf"^{len(members)} of"))
    assert page.locator(".qrow").evaluate_all("rows => rows.map(row => row.dataset.qid)") == members
    page.locator('a[data-tab="distributions"]').click()
    charts = page.locator('.hist-card[data-metric="steps_score"] .hist')
    expect(charts.locator("visible=true")).to_have_count(1)
    assert charts.locator("visible=true").get_attribute("data-template") == ""
    page.select_option("#hist-template", template)
    assert charts.locator("visible=true").get_attribute("data-template") == template
    opened.assert_clean(page.url.split("#")[0])


def test_good_run_is_green_and_clean(open_report: Any, reports: dict[str, Any]) -> None:
    opened = open_report(reports["good"])
    assert opened.page.locator('[data-testid="verdict"]').text_content() == "Passed"
    report = reports["good"]
    errors = sum(
        result["status"] == "error" and result["outcome"] != "xfailed" for result in report["results"]
    )
    assert card(opened, "agent-errors") == str(errors) == "0"  # the xfailed question's error is expected
    assert opened.page.locator('[data-card="agent-errors"]').get_attribute("class") == "card muted"
    assert card(opened, "expected-errors") == "1"
    assert opened.page.locator(".card.bad").count() == 0  # nothing red on a passing run
    opened.page.locator('a[data-tab="distributions"]').click()
    expect(opened.page.locator("#distributions")).to_be_visible()
    expect(opened.page.locator("#overview")).to_be_hidden()
    opened.assert_clean(opened.page.url.split("#")[0])


def test_filters_narrow_the_question_list(open_report: Any, reports: dict[str, Any]) -> None:
    report = reports["regression"]
    opened = open_report(report, "#questions")
    page = opened.page
    total = len(report["results"])
    assert opened.count_text() == f"{total} questions"
    page.fill("#f-search", "Capacity")
    expected = [r["question_id"] for r in report["results"] if "capacity" in searchable(r)]
    assert 0 < len(expected) < total
    expect(page.locator("#f-count")).to_have_text(re.compile(rf"^{len(expected)} of"))
    ids = page.locator(".qrow").evaluate_all("rows => rows.map(row => row.dataset.qid)")
    assert ids == expected
    page.fill("#f-search", "")
    page.fill("#f-below", "1")
    low = [r["question_id"] for r in report["results"] if r.get("steps_score", 1) < 1]
    expect(page.locator("#f-count")).to_have_text(re.compile(rf"^{len(low)} of"))
    assert page.locator(".qrow").evaluate_all("rows => rows.map(row => row.dataset.qid)") == low
    page.select_option("#f-metric", "answer_f1")
    page.fill("#f-below", "")
    page.select_option("#f-order", "metric")
    expect(page.locator("#f-count")).to_have_text(f"{total} questions")
    answered = [r for r in report["results"] if "answer_f1" in r]
    lowest = min(answered, key=lambda r: r["answer_f1"])["question_id"]
    expect(page.locator(".qrow").first).to_have_attribute("data-qid", lowest)
    template = report["results"][0]["template_id"]
    page.select_option("#f-template", label=template)
    in_template = [r["question_id"] for r in report["results"] if r["template_id"] == template]
    expect(page.locator("#f-count")).to_have_text(re.compile(rf"^{len(in_template)} of"))
    page.click("#f-reset")
    expect(page.locator("#f-count")).to_have_text(f"{total} questions")
    opened.assert_clean(page.url.split("#")[0])


def test_drill_down_shows_the_step_diff(open_report: Any, reports: dict[str, Any]) -> None:
    opened = open_report(reports["regression"], "#questions")
    page = opened.page
    page.fill("#f-search", "ac-lines-no1")
    page.locator('.qrow[data-qid="ac-lines-no1-no2"]').click()
    diff = page.locator('[data-testid="row-diff"]')
    diff.wait_for()
    extra = diff.locator('[data-testid="extra-rows"]')
    assert "DC450 SAUDA-DRAMMEN" in extra.locator("tbody").inner_text()
    assert extra.locator("thead th").all_inner_texts() == ["line", "name"]
    assert page.locator('[data-testid="reference-steps"] tr.unmatched').count() == 1
    answers = page.locator('[data-testid="answers"]').inner_text()
    assert "L420 DRAMMEN-GRIMSTAD" in answers and "DC450 SAUDA-DRAMMEN" in answers
    page.goto(page.url.split("#")[0] + "#q=capacity-no1")
    page.wait_for_selector('[data-question="capacity-no1"] [data-testid="row-diff"]')
    tables = page.locator('[data-question="capacity-no1"] table.result').all_inner_texts()
    assert "3590" in tables[0] and "7180" in tables[1]
    opened.assert_clean(page.url.split("#")[0])


def test_example_regression_against_the_good_run(open_report: Any, reports: dict[str, Any]) -> None:
    report = reports["compared"]
    comparison = report["comparison"]
    opened = open_report(report, "#changes")
    page = opened.page
    regressions = comparison["regressions"]
    assert page.locator('[data-testid="regressed-list"] li b').all_inner_texts() == regressions
    steps = page.locator('[data-testid="micro-deltas"] tr:has(th:text-is("steps_score"))')
    assert (
        steps.locator("td.delta").inner_text() == f"−{abs(comparison['metrics']['steps_score']['delta']):.3g}"
    )
    first_table = page.locator('[data-testid="template-deltas"]').first
    assert first_table.locator("tbody tr").count() == sum(
        "steps_score" in stats for stats in comparison["per_template"].values()
    )
    page.locator('[data-filter-change="regressed"]').click()
    expect(page.locator("#f-count")).to_have_text(re.compile(rf"^{len(regressions)} of"))
    assert page.locator(".qrow").evaluate_all("rows => rows.map(row => row.dataset.qid)") == regressions
    page.locator('.qrow[data-qid="capacity-no1"]').click()
    deltas = page.locator('[data-question="capacity-no1"] [data-testid="question-deltas"]')
    expect(deltas).to_contain_text("steps_score")
    opened.assert_clean(page.url.split("#")[0])


def test_format_two_report_with_comparison(open_report: Any, reports: dict[str, Any]) -> None:
    report = reports["synthetic"]
    opened = open_report(report, "#changes")
    page = opened.page
    outcomes = [result["outcome"] for result in report["results"]]
    assert card(opened, "passed") == str(outcomes.count("passed"))
    assert card(opened, "failed") == str(outcomes.count("failed"))
    regressions = report["comparison"]["regressions"]
    assert card(opened, "regressed") == str(len(regressions))
    listed = page.locator('[data-testid="regressed-list"] li b').all_inner_texts()
    assert listed == regressions
    template_rows = page.locator('[data-testid="template-deltas"]').first.locator("tbody tr").count()
    assert template_rows == len(report["comparison"]["per_template"])
    page.locator('[data-filter-change="regressed"]').click()
    expect(page.locator("#f-count")).to_have_text(re.compile(rf"^{len(regressions)} of"))
    page.click("#f-reset")
    page.check("#f-flaky")
    expect(page.locator("#f-count")).to_have_text(re.compile(r"^4 of"))
    first = page.locator(".qrow").first
    first.click()
    page.wait_for_selector('[data-testid="thresholds"]')
    assert page.locator(".detail .pill.flaky").count() == 1
    opened.assert_clean(page.url.split("#")[0])


def test_large_list_is_virtualised(open_report: Any, reports: dict[str, Any]) -> None:
    opened = open_report(reports["synthetic"], "#questions")
    page = opened.page
    rendered = page.locator(".qrow").count()
    assert 0 < rendered < 60
    page.locator("#qlist").evaluate("list => { list.scrollTop = list.scrollHeight; }")
    expect(page.locator(".qrow").last).to_have_attribute("data-qid", "q00399")
    opened.assert_clean(page.url.split("#")[0])


def test_untrusted_text_is_shown_as_text(open_report: Any, reports: dict[str, Any]) -> None:
    report = with_malicious_answer(reports["regression"])
    first = report["results"][0]["question_id"]
    opened = open_report(report, f"#q={first}", color_scheme="dark")
    page = opened.page
    page.wait_for_selector(f'[data-question="{first}"]')
    assert page.evaluate("window.pwned") is None
    assert MALICIOUS in page.locator('[data-testid="answers"]').inner_text()
    assert page.locator(f'[data-question="{first}"] img').count() == 0
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(15, 18, 23)"
    opened.assert_clean(page.url.split("#")[0])


def test_question_ids_shared_by_two_templates(open_report: Any) -> None:
    report = synthetic_report(4, templates=2)
    for result, change in zip(report["results"][:2], report["comparison"]["questions"][:2], strict=True):
        result["question_id"] = change["question_id"] = "shared"
    second = report["results"][1]["template_id"]
    opened = open_report(report, f"#q={second}/shared")
    page = opened.page
    page.wait_for_selector('[data-question="shared"]')
    assert page.locator(".detail code").first.inner_text() == second
    links = page.locator('.qrow[data-qid="shared"]').evaluate_all("rows => rows.map(row => row.hash)")
    assert links == [f"#q={report['results'][0]['template_id']}/shared", f"#q={second}/shared"]
    opened.assert_clean(page.url.split("#")[0])


def test_keyboard_moves_through_the_list(open_report: Any, reports: dict[str, Any]) -> None:
    report = reports["regression"]
    ids = [result["question_id"] for result in report["results"]]
    opened = open_report(report, f"#q={ids[0]}")
    page = opened.page
    page.wait_for_selector(f'[data-question="{ids[0]}"]')
    page.locator("#qlist").focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.wait_for_selector(f'[data-question="{ids[2]}"]')
    expect(page.locator('.qrow[aria-selected="true"]')).to_have_attribute("data-qid", ids[2])
    opened.assert_clean(page.url.split("#")[0])


def test_without_javascript_the_summary_still_shows(
    browser: Any, reports: dict[str, Any], tmp_path: Path
) -> None:
    report = reports["compared"]
    path = write_html(ReportDocument.from_json(report, "report"), tmp_path / "report.html")
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(path.resolve().as_uri())
        for section in ("#overview", "#distributions", "#changes"):
            expect(page.locator(section)).to_be_visible()
        assert page.locator('[data-testid="card-questions"]').inner_text() == str(len(report["results"]))
        regressed = page.locator('[data-testid="regressed-list"] li b').all_inner_texts()
        assert regressed == report["comparison"]["regressions"]
    finally:
        context.close()


def test_colour_follows_a_verdict(open_report: Any, reports: dict[str, Any]) -> None:
    """Green or red only where a gate (overview) or a threshold (a question) judged the score."""
    opened = open_report(reports["regression"])
    page = opened.page
    verdicts = page.locator('[data-testid="templates"] .score[data-verdict]').evaluate_all(
        "cells => cells.map(cell => [cell.closest('td').dataset.metric, cell.dataset.verdict])"
    )
    # The example's ini gates: steps_score.mean>=0.95 fails on the regression run, answer_f1.mean>=0.9 passes.
    assert verdicts == [["steps_score", "fail"], ["answer_f1", "pass"]]
    coloured = page.locator(
        '[data-testid="templates"] .sbar .fill.pass, [data-testid="templates"] .sbar .fill.fail'
    )
    assert coloured.count() == 2
    fills = page.locator('[data-testid="templates"] tbody .sbar .fill').evaluate_all(
        "rects => [...new Set(rects.map(rect => getComputedStyle(rect).fill))]"
    )
    neutral = page.evaluate("getComputedStyle(document.body).getPropertyValue('--neutral').trim()")
    assert len(fills) == 1 and neutral  # every template row's bar has the one neutral colour
    page.goto(page.url.split("#")[0] + "#q=capacity-no1")
    scores = page.locator('[data-question="capacity-no1"] [data-testid="scores"] > div')
    scores.first.wait_for()
    judged = scores.evaluate_all(
        "rows => rows.filter(row => row.dataset.verdict)"
        ".map(row => [row.querySelector('.name').textContent, row.dataset.verdict])"
    )
    (result,) = [
        result for result in reports["regression"]["results"] if result["question_id"] == "capacity-no1"
    ]
    expected = sorted(
        [check["metric"], "pass" if check["passed"] else "fail"] for check in result["thresholds"]
    )
    assert sorted(judged) == expected and len(expected) == 2  # steps_score and answer_f1 have thresholds
    failed = sum(verdict == "fail" for _, verdict in expected)
    assert page.locator('[data-question="capacity-no1"] [data-testid="scores"] .value.fail').count() == failed
    opened.assert_clean(page.url.split("#")[0])


def test_a_gate_on_change_shows_its_interval(open_report: Any, reports: dict[str, Any]) -> None:
    report = reports["compared"]
    (gate,) = [gate for gate in report["gates"] if gate.get("confidence")]
    opened = open_report(report)
    detail = opened.page.locator('[data-testid="gate-detail"]')
    assert detail.count() == 1
    text = detail.inner_text()
    assert text == gate["message"] and re.search(r"95% interval \[-?[\d.]+, -?[\d.]+\]", text)
    opened.assert_clean(opened.page.url)


@pytest.mark.parametrize("name", ["good", "regression", "compared", "synthetic"])
def test_no_table_overflows_a_1400_px_window(open_report: Any, reports: dict[str, Any], name: str) -> None:
    opened = open_report(reports[name])
    page = opened.page
    for tab in ("overview", "distributions", "changes"):
        link = page.locator(f'a[data-tab="{tab}"]')
        if not link.count():
            continue
        link.click()
        overflowing = page.locator(".table-wrap").evaluate_all(
            "wraps => wraps.filter(wrap => wrap.offsetParent && wrap.scrollWidth > wrap.clientWidth + 1)"
            ".map(wrap => [wrap.querySelector('table').className, wrap.scrollWidth, wrap.clientWidth])"
        )
        assert overflowing == [], tab
        width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width[0] <= width[1], tab
    opened.assert_clean(page.url.split("#")[0])


def test_the_coverage_tab_shows_the_graph_s_terms_as_text(open_report: Any) -> None:
    hostile = f"http://example.org/{MALICIOUS}"  # text from the graph and the corpus stays text
    graph = GraphTerms({hostile: 2, "https://cim.ucaiug.io/ns#Substation": 5}, {RDF_TYPE: 7})
    coverage = Coverage(graph, frozenset({RDF_TYPE}), {MALICIOUS: frozenset({RDF_TYPE})}, {})
    report = synthetic_report(20, templates=2)
    report["metadata"]["graph_coverage"] = coverage.to_dict()
    opened = open_report(report)
    page = opened.page
    expect(page.locator("#coverage")).to_be_hidden()
    page.locator('a[data-tab="coverage"]').click()
    expect(page.locator("#coverage")).to_be_visible()
    assert page.locator('[data-testid="coverage-totals"]').inner_text() == (
        "Reference queries name 0 of 2 classes and 1 of 1 properties of the graph."
    )
    assert page.locator('[data-testid="untested-classes"] tbody tr').all_inner_texts() == [
        "<https://cim.ucaiug.io/ns#Substation>\t5",
        f"<{hostile}>\t2",
    ]
    assert page.locator('[data-testid="coverage-templates"] tbody tr').all_inner_texts() == [
        f"{MALICIOUS}\t0\t1"
    ]
    assert page.evaluate("window.pwned") is None
    opened.assert_clean(page.url.split("#")[0])
