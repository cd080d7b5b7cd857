"""Artifacts meant for PR pages and CI logs name no local file by the checkout's absolute path.

The example project is run from a copy of the repository's root, as its README says, with a baseline,
a Markdown summary and an HTML report; the terminal summary, the Markdown, the HTML and the JSON
report's display fields must not hold the folder the checkout lies in. A file outside the checkout
is shown as the user wrote it. The terminal names the files it wrote from the current folder (issue 44):
the path printed is the one to open from where the command ran.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_graphrag_eval.report.shown_path import printed_path, shown_path

ROOT = Path(__file__).resolve().parent.parent


def _run(root: Path, *options: str) -> str:
    command = [sys.executable, "-m", "pytest", "example_project", "-q", "-p", "no:cacheprovider", *options]
    completed = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode in (0, 1), completed.stdout[-3000:] + completed.stderr[-3000:]
    return completed.stdout + completed.stderr


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A checkout in a folder of its own (a CI runner's workspace), its regression run's terminal output,
    and a baseline kept outside it (`../baseline.json`, as written)."""
    root = tmp_path_factory.mktemp("runner-workspace") / "checkout"
    shutil.copytree(
        ROOT / "example_project",
        root / "example_project",
        ignore=shutil.ignore_patterns("reports", "__pycache__", ".graphrag-cache"),
    )
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    _run(
        root,
        "--graphrag-responses=example_project/recordings/responses.jsonl",
        "--graphrag-report=../baseline.json",
    )
    terminal = _run(
        root,
        "--graphrag-responses=example_project/recordings/regression.jsonl",
        "--graphrag-baseline=../baseline.json",
        "--graphrag-markdown=example_project/reports/summary.md",
    )
    return root, root / "example_project" / "reports", terminal


def test_the_terminal_names_no_file_by_the_checkouts_absolute_path(checkout: tuple[Path, Path, str]) -> None:
    root, _, terminal = checkout
    assert "REGRESSED: this question passed in the baseline run (../baseline.json)" in terminal
    assert "since baseline (../baseline.json)" in terminal
    # Run from the checkout's root: the ini file's reports/ folder is example_project/reports/ from here.
    assert "generated graphrag-eval Markdown summary: example_project/reports/summary.md" in terminal
    assert "generated graphrag-eval HTML report: example_project/reports/graphrag-report.html" in terminal
    assert str(root.parent) not in terminal


def test_markdown_and_html_name_no_file_by_the_checkouts_absolute_path(
    checkout: tuple[Path, Path, str],
) -> None:
    root, reports, _ = checkout
    markdown = (reports / "summary.md").read_text(encoding="utf-8")
    html = (reports / "graphrag-report.html").read_text(encoding="utf-8")
    assert "Compared with ../baseline.json" in markdown
    assert "responses: recordings/regression.jsonl" in html
    for text in (markdown, html):
        assert str(root.parent) not in text


def test_the_json_reports_display_fields_are_relative(checkout: tuple[Path, Path, str]) -> None:
    root, reports, _ = checkout
    report = json.loads((reports / "graphrag-report.json").read_text(encoding="utf-8"))
    assert report["metadata"]["corpus"] == ["corpus.yaml"]
    assert report["metadata"]["responses"] == "recordings/regression.jsonl"
    assert report["comparison"]["baseline"]["path"] == "../baseline.json"
    # Where a merge reads the baseline again, and how it names it.
    assert report["metadata"]["settings"]["baseline"]["path"] == str(root / ".." / "baseline.json")
    assert report["metadata"]["settings"]["baseline"]["name"] == "../baseline.json"


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("/ws/checkout/qa/corpus.yaml", "corpus.yaml"),  # inside the rootdir
        ("/ws/checkout/qa/../base.json", "base.json"),  # inside, once normalised
        ("/ws/checkout/../base.json", "../base.json"),  # outside, as written against the current folder
        ("/elsewhere/base.json", "/elsewhere/base.json"),  # written absolute
        ("reports/x.json", "reports/x.json"),  # already relative
    ],
)
def test_shown_path(path: str, shown: str) -> None:
    assert shown_path(Path(path), Path("/ws/checkout/qa"), Path("/ws/checkout")) == shown


@pytest.mark.parametrize(
    ("path", "printed"),
    [
        ("/ws/checkout/example_project/reports/r.json", "example_project/reports/r.json"),  # inside
        ("/ws/checkout/qa/../reports/r.json", "reports/r.json"),  # inside, once normalised
        ("/ws/base.json", "/ws/base.json"),  # outside: absolute
        ("/ws/checkout/../base.json", "/ws/base.json"),  # outside, normalised
        ("reports/x.json", "reports/x.json"),  # relative to the current folder already
    ],
)
def test_printed_path(path: str, printed: str) -> None:
    assert printed_path(Path(path), Path("/ws/checkout")) == printed
