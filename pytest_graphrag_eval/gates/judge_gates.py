"""Gates on the judge's agreement with people: `judge:answer_correctness.kappa>=0.6`.

    gate := "judge:" metric "." stat op number
    stat := "kappa" | "kappa_low" | "accuracy" | "alpha" | "alpha_low" | "labels"

`kappa_low` and `alpha_low` are the intervals' lower ends, a floor to clear with confidence; without a
calibration (`--graphrag-judge-labels`) the gate fails and says so. The values are read from the report's
`judge_calibration` section here, free of the judged metrics, so the gates (and a merge) never import the
LLM judges.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.gates.expressions import ExpressionError, check_metric_name
from pytest_graphrag_eval.gates.model import JUDGE, Gate, GateResult, measured_result

_JUDGE_PREFIX = re.compile(r"judge\s*:", re.IGNORECASE)
NO_CALIBRATION = "has no calibration to check: pass --graphrag-judge-labels FILE"
STATS = ("kappa", "kappa_low", "accuracy", "alpha", "alpha_low", "labels")


def split_judge_prefix(text: str) -> tuple[bool, str]:
    """`judge:rest` -> (True, rest); anything else unchanged."""
    match = _JUDGE_PREFIX.match(text)
    return (True, text[match.end() :].strip()) if match else (False, text)


def judge_gate(target: str, op: str, limit: float, source: str) -> Gate:
    """A parsed `judge:` gate; the metric is the labels' name for it (answer_correctness, ...)."""
    metric, dot, stat = (part.strip() for part in target.rpartition("."))
    if not dot or stat not in STATS:
        raise ExpressionError(f"a judge gate reads judge:METRIC.STAT with STAT one of {', '.join(STATS)}")
    return Gate("micro", check_metric_name(metric), stat, op, limit, None, source, over=JUDGE)


def evaluate_judge_gate(gate: Gate, calibration: Mapping[str, Any] | None, pattern: str) -> GateResult:
    label = f"judge:{gate.target}"
    if calibration is None:
        return GateResult(gate, None, False, f"{label} {NO_CALIBRATION} (required {gate.condition})", pattern)
    assert gate.stat is not None
    actual, reason = gate_value(calibration, gate.metric, gate.stat)
    return measured_result(gate, label, actual, reason, pattern)


def gate_value(section: Mapping[str, Any], metric: str, stat: str) -> tuple[float | None, str]:
    """A `judge:` gate's value from the section, or None and why it is missing."""
    summary = (section.get("metrics") or {}).get(metric)
    if not isinstance(summary, Mapping):
        known = ", ".join(sorted(section.get("metrics") or {})) or "none"
        return None, f"no labels of {metric} were calibrated (metrics with labels: {known})"
    if stat == "labels":
        return float(summary["judged"]), ""
    if stat in ("kappa_low", "alpha_low"):
        interval = summary.get(f"{stat.removesuffix('_low')}_interval")
        value = interval.get("low") if isinstance(interval, Mapping) else None
    else:
        value = summary.get(stat)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value), ""
    why = summary.get(f"{stat.removesuffix('_low')}_undefined") or f"{stat} was not computed"
    return None, str(why)
