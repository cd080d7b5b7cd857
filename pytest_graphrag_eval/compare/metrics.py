"""Which values of a result are metrics: the aggregates' rule (numbers, not flags or ids), finite only."""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..aggregates import is_metric_value


def metric_values(result: Mapping[str, Any]) -> dict[str, float]:
    """The result's finite numeric metric values as floats."""
    values = {}
    for key, value in result.items():
        kind = type(value)
        if kind is float or kind is int:
            if _is_metric_key(key) and math.isfinite(value):
                values[key] = float(value)
        elif kind is not str and is_metric_value(key, value) and math.isfinite(value):
            values[key] = float(value)
    return values


@lru_cache(maxsize=4096)
def _is_metric_key(key: str) -> bool:
    """Whether a plain int/float under `key` is a metric (cached: a report repeats the same keys)."""
    return is_metric_value(key, 0.0)
