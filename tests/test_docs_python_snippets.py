"""Every Python snippet of the docs runs as written, or says why it cannot.

A snippet is run in a workspace where `qa/` holds the example project's corpus and recording (the docs'
name for a project of the reader's own) and `reports/` the example's JSON report, also where a run of the
example project from the repository's root leaves it (`example_project/reports/`). A line written
`expression  # value` must give that value. A snippet that needs the reader's own agent or an API key
carries `<!-- not run: why -->` on the line before its fence; the test holds that every other snippet runs.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "example_project"
FENCE = re.compile(r"^(?:(<!-- not run: (?P<why>.+?) -->)\n)?```python\n(?P<code>.*?)^```", re.M | re.S)
CHECKED_LINE = re.compile(r"^(?P<expr>[^#\n]+?)\s+# (?P<value>[-0-9.]+)$")


def snippets() -> list[tuple[str, str, str | None]]:
    """(page#index, code, why it is not run) of every Python block in the docs."""
    found = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for index, match in enumerate(FENCE.finditer(page.read_text(encoding="utf-8")), 1):
            found.append((f"{page.name}#{index}", match["code"], match["why"]))
    return found


SNIPPETS = snippets()
RUNNABLE = [pytest.param(code, id=name) for name, code, why in SNIPPETS if why is None]


def test_every_snippet_runs_or_says_why_not() -> None:
    assert len(RUNNABLE) >= 5, "the docs' runnable snippets were not found"
    for name, _code, why in SNIPPETS:
        assert why is None or len(why.split()) >= 3, f"{name}: say in a few words why it is not run"


@pytest.fixture(scope="module")
def example_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example project's JSON report, written by a real plugin run on its recording."""
    report = tmp_path_factory.mktemp("example") / "graphrag-report.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--graphrag-report={report}"],
        cwd=EXAMPLE,
        check=False,
        capture_output=True,
    )
    assert report.is_file(), "the example project wrote no report"
    return report


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example_report: Path) -> Path:
    qa = tmp_path / "qa"
    qa.mkdir()
    shutil.copy(EXAMPLE / "corpus.yaml", qa / "corpus.yaml")
    for name in ("responses.jsonl", "responses.json"):
        shutil.copy(EXAMPLE / "recordings" / "responses.jsonl", qa / name)
    (tmp_path / "reports").mkdir()
    shutil.copy(example_report, tmp_path / "reports" / "graphrag-report.json")
    (tmp_path / "example_project" / "reports").mkdir(parents=True)
    shutil.copy(example_report, tmp_path / "example_project" / "reports" / "graphrag-report.json")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("code", RUNNABLE)
def test_python_snippet_runs_as_written(workspace: Path, code: str) -> None:
    namespace: dict[str, Any] = {"__name__": "__snippet__"}
    exec(compile(code, "<docs snippet>", "exec"), namespace)  # the docs' own text
    for line in code.splitlines():
        checked = CHECKED_LINE.match(line)
        if checked:
            got = eval(checked["expr"], namespace)  # the expression the docs show a value for
            assert got == pytest.approx(ast.literal_eval(checked["value"])), line
