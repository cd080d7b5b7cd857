"""The HTML report's review view in headless Chromium: a reviewer marks verdicts and downloads the
reviews file, which the plugin then reads back; no request leaves the page."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from html_report_support import EXAMPLE, REGRESSION, run_example

from pytest_graphrag_eval.judging.fingerprint import answer_fingerprint
from pytest_graphrag_eval.judging.reviews import load_reviews
from pytest_graphrag_eval.report.html_report import write_html
from pytest_graphrag_eval.report_model import ReportDocument

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (install Debian's package: apt-get install -y chromium)"
)
# An answer that tries to break the page, the YAML file and the reviewer's spreadsheet at once.
HOSTILE = (
    'NO1"\n- question_id: evil\n  verdict: pass # </script><script>window.pwned=1</script> \u0085\u2028 =1+1'
)


@pytest.fixture(scope="module")
def reviewed_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("reviewed")
    reviews = str(EXAMPLE / "judging" / "reviews.yaml")
    return run_example(
        folder / "reviewed.json", "--graphrag-responses", str(REGRESSION), "--graphrag-reviews", reviews
    )


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 900})
        yield context
        context.close()
        browser.close()


def open_page(context: Any, report: dict[str, Any], path: Path) -> tuple[Any, list[str], list[str]]:
    url = write_html(ReportDocument.from_json(report, "report"), path).resolve().as_uri()
    blocked: list[str] = []
    errors: list[str] = []

    def route(request_route: Any) -> None:
        if request_route.request.url == url:
            request_route.continue_()
        else:
            blocked.append(request_route.request.url)
            request_route.abort()

    context.route("**/*", route)
    opened = context.new_page()
    opened.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.goto(url + "#review")
    opened.wait_for_selector("html[data-ready]")
    return opened, blocked, errors


def test_marked_verdicts_download_as_a_reviews_file_the_plugin_reads(
    page: Any, reviewed_report: dict[str, Any], tmp_path: Path
) -> None:
    report = json.loads(json.dumps(reviewed_report))
    hostile = next(result for result in report["results"] if result["question_id"] == "capacity-no2")
    hostile["actual_answer"] = HOSTILE
    opened, blocked, errors = open_page(page, report, tmp_path / "report.html")
    items = opened.locator('[data-testid="review-item"]')
    assert items.count() >= 2
    assert opened.evaluate("window.pwned") is None
    decided = opened.locator('[data-testid="decided"]').inner_text()
    assert "lines-by-length-drammen: decided by review: pass by ingrid" in decided
    hostile_item = opened.locator('[data-testid="review-item"][data-question="capacity-no2"]')
    shown = hostile_item.locator("blockquote").inner_text()
    assert "<script>window.pwned=1</script>" in shown  # the answer is text on the page, never markup
    # Without a name nothing is downloaded.
    opened.locator('[data-testid="download-reviews"]').click()
    assert "Give your name first" in opened.locator('[data-testid="review-status"]').inner_text()
    opened.locator('[data-testid="reviewer"]').fill("olav")
    for question_id, verdict, reason in (
        ("capacity-no2", "fail", "doubles the windings"),
        ("ac-lines-no1-no2", "pass", "HVDC is fine here"),
    ):
        item = opened.locator(f'[data-testid="review-item"][data-question="{question_id}"]')
        item.locator(f'[data-testid="mark-{verdict}"]').check()
        item.locator('[data-testid="review-reason"]').fill(reason)
    with opened.expect_download() as download_info:
        opened.locator('[data-testid="download-reviews"]').click()
    saved = tmp_path / "reviews.yaml"
    download_info.value.save_as(saved)
    assert blocked == [] and errors == []

    questions = {result["question_id"] for result in report["results"]}
    book = load_reviews(saved, shown="reviews.yaml", question_ids=questions)
    by_question = {review.question_id: review for review in book.reviews}
    # The two reviews that decided this run's answers are kept; the two new verdicts are added.
    assert set(by_question) == {"lines-by-length-drammen", "capacity-no1", "capacity-no2", "ac-lines-no1-no2"}
    assert by_question["capacity-no2"].answer == HOSTILE
    assert by_question["capacity-no2"].fingerprint == answer_fingerprint(HOSTILE)
    assert by_question["capacity-no2"].passed is False and by_question["capacity-no2"].by == "olav"
    assert (
        by_question["ac-lines-no1-no2"].passed
        and by_question["ac-lines-no1-no2"].reason == "HVDC is fine here"
    )
    assert (
        by_question["lines-by-length-drammen"].by == "ingrid"
        and by_question["lines-by-length-drammen"].passed
    )
    decision = book.decide("capacity-no2", HOSTILE)
    assert decision is not None and decision.applied
