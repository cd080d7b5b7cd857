"""Every outcome is named the same way in the terminal, the JSON report, the Markdown and the HTML.

The example project's regression recording, judged by an LLM judge in cache-only mode with an empty
cache: 23 questions are not evaluated because their judge calls are missing from the cache, 2 end in an
agent error (one of them xfail). Against a baseline, the comparison leaves the 23 out; every summary must
call them "not evaluated (cache miss)" (not "judge budget", not errors), and the agent errors "agent
error", as the JSON's `outcome`, `judge_refusal` and `status` fields say.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from child_pytest import CHILD_RUN_OPTIONS
from conftest import TEST_API_KEY

ROOT = Path(__file__).resolve().parent.parent
NOT_EVALUATED = "23 not evaluated (cache miss)"


def _run(root: Path, *options: str) -> str:
    env = {**os.environ, "OPENAI_API_KEY": TEST_API_KEY, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    env["PYTEST_ADDOPTS"] = CHILD_RUN_OPTIONS  # none of the outer run's, no unrelated plugin
    command = [sys.executable, "-m", "pytest", "example_project", "-q", "-p", "no:cacheprovider", *options]
    completed = subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert completed.returncode in (0, 1), completed.stdout[-3000:] + completed.stderr[-3000:]
    return completed.stdout + completed.stderr


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Any], str, str]:
    root = tmp_path_factory.mktemp("vocabulary")
    shutil.copytree(
        ROOT / "example_project",
        root / "example_project",
        ignore=shutil.ignore_patterns("reports", "__pycache__", ".graphrag-cache"),
    )
    _run(
        root, "--graphrag-responses=example_project/recordings/responses.jsonl", "--graphrag-report=good.json"
    )
    reports = root / "example_project" / "reports"
    terminal = _run(
        root,
        "--graphrag-responses=example_project/recordings/regression.jsonl",
        "--graphrag-judge=llm",
        "--graphrag-cache-only",
        f"--graphrag-cache-dir={root / 'empty-cache'}",
        "--graphrag-baseline=good.json",
        "--graphrag-markdown=example_project/reports/summary.md",
    )
    report = json.loads((reports / "graphrag-report.json").read_text(encoding="utf-8"))
    markdown = (reports / "summary.md").read_text(encoding="utf-8")
    html = (reports / "graphrag-report.html").read_text(encoding="utf-8")
    return terminal, report, markdown, html


def test_the_json_report_says_what_the_summaries_name(run: tuple[str, dict[str, Any], str, str]) -> None:
    _, report, _, _ = run
    counted = Counter(
        (result["outcome"], result["status"], result.get("judge_refusal")) for result in report["results"]
    )
    assert counted == {
        ("not_evaluated", "success", "cache_miss"): 23,
        ("failed", "error", None): 1,
        ("xfailed", "error", None): 1,
    }
    assert len(report["comparison"]["not_evaluated"]) == 23


def test_the_terminal_names_them_alike(run: tuple[str, dict[str, Any], str, str]) -> None:
    terminal, _, _, _ = run
    assert f"25 questions: 1 failed, 1 xfailed, {NOT_EVALUATED}, 2 agent errors" in terminal
    assert f"0 removed, 0 edited, {NOT_EVALUATED}" in terminal  # the since-baseline line
    assert (
        "micro:answer_f1.mean was not computed: 23 not evaluated (cache miss) of 23 answered questions"
        in terminal
    )
    assert "judge budget" not in terminal


def test_the_markdown_names_them_alike(run: tuple[str, dict[str, Any], str, str]) -> None:
    _, _, markdown, _ = run
    assert f"**25 questions**: 1 failed, 1 xfailed, {NOT_EVALUATED}, 2 agent errors" in markdown
    assert f"0 edited, 1 unchanged, {NOT_EVALUATED}" in markdown  # the comparison
    assert "| Template | Questions | Passed | Failed | Not evaluated | Agent errors |" in markdown
    assert "with an agent error" not in markdown and "judge budget" not in markdown


def test_the_html_names_them_alike(run: tuple[str, dict[str, Any], str, str]) -> None:
    _, _, _, html = run
    assert (
        '<span class="card-value" data-testid="card-not-evaluated">23</span>'
        '<span class="card-label">not evaluated (cache miss)</span>'
    ) in html
    assert ">not evaluated (23)</option>" in html
    assert "judge budget" not in html
