"""The HTML report's review view: calibration, queue, and a form whose verdicts become a reviews file
to download; the downloaded file holds this run's deciding reviews too, so it replaces the old one.
Queue texts travel as encoded data, never as markup."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_graphrag_eval.judging.fingerprint import answer_fingerprint
from pytest_graphrag_eval.report.judging_summary import calibration_lines, review_lines
from pytest_graphrag_eval.report.review_queue import review_queue


@dataclass(frozen=True)
class ReviewView:
    """What the review tab shows; `items` and `existing` also go to the page's script as JSON."""

    calibration: list[str]
    labels_file: str | None
    decided: list[str]  # the questions a person decided in this run, and the reviews that lapsed
    items: list[dict[str, Any]] = field(default_factory=list)
    existing: list[dict[str, Any]] = field(default_factory=list)

    @property
    def encoded(self) -> str:
        """`items` and `existing` as base64 of ASCII JSON, for the section's `data-review` attribute:
        answers (untrusted) reach the page only as data its script inserts as text nodes."""
        text = json.dumps({"items": self.items, "existing": self.existing}, allow_nan=False, default=str)
        return base64.b64encode(text.encode("ascii")).decode("ascii")


def build_review_view(report: Mapping[str, Any]) -> ReviewView | None:
    """None when the run has nothing to review, no calibration and no review."""
    calibration = report.get("judge_calibration")
    items = [entry.to_dict() for entry in review_queue(report)]
    reviewed = [
        result
        for result in report.get("results") or []
        if (type(result) is dict or isinstance(result, Mapping)) and "review" in result
    ]  # few of a run's results: the rest need no second look here
    existing = [  # the reviews a person decided of an answer this run gave
        _carried_review(result)
        for result in reviewed
        if isinstance(review := result["review"], Mapping)
        and review.get("status") == "applied"
        and isinstance(result.get("actual_answer"), str)
    ]
    decided = review_lines(reviewed)
    if not items and not decided and not isinstance(calibration, Mapping):
        return None
    return ReviewView(
        calibration_lines(calibration if isinstance(calibration, Mapping) else None),
        str(calibration.get("labels_file")) if isinstance(calibration, Mapping) else None,
        decided,
        items,
        existing,
    )


def _carried_review(result: Mapping[str, Any]) -> dict[str, Any]:
    review = result["review"]
    answer = str(result["actual_answer"])
    return {
        "question_id": str(result.get("question_id")),
        "answer": answer,
        "fingerprint": answer_fingerprint(answer),
        "verdict": review.get("verdict"),
        "by": ", ".join(review.get("by") or []),
        "date": review.get("date"),
        "reason": review.get("reason") or "",
    }
