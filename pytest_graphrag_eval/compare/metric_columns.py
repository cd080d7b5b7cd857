"""Each metric's finite values over a run's results, read column by column.

A comparison needs every metric's value in both runs for each question (its deltas) and, per
template, the paired values as arrays. Read result by result (a dict of metric values made for
each result) that was most of a comparison's own time on 10,000 questions. A column is one pass
over the results per key, typed by `set(map(type, ...))` in C, and a result's own key order,
which the deltas follow, is looked up once per key layout: the results of a run share a few.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

from pytest_graphrag_eval.aggregates import is_metric_value

# Value types that are never a metric: a column holding only these is not read further.
_NEVER_METRIC = frozenset({str, list, dict, bool, type(None)})
_PLAIN_NUMBERS = frozenset({float, int, type(None)})


class MetricColumns:
    """The metric values of a run's results: `columns[metric][position]` is a finite float or None."""

    def __init__(self, records: Sequence[Mapping[str, Any]]) -> None:
        self._records = records
        self.columns: dict[str, list[float | None]] = {}
        for key in dict.fromkeys(chain.from_iterable(records)):
            column = _finite_floats(key, [record.get(key) for record in records])
            if column is not None:
                self.columns[key] = column
        self._layouts: dict[tuple[str, ...], tuple[str, ...]] = {}

    def ordered_metrics(self, position: int) -> tuple[str, ...]:
        """The metric keys of one result in its own key order (its value may still be None)."""
        layout = tuple(self._records[position])
        metrics = self._layouts.get(layout)
        if metrics is None:
            metrics = self._layouts[layout] = tuple(key for key in layout if key in self.columns)
        return metrics

    def largest_magnitude(self) -> float:
        """The largest absolute value in any column (0 when there is none)."""
        # filter(None, ...) drops the Nones (and zeros, which cannot be the largest anyway).
        return max(
            (max(map(abs, filter(None, column)), default=0.0) for column in self.columns.values()),
            default=0.0,
        )


def _finite_floats(key: str, values: list[Any]) -> list[float | None] | None:
    """`values` as finite floats (None where a value is not a finite metric value), or None when no
    value is a metric value: the rule of `metric_values`, for a whole column at once."""
    kinds = set(map(type, values))
    if kinds <= _NEVER_METRIC or not is_metric_value(key, 0.0):
        return None
    # The common columns: floats, or ints, with None where a result has no value; filter(None, ...)
    # leaves out the Nones (and zeros, which are finite).
    if kinds <= _PLAIN_NUMBERS and all(map(math.isfinite, filter(None, values))):
        return values if int not in kinds else [value if value is None else float(value) for value in values]
    column = [_finite_float(key, value) for value in values]
    return column if any(value is not None for value in column) else None


def _finite_float(key: str, value: Any) -> float | None:
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is int:
        return float(value)
    if kind in _NEVER_METRIC or not is_metric_value(key, value) or not math.isfinite(value):
        return None
    return float(value)
