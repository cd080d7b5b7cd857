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


def summary_table(results: Sequence[QuestionResult], columns: Sequence[str]) -> list[str]:
    """The table's lines: one row per template in first-seen order, then the overall row. Its counts
    are named by the one outcome vocabulary (`report_model`): a budget stop is counted as
    `not_evaluated` (a column only when a budget or a cache-only miss left any), never as an error."""
    counts: dict[str, Callable[[QuestionResult], bool]] = {
        "questions": lambda result: True,
        "agent_errors": lambda result: result.agent_error is not None,
    }
    if any(result.not_evaluated for result in results):
        counts[Outcome.NOT_EVALUATED.value] = lambda result: result.not_evaluated
    groups: dict[str, list[QuestionResult]] = {}
    for result in results:
        groups.setdefault(result.template_id, []).append(result)
    rows = [_row(label, group, columns, counts) for label, group in [*groups.items(), ("overall", results)]]
    return format_table(["template", *counts, *columns, "tokens", "elapsed_s"], rows)


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
