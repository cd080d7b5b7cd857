"""The flaky questions in the terminal and the Markdown summary, each with its outcome strip, read
from the report's history section."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.report.history_section import flaky_ids

MAX_LISTED = 20
OUTCOME_LETTERS = {
    "passed": "P",
    "failed": "F",
    "xpassed": "X",
    "xfailed": "x",
    "skipped": "s",
    "not_evaluated": "n",
    "interrupted": "i",
}
FLAKY_MARK = "(flaky)"


def outcome_strip(outcomes: Sequence[Any]) -> str:
    """`PPFP-F`: one letter per run, oldest first."""
    return "".join(
        OUTCOME_LETTERS.get(str(outcome), "-") if outcome is not None else "-" for outcome in outcomes
    )


def flaky_why(entry: Mapping[str, Any]) -> str:
    """`3 flips` / `passed and failed on one commit`."""
    parts = [f"{entry.get('flips', 0)} flips"]
    if entry.get("same_commit"):
        parts.append("passed and failed on one commit")
    return ", ".join(parts)


def history_lines(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The terminal's flaky block: a header and one line per flaky question ((text, colour) pairs)."""
    history = report.get("history")
    flaky = flaky_ids(report)
    if not isinstance(history, Mapping):
        return []
    rule = history.get("flaky_rule") or {}
    runs = len(history.get("runs") or [])
    header = (
        f"history: {len(flaky)} flaky question(s) over the last {runs} run(s) "
        f"(flipped at least {rule.get('min_flips')} times in {rule.get('runs')} runs, or passed and failed "
        "on one commit)"
    )
    nodeids = _nodeids(report)
    lines = [(header, "yellow" if flaky else "")]
    for question_id, entry in list(flaky.items())[:MAX_LISTED]:
        strip = outcome_strip(entry.get("outcomes") or [])
        lines.append(
            (f"  flaky  {nodeids.get(question_id, question_id)}  {strip}  {flaky_why(entry)}", "yellow")
        )
    if len(flaky) > MAX_LISTED:
        lines.append((f"  ... and {len(flaky) - MAX_LISTED} more (see the JSON report)", "yellow"))
    return lines


def flaky_markdown(report: Mapping[str, Any], escape: Any) -> str:
    """The Markdown summary's flaky section ('' without a history or flaky questions)."""
    flaky = flaky_ids(report)
    if not flaky:
        return ""
    nodeids = _nodeids(report)
    rows = [
        f"| {escape(nodeids.get(question_id, question_id))} | `{outcome_strip(entry.get('outcomes') or [])}` "
        f"| {escape(flaky_why(entry))} |"
        for question_id, entry in list(flaky.items())[:MAX_LISTED]
    ]
    more = len(flaky) - MAX_LISTED
    table = "\n".join(["| Test | Last runs (oldest first) | Why |", "| --- | --- | --- |", *rows])
    tail = f"\n\n… and {more} more flaky questions." if more > 0 else ""
    return (
        f"### Flaky questions ({len(flaky)})\n\nTheir outcome flips between runs: a failure of one of them "
        f"is not on its own a regression. P passed, F failed, - not run.\n\n{table}{tail}"
    )


def _nodeids(report: Mapping[str, Any]) -> dict[str, str]:
    return {
        str(result.get("question_id")): str(result.get("nodeid") or result.get("question_id"))
        for result in report.get("results") or []
        if isinstance(result, Mapping)
    }
