"""Benchmark: the HTML report of 10,000 questions opens and becomes interactive in headless Chromium.

Budget (issue 12): a 10,000-question report becomes interactive (its script has
parsed the question index, drawn the list and marked the page ready) in under
2 s in headless Chromium, measured by the page itself from navigation start.
An empty page is opened side by side in the same browser as the reference.
Also printed: render time in Python, file size per 1,000 questions, the time
to apply a search filter and to open a question's drill-down (which parses the
details block on first use).

    python benchmarks/bench_html_report.py           # 10,000 questions, checks the budget
    python benchmarks/bench_html_report.py --quick   # 500 questions, only checks that it works

Needs Chromium on PATH (Debian: apt-get install -y chromium) and the playwright
package; without them it prints why and exits successfully.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from timing import announce_quick

from pytest_graphrag_eval.report.html_report import write_html
from pytest_graphrag_eval.report_model import ReportDocument

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the test harnesses
from synthetic_report import synthetic_report

BUDGET_QUESTIONS = 10_000
BUDGET_MS = 2000.0
RUNS = 3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 questions, no budget check")
    arguments = parser.parse_args()
    announce_quick(arguments.quick)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("bench_html_report: skipped, the playwright package is not installed (it is in the test extra)")
        return 0
    if chromium is None:
        print("bench_html_report: skipped, no chromium on PATH (Debian: apt-get install -y chromium)")
        return 0
    questions = 500 if arguments.quick else BUDGET_QUESTIONS
    report = synthetic_report(questions, templates=40)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        path = write_html(ReportDocument.from_json(report, "report"), Path(folder) / "report.html")
        render_sec = time.perf_counter() - started
        blank = Path(folder) / "blank.html"
        blank.write_text("<!DOCTYPE html><title>blank</title><p>blank</p>", encoding="utf-8")
        size = path.stat().st_size
        print(f"questions: {questions}, templates: 40")
        print(f"render + write: {render_sec:.2f} s")
        print(f"file size: {size / 1e6:.1f} MB ({size / questions * 1000 / 1e6:.2f} MB per 1,000 questions)")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True)
            try:
                figures = [measure(browser, path, blank) for _ in range(RUNS)]
            finally:
                browser.close()
    summary = {key: statistics.median(run[key] for run in figures) for key in figures[0]}
    print(f"blank page load (median of {RUNS}): {summary['blank_ms']:.0f} ms")
    print(f"report interactive (median of {RUNS}): {summary['ready_ms']:.0f} ms", end="")
    print(f" ({summary['ready_ms'] / max(summary['blank_ms'], 1.0):.1f}x the blank page)")
    print(f"search filter applied: {summary['filter_ms']:.0f} ms")
    print(f"first drill-down opened: {summary['drill_ms']:.0f} ms")
    if arguments.quick:
        print("quick run: works (no budget check)")
        return 0
    if summary["ready_ms"] > BUDGET_MS:
        print(f"FAIL: {summary['ready_ms']:.0f} ms > {BUDGET_MS:.0f} ms budget")
        return 1
    print(f"OK: within the {BUDGET_MS:.0f} ms budget")
    return 0


def measure(browser: Any, report: Path, blank: Path) -> dict[str, float]:
    """One cold open of each page in a fresh context, with every request but the file blocked."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        blocked: list[str] = []
        allowed = {report.resolve().as_uri(), blank.resolve().as_uri()}

        def route(request_route: Any) -> None:
            if request_route.request.url.split("#")[0] in allowed:
                request_route.continue_()
            else:
                blocked.append(request_route.request.url)
                request_route.abort()

        context.route("**/*", route)
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(blank.resolve().as_uri(), wait_until="load")
        blank_ms = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        page.goto(report.resolve().as_uri() + "#questions")
        page.wait_for_selector("html[data-ready]")
        ready_ms = page.evaluate("window.graphragReportReadyMs")
        started = time.perf_counter()
        page.fill("#f-search", "E0004")
        page.locator("#f-count").filter(has_text=" of ").wait_for()
        filter_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        page.locator(".qrow").first.click()
        page.wait_for_selector(".detail [data-question]")
        drill_ms = (time.perf_counter() - started) * 1000
        if blocked or errors:
            raise SystemExit(f"the page misbehaved: blocked requests {blocked}, console errors {errors}")
        return {"blank_ms": blank_ms, "ready_ms": ready_ms, "filter_ms": filter_ms, "drill_ms": drill_ms}
    finally:
        context.close()


if __name__ == "__main__":
    sys.exit(main())
