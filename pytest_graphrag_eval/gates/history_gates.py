"""Gates over the last runs and over repeated attempts: trends, k-of-n passes, flaky questions left out.

    trend:[scope:]metric.stat >= SLOPE/run@N [@PERCENT]
        A level gate's least-squares slope over the last N runs; fails only when the slope's whole
        interval lies beyond SLOPE, so noise does not fail it (`benchmarks/bench_trend_calibration.py`).
    history:[scope:]passes >= K/N  /  repeats:[scope:]passes >= K/N
        Every question passed K of its last N runs (or attempts in this run); with fewer so far, it
        is held to the same number of failures, at most N - K.
    <gate on change> excluding flaky
        A gate on change computed without the questions the history calls flaky.

The earlier runs come as plain data (`RunHistory`); this module never reads a store.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.compare import MAX_WINDOW
from pytest_graphrag_eval.compare.classify import passed
from pytest_graphrag_eval.compare.past_runs import RunHistory
from pytest_graphrag_eval.compare.repeats import attempt_passed
from pytest_graphrag_eval.compare.trend import MIN_RUNS_FOR_INTERVAL, slope_trend
from pytest_graphrag_eval.gates.expressions import (
    ExpressionError,
    confidence_level,
    display_number,
    format_number,
)
from pytest_graphrag_eval.gates.model import EXCLUDING_FLAKY, HISTORY, PASSES, REPEATS, Gate, GateResult

if TYPE_CHECKING:
    from pytest_graphrag_eval.compare.comparison import Comparison

DEFAULT_TREND_CONFIDENCE = 0.95
_OVER_PREFIX = re.compile(r"(trend|history|repeats)\s*:", re.IGNORECASE)
_EXCLUDING_FLAKY = re.compile(r"\s+excluding\s+flaky\s*$", re.IGNORECASE)
_TREND_WINDOW = re.compile(r"/\s*run\s*@\s*([0-9]+)\s*(?:@\s*([0-9]+(?:\.[0-9]+)?)\s*)?$")
_PASSES = re.compile(r"passes\s*(>=|<=|==|<|>)\s*([0-9]+)\s*/\s*([0-9]+)\s*$")
_SHOWN_QUESTIONS = 5
_ROUNDING = 1e-9
NO_HISTORY = "needs a run history (--graphrag-history URL)"


@dataclass(frozen=True)
class GateHistory:
    """What gates over runs need: the earlier runs, this run's flaky questions, the change without them."""

    runs: RunHistory
    flaky: tuple[str, ...] = ()  # this run's flaky question ids, in result order
    stable_changes: Comparison | None = None  # the baseline comparison without the flaky questions


def split_over_prefix(text: str) -> tuple[str | None, str]:
    """`trend:rest` -> ("trend", rest), likewise `history:` and `repeats:`; anything else unchanged."""
    match = _OVER_PREFIX.match(text)
    return (match.group(1).lower(), text[match.end() :].strip()) if match else (None, text)


def split_excluding_flaky(text: str) -> tuple[str, bool]:
    """A trailing `excluding flaky` -> (the rest, True)."""
    match = _EXCLUDING_FLAKY.search(text)
    return (text[: match.start()], True) if match else (text, False)


def split_trend_window(text: str) -> tuple[str, int, float | None]:
    """`...>=-0.005/run@10` -> ("...>=-0.005", 10, None); a second `@90` is the interval's level."""
    match = _TREND_WINDOW.search(text)
    if match is None:
        raise ExpressionError("a trend gate ends with the slope per run and the window, e.g. >=-0.005/run@10")
    window = int(match.group(1))
    if not MIN_RUNS_FOR_INTERVAL <= window <= MAX_WINDOW:
        raise ExpressionError(
            f"a trend's window @{window} must be from {MIN_RUNS_FOR_INTERVAL} (a slope's interval needs "
            f"that many runs) to {MAX_WINDOW} runs"
        )
    confidence = confidence_level(match.group(2)) if match.group(2) is not None else None
    return text[: match.start()].rstrip(), window, confidence


def check_trend_operator(op: str) -> None:
    if op not in (">=", "<="):
        raise ExpressionError(f"a trend gate takes >= or <= (the slope's interval against a bound), not {op}")


def passes_gate(over: str, scope: str, template: str | None, rest: str, source: str) -> Gate:
    """`passes>=K/N` after a `history:` or `repeats:` prefix and its scope."""
    match = _PASSES.fullmatch(rest.strip())
    if match is None:
        raise ExpressionError(f"{over}: gates are k-of-n passes, e.g. {over}:passes>=4/5")
    op, needed, window = match.group(1), int(match.group(2)), int(match.group(3))
    if op != ">=":
        raise ExpressionError(f"a k-of-n gate takes >= (at least K passes of N), not {op}")
    if not 1 <= window <= MAX_WINDOW:
        raise ExpressionError(f"N in passes>={needed}/{window} must be from 1 to {MAX_WINDOW}")
    if not 1 <= needed <= window:
        raise ExpressionError(f"K in passes>={needed}/{window} must be from 1 to N")
    if scope == "macro":
        raise ExpressionError("k-of-n gates count questions: use micro: or template[...]:")
    return Gate(scope, PASSES, None, op, float(needed), template, source, over=over, window=window)


def evaluate_trend_gate(
    gate: Gate, values: Sequence[float | None], history_runs: int, known: Sequence[str], pattern: str
) -> GateResult:
    """The slope of `values` (earlier runs' values, this run's last) against the gate's bound; `known`
    are the targets the earlier runs have, for the error when none of them has this one."""
    label, condition = gate.label, f"{gate.condition}/run"
    earlier = values[:-1]
    if history_runs and all(value is None for value in earlier):
        shown = ", ".join(known[:10]) or "none"
        message = (
            f"{label}: none of the last {history_runs} recorded run(s) has {gate.scope_text}:{gate.target}, "
            f"so it has no trend (values they have: {shown}), {gate.source} gate"
        )
        return GateResult(gate, None, False, message, pattern)
    trend = slope_trend(values, gate.confidence or DEFAULT_TREND_CONFIDENCE)
    runs = f"over {trend.runs} run(s)"
    if trend.slope is None or trend.low is None or trend.high is None:
        slope = "" if trend.slope is None else f" = {display_number(trend.slope)}/run"
        message = (
            f"{label}{slope} {runs}: not judged yet, a slope's interval needs {MIN_RUNS_FOR_INTERVAL} runs "
            f"with the value ({condition}, {gate.source} gate)"
        )
        return GateResult(gate, trend.slope, True, message, pattern)
    percent = format_number(trend.confidence * 100)
    interval = f"{percent}% interval [{display_number(trend.low)}, {display_number(trend.high)}]"
    # A series with no noise has the interval [slope, slope]; a slope exactly at the bound must not
    # fail by the last bit of a float, so "beyond" means beyond by more than rounding.
    slack = _ROUNDING * max(1.0, abs(gate.limit), abs(trend.slope))
    wrong_side = trend.high < gate.limit - slack if gate.op == ">=" else trend.low > gate.limit + slack
    shown = f"{label} = {display_number(trend.slope)}/run {runs}, {interval}"
    if wrong_side:
        message = f"{shown} lies entirely outside {condition}, {gate.source} gate"
    else:
        message = f"{shown} reaches {condition} ({gate.source} gate)"
    return GateResult(gate, trend.slope, not wrong_side, message, pattern)


def evaluate_passes_gate(
    gate: Gate, results: Sequence[Mapping[str, Any]], history: GateHistory | None, pattern: str
) -> GateResult:
    """k-of-n passes per question, over repeats in this run or over the last runs."""
    label = gate.label
    needed, window = int(gate.limit), gate.window or 1
    condition = f"{gate.op} {needed}/{window}"
    in_scope = [
        result
        for result in results
        if (gate.scope != "template" or str(result.get("template_id")) == gate.template) and _judged(result)
    ]
    if gate.over == HISTORY and history is None:
        return GateResult(gate, None, False, f"{label} {NO_HISTORY}, required {condition}", pattern)
    series = (
        _attempt_series(in_scope, window)
        if gate.over == REPEATS
        else _run_series(in_scope, history.runs if history is not None else RunHistory(()), window)
    )
    if gate.over == REPEATS and not any(len(outcomes) > 1 for outcomes in series.values()):
        reason = "no question was asked more than once (--graphrag-agent-repeats N)"
        return GateResult(
            gate, None, False, f"{label} was not computed: {reason}, required {condition}", pattern
        )
    short = [
        question_id
        for question_id, outcomes in series.items()
        if len(outcomes) - sum(outcomes) > window - needed
    ]
    what = "attempts" if gate.over == REPEATS else "runs"
    if short:
        names = ", ".join(short[:_SHOWN_QUESTIONS]) + (" ..." if len(short) > _SHOWN_QUESTIONS else "")
        message = (
            f"{label}: {len(short)} of {len(series)} question(s) passed fewer than {needed} of their last "
            f"{window} {what} ({names}), {gate.source} gate"
        )
    else:
        message = f"{label}: all {len(series)} question(s) {condition} {what} ({gate.source} gate)"
    return GateResult(gate, float(len(short)), not short, message, pattern)


def _judged(result: Mapping[str, Any]) -> bool:
    """A question marked xfail, skipped or left unevaluated in this run is not held to k of n."""
    return "outcome" not in result or passed(result.get("outcome")) is not None


def _attempt_series(results: Sequence[Mapping[str, Any]], window: int) -> dict[str, list[bool]]:
    series = {}
    for result in results:
        attempts = result.get("attempts")
        outcomes = (
            [attempt_passed(attempt) for attempt in attempts if isinstance(attempt, Mapping)]
            if isinstance(attempts, list)
            else [passed(result.get("outcome"))]
        )
        series[str(result["question_id"])] = [outcome for outcome in outcomes if outcome is not None][
            -window:
        ]
    return series


def _run_series(results: Sequence[Mapping[str, Any]], runs: RunHistory, window: int) -> dict[str, list[bool]]:
    earlier = runs.last(window - 1)
    series = {}
    for result in results:
        question_id = str(result["question_id"])
        outcomes = [passed(run.outcomes.get(question_id)) for run in earlier] + [
            passed(result.get("outcome"))
        ]
        series[question_id] = [outcome for outcome in outcomes if outcome is not None]
    return series


def excluded_note(excluded: Sequence[str]) -> str:
    """What an `excluding flaky` gate adds to its message."""
    if not excluded:
        return f"{EXCLUDING_FLAKY}: none found"
    names = ", ".join(excluded[:_SHOWN_QUESTIONS]) + (" ..." if len(excluded) > _SHOWN_QUESTIONS else "")
    return f"{len(excluded)} flaky question(s) excluded: {names}"
