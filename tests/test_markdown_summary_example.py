"""The Markdown summary of the example project's regression run renders right and reads right as raw text.

GitHub renders the file on the run's summary page; terminals, CI logs and review tools show it raw. So
the rendered HTML (markdown-it-py, CommonMark with tables) must hold every table and no markup from the
data, and the raw text must carry no escapes that plain text does not need.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from html_report_support import EXAMPLE, REGRESSION, run_example
from markdown_it import MarkdownIt

from pytest_graphrag_eval.report.markdown_summary import escape_text, render_markdown
from pytest_graphrag_eval.report_model import ReportDocument

WORD_JOINER = "\u2060"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's regression run compared with its main run: its JSON report and Markdown summary."""
    folder = tmp_path_factory.mktemp("markdown")
    run_example(folder / "main.json", "--graphrag-responses", str(EXAMPLE / "recordings" / "responses.jsonl"))
    run_example(
        folder / "pr.json",
        f"--graphrag-responses={REGRESSION}",
        f"--graphrag-baseline={folder / 'main.json'}",
        f"--graphrag-markdown={folder / 'summary.md'}",
        "--graphrag-gate=delta:answer_f1.mean>=-0.02@95",
    )
    return folder


@pytest.fixture(scope="module")
def summary(run_folder: Path) -> str:
    return (run_folder / "summary.md").read_text(encoding="utf-8")


def test_the_run_writes_the_summary_of_its_json_report(run_folder: Path, summary: str) -> None:
    """The run hands the summary its results as it typed them; the file is what the report reads as."""
    report = json.loads((run_folder / "pr.json").read_text(encoding="utf-8"))
    assert summary == render_markdown(ReportDocument.from_json(report, "report"))


def _tables(markdown: str) -> dict[str, list[list[str]]]:
    """Each table's rows of cell texts, by the heading above it."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    tables: dict[str, list[list[str]]] = {}
    heading, rows = "", None
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            heading = tokens[index + 1].content
        elif token.type == "table_open":
            rows = tables.setdefault(heading, [])
        elif token.type == "tr_open" and rows is not None:
            rows.append([])
        elif token.type == "inline" and rows is not None and tokens[index - 1].type in ("td_open", "th_open"):
            rows[-1].append(token.content)
        elif token.type == "table_close":
            rows = None
    return tables


def test_it_renders_every_table_and_no_markup(summary: str) -> None:
    html = MarkdownIt("commonmark").enable("table").render(summary)
    for forbidden in ("<a ", "<img", "<script", "<em>", "<strong>steps", "<code>"):
        assert forbidden not in html
    tables = _tables(summary)
    assert set(tables) >= {
        "Aggregates (all questions)",
        "Per template",
        "Gates",
        "Changes since the baseline",
        "Worst regressions (9 of 9)",
    }
    per_template = tables["Per template"]
    assert per_template[0][:5] == ["Template", "Questions", "Passed", "Failed", "Agent errors"]
    assert len(per_template) == 1 + 8  # the header and the example's eight templates
    assert sum(int(row[1]) for row in per_template[1:]) == 25
    assert sum(int(row[3]) for row in per_template[1:]) == 9


def test_it_reads_as_plain_text(summary: str) -> None:
    assert "\\" not in summary and "&amp;" not in summary and WORD_JOINER not in summary
    assert re.search(r"\(started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", summary)
    assert "| micro:steps_score.mean>=0.95 | ❌ fail |" in summary
    assert "| steps_score | 0.652 | 0.000 | 1.000 |" in summary
    (gate,) = [
        line for line in summary.splitlines() if line.startswith("| delta:micro:answer_f1.mean>=-0.02@95 |")
    ]
    assert "95% interval [" in gate and "✅ pass" in gate


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("ping @octocat now", "ping @octocat now"),
        ("see https://e.vil/x or www.e.vil", "see https://e.vil/x or www.e.vil"),
        ("mail a@b.co", "mail a@b.co"),
        ("retrieval_ndcg@5", "retrieval_ndcg@5"),
    ],
)
def test_mentions_and_bare_links_stay_text_on_github(text: str, rendered: str) -> None:
    """GitHub links these in text; an invisible word joiner keeps each from matching, nothing else changes."""
    cell = escape_text(text)
    assert cell.replace(WORD_JOINER, "") == rendered
    assert not re.search(r"(?<!\w)@\w|://|www\.|\w@[\w.]+\.\w", cell.replace("ndcg@5", ""))


def test_the_reviews_section_lists_each_reviewed_question_once_and_no_other() -> None:
    """Only results holding a review reach the section (the summary hands it no other), in corpus order."""

    def result(question_id: str, **extra: object) -> dict[str, object]:
        return {
            "template_id": "t",
            "question_id": question_id,
            "outcome": "passed",
            "status": "success",
            **extra,
        }

    results = [
        result("kept", review={"status": "applied", "note": "a person passed it"}),
        result("plain"),
        result("null", review=None),
        result("lapsed", review={"status": "lapsed", "note": "the answer changed"}),
    ]
    summary = render_markdown(ReportDocument.from_json({"format_version": 2, "results": results}, "r.json"))
    section = summary.split("### Reviews\n\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == ["- `kept`: a person passed it", "- `lapsed`: the answer changed"]
