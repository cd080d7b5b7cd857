"""The review queue: which questions it lists, in which order, and why; its Markdown and CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

from pytest_graphrag_eval.judging.fingerprint import answer_fingerprint
from pytest_graphrag_eval.report.judging_summary import calibration_markdown, review_lines
from pytest_graphrag_eval.report.markdown_summary import escape_text
from pytest_graphrag_eval.report.review_queue import queue_csv, queue_markdown, review_queue


def result(question_id: str, outcome: str = "passed", **keys: Any) -> dict[str, Any]:
    return {
        "template_id": "t",
        "question_id": question_id,
        "question_text": f"{question_id}?",
        "status": "success",
        "actual_answer": f"answer of {question_id}",
        "outcome": outcome,
        "thresholds": [],
        **keys,
    }


def check(metric: str, limit: float, passed: bool) -> dict[str, Any]:
    return {
        "metric": metric,
        "op": ">=",
        "limit": limit,
        "passed": passed,
        "message": f"{metric} below {limit}",
    }


def test_each_reason_queues_a_question_and_the_most_reasons_come_first() -> None:
    report = {
        "results": [
            result("quiet", answer_judge="llm:m", answer_f1=1.0, answer_token_f1=0.9),
            result(
                "failed-judged",
                "failed",
                answer_judge="llm:m",
                answer_f1=0.4,
                answer_token_f1=0.4,
                thresholds=[check("answer_f1", 0.5, False), check("steps_score", 1, True)],
            ),
            result(
                "straddles",
                answer_judge="llm:m",
                answer_f1=0.6,
                answer_f1_min=0.4,
                answer_f1_max=0.8,
                answer_token_f1=0.6,
                thresholds=[check("answer_f1", 0.5, True)],
            ),
            result("disagrees", answer_judge="llm:m", answer_f1=1.0, answer_token_f1=0.2),
            result("lexical-only", answer_judge="lexical", answer_f1=1.0, answer_token_f1=0.2),
            result("flipped"),
            result("lapsed", review={"status": "lapsed", "by": ["bob"]}),
            result(
                "decided",
                "passed",
                answer_judge="llm:m",
                answer_f1=0.1,
                answer_token_f1=0.1,
                thresholds=[check("answer_f1", 0.5, False)],
                review={"status": "applied", "by": ["bob"]},
            ),
            {**result("agent-error"), "status": "error"},
        ],
        "comparison": {"questions": [{"question_id": "flipped", "classification": "regressed"}]},
    }
    entries = review_queue(report)
    reasons = {entry.question_id: entry.reasons for entry in entries}
    assert set(reasons) == {"failed-judged", "straddles", "disagrees", "flipped", "lapsed"}
    assert reasons["failed-judged"] == ("failed on a judged metric: answer_f1 below 0.5",)
    assert reasons["straddles"][0].startswith(
        "answer_f1 straddles its threshold 0.5 across the judge's repeats"
    )
    assert reasons["disagrees"][0].startswith("the judge and the lexical match disagree")
    assert reasons["flipped"] == ("regressed since the baseline",)
    assert reasons["lapsed"][0].startswith("the answer changed since its review (bob)")
    assert entries[0].question_id == "failed-judged"  # one reason each: failed first, then corpus order
    assert [entry.question_id for entry in entries[1:]] == ["straddles", "disagrees", "flipped", "lapsed"]
    assert entries[0].fingerprint == answer_fingerprint("answer of failed-judged")


def test_csv_cells_a_spreadsheet_would_run_are_quoted_and_markdown_is_escaped() -> None:
    hostile = '=HYPERLINK("https://example.invalid")|<img src=x>'
    report = {
        "results": [
            result(
                "q1", "failed", actual_answer=hostile, thresholds=[check("answer_f1", 1, False)], answer_f1=0
            )
        ]
    }
    entries = review_queue(report)
    rows = list(csv.reader(io.StringIO(queue_csv(entries))))
    assert rows[0] == ["question_id", "template_id", "outcome", "reasons", "answer", "fingerprint"]
    assert rows[1][4] == "'" + hostile and rows[1][5] == answer_fingerprint(hostile)
    markdown = queue_markdown(entries, escape_text)
    assert "\\<img" in markdown and "\\|" in markdown  # markup and the cell separator escaped


def test_calibration_and_reviews_in_markdown_and_terminal_keep_untrusted_text_as_text() -> None:
    section = {
        "labels_file": "labels.yaml",
        "metrics": {
            "answer_correctness": {
                "judge": "llm:m",
                "labels": 2,
                "judged": 2,
                "accuracy": 0.5,
                "kappa": None,
                "kappa_undefined": "one verdict",
                "confusion": {"both_pass": 1, "person_pass_judge_fail": 1},
                "disagreements": [
                    {
                        "question_id": "q1",
                        "by": "<b>mallory</b>",
                        "person": "pass",
                        "person_reason": "[x](https://e.invalid)",
                        "judge": "fail",
                        "judge_reason": "*no*",
                    }
                ],
            }
        },
    }
    markdown = calibration_markdown(section, escape_text)
    assert "| answer_correctness | llm:m | 2 of 2 | 0.500 | undefined | – | 1 / 0 / 1 / 0 |" in markdown
    assert "\\<b>mallory\\</b>" in markdown and "[x\\](https" in markdown and "\\*no\\*" in markdown
    lines = review_lines(
        [{"question_id": "q1", "review": {"note": "decided by review: pass by bob"}}, {"question_id": "q2"}]
    )
    assert lines == ["q1: decided by review: pass by bob"]


def test_a_judged_answer_changed_since_the_baseline_is_queued_until_a_person_decides_it() -> None:
    changed = result("q1", answer_judge="llm:m", answer_f1=1.0, answer_token_f1=1.0)
    decided = {**changed, "question_id": "q2", "review": {"status": "applied", "by": ["bob"]}}
    unjudged = result("q3")
    baseline = {question_id: {"actual_answer": "an older answer"} for question_id in ("q1", "q2", "q3")}
    entries = review_queue({"results": [changed, decided, unjudged]}, baseline)
    assert [(entry.question_id, entry.reasons) for entry in entries] == [
        ("q1", ("its judged answer changed since the baseline; no person decided the new one",))
    ]
    assert review_queue({"results": [changed]}) == []


def test_judged_keys_are_each_result_s_own_when_results_differ_in_their_keys() -> None:
    """The queue decides which keys a judge wrote once per key set: a result with other keys gets its
    own decision, never the one of the result before it."""
    custom = {"helpful_judge": "llm:m", "helpful_score": 0.2}
    report = {
        "results": [
            result("custom-judged", "failed", thresholds=[check("helpful_score", 0.5, False)], **custom),
            result("same-keys", "failed", thresholds=[check("helpful_score", 0.5, False)], **custom),
            # the same metric written by no judge: a failed threshold, nothing for a person to decide
            result("unjudged", "failed", helpful_score=0.2, thresholds=[check("helpful_score", 0.5, False)]),
            result(
                "repeats",
                helpful_score=0.6,
                helpful_score_min=0.4,
                helpful_score_max=0.8,
                thresholds=[check("helpful_score", 0.5, True)],
                **{"helpful_judge": "llm:m"},
            ),
            result(  # the same repeats, but the metric is not a judge's
                "unjudged-repeats",
                helpful_score=0.6,
                helpful_score_min=0.4,
                helpful_score_max=0.8,
                thresholds=[check("helpful_score", 0.5, True)],
            ),
        ]
    }
    reasons = {entry.question_id: entry.reasons for entry in review_queue(report)}
    assert set(reasons) == {"custom-judged", "same-keys", "repeats"}
    assert reasons["same-keys"] == ("failed on a judged metric: helpful_score below 0.5",)
    assert reasons["repeats"][0].startswith("helpful_score straddles its threshold 0.5")
