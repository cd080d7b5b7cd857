"""Gates on change since a baseline run, read from its `Comparison` (counts and paired changes):

- `delta:answer_f1.mean>=-0.02`: the paired change of a mean (questions both runs share, unedited);
- `delta:answer_f1.mean>=-0.02@95`: fails only when the whole 95% interval lies on the wrong side,
  so noise fails it in at most 2.5% of runs (`benchmarks/bench_compare_calibration.py`);
- `regressions<=0` (also `fixed`, `new`, `removed`, `edited`): questions counted by how they changed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pytest_graphrag_eval.gates.expressions import (
    ExpressionError,
    check_metric_name,
    confidence_level,
    display_number,
    format_number,
)
from pytest_graphrag_eval.gates.model import COUNT, DELTA, Gate, GateResult, measured_result
from pytest_graphrag_eval.report_model import MetricChange

if TYPE_CHECKING:  # types only: parsing gates loads no comparison
    from pytest_graphrag_eval.compare.comparison import Comparison

CHANGE_COUNTS = ("regressions", "fixed", "new", "removed", "edited")
_DELTA_PREFIX = re.compile(r"delta\s*:", re.IGNORECASE)
_CONFIDENCE = re.compile(r"@\s*([0-9]+(?:\.[0-9]+)?)\s*$")
_INTERVAL_OPERATORS = (">=", "<=")


def split_delta_prefix(text: str) -> tuple[bool, str]:
    """`delta:rest` -> (True, rest); anything else unchanged."""
    match = _DELTA_PREFIX.match(text)
    return (True, text[match.end() :].strip()) if match else (False, text)


def split_confidence(text: str) -> tuple[str, float | None]:
    """A trailing `@95` (after the limit) -> confidence 0.95; `@` inside a metric name is left alone."""
    match = _CONFIDENCE.search(text)
    if match is None or not any(char in text[: match.start()] for char in "<>="):
        return text, None
    return text[: match.start()].rstrip(), confidence_level(match.group(1))


def change_gate(
    delta: bool,
    scope: str,
    template: str | None,
    target: str,
    op: str,
    limit: float,
    confidence: float | None,
    source: str,
) -> Gate:
    """Check and build a gate on change (see the module docstring for the forms)."""
    if scope == "macro":
        raise ExpressionError("gates on change take the micro or template[...] scope, not macro")
    if not delta:
        if confidence is not None:
            raise ExpressionError("a confidence level (@95) goes with delta: gates only")
        return Gate(scope, target, None, op, limit, template, source, change=COUNT)
    if target in CHANGE_COUNTS:
        raise ExpressionError(f"{target} is already a change; write {target}{op}{format_number(limit)}")
    metric, dot, stat = (part.strip() for part in target.rpartition("."))
    if not dot or stat != "mean":
        raise ExpressionError(
            f"a delta gate is on the paired change of a mean: delta:{metric or target}.mean"
        )
    if confidence is not None and op not in _INTERVAL_OPERATORS:
        raise ExpressionError(f"a confidence gate takes >= or <=, not {op}")
    return Gate(scope, check_metric_name(metric), "mean", op, limit, template, source, DELTA, confidence)


def evaluate_change_gate(gate: Gate, changes: Comparison | None, pattern: str) -> GateResult:
    """Evaluate one gate on change; without a baseline it fails and says so."""
    label, condition = gate.label, gate.condition
    if changes is None:
        message = f"{label} needs a baseline run (--graphrag-baseline PATH), required {condition}"
        return GateResult(gate, None, False, message, pattern)
    if gate.change == COUNT:
        return measured_result(gate, label, float(changes.count(gate.metric, gate.template)), "", pattern)
    change = changes.metric_change(gate.metric, gate.template, gate.confidence)
    if change is None or change.delta is None:
        reason = f"no question has {gate.metric} in both runs"
        return GateResult(
            gate, None, False, f"{label} was not computed: {reason} (required {condition})", pattern
        )
    if gate.confidence is None:
        return measured_result(gate, label, change.delta, "", pattern)
    return _interval_result(gate, change, change.delta, label, condition, pattern)


def _interval_result(
    gate: Gate, change: MetricChange, delta: float, label: str, condition: str, pattern: str
) -> GateResult:
    """Fails only when the whole interval lies on the wrong side of the limit."""
    low, high = change.ci_low, change.ci_high
    shown = display_number(delta)
    if low is None or high is None:
        reason = f"{change.n_pairs} paired question(s) are too few for an interval"
        return GateResult(gate, delta, False, f"{label} = {shown}: {reason} (required {condition})", pattern)
    percent = format_number((gate.confidence or 0) * 100)
    interval = f"{percent}% interval [{display_number(low)}, {display_number(high)}]"
    wrong_side = high < gate.limit if gate.op == ">=" else low > gate.limit
    if wrong_side:
        message = f"{label} = {shown}, {interval} lies entirely outside {condition}, {gate.source} gate"
    else:
        message = f"{label} = {shown}, {interval} reaches {condition} ({gate.source} gate)"
    return GateResult(gate, delta, not wrong_side, message, pattern)
