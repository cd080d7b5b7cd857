"""Which values of a result are metrics: the aggregates' rule (numbers, not flags or ids), finite only."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.aggregates import NEVER_METRIC_TYPES, NOT_METRIC_KEYS, is_metric_value


def metric_values(result: Mapping[str, Any]) -> dict[str, float]:
    """The result's finite numeric metric values as floats, exact floats and ints decided inline."""
    values = {}
    for key, value in result.items():
        kind = type(value)
        if kind is float:
            if value - value == 0.0 and key not in NOT_METRIC_KEYS:  # finite: inf - inf and NaN are NaN
                values[key] = value
        elif kind is int:
            if key not in NOT_METRIC_KEYS:
                values[key] = float(value)
        elif kind not in NEVER_METRIC_TYPES and is_metric_value(key, value) and math.isfinite(value):
            values[key] = float(value)
    return values
