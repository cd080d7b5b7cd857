"""Which values of a result are metrics: the aggregates' rule (numbers, not flags or ids), finite only."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.aggregates import is_metric_value

_METRIC_KEYS: dict[str, bool] = {}
# Value types that are never a metric value: most of a result's other values (texts, steps, nulls).
_NEVER_METRIC = frozenset({str, list, dict, bool, type(None)})


def metric_values(result: Mapping[str, Any]) -> dict[str, float]:
    """The result's finite numeric metric values as floats."""
    values = {}
    for key, value in result.items():
        kind = type(value)
        if kind is float or kind is int:
            metric = _METRIC_KEYS.get(key)
            if metric is None:
                # A report repeats the same few keys: decide each key once (plain numbers only).
                metric = _METRIC_KEYS[key] = is_metric_value(key, 0.0)
            if metric and math.isfinite(value):
                values[key] = float(value)
        elif kind not in _NEVER_METRIC and is_metric_value(key, value) and math.isfinite(value):
            values[key] = float(value)
    return values
