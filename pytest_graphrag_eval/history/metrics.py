"""A run metric named the way gates name them (micro mean by default; `pass_rate` from the outcomes),
read from a stored run."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.errors import HistoryError
from pytest_graphrag_eval.gates.expressions import numeric_value

PASS_RATE = "pass_rate"
_METRIC = re.compile(
    r"^(?:(?P<scope>micro|macro|template\[(?P<template>[^\]]+)\]):)?(?P<name>[^:.\s]+)(?:\.(?P<stat>mean|median|min|max|sum|std|count))?$"
)


def check_metric(metric: str) -> str:
    if not _METRIC.match(metric.strip()):
        raise HistoryError(
            f"metric {metric!r}: expected [micro:|macro:|template[ID]:]NAME[.mean|.median|.min|.max|.sum] "
            "or pass_rate"
        )
    return metric.strip()


def metric_value(aggregates: Mapping[str, Any], outcome_codes: str, metric: str) -> float | None:
    """The metric's value in one run, None when the run does not have it."""
    if metric == PASS_RATE:
        passed, failed = outcome_codes.count("P") + outcome_codes.count("X"), outcome_codes.count("F")
        return passed / (passed + failed) if passed + failed else None
    match = _METRIC.match(check_metric(metric))
    assert match is not None
    scope = match["scope"] or "micro"
    table: Any = (
        aggregates.get("per_template", {}).get(match["template"])
        if match["template"]
        else aggregates.get(scope)
    )
    if not isinstance(table, Mapping):
        return None
    value = table.get(match["name"])
    if isinstance(value, Mapping):
        value = value.get(match["stat"] or "mean")
    number = numeric_value(value)  # None for a flag, text, or an integer no float holds
    return None if number is None or math.isnan(number) else number
