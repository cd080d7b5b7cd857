"""The review queue: the questions of a run most worth a person's look, and why (the reasons:
docs/judge-and-reviews.md), as Markdown for a pull request page or CSV for a sheet."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from pytest_graphrag_eval.formats.atomic import write_text_atomic
from pytest_graphrag_eval.judging.fingerprint import answer_fingerprint

JUDGED_SCORES = ("answer_f1", "answer_relevance")
LEXICAL_GAP = 0.5
_ANSWER_LIMIT = 200
_CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True)
class QueueEntry:
    """One question worth a look."""

    question_id: str
    template_id: str
    outcome: str
    reasons: tuple[str, ...]
    answer: str | None
    fingerprint: str | None
    question_text: str

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "reasons": list(self.reasons)}


def review_queue(
    report: Mapping[str, Any], baseline: Mapping[str, Mapping[str, Any]] | None = None
) -> list[QueueEntry]:
    """The report's questions worth a look, most reasons first, then failed first, then corpus order;
    `baseline` (results by question id) finds answers changed since."""
    flipped = _flipped(report)
    judged_by_keys: dict[tuple[str, ...], JudgedKeys] = {}  # a run's results share a few key sets
    entries = []
    for result in report.get("results") or []:
        if not _is_mapping(result) or result.get("status") != "success":
            continue
        names = tuple(result)
        judged = judged_by_keys.get(names)
        if judged is None:
            judged = judged_by_keys[names] = JudgedKeys.of(names)
        question_id = str(result.get("question_id"))
        reasons = _reasons(result, judged, flipped.get(question_id))
        before = baseline.get(question_id) if baseline else None
        if before is not None and judged.keys and _changed_unreviewed(result, before):
            reasons.append("its judged answer changed since the baseline; no person decided the new one")
        if not reasons:
            continue
        answer = result.get("actual_answer")
        entries.append(
            QueueEntry(
                question_id,
                str(result.get("template_id")),
                str(result.get("outcome") or ""),
                tuple(reasons),
                answer if isinstance(answer, str) else None,
                answer_fingerprint(answer) if isinstance(answer, str) else None,
                str(result.get("question_text") or ""),
            )
        )
    # a stable sort: entries with as many reasons and the same outcome stay in corpus order
    return sorted(entries, key=lambda entry: (-len(entry.reasons), entry.outcome != "failed"))


@dataclass(frozen=True)
class JudgedKeys:
    """The score keys a judge wrote in results with these keys: the built-in ones, and custom metrics'
    (those of a `<name>_judge` key's metric). Decided once per key set, not once per question."""

    keys: frozenset[str]
    repeated: frozenset[str]  # those with `_min` and `_max` keys: judged more than once

    @classmethod
    def of(cls, names: Iterable[object]) -> JudgedKeys:
        present = {str(name) for name in names}
        keys = {key for key in JUDGED_SCORES if key in present}
        if "answer_judge" in present:
            keys |= {"answer_f1", "answer_recall", "answer_precision"}
        customs = [
            key[: -len("_judge")]
            for key in present
            if key.endswith("_judge") and key not in ("answer_judge", "retrieval_judge")
        ]
        keys |= {key for key in present for name in customs if key.startswith(f"{name}_")}
        repeated = {key for key in keys if f"{key}_min" in present and f"{key}_max" in present}
        return cls(frozenset(keys), frozenset(repeated))


def _reasons(result: Mapping[str, Any], judged: JudgedKeys, flip: str | None) -> list[str]:
    review = result.get("review")
    if review is not None and not _is_mapping(review):  # most results have none: no ABC check for them
        review = None
    decided = review is not None and review.get("status") == "applied"
    reasons = []
    checks = result.get("thresholds") or []
    failed_judged = [
        check
        for check in checks
        if _is_mapping(check) and not check.get("passed") and check.get("metric") in judged.keys
    ]
    if failed_judged and not decided:
        reasons.append(
            "failed on a judged metric: " + ", ".join(str(check.get("message")) for check in failed_judged)
        )
    for check in checks if judged.repeated else ():
        if not _is_mapping(check) or check.get("metric") not in judged.repeated:
            continue
        low, high = (
            _number(result.get(f"{check['metric']}_min")),
            _number(result.get(f"{check['metric']}_max")),
        )
        limit = _number(check.get("limit"))
        if low is not None and high is not None and limit is not None and low < limit <= high:
            reasons.append(
                f"{check['metric']} straddles its threshold {limit:g} across the judge's repeats "
                f"({low:.3f} to {high:.3f})"
            )
    if str(result.get("answer_judge") or "").startswith("llm"):
        judged_f1, lexical = _number(result.get("answer_f1")), _number(result.get("answer_token_f1"))
        if judged_f1 is not None and lexical is not None and abs(judged_f1 - lexical) >= LEXICAL_GAP:
            reasons.append(
                "the judge and the lexical match disagree "
                f"(answer_f1 {judged_f1:.3f}, answer_token_f1 {lexical:.3f})"
            )
    if flip is not None:
        reasons.append(flip)
    if review is not None and review.get("status") == "lapsed":
        reasons.append(
            f"the answer changed since its review ({', '.join(review.get('by') or [])}): not reviewed anew"
        )
    return reasons


def _changed_unreviewed(result: Mapping[str, Any], before: Mapping[str, Any]) -> bool:
    """Whether a judged result's answer changed since the baseline's and no person decided it."""
    review = result.get("review")
    decided = _is_mapping(review) and review.get("status") == "applied"
    earlier = before.get("actual_answer")
    return not decided and isinstance(earlier, str) and earlier != result.get("actual_answer")


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """`isinstance(value, Mapping)`, with JSON's dicts told apart without the slower ABC check."""
    return type(value) is dict or isinstance(value, Mapping)


def _flipped(report: Mapping[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    comparison = report.get("comparison")
    if isinstance(comparison, Mapping):
        for question in comparison.get("questions") or []:
            if _is_mapping(question) and question.get("classification") in ("regressed", "fixed"):
                found[str(question.get("question_id"))] = f"{question['classification']} since the baseline"
    history = report.get("history")
    if isinstance(history, Mapping):
        for entry in history.get("flaky") or []:
            if isinstance(entry, Mapping):
                found.setdefault(str(entry.get("question_id")), "flaky over the history's runs")
    return found


def queue_markdown(entries: Sequence[QueueEntry], escape: Any) -> str:
    """A Markdown list for a pull request page; every untrusted text escaped by `escape`."""
    if not entries:
        return "## Review queue\n\nNothing to review.\n"
    rows = [
        f"| `{escape(entry.question_id)}` | {escape(entry.template_id)} | {escape(entry.outcome)} | "
        f"{escape('; '.join(entry.reasons), 400)} | {escape(entry.answer or '', _ANSWER_LIMIT)} | "
        f"`{entry.fingerprint or ''}` |"
        for entry in entries
    ]
    header = (
        "| question | template | outcome | why it is worth a look | answer | fingerprint |\n"
        "| --- | --- | --- | --- | --- | --- |"
    )
    return f"## Review queue ({len(entries)})\n\n{header}\n" + "\n".join(rows) + "\n"


def queue_csv(entries: Iterable[QueueEntry]) -> str:
    """CSV with one row per question; a cell a spreadsheet would run as a formula is quoted with `'`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["question_id", "template_id", "outcome", "reasons", "answer", "fingerprint"])
    for entry in entries:
        writer.writerow(
            [
                _cell(entry.question_id),
                _cell(entry.template_id),
                entry.outcome,
                _cell("; ".join(entry.reasons)),
                _cell(entry.answer or ""),
                entry.fingerprint or "",
            ]
        )
    return buffer.getvalue()


def write_review_queue(
    path: Path,
    report: Mapping[str, Any],
    escape: Any,
    baseline: Mapping[str, Mapping[str, Any]] | None = None,
) -> int:
    """Write the queue (CSV for a `.csv` path, else Markdown) atomically; returns how many it holds."""
    entries = review_queue(report, baseline)
    text = queue_csv(entries) if path.suffix.lower() == ".csv" else queue_markdown(entries, escape)
    write_text_atomic(path, text)
    return len(entries)


def _cell(text: str) -> str:
    return f"'{text}" if text.startswith(_CSV_FORMULA_STARTS) else text


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
