"""The terminal summary: a table per template and overall with a handful of score columns (so it
fits a CI log), then the gates."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.aggregates import is_metric_value
from pytest_graphrag_eval.gates.model import GateResult
from pytest_graphrag_eval.report.shown_path import printed_path
from pytest_graphrag_eval.report_model import Outcome, OutcomeCounts, QuestionResult
from pytest_graphrag_eval.result_keys import CATALOGUE

MAX_METRIC_COLUMNS = 6


def score_columns(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Score keys present in results: those the scorers rank first, then the rest by name."""
    numeric = {key for result in results for key, value in result.items() if is_metric_value(key, value)}
    present = {key for key in numeric if CATALOGUE.summary_score(key)}  # once per key, not per result
    preferred = CATALOGUE.summary_columns()
    ordered = [key for key in preferred if key in present] + sorted(present - set(preferred))
    return ordered[:MAX_METRIC_COLUMNS]


def summary_rows(results: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> list[list[str]]:
    """One row per template in first-seen order, then the overall row."""
    typed = [QuestionResult.from_record(result) for result in results]
    counts = _count_columns(typed)
    groups: dict[str, list[QuestionResult]] = {}
    for result in typed:
        groups.setdefault(result.template_id, []).append(result)
    rows = [_row(template_id, group, columns, counts) for template_id, group in groups.items()]
    rows.append(_row("overall", typed, columns, counts))
    return rows


def count_header(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """The count columns: questions, agent errors, and `not_evaluated` when a budget or a cache-only
    miss left any."""
    return list(_count_columns([QuestionResult.from_record(result) for result in results]))


def _count_columns(results: Sequence[QuestionResult]) -> dict[str, Callable[[QuestionResult], bool]]:
    """Each count column by the one outcome vocabulary (`report_model`): a budget stop is counted
    as `not_evaluated`, never as an error."""
    counted: dict[str, Callable[[QuestionResult], bool]] = {
        "questions": lambda result: True,
        "agent_errors": lambda result: result.agent_error is not None,
    }
    if any(result.not_evaluated for result in results):
        counted[Outcome.NOT_EVALUATED.value] = lambda result: result.not_evaluated
    return counted


def _row(
    label: str,
    results: Sequence[QuestionResult],
    columns: Sequence[str],
    counts: Mapping[str, Callable[[QuestionResult], bool]],
) -> list[str]:
    scored = [result.record for result in results if result.scored]
    cells = [label, *(str(sum(1 for result in results if counts[name](result))) for name in counts)]
    for key in (*columns, "total_tokens", "elapsed_sec"):
        values = [
            float(value)
            for result in scored
            if isinstance(value := result.get(key), (int, float)) and is_metric_value(key, value)
        ]
        cells.append(_number(statistics.fmean(values)) if values else "-")
    return cells


def _number(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(row[index])) for row in [header, *rows]) for index in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = f"{cells[0]:<{widths[0]}}"
        rest = "  ".join(f"{cell:>{width}}" for cell, width in zip(cells[1:], widths[1:], strict=True))
        return f"{first}  {rest}"

    return [line(header), *(line(row) for row in rows)]


def write_terminal_summary(
    terminalreporter: Any,
    results: Sequence[Mapping[str, Any]],
    gates: Sequence[GateResult],
    *,
    baseline_lines: Sequence[tuple[str, str]] = (),
    warnings: Sequence[str] = (),
    spend: Sequence[str] = (),
    gates_note: str | None = None,
) -> None:
    """Print the graphrag-eval section of the terminal summary, the gates last, each with `gates_note`
    when they saw part of the corpus only."""
    if not results and not gates and not warnings and not spend:
        return
    terminalreporter.section("graphrag-eval summary")
    if results:
        columns = score_columns(results)
        header = ["template", *count_header(results), *columns, "tokens", "elapsed_s"]
        for line in format_table(header, summary_rows(results, columns)):
            terminalreporter.write_line(line)
        # Named as the Markdown and HTML name them (pytest's own line counts a not-evaluated item as skipped).
        counts = OutcomeCounts.of([QuestionResult.from_record(result) for result in results]).parts()
        terminalreporter.write_line(
            f"{len(results)} questions" + (f": {', '.join(counts)}" if counts else "")
        )
    for warning in warnings:
        terminalreporter.write_line(f"warning: {warning}", yellow=True)
    for line in spend:
        terminalreporter.write_line(line, yellow=line.startswith(("budget reached", "cache-only")))
    if baseline_lines:
        terminalreporter.write_line("")
    for text, colour in baseline_lines:
        terminalreporter.write_line(text, **({colour: True} if colour else {}))
    if gates:
        terminalreporter.write_line("")
        terminalreporter.write_line("gates:")
        for gate in gates:
            status = "PASS" if gate.passed else "FAIL"
            note = f"  [{gates_note}]" if gates_note else ""
            terminalreporter.write_line(
                f"  {status}  {gate.message}{note}", red=not gate.passed, green=gate.passed
            )


def write_output_paths(
    terminalreporter: Any, written: Sequence[tuple[str, Path]], current_folder: Path | None = None
) -> None:
    """One line per file the run wrote, as pytest's own `--junitxml` says `generated xml file: ...`,
    named from the current folder when inside it, else absolute (`printed_path`)."""
    for what, path in written:
        shown = printed_path(path, current_folder) if current_folder is not None else str(path)
        terminalreporter.write_sep("-", f"generated graphrag-eval {what}: {shown}")
