"""Human labels (format in docs/judge-and-reviews.md): a person's verdict on one exact answer, for one
metric the run judges with an LLM. One answer is labelled once per metric: a second opinion goes in
the reviews file.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.judging.entries import Entry, read_entries, verdict_word
from pytest_graphrag_eval.judging.fingerprint import answer_fingerprint

CORRECTNESS = "answer_correctness"
LABEL_FIELDS = (
    "question_id",
    "metric",
    "answer",
    "fingerprint",
    "verdict",
    "score",
    "claims",
    "by",
    "date",
    "reason",
)
_VERDICT_FIELDS = ("verdict", "score", "claims")
_CLAIM_FIELDS = ("reference", "actual", "matching")


@dataclass(frozen=True)
class Label:
    """One person's verdict: `passed` when given as pass/fail, else `score` (claims become their F1)."""

    question_id: str
    metric: str
    answer: str
    passed: bool | None
    score: float | None
    by: str
    date: str
    reason: str
    source: str  # `file:line`, or the review it came from

    @property
    def fingerprint(self) -> str:
        return answer_fingerprint(self.answer)

    @property
    def verdict(self) -> str:
        """`pass` or `fail` as a reviews file writes it (a review always gives `passed`)."""
        return "pass" if self.passed else "fail"

    def passes(self, cutoff: float) -> bool:
        """The person's pass/fail: as given, or the score held to the metric's cutoff."""
        if self.passed is not None:
            return self.passed
        assert self.score is not None
        return self.score >= cutoff


def load_labels(
    path: Path, *, shown: str, question_ids: Collection[str], metrics: Collection[str]
) -> list[Label]:
    """The labels of `path`, each checked against the run's questions and judged metrics."""
    entries = read_entries(path, shown=shown, what="labels file", list_key="labels")
    if entries and not metrics:
        raise ConfigurationError(
            f"{shown}: labels need a metric judged by an LLM, and this run judges none "
            "(set judge: llm, relevance: true or a custom metric in the answers config)"
        )
    labels: dict[tuple[str, str, str], Label] = {}
    for entry in entries:
        label = _label(entry, question_ids, metrics)
        key = (label.question_id, label.metric, label.fingerprint)
        if key in labels:
            raise entry.error(
                f"this answer was already labelled for {label.metric} at {labels[key].source}: label an "
                "answer once per metric (a second opinion goes in the reviews file)"
            )
        labels[key] = label
    return list(labels.values())


def _label(entry: Entry, question_ids: Collection[str], metrics: Collection[str]) -> Label:
    entry, question_id = entry.of_question(LABEL_FIELDS, question_ids)
    metric = entry.text("metric")
    if metric not in metrics:
        raise entry.error(
            f"{metric!r} is not a metric this run judges with an LLM "
            f"(it judges: {', '.join(sorted(metrics))})",
            "metric",
        )
    answer = checked_answer(entry)
    given = [name for name in _VERDICT_FIELDS if entry.fields.get(name) is not None]
    if len(given) != 1:
        raise entry.error(
            "give exactly one of verdict (pass/fail), score (0 to 1) or claims"
            + (f"; this label gives {' and '.join(given)}" if given else ""),
            "verdict",
        )
    passed, score = None, None
    if given[0] == "verdict":
        passed = verdict_word(entry)
    elif given[0] == "score":
        score = entry.number("score", 0.0, 1.0)
    else:
        if metric != CORRECTNESS:
            raise entry.error(f"claim counts are a verdict of {CORRECTNESS} only, not of {metric}", "claims")
        score = _claims_f1(entry)
    return signed_label(entry, question_id, metric, answer, passed, score)


def signed_label(
    entry: Entry, question_id: str, metric: str, answer: str, passed: bool | None, score: float | None
) -> Label:
    """The label of a checked verdict, with who gave it, when and why (a label's or a review's)."""
    by, date, reason = entry.text("by"), entry.text("date"), entry.text("reason", required=False)
    return Label(question_id, metric, answer, passed, score, by, date, reason, entry.where)


def checked_answer(entry: Entry) -> str:
    """The answer, whose fingerprint, when the file writes one, must be its own: an edited answer is a
    different one."""
    answer = entry.text("answer")
    given = entry.text("fingerprint", required=False)
    if given and given != answer_fingerprint(answer):
        raise entry.error(
            f"{given} is not the fingerprint of this answer ({answer_fingerprint(answer)}): the answer "
            "was edited after it was judged, or the fingerprint belongs to another answer",
            "fingerprint",
        )
    return answer


def _claims_f1(entry: Entry) -> float:
    claims = entry.fields.get("claims")
    if not isinstance(claims, Mapping) or sorted(str(key) for key in claims) != sorted(_CLAIM_FIELDS):
        raise entry.error("must be a mapping with reference, actual and matching counts", "claims")
    counts = {}
    for name in _CLAIM_FIELDS:
        value = claims[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise entry.error(f"{name} must be a whole number >= 0, got {value!r}", "claims")
        counts[name] = value
    if (
        counts["reference"] < 1
        or counts["actual"] < 1
        or counts["matching"] > min(counts["reference"], counts["actual"])
    ):
        raise entry.error(
            "reference and actual must be >= 1 and matching at most the smaller of the two", "claims"
        )
    if counts["matching"] == 0:
        return 0.0
    recall, precision = counts["matching"] / counts["reference"], counts["matching"] / counts["actual"]
    return 2 * recall * precision / (recall + precision)


def merged_labels(labels: Sequence[Label], from_reviews: Sequence[Label]) -> list[Label]:
    """The file's labels, then the reviews' verdicts on answers the file did not label (never twice)."""
    known = {(label.question_id, label.metric, label.fingerprint) for label in labels}
    extra = [
        label for label in from_reviews if (label.question_id, label.metric, label.fingerprint) not in known
    ]
    return [*labels, *extra]
