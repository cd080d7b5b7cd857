"""Regenerate the HTML report screenshots in docs/images from the example project's regression run.

    python .ci/html_screenshots.py

Runs `pytest example_project` on the good recording (the baseline) and on the
recorded regression, renders the regression's HTML report and photographs it in
headless Chromium (Debian's `chromium` package) with every network request blocked.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from pytest_graphrag_eval.report.html_report import write_html

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
WIDTH = 1280
# (file, page fragment, colour scheme, drill-down part scrolled to the top, viewport height)
SHOTS = (
    ("html-report-overview.png", "", "light", None, 900),
    ("html-report-question.png", "#q=ac-lines-no1-no2", "light", None, 1120),
    ("html-report-diff-dark.png", "#q=capacity-no1", "dark", "steps", 900),
    ("html-report-distributions.png", "#distributions", "light", None, 900),
    ("html-report-changes.png", "#changes", "light", None, 1000),
)


def regression_report(folder: Path) -> dict[str, Any]:
    """The recorded regression run compared with the good recording's run, as the example README shows."""
    recordings = ROOT / "example_project" / "recordings"
    run_example(folder / "good.json", "--graphrag-responses", str(recordings / "responses.jsonl"))
    data = run_example(
        folder / "regression.json",
        "--graphrag-responses",
        str(recordings / "regression.jsonl"),
        "--graphrag-baseline",
        str(folder / "good.json"),
        "--graphrag-gate",
        "regressions<=0",
    )
    data["comparison"]["baseline"]["path"] = "good.json"
    metadata = data["metadata"]
    metadata["responses"] = _relative(metadata["responses"])
    metadata["corpus"] = [_relative(path) for path in metadata["corpus"]]
    return data


def run_example(report: Path, *options: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "pytest", str(ROOT / "example_project"), "-p", "no:cacheprovider", "-q"]
    subprocess.run(
        [*command, *options, "--graphrag-report", str(report)], cwd=ROOT, capture_output=True, check=False
    )
    return json.loads(report.read_text(encoding="utf-8"))


def _relative(path: str) -> str:
    """Paths relative to the repository, so no machine path ends up in the docs."""
    return Path(path).resolve().relative_to(ROOT).as_posix()


def main() -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH (Debian: apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as folder:
        page_path = write_html(regression_report(Path(folder)), Path(folder) / "report.html")
        url = page_path.resolve().as_uri()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True)
            for name, fragment, scheme, scroll_to, height in SHOTS:
                viewport = {"width": WIDTH, "height": height}
                context = browser.new_context(viewport=viewport, color_scheme=scheme)
                context.route(
                    "**/*", lambda route: route.continue_() if route.request.url == url else route.abort()
                )
                page = context.new_page()
                page.goto(url + fragment)
                page.wait_for_selector("html[data-ready]")
                if scroll_to:
                    page.locator(f'#detail [data-testid="{scroll_to}"]').evaluate(
                        "node => { const pane = document.getElementById('detail');"
                        " pane.scrollTop = node.offsetTop - pane.offsetTop - 40; }"
                    )
                page.screenshot(path=IMAGES / name)
                context.close()
                print(f"{name}: {(IMAGES / name).stat().st_size // 1024} KB")
            browser.close()


if __name__ == "__main__":
    main()
