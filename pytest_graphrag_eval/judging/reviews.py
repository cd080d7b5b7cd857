"""Reviewers' verdicts (format in docs/judge-and-reviews.md) that decide a question for one exact
answer and lapse when the answer changes. Two reviews of one answer that disagree are an error naming
both; each review is also a label for calibration.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.errors import InputError
from pytest_graphrag_eval.judging.entries import Entry, read_entries, verdict_word
from pytest_graphrag_eval.judging.fingerprint import answer_fingerprint
from pytest_graphrag_eval.judging.labels import CORRECTNESS, Label, checked_answer, signed_label

REVIEW_FIELDS = ("question_id", "answer", "fingerprint", "verdict", "by", "date", "reason", "metric")
APPLIED = "applied"
LAPSED = "lapsed"


@dataclass(frozen=True)
class ReviewDecision:
    """What the reviews say about a question's answer in this run: they decide it, or they lapsed."""

    status: str  # APPLIED or LAPSED
    reviews: tuple[Label, ...]  # APPLIED: the reviews of this answer; LAPSED: those of earlier answers
    answer_fingerprint: str | None

    @property
    def passed(self) -> bool:
        return bool(self.reviews[0].passed)

    @property
    def applied(self) -> bool:
        return self.status == APPLIED

    @property
    def reviewers(self) -> str:
        return ", ".join(sorted({review.by for review in self.reviews}))

    def note(self) -> str:
        """One line for the terminal and the reports."""
        latest = max(self.reviews, key=lambda review: review.date)
        if self.applied:
            reason = f": {latest.reason}" if latest.reason else ""
            return f"decided by review: {latest.verdict} by {self.reviewers} on {latest.date}{reason}"
        return (
            f"review lapsed: the answer changed since {self.reviewers} reviewed it on {latest.date} "
            f"({latest.verdict}); the judge decides again until it is reviewed anew"
        )

    def to_dict(self) -> dict[str, Any]:
        latest = max(self.reviews, key=lambda review: review.date)
        return {
            "status": self.status,
            "verdict": latest.verdict,
            "by": sorted({review.by for review in self.reviews}),
            "date": latest.date,
            "reason": latest.reason,
            "reviewed_fingerprint": latest.fingerprint,
            "answer_fingerprint": self.answer_fingerprint,
            "source": latest.source,
            "note": self.note(),
        }


class ReviewBook:
    """The reviews of a run, by question and answer fingerprint."""

    def __init__(self, reviews: Sequence[Label] = ()):
        self.reviews = list(reviews)
        self._by_question: dict[str, list[Label]] = defaultdict(list)
        for review in self.reviews:
            self._by_question[review.question_id].append(review)

    def __bool__(self) -> bool:
        return bool(self.reviews)

    def decide(self, question_id: str, answer: object) -> ReviewDecision | None:
        """The reviews' decision on this answer; None when the question has no review."""
        reviews = self._by_question.get(question_id)
        if not reviews:
            return None
        fingerprint = answer_fingerprint(answer) if isinstance(answer, str) else None
        matching = tuple(review for review in reviews if review.fingerprint == fingerprint)
        if matching:
            return ReviewDecision(APPLIED, matching, fingerprint)
        return ReviewDecision(LAPSED, tuple(reviews), fingerprint)

    def labels(self) -> list[Label]:
        """Each reviewed answer once, as a label for calibration."""
        labels: dict[tuple[str, str, str], Label] = {}
        for review in self.reviews:
            labels.setdefault(
                (review.question_id, review.metric, review.fingerprint),
                replace(review, source=f"review at {review.source}"),
            )
        return list(labels.values())


def load_reviews(
    path: Path, *, shown: str, question_ids: Collection[str], metrics: Collection[str] = ()
) -> ReviewBook:
    """The reviews of `path`, checked against the run's questions; disagreeing reviews are an error."""
    entries = read_entries(path, shown=shown, what="reviews file", list_key="reviews")
    reviews: list[Label] = []
    seen: dict[tuple[str, str], Label] = {}
    for entry in entries:
        review = _review(entry, question_ids, metrics)
        earlier = seen.get((review.question_id, review.fingerprint))
        if earlier is not None and earlier.passed != review.passed:
            raise InputError(
                f"two reviews of the same answer disagree: {earlier.by} said {earlier.verdict} at "
                f"{earlier.source}, {review.by} says {review.verdict} here; settle on one verdict",
                entry.location.for_question(review.question_id),
                "verdict",
            )
        seen.setdefault((review.question_id, review.fingerprint), review)
        reviews.append(review)
    return ReviewBook(reviews)


def _review(entry: Entry, question_ids: Collection[str], metrics: Collection[str]) -> Label:
    """A review is a label with a pass/fail verdict (of answer_correctness unless it names a metric)."""
    entry, question_id = entry.of_question(REVIEW_FIELDS, question_ids)
    answer = checked_answer(entry)
    metric = entry.text("metric", required=False) or CORRECTNESS
    if metrics and metric not in metrics and metric != CORRECTNESS:
        raise entry.error(f"{metric!r} is not a metric this run judges", "metric")
    return signed_label(entry, question_id, metric, answer, verdict_word(entry), None)
