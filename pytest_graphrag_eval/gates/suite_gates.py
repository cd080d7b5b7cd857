"""Suite-level gates: conditions on the aggregates of a whole run.

Grammar (whitespace around the parts is ignored):

    gate   := [scope ":"] target op number
    scope  := "micro" | "macro" | "template[" TEMPLATE_ID "]" | "template[*]"
    target := metric "." stat | "number_of_error_samples" | "number_of_success_samples" | "error_rate"
            | "flaky_rate" | "stale_references" | "not_evaluated"
    stat   := "sum" | "mean" | "median" | "min" | "max"
    op     := ">=" | "<=" | ">" | "<" | "=="

The scope defaults to `micro`; `macro` holds only means. `template[*]` expands to one gate per
template present. Gates on change (`change_gates.py`), over past runs or repeats (`history_gates.py`)
and on the judge (`judge_gates.py`) have their own grammar there. A gate whose value is absent fails
and says why; it never passes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.aggregates import NOT_EVALUATED_COUNT, STAT_NAMES
from pytest_graphrag_eval.errors import ConfigurationError, SourceLocation
from pytest_graphrag_eval.gates.change_gates import (
    CHANGE_COUNTS,
    change_gate,
    evaluate_change_gate,
    split_confidence,
    split_delta_prefix,
)
from pytest_graphrag_eval.gates.expressions import (
    ExpressionError,
    check_metric_name,
    check_source,
    numeric_value,
    parse_limit,
    split_comparison,
    yaml_rules,
)
from pytest_graphrag_eval.gates.history_gates import (
    NO_HISTORY,
    GateHistory,
    check_trend_operator,
    evaluate_passes_gate,
    evaluate_trend_gate,
    excluded_note,
    passes_gate,
    split_excluding_flaky,
    split_over_prefix,
    split_trend_window,
)
from pytest_graphrag_eval.gates.judge_gates import evaluate_judge_gate, judge_gate, split_judge_prefix
from pytest_graphrag_eval.gates.metric_hints import metric_error, missing_metric_hint
from pytest_graphrag_eval.gates.model import JUDGE, TREND, Gate, GateResult, measured_result
from pytest_graphrag_eval.report_model import not_evaluated_reason_of, not_evaluated_text

if TYPE_CHECKING:
    from pytest_graphrag_eval.compare.comparison import Comparison

GATE_SOURCES = ("ini", "cli", "corpus")
OPTION_NAMES = {"ini": "ini option graphrag_gates", "cli": "--graphrag-gate"}
SAMPLE_COUNTS = ("number_of_error_samples", "number_of_success_samples")
ERROR_RATE = "error_rate"
ALL_TEMPLATES = "*"
_QUOTED_ERROR_CHARS = 200
FLAKY_RATE = "flaky_rate"
STALE_REFERENCES = "stale_references"
NOT_EVALUATED = "not_evaluated"
_PLAIN_TARGETS = (*SAMPLE_COUNTS, ERROR_RATE, FLAKY_RATE, STALE_REFERENCES, NOT_EVALUATED)
_SCOPES_HELP = "micro:, macro:, template[ID]: or template[*]:"
_SHOWN_TEMPLATES = 10


def parse_gate(text: str, source: str = "cli") -> Gate:
    """Parse one gate; ConfigurationError names the option (cli/ini) and the text."""
    check_source(source, GATE_SOURCES)
    try:
        return _parse(text, source)
    except ExpressionError as error:
        where = OPTION_NAMES.get(source, f"{source} gate")
        raise ConfigurationError(f"{where}: invalid gate {text!r}: {error}") from None


def parse_gate_list(texts: Iterable[str] | None, source: str) -> list[Gate]:
    """Gates of one option (ini lines or repeated CLI flags), in the order given."""
    return [parse_gate(text, source) for text in texts or ()]


def gates_from_yaml(value: object, location: SourceLocation) -> list[Gate]:
    """Read a corpus file's `gates:` setting: a list of gates, one gate, or `{target: limit}`."""

    def from_entry(key: str, limit: object) -> Gate:
        if split_over_prefix(key.strip())[0] is not None:  # the limit carries /run@N or K/N
            return _parse(f"{key}{limit if isinstance(limit, str) else f'>={limit}'}", "corpus")
        return _gate_from_left(key, *parse_limit(limit), "corpus")

    shapes = "a list of gates like 'steps_score.mean>=0.9'"
    rules = yaml_rules(value, location, "gates", shapes, lambda text: _parse(text, "corpus"), from_entry)
    return [gate for _, _, gate in rules]


def combine_gates(gates: Iterable[Gate]) -> list[Gate]:
    """The gates in order, an identical gate given twice (from two sources) kept once."""
    return list(dict.fromkeys(gates))


def evaluate_gates(
    gates: Iterable[Gate],
    aggregates: Mapping[str, Any],
    changes: Comparison | None = None,
    results: Sequence[Mapping[str, Any]] = (),
    history: GateHistory | None = None,
    calibration: Mapping[str, Any] | None = None,
) -> list[GateResult]:
    """Evaluate gates in the order given; `template[*]` expands to templates in sorted id order. A gate
    whose input (`changes`, `history`, `calibration`) is missing fails and says so; `results` let a
    gate on a metric no question has quote the scorers' error rather than guess at the cause."""
    per_template = aggregates.get("per_template") or {}
    gate_results: list[GateResult] = []
    for gate in gates:

        def evaluate(one: Gate, pattern: str) -> GateResult:
            if one.over == JUDGE:
                return evaluate_judge_gate(one, calibration, pattern)
            if one.over == TREND:
                return _evaluate_trend(one, aggregates, history, pattern, results)
            if one.over is not None:
                return evaluate_passes_gate(one, results, history, pattern)
            if one.change is None:
                return _evaluate(one, aggregates, pattern, results)
            if one.exclude_flaky:
                return _evaluate_excluding_flaky(one, history, pattern)
            return evaluate_change_gate(one, changes, pattern)

        if gate.template != ALL_TEMPLATES:
            gate_results.append(evaluate(gate, gate.expression))
            continue
        if gate.change is None:
            template_ids = sorted(str(template_id) for template_id in per_template)
        else:
            template_ids = changes.template_ids() if changes is not None else []
        if not template_ids:
            gate_results.append(evaluate(gate, gate.expression))
        gate_results.extend(
            evaluate(replace(gate, template=template_id), gate.expression) for template_id in template_ids
        )
    return gate_results


def _evaluate(
    gate: Gate, aggregates: Mapping[str, Any], pattern: str, results: Sequence[Mapping[str, Any]]
) -> GateResult:
    stats = _scope_stats(gate, aggregates)
    actual, reason = (None, _missing_scope(gate, aggregates)) if stats is None else _value(gate, stats)
    if actual is None and stats is not None and gate.stat is not None:
        reason = _scorer_errors(gate, results) or reason
    return measured_result(gate, f"{gate.scope_text}:{gate.target}", actual, reason, pattern)


def _evaluate_trend(
    gate: Gate,
    aggregates: Mapping[str, Any],
    history: GateHistory | None,
    pattern: str,
    results: Sequence[Mapping[str, Any]],
) -> GateResult:
    """The level gate's value in each of the last runs and in this one, and their slope."""
    level = replace(gate, over=None, window=None, confidence=None)
    if history is None:
        return GateResult(gate, None, False, f"{gate.label} {NO_HISTORY}", pattern)
    current = _evaluate(level, aggregates, pattern, results)
    if current.actual is None:
        return replace(current, gate=gate)
    earlier = history.runs.last((gate.window or 1) - 1)
    values = [gate_value(level, run.aggregates) for run in earlier]
    known = _targets(level, earlier[-1].aggregates) if earlier else []
    return evaluate_trend_gate(gate, [*values, current.actual], len(earlier), known, pattern)


def gate_value(gate: Gate, aggregates: Mapping[str, Any]) -> float | None:
    """A level gate's value in one run's aggregates (None when they do not have it)."""
    stats = _scope_stats(gate, aggregates)
    return None if stats is None else _value(gate, stats)[0]


def _targets(gate: Gate, aggregates: Mapping[str, Any]) -> list[str]:
    """The gate targets one run's aggregates (in the gate's scope) have, for a missing-metric error."""
    stats = _scope_stats(gate, aggregates) or {}
    return sorted(
        f"{key}.{stat}" if stat else str(key)
        for key, item in stats.items()
        for stat in ([gate.stat] if isinstance(item, Mapping) and gate.stat in item else [None])
        if stat is not None or (isinstance(item, (int, float)) and not isinstance(item, bool))
    )


def _evaluate_excluding_flaky(gate: Gate, history: GateHistory | None, pattern: str) -> GateResult:
    if history is None:
        message = f"{gate.label} {NO_HISTORY} to know the flaky questions"
        return GateResult(gate, None, False, message, pattern)
    result = evaluate_change_gate(gate, history.stable_changes, pattern)
    note = excluded_note(history.flaky)
    return replace(result, message=f"{result.message}; {note}", excluded=history.flaky)


def _scope_stats(gate: Gate, aggregates: Mapping[str, Any]) -> Mapping[str, Any] | None:
    stats = (
        (aggregates.get("per_template") or {}).get(gate.template)
        if gate.scope == "template"
        else aggregates.get(gate.scope)
    )
    return stats if isinstance(stats, Mapping) else None


def _missing_scope(gate: Gate, aggregates: Mapping[str, Any]) -> str:
    if gate.scope != "template":
        return f"the aggregates have no {gate.scope!r} section"
    known = sorted(str(template_id) for template_id in aggregates.get("per_template") or {})
    if not known:
        return "no template has results in this run"
    shown = ", ".join(repr(template_id) for template_id in known[:_SHOWN_TEMPLATES])
    more = f" and {len(known) - _SHOWN_TEMPLATES} more" if len(known) > _SHOWN_TEMPLATES else ""
    return f"template {gate.template!r} has no results in this run; templates with results: {shown}{more}"


def _value(gate: Gate, stats: Mapping[str, Any]) -> tuple[float | None, str]:
    """The gated number, or None with the reason it is missing."""
    if gate.metric == ERROR_RATE:
        errors = numeric_value(stats.get("number_of_error_samples"))
        successes = numeric_value(stats.get("number_of_success_samples"))
        if errors is None or successes is None:
            return None, "the aggregates have no sample counts"
        if errors + successes == 0:
            return None, "no questions ran"
        return errors / (errors + successes), ""
    if gate.metric == NOT_EVALUATED:
        return numeric_value(stats.get(NOT_EVALUATED_COUNT, 0)), ""
    if gate.stat is None:
        value = numeric_value(stats.get(gate.metric))
        if value is None and gate.metric == FLAKY_RATE:
            return None, "no question was asked more than once (--graphrag-agent-repeats K)"
        if value is None and gate.metric == STALE_REFERENCES:
            return None, "no reference was checked against the graph (--graphrag-check-references)"
        return value, "the aggregates have no sample counts" if value is None else ""
    entry = stats.get(gate.metric)
    if isinstance(entry, Mapping):
        value = numeric_value(entry.get(gate.stat))
        return value, f"{gate.metric} has no {gate.stat} here" if value is None else ""
    if stats.get("number_of_success_samples") == 0:
        return None, "no question succeeded"
    available = [key for key, item in stats.items() if isinstance(item, Mapping) and gate.stat in item]
    return None, missing_metric_hint(gate.metric, available)


def _scorer_errors(gate: Gate, results: Sequence[Mapping[str, Any]]) -> str | None:
    """The error the scorers left for the gated metric on the answered questions in the gate's scope
    (an agent error is the question's own failure, not the scorer's)."""
    in_scope = [
        result
        for result in results
        if result.get("status") == "success"
        and (gate.scope != "template" or str(result.get("template_id")) == gate.template)
    ]
    # A question no judge scored is named as every summary names it, not as a scorer's error.
    unscored = [reason for result in in_scope if (reason := not_evaluated_reason_of(result)) is not None]
    if unscored and len(unscored) == len(in_scope):
        return f"{not_evaluated_text(unscored)} of {len(in_scope)} answered questions"
    errors = [found for result in in_scope if (found := metric_error(result, gate.metric)) is not None]
    if not errors:
        return None
    key, text = errors[0]
    if len(text) > _QUOTED_ERROR_CHARS:
        text = text[: _QUOTED_ERROR_CHARS - 1] + "…"
    return (
        f"{len(errors)} of {len(in_scope)} answered questions have an error for it, the first {key}: {text!r}"
    )


def _parse(text: object, source: str) -> Gate:
    if not isinstance(text, str):
        raise ExpressionError(f"expected text, got {type(text).__name__}")
    judged, rest = split_judge_prefix(text.strip())
    if judged:
        target, op, limit = split_comparison(rest)
        return judge_gate(target.strip(), op, limit, source)
    text, exclude_flaky = split_excluding_flaky(text.strip())
    over, text = split_over_prefix(text)
    if over is not None:
        if exclude_flaky:
            raise ExpressionError("'excluding flaky' goes with gates on change (regressions, delta:...)")
        return _over_gate(over, text, source)
    delta, text = split_delta_prefix(text)
    text, confidence = split_confidence(text)
    scope, template, rest = _split_scope(text)
    target, op, limit = split_comparison(rest)
    if delta or confidence is not None or target.strip() in CHANGE_COUNTS:
        gate = change_gate(delta, scope, template, target.strip(), op, limit, confidence, source)
        return replace(gate, exclude_flaky=True) if exclude_flaky else gate
    if exclude_flaky:
        raise ExpressionError("'excluding flaky' goes with gates on change (regressions, delta:...)")
    return _gate(scope, template, target, op, limit, source)


def _over_gate(over: str, text: str, source: str) -> Gate:
    """A `trend:`, `history:` or `repeats:` gate, its prefix already split off."""
    if over != TREND:
        scope, template, rest = _split_scope(text)
        return passes_gate(over, scope, template, rest, source)
    text, window, confidence = split_trend_window(text)
    if split_delta_prefix(text)[0]:
        raise ExpressionError("a trend is of a level gate's value, not of a change (drop delta:)")
    scope, template, rest = _split_scope(text)
    target, op, limit = split_comparison(rest)
    check_trend_operator(op)
    if target.strip() in CHANGE_COUNTS:
        raise ExpressionError(
            f"{target.strip()} counts changes since a baseline; a trend takes a level gate's value"
        )
    gate = _gate(scope, template, target.strip(), op, limit, source)
    return replace(gate, over=TREND, window=window, confidence=confidence)


def _gate_from_left(left: str, op: str, limit: float, source: str) -> Gate:
    """A gate from a YAML mapping entry: `left` is `[scope:]target`, the limit comes separately."""
    judged, target = split_judge_prefix(left.strip())
    if judged:
        return judge_gate(target, op, limit, source)
    delta, left = split_delta_prefix(left.strip())
    scope, template, target = _split_scope(left)
    if delta or target.strip() in CHANGE_COUNTS:
        return change_gate(delta, scope, template, target.strip(), op, limit, None, source)
    return _gate(scope, template, target.strip(), op, limit, source)


def _split_scope(text: str) -> tuple[str, str | None, str]:
    """Split off `micro:`, `macro:` or `template[ID]:`; no scope means micro."""
    if text.startswith("template") and text[len("template") :].lstrip().startswith("["):
        after = text[len("template") :].lstrip()
        close = after.find("]")
        if close < 0:
            raise ExpressionError("'template[' without a closing ']'")
        template = after[1:close].strip()
        if not template:
            raise ExpressionError("empty template id in 'template[]'")
        rest = after[close + 1 :].lstrip()
        if not rest.startswith(":"):
            raise ExpressionError(f"expected ':' after 'template[{template}]'")
        return "template", template, rest[1:]
    head, colon, tail = text.partition(":")
    if not colon or any(char in head for char in "<>=!"):
        return "micro", None, text
    scope = head.strip()
    if scope in ("micro", "macro"):
        return scope, None, tail
    if scope == "template":
        raise ExpressionError("the template scope needs an id: template[ID]: or template[*]:")
    raise ExpressionError(f"unknown scope {scope!r} (use {_SCOPES_HELP})")


def _gate(scope: str, template: str | None, target: str, op: str, limit: float, source: str) -> Gate:
    if target in _PLAIN_TARGETS:
        if scope == "macro":
            raise ExpressionError(f"{target} is not in the macro aggregates (use micro: or template[...]:)")
        return Gate(scope, target, None, op, limit, template, source)
    metric, dot, stat = (part.strip() for part in target.rpartition("."))
    if metric in _PLAIN_TARGETS:
        raise ExpressionError(f"{metric} is a count and takes no statistic (write {metric}{op}...)")
    if not dot:
        raise ExpressionError(
            f"a metric gate needs a statistic, e.g. {target}.mean (one of {', '.join(STAT_NAMES)})"
        )
    if stat not in STAT_NAMES:
        raise ExpressionError(f"unknown statistic {stat!r} (one of {', '.join(STAT_NAMES)})")
    if scope == "macro" and stat != "mean":
        raise ExpressionError(f"macro aggregates have only means: macro:{metric}.mean")
    return Gate(scope, check_metric_name(metric), stat, op, limit, template, source)
