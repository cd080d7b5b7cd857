"""The terminal summary's table: a row per template and overall with a handful of score columns (so
it fits a CI log)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.aggregates import is_metric_value
from pytest_graphrag_eval.report_model import Outcome, QuestionResult
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
