from __future__ import annotations

import re
from typing import Any

import pytest
from compare_support import report, result
from comparison_support import compare_reports
from hypothesis import example, given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from pytest_graphrag_eval.report.markdown_summary import escape_text, render_markdown
from pytest_graphrag_eval.report_model import ReportDocument

WORD_JOINER = "\u2060"

EVIL = (
    "Pipes | and\nnew lines\r\n`code` <b>bold</b> <script>x()</script> "
    "[link](http://e.vil) ![i](x.png) $x$ # h"
)


def to_html(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


def tokens(markdown: str) -> list[Any]:
    return MarkdownIt("commonmark").enable("table").parse(markdown)


@given(st.text())
@example("\u2060")  # a word joiner of the text's own, which hypothesis found in CI
def test_escaped_text_renders_as_itself_in_one_table_cell(text: str) -> None:
    cell = escape_text(text)
    assert "\n" not in cell and "\r" not in cell
    parsed = tokens(f"| a | b |\n| --- | --- |\n| {cell} | end |\n")
    inline = [token for token in parsed if token.type == "inline"]
    assert len(inline) == 4, cell
    children = inline[2].children or []
    assert {child.type for child in children} <= {"text"}
    # The escaper's word joiners are invisible; so is one the text itself holds, so both sides drop them.
    shown = "".join(child.content for child in children).replace(WORD_JOINER, "")
    assert shown == _plain(text).replace(WORD_JOINER, "")
    assert inline[3].content == "end"


def _plain(text: str) -> str:
    """What the reader should see: the text on one line, whitespace collapsed."""
    return " ".join(re.sub(r"[\x00-\x1f\x7f\u2028\u2029]", " ", text).split())


def test_escaped_text_keeps_no_markup() -> None:
    html = to_html(escape_text(EVIL))
    for forbidden in ("<b>", "<script", "<a ", "<img", "<code>", "<h1>"):
        assert forbidden not in html
    assert "&lt;script&gt;" in html and "Pipes | and new lines" in html


def test_escape_truncates_long_text() -> None:
    assert escape_text("word " * 40, 20).endswith("…")
    assert len(escape_text("abc " * 40, 20)) <= 20


def _gate_line(
    scope: str,
    metric: str,
    stat: str | None,
    op: str,
    limit: float,
    *,
    passed: bool,
    actual: float,
    message: str,
) -> dict[str, Any]:
    """A report's gate line as the plugin writes it."""
    expression = f"{scope}:{metric}{'.' + stat if stat else ''}{op}{limit}"
    return {
        "expression": expression,
        "gate": expression,
        "passed": passed,
        "actual": actual,
        "scope": scope,
        "template": None,
        "metric": metric,
        "stat": stat,
        "op": op,
        "limit": limit,
        "change": None,
        "confidence": None,
        "source": "cli",
        "message": message,
    }


def regression_report() -> dict[str, Any]:
    baseline = report(
        [
            result("q1", steps_score=1.0, answer_f1=1.0, question_text=EVIL),
            result("q2", steps_score=1.0, answer_f1=1.0),
            result("q3", steps_score=1.0, answer_f1=0.8),
            result("q4", steps_score=0.0, answer_f1=0.1, outcome="failed"),
            result("q6", template_id="t2", steps_score=1.0, answer_f1=0.9),
        ]
    )
    current = [
        result(
            "q1", "failed", steps_score=1.0, answer_f1=0.5, question_text=EVIL, nodeid="corpus.yaml::t1::q1"
        ),
        result("q2", "failed", steps_score=0.0, answer_f1=0.0),
        result("q3", "failed", steps_score=1.0, answer_f1=0.7),
        result("q4", "passed", steps_score=1.0, answer_f1=0.9),
        result("q5", "passed", steps_score=1.0, answer_f1=1.0),
        result("q6", "failed", template_id="t2", status="error"),
    ]
    current_report = report(current)
    current_report["aggregates"] = {
        "micro": {
            "steps_score": {"mean": 0.8, "min": 0.0, "max": 1.0},
            "answer_f1": {"mean": 0.62, "min": 0.0, "max": 1.0},
            "elapsed_sec": {"mean": 2.0, "min": 1.0, "max": 3.0},
        }
    }
    current_report["gates"] = [
        _gate_line(
            "micro", "answer_f1", "mean", ">=", 0.9, passed=False, actual=0.62, message="0.62 < 0.9 | pipe"
        ),
        _gate_line("micro", "regressions", None, "<=", 5, passed=True, actual=3, message=""),
    ]
    current_report["comparison"] = compare_reports(baseline, current, resamples=200).to_json()
    return current_report


def test_summary_sections() -> None:
    markdown = render_markdown(ReportDocument.from_json(regression_report(), "report"))
    assert markdown.startswith("## ❌ GraphRAG evaluation\n")
    assert "**6 questions**: 2 passed, 4 failed, 1 agent error" in markdown
    assert "| answer_f1 | 0.620 | 0.000 | 1.000 |" in markdown
    assert "elapsed" not in markdown.split("### Gates")[0]
    assert "❌ fail" in markdown and "✅ pass" in markdown
    assert "**4 regressed**, 1 fixed, 1 new, 0 removed, 0 edited, 0 unchanged" in markdown
    assert "| pass rate | 0.800 | 0.200 | -0.600 |" in markdown
    assert "| steps_score | 0.750 | 0.750 | +0.000 |" in markdown and markdown.count("| none |") == 2
    assert "| answer_f1 | 0.725 | 0.525 | -0.200 | -1.000 … +1.000 |" in markdown


def test_worst_regressions_come_first_with_node_ids_and_old_to_new_values() -> None:
    markdown = render_markdown(ReportDocument.from_json(regression_report(), "report"), max_regressions=3)
    worst = markdown.split("#### Worst regressions (3 of 4)")[1]
    rows = [line for line in worst.splitlines() if line.startswith("| ")][2:]
    assert rows[0].startswith("| t2::q6 |") and rows[0].endswith("| passed → failed | – |")
    assert rows[1].startswith("| t1::q2 |")
    assert "steps_score 1.000 → 0.000; answer_f1 1.000 → 0.000" in rows[1]
    assert rows[2].startswith("| corpus.yaml::t1::q1 |")
    assert "passed → failed" in rows[2]
    assert "… and 1 more regressed questions." in worst


def test_every_table_row_keeps_its_cells_and_no_markup_leaks() -> None:
    markdown = render_markdown(ReportDocument.from_json(regression_report(), "report"))
    html = to_html(markdown)
    for forbidden in ("<b>", "<script", "<a ", "<img"):
        assert forbidden not in html
    parsed = tokens(markdown)
    for index, token in enumerate(parsed):
        if token.type == "tr_open":
            cells = 0
            for inner in parsed[index + 1 :]:
                if inner.type == "tr_close":
                    break
                cells += inner.type in ("td_open", "th_open")
            header = next(t for t in reversed(parsed[:index]) if t.type == "table_open")
            columns = _columns(parsed, parsed.index(header))
            assert cells == columns


def _columns(parsed: list[Any], table_index: int) -> int:
    count = 0
    for token in parsed[table_index:]:
        if token.type == "th_open":
            count += 1
        if token.type == "thead_close":
            return count
    return count


@pytest.mark.parametrize("max_regressions", [0, 10])
def test_without_comparison_or_with_no_listing(max_regressions: int) -> None:
    plain = report([result("q1")])
    markdown = render_markdown(ReportDocument.from_json(plain, "report"), max_regressions=max_regressions)
    assert markdown.startswith("## ✅ GraphRAG evaluation")
    assert "Changes since the baseline" not in markdown and "### Gates" not in markdown
    with_comparison = render_markdown(
        ReportDocument.from_json(regression_report(), "report"), max_regressions=max_regressions
    )
    assert ("Worst regressions" in with_comparison) is (max_regressions > 0)
