"""Parsed gates and their outcomes, shared by level gates and gates on change."""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_graphrag_eval.gates.expressions import compare, display_number, format_number
from pytest_graphrag_eval.report_model import GateRecord

DELTA = "delta"
COUNT = "count"
TREND = "trend"  # the slope of a level gate's value over the last runs (history_gates.py)
HISTORY = "history"  # k-of-n passes over the last runs
REPEATS = "repeats"  # k-of-n passes over this run's repeated attempts
PASSES = "passes"
EXCLUDING_FLAKY = "excluding flaky"
JUDGE = "judge"  # the judge's agreement with people's labels (judge_gates.py)


@dataclass(frozen=True)
class Gate:
    """One parsed gate. `template` is set only for the template scope (an id or "*")."""

    scope: str
    metric: str
    stat: str | None
    op: str
    limit: float
    template: str | None = None
    source: str = field(default="cli", compare=False)
    change: str | None = None
    confidence: float | None = None
    over: str | None = None  # TREND, HISTORY, REPEATS or JUDGE; None for a gate on this run alone
    window: int | None = None  # runs (or attempts) the `over` gate looks at, this run included
    exclude_flaky: bool = False  # a gate on change that leaves the history's flaky questions out

    @property
    def scope_text(self) -> str:
        return f"template[{self.template}]" if self.scope == "template" else self.scope

    @property
    def target(self) -> str:
        return self.metric if self.stat is None else f"{self.metric}.{self.stat}"

    @property
    def expression(self) -> str:
        """Normalized text, scope always explicit; parses back to an equal gate."""
        if self.over == JUDGE:
            return f"{JUDGE}:{self.target}{self.op}{format_number(self.limit)}"
        prefix = "delta:" if self.change == DELTA else f"{self.over}:" if self.over else ""
        level = "" if self.confidence is None else f"@{format_number(self.confidence * 100)}"
        limit = format_number(self.limit)
        if self.over == TREND:
            limit = f"{limit}/run@{self.window}"
        elif self.over is not None:
            limit = f"{limit}/{self.window}"
        flaky = f" {EXCLUDING_FLAKY}" if self.exclude_flaky else ""
        return f"{prefix}{self.scope_text}:{self.target}{self.op}{limit}{level}{flaky}"

    @property
    def label(self) -> str:
        """The expression up to its operator, as messages name the gate."""
        return self.expression.rpartition(self.op)[0]

    @property
    def condition(self) -> str:
        return f"{self.op} {format_number(self.limit)}"

    @property
    def needs_baseline(self) -> bool:
        return self.change is not None

    @property
    def needs_history(self) -> bool:
        return self.over in (TREND, HISTORY) or self.exclude_flaky

    def __str__(self) -> str:
        return self.expression


@dataclass(frozen=True)
class GateResult:
    """One evaluated gate; `pattern` is the gate as configured (differs for `template[*]`)."""

    gate: Gate
    actual: float | None
    passed: bool
    message: str
    pattern: str
    excluded: tuple[str, ...] = ()  # the flaky question ids a gate on change left out

    @property
    def expression(self) -> str:
        return self.gate.expression

    def record(self) -> GateRecord:
        """The gate's line in the report (`gates`)."""
        gate = self.gate
        parts = (
            "scope",
            "template",
            "metric",
            "stat",
            "op",
            "limit",
            "change",
            "confidence",
            "source",
            "over",
        )
        return GateRecord(
            expression=self.expression,
            gate=self.pattern,
            passed=self.passed,
            actual=self.actual,
            message=self.message,
            window=gate.window if gate.over else None,
            excluding_flaky=self.excluded if gate.exclude_flaky else None,
            **{name: getattr(gate, name) for name in parts},
        )


def measured_result(gate: Gate, label: str, actual: float | None, reason: str, pattern: str) -> GateResult:
    """A level gate held to its measured value, or failed with why there is none."""
    if actual is None:
        message = f"{label} was not computed: {reason} (required {gate.condition}, {gate.source} gate)"
        return GateResult(gate, None, False, message, pattern)
    passed = compare(actual, gate.op, gate.limit)
    message = outcome_message(label, actual, gate.condition, passed, f"{gate.source} gate")
    return GateResult(gate, actual, passed, message, pattern)


def outcome_message(label: str, actual: float, condition: str, passed: bool, rule: str) -> str:
    """`label = value op limit (rule)`, or the failing form that says what was required; `rule` is
    `cli gate`, `corpus threshold`, ..."""
    shown = display_number(actual)
    if passed:
        return f"{label} = {shown} {condition} ({rule})"
    return f"{label} = {shown}, required {condition}, {rule}"
