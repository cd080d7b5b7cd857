"""Gates on the judge's agreement with people: `judge:answer_correctness.kappa>=0.6`.

    gate := "judge:" metric "." stat op number
    stat := "kappa" | "kappa_low" | "accuracy" | "alpha" | "alpha_low" | "labels"

`kappa_low` and `alpha_low` are the intervals' lower ends, a floor to clear with confidence; without a
calibration (`--graphrag-judge-labels`) the gate fails and says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.gates.expressions import ExpressionError, check_metric_name
from pytest_graphrag_eval.gates.model import JUDGE, Gate, GateResult, measured_result
from pytest_graphrag_eval.judging.section import STATS, gate_value

_JUDGE_PREFIX = re.compile(r"judge\s*:", re.IGNORECASE)
NO_CALIBRATION = "has no calibration to check: pass --graphrag-judge-labels FILE"


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
