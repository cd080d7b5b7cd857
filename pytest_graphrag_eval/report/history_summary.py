"""The flaky questions in the terminal and the Markdown summary, each with its outcome strip, read
from the report's history section."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_graphrag_eval.report_model import FlakyQuestion, ReportDocument

MAX_LISTED = 20
# One character per question outcome, so a run's outcomes are one string and a question's
# history over n runs one slice per run (how the history stores them, and how strips show them).
OUTCOME_CODES: dict[str, str] = {
    "passed": "P",
    "failed": "F",
    "skipped": "s",
    "xfailed": "x",
    "xpassed": "X",
    "not_evaluated": "n",
    "interrupted": "i",
}
FLAKY_MARK = "(flaky)"


def outcome_strip(outcomes: Sequence[str | None]) -> str:
    """`PPFP-F`: one letter per run, oldest first."""
    return "".join(OUTCOME_CODES.get(outcome, "-") if outcome is not None else "-" for outcome in outcomes)


def flaky_why(entry: FlakyQuestion) -> str:
    """`3 flips` / `passed and failed on one commit`."""
    return f"{entry.flips} flips" + (", passed and failed on one commit" if entry.same_commit else "")


def history_lines(document: ReportDocument) -> list[tuple[str, str]]:
    """The terminal's flaky block: a header and one line per flaky question ((text, colour) pairs)."""
    history = document.history
    if history is None:
        return []
    flaky = history.flaky
    header = (
        f"history: {len(flaky)} flaky question(s) over the last {len(history.runs)} run(s) "
        f"(flipped at least {history.flaky_flips} times in {history.flaky_runs} runs, or passed and failed "
        "on one commit)"
    )
    nodeids = _nodeids(document)
    lines = [(header, "yellow" if flaky else "")]
    for entry in flaky[:MAX_LISTED]:
        strip = outcome_strip(entry.outcomes)
        shown = nodeids.get(entry.question_id, entry.question_id)
        lines.append((f"  flaky  {shown}  {strip}  {flaky_why(entry)}", "yellow"))
    if len(flaky) > MAX_LISTED:
        lines.append((f"  ... and {len(flaky) - MAX_LISTED} more (see the JSON report)", "yellow"))
    return lines


def flaky_markdown(document: ReportDocument, escape: Callable[[object], str]) -> str:
    """The Markdown summary's flaky section ('' without a history or flaky questions)."""
    flaky = document.history.flaky if document.history is not None else ()
    if not flaky:
        return ""
    nodeids = _nodeids(document)
    rows = [
        f"| {escape(nodeids.get(entry.question_id, entry.question_id))} | `{outcome_strip(entry.outcomes)}` "
        f"| {escape(flaky_why(entry))} |"
        for entry in flaky[:MAX_LISTED]
    ]
    more = len(flaky) - MAX_LISTED
    table = "\n".join(["| Test | Last runs (oldest first) | Why |", "| --- | --- | --- |", *rows])
    tail = f"\n\n… and {more} more flaky questions." if more > 0 else ""
    return (
        f"### Flaky questions ({len(flaky)})\n\nTheir outcome flips between runs: a failure of one of them "
        f"is not on its own a regression. P passed, F failed, - not run.\n\n{table}{tail}"
    )


def _nodeids(document: ReportDocument) -> dict[str, str]:
    return {
        result.question_id: str(result.record.get("nodeid") or result.question_id)
        for result in document.results
    }
