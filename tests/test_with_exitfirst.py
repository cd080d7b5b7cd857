"""`-x` beside the plugin (issue 44): the run is marked interrupted in every report, with the questions
that never ran, and each gate says it was judged on a part of the corpus."""

from __future__ import annotations

import pytest
from beside_support import REPLAY, STRICT, load_json, replay_project, unblocked


def test_exitfirst_marks_the_run_interrupted_with_the_questions_left(pytester: pytest.Pytester) -> None:
    replay_project(pytester, wrong=("q1",))
    result = pytester.runpytest_subprocess(
        *REPLAY, *STRICT, "-x", "--graphrag-gate", "answer_token_f1.mean>=0",
        "--graphrag-report=report.json", "--graphrag-markdown=summary.md", "--graphrag-html=report.html",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    report = load_json(pytester.path / "report.json")
    assert report["metadata"]["interrupted"] is True
    assert report["metadata"]["partial"] == {
        "corpus_questions": 3, "selected_questions": 3, "judged_questions": 1,
        "not_run": ["q2", "q3"], "stopped": "pytest stopped: stopping after 1 failures",
    }  # fmt: skip
    result.stdout.fnmatch_lines(
        [
            "*PASS  micro:answer_token_f1.mean = *  [[]on 1 of 3 questions[]]",
            "graphrag-eval: partial run: 1 of 3 corpus questions judged (3 selected)",
            "graphrag-eval: 2 selected question(s) never ran "
            "(pytest stopped: stopping after 1 failures): q2, q3",
            "graphrag-eval: the gates were decided on the 1 question(s) judged, not on the whole corpus",
        ]
    )
    markdown = (pytester.path / "summary.md").read_text(encoding="utf-8")
    assert "**Interrupted** partial run: 1 of 3 corpus questions judged" in markdown
    assert "### Gates (on 1 of 3 questions)" in markdown
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert (
        "Partial run: 1 of 3 corpus questions judged (3 selected); 2 selected question(s) never ran" in page
    )


def test_exitfirst_marks_pytest_html_and_json_report_interrupted(pytester: pytest.Pytester) -> None:
    replay_project(pytester, wrong=("q1",))
    result = pytester.runpytest_subprocess(
        *unblocked("metadata", "html", "html_fixtures", "pytest_jsonreport"), "--html=page.html",
        "--self-contained-html", "--json-report", "--json-report-file=tests.json", *REPLAY, *STRICT, "-x",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    assert load_json(pytester.path / "tests.json")["graphrag_eval"]["interrupted"] is True
    page = (pytester.path / "page.html").read_text(encoding="utf-8")
    assert "graphrag-eval: interrupted, partial run, 1 of 3 corpus questions judged" in page
