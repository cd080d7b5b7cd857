"""How the terminal and the Markdown summary show the judge's calibration and the reviewers' decisions,
read from the report alone; names and reasons are untrusted, escaped by the caller's `escape`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pytest_graphrag_eval.report_model import is_finite_number

_SHOWN_DISAGREEMENTS = 10
_REASON_LIMIT = 160
_CONFUSION_CELLS = ("both_pass", "both_fail", "person_pass_judge_fail", "person_fail_judge_pass")


def calibration_lines(section: Mapping[str, Any] | None) -> list[str]:
    """One line per calibrated metric: which judge, on how many labels, and how well it agreed."""
    return [
        f"judge calibration: {name} by {summary.get('judge')} on {summary.get('judged')} of "
        f"{summary.get('labels')} labels: {_agreement(summary)}"
        for name, summary in _metrics(section or {})
    ]


def review_lines(results: Iterable[Mapping[str, Any]]) -> list[str]:
    """The questions a person decided, and the reviews that lapsed because the answer changed."""
    return [
        f"{result.get('question_id')}: {review.get('note')}"
        for result in results
        if isinstance(review := result.get("review"), Mapping)
    ]


def calibration_markdown(section: object, escape: Callable[..., str]) -> str:
    """The Markdown section: a table of agreement per metric and the disagreements with both reasons."""
    if not isinstance(section, Mapping) or not section.get("metrics"):
        return ""
    rows = []
    disagreements = []
    for name, summary in _metrics(section):
        confusion = summary.get("confusion") or {}
        cells = [
            escape(name),
            escape(summary.get("judge")),
            f"{summary.get('judged')} of {summary.get('labels')}",
            _number(summary.get("accuracy")),
            _with_interval(summary, "kappa"),
            _with_interval(summary, "alpha"),
            " / ".join(str(confusion.get(cell, 0)) for cell in _CONFUSION_CELLS),
        ]
        rows.append("| " + " | ".join(cells) + " |")
        for item in (summary.get("disagreements") or [])[:_SHOWN_DISAGREEMENTS]:
            person_reason = escape(item.get("person_reason") or "no reason given", _REASON_LIMIT)
            judge_reason = escape(item.get("judge_reason") or "no reason", _REASON_LIMIT)
            disagreements.append(
                f"- {escape(name)} `{escape(item.get('question_id'))}`: {escape(item.get('by'))} said "
                f"{item.get('person')} ({person_reason}); the judge said {item.get('judge')} ({judge_reason})"
            )
    table = "\n".join(
        [
            "| metric | judge | labels judged | accuracy | kappa [interval] | alpha [interval] | "
            "pass-pass / fail-fail / person pass, judge fail / person fail, judge pass |",
            "| --- | --- | --- | --- | --- | --- | --- |",
            *rows,
        ]
    )
    where = f" from `{escape(section.get('labels_file'))}`" if section.get("labels_file") else ""
    parts = [f"### Judge calibration{where}", table]
    if disagreements:
        parts += ["Disagreements (person, then judge):", "\n".join(disagreements)]
    return "\n\n".join(parts)


def reviews_markdown(results: Iterable[object], escape: Callable[..., str]) -> str:
    """The questions decided by a person, and the lapsed reviews, one line each."""
    lines = [
        f"- `{escape(result.get('question_id'))}`: {escape(review.get('note'), _REASON_LIMIT * 2)}"
        for result in results
        if isinstance(result, Mapping) and isinstance(review := result.get("review"), Mapping)
    ]
    return "### Reviews\n\n" + "\n".join(lines) if lines else ""


def _metrics(section: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    metrics = section.get("metrics") or {}
    return [(str(name), summary) for name, summary in metrics.items() if isinstance(summary, Mapping)]


def _agreement(summary: Mapping[str, Any]) -> str:
    parts = [f"accuracy {_number(summary.get('accuracy'))}", f"kappa {_with_interval(summary, 'kappa')}"]
    if summary.get("alpha") is not None:
        parts.append(f"alpha {_with_interval(summary, 'alpha')}")
    disagreed = len(summary.get("disagreements") or [])
    parts.append(f"{disagreed} disagreement{'s' if disagreed != 1 else ''}")
    errors = len(summary.get("errors") or [])
    if errors:
        parts.append(f"{errors} not judged")
    return ", ".join(parts)


def _with_interval(summary: Mapping[str, Any], stat: str) -> str:
    value = summary.get(stat)
    if value is None:
        return "–" if not summary.get(f"{stat}_undefined") else "undefined"
    interval = summary.get(f"{stat}_interval")
    if isinstance(interval, Mapping):
        return f"{_number(value)} [{_number(interval.get('low'))}, {_number(interval.get('high'))}]"
    return _number(value)


def _number(value: object) -> str:
    return f"{value:.3f}" if is_finite_number(value) else "–"  # a report read back may hold anything
