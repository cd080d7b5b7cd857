"""What the page shows, computed once from the JSON report.

The server-rendered parts (overview, distributions, changes) get plain
dataclasses and dicts; the question list gets a compact columnar index that the
page parses at load, and every question's drill-down sits in a second JSON
block that the page parses only when a question is first opened.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_graphrag_eval.errors import InputError, SourceLocation
from pytest_graphrag_eval.report.html_report.charts import (
    DeltaBar,
    Histogram,
    delta_bar,
    delta_scale,
    fmt,
    histogram,
)
from pytest_graphrag_eval.report.html_report.history import HistoryView, build_history, question_outcomes
from pytest_graphrag_eval.report.html_report.metrics import (
    OUTCOMES,
    TOKEN_KEYS,
    cost_keys,
    finite,
    is_flaky,
    judge_token_keys,
    numeric_keys,
    outcome_of,
    score_metrics,
)
from pytest_graphrag_eval.report.html_report.steps import as_text, clip, step_table
from pytest_graphrag_eval.report.judge_spend import spend_lines
from pytest_graphrag_eval.report_model import not_evaluated_reason_of, not_evaluated_reasons

TEXT_LIMIT = 4000
OVERVIEW_METRICS = 6  # score columns of the overview's template table before the gated ones
CHANGE_KINDS = ("regressed", "fixed", "new", "removed", "edited", "unchanged")


@dataclass
class TemplateRow:
    template_id: str
    questions: int
    outcomes: dict[str, int]
    errors: int
    means: dict[str, float | None]
    tokens: float
    cost: float | None
    elapsed_mean: float | None


@dataclass
class DeltaRow:
    label: str
    stats: Mapping[str, Any]
    bar: DeltaBar
    significant: bool
    scale: float
    neutral: bool


@dataclass
class Changes:
    baseline: Mapping[str, Any]
    confidence: float | None
    counts: dict[str, int]
    outcomes: DeltaRow | None
    micro: list[tuple[str, DeltaRow]]
    micro_other: list[tuple[str, DeltaRow]]
    per_metric: list[tuple[str, list[DeltaRow]]]
    lists: dict[str, list[dict[str, Any]]]
    scale: float


@dataclass
class ReportView:
    metadata: Mapping[str, Any]
    format_version: Any
    questions: int
    outcome_counts: dict[str, int]
    has_outcomes: bool
    agent_errors: int  # of questions not marked xfail: those are expected to fail
    expected_errors: int  # agent errors of xfailed questions
    not_evaluated_reasons: str  # "cache miss" ("" when every question was evaluated): as every summary says
    gates: list[Mapping[str, Any]]
    warnings: list[str]
    spend: list[str]
    score_metrics: list[str]
    overview_metrics: list[str]  # the template table's columns: it fits a 1400 px window
    gate_verdicts: dict[tuple[str, str], bool]  # (micro|macro|template id, metric) -> its mean's gates passed
    other_metrics: list[str]
    templates: list[TemplateRow]
    micro_means: dict[str, float | None]
    macro_means: dict[str, float | None]
    usage: list[tuple[str, str, str]]
    has_cost: bool
    metric_errors: dict[str, int]
    histograms: dict[str, dict[str, Histogram]]
    changes: Changes | None
    index: dict[str, Any]
    details: list[dict[str, Any]] = field(default_factory=list)
    history: HistoryView | None = None  # the runs before this one, when the run had a history

    def verdict(self, row: str, metric: str) -> bool | None:
        """Whether the gates on this row's mean of `metric` passed; None when no gate judges it."""
        return self.gate_verdicts.get((row, metric))


def build_view(report: Mapping[str, Any]) -> ReportView:
    """Check the report's shape (naming the bad field) and derive everything the page shows."""
    if not isinstance(report, Mapping):
        raise InputError("the report must be a JSON object", field="report")
    results = report.get("results")
    if not isinstance(results, list):
        raise InputError("must be a list of question results", field="results")
    for position, result in enumerate(results):
        if not isinstance(result, Mapping):
            raise InputError(f"result {position} must be an object", field=f"results[{position}]")
        for key in ("template_id", "question_id"):
            if not isinstance(result.get(key), (str, int)):
                where = SourceLocation(question_id=_text(result.get("question_id")) or None)
                raise InputError(f"result {position} has no {key}", where, key)
    metadata = _mapping(report.get("metadata"))
    aggregates = _mapping(report.get("aggregates"))
    keys = numeric_keys(results)
    scores = score_metrics(results, keys)
    others = [key for key in keys if key not in scores]
    comparison = report.get("comparison") if isinstance(report.get("comparison"), Mapping) else None
    classification = _classifications(comparison)
    outcomes = [outcome_of(result) for result in results]
    groups: dict[str, list[int]] = {}
    for position, result in enumerate(results):
        groups.setdefault(str(result["template_id"]), []).append(position)
    templates = list(groups)
    micro = _mapping(aggregates.get("micro"))
    gates = [gate for gate in report.get("gates") or [] if isinstance(gate, Mapping)]
    verdicts = _gate_verdicts(gates)
    history = _mapping(report.get("history"))
    id_counts = Counter(_text(result["question_id"]) for result in results)
    history_flaky = {
        _text(entry.get("question_id")) for entry in _list(history.get("flaky")) if isinstance(entry, Mapping)
    }
    outcomes_over_runs = question_outcomes(history)
    view = ReportView(
        metadata=metadata,
        format_version=report.get("format_version"),
        questions=len(results),
        outcome_counts={name: count for name, count in Counter(outcomes).items()},
        has_outcomes=any(isinstance(result.get("outcome"), str) for result in results),
        agent_errors=sum(
            1
            for result, outcome in zip(results, outcomes, strict=True)
            if result.get("status") == "error" and outcome != "xfailed"
        ),
        expected_errors=sum(
            1
            for result, outcome in zip(results, outcomes, strict=True)
            if result.get("status") == "error" and outcome == "xfailed"
        ),
        not_evaluated_reasons=not_evaluated_reasons(
            [reason for result in results if (reason := not_evaluated_reason_of(result)) is not None]
        ),
        gates=gates,
        warnings=[clip(_text(warning), TEXT_LIMIT) for warning in _list(report.get("warnings"))],
        spend=spend_lines(_mapping(report.get("judge_spend"))),
        score_metrics=scores,
        overview_metrics=_overview_metrics(scores, verdicts),
        gate_verdicts=verdicts,
        other_metrics=others,
        templates=[
            _template_row(tid, members, results, outcomes, scores, keys) for tid, members in groups.items()
        ],
        micro_means={metric: _micro_mean(micro, results, metric) for metric in scores},
        macro_means={metric: _stat(_mapping(aggregates.get("macro")), metric, "mean") for metric in scores},
        usage=_usage(micro, results, keys),
        has_cost=bool(cost_keys(keys)),
        metric_errors=dict(
            Counter(
                key for result in results for key, value in result.items() if key.endswith("_error") and value
            )
        ),
        histograms=_histograms(results, templates, scores, others),
        changes=_changes(comparison, results, scores) if comparison else None,
        index=_index(results, outcomes, templates, scores, classification, history_flaky),
        details=[
            _details(result, metadata, classification.get(_question_key(result)), scores, keys)
            for result in results
        ],
        history=build_history(
            history, gates, {_text(result["question_id"]): _link(result, id_counts) for result in results}
        )
        if history
        else None,
    )
    if outcomes_over_runs:
        for result, detail in zip(results, view.details, strict=True):
            question_id = _text(result["question_id"])
            if question_id in outcomes_over_runs:
                detail["history"] = outcomes_over_runs[question_id]
                detail["history_flaky"] = question_id in history_flaky
    return view


def _gate_verdicts(gates: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], bool]:
    """Which means a gate judged, and whether every gate on each passed.

    Only these get a pass or fail colour; a score no gate judges is shown without one (a low number is
    not a failure unless someone said so).
    """
    verdicts: dict[tuple[str, str], bool] = {}
    for gate in gates:
        if gate.get("stat") != "mean" or gate.get("change") or not isinstance(gate.get("metric"), str):
            continue
        scope = gate.get("scope")
        row = _text(gate.get("template")) if scope == "template" else _text(scope or "micro")
        key = (row, gate["metric"])
        verdicts[key] = verdicts.get(key, True) and bool(gate.get("passed"))
    return verdicts


def _overview_metrics(scores: Sequence[str], verdicts: Mapping[tuple[str, str], bool]) -> list[str]:
    """The first scores (the scorers' own order) and every gated one: all of them are in Distributions."""
    gated = {metric for _, metric in verdicts}
    return [metric for index, metric in enumerate(scores) if index < OVERVIEW_METRICS or metric in gated]


def _template_row(
    template_id: str,
    members: Sequence[int],
    results: Sequence[Mapping[str, Any]],
    outcomes: Sequence[str],
    scores: Sequence[str],
    keys: Sequence[str],
) -> TemplateRow:
    group = [results[index] for index in members]
    answered = [result for result in group if result.get("status", "success") == "success"]
    costs = cost_keys(keys)
    return TemplateRow(
        template_id=template_id,
        questions=len(group),
        outcomes=dict(Counter(outcomes[index] for index in members)),
        errors=len(group) - len(answered),
        means={metric: _mean(answered, metric) for metric in scores},
        tokens=sum(finite(result.get("total_tokens")) or 0.0 for result in group),
        cost=sum(finite(result.get(key)) or 0.0 for result in group for key in costs) if costs else None,
        elapsed_mean=_mean(answered, "elapsed_sec"),
    )


def _usage(
    micro: Mapping[str, Any], results: Sequence[Mapping[str, Any]], keys: Sequence[str]
) -> list[tuple[str, Any, Any]]:
    """(label, total, per question) for agent tokens, time, judge tokens and judge USD."""
    rows = []
    costs = cost_keys(keys)
    named = [(key, key.replace("_", " ")) for key in (*TOKEN_KEYS, "elapsed_sec", *judge_token_keys(keys))]
    for key, label in [*named, *((key, f"{key.replace('_', ' ')} (USD)") for key in costs)]:
        if key not in keys:
            continue
        total = _stat(micro, key, "sum")
        mean = _stat(micro, key, "mean")
        if total is None:
            values = [value for value in (finite(result.get(key)) for result in results) if value is not None]
            total = sum(values)
            mean = total / len(values) if values else None
        if key in costs:
            rows.append((label, f"${total:,.4f}", "–" if mean is None else f"${mean:,.5f}"))
        elif key == "elapsed_sec":
            rows.append(("agent time (s)", fmt(total, 4), fmt(mean, 3)))
        else:
            rows.append((label, fmt(total), fmt(mean, 4)))
    return rows


def _histograms(
    results: Sequence[Mapping[str, Any]],
    templates: Sequence[str],
    scores: Sequence[str],
    others: Sequence[str],
) -> dict[str, dict[str, Histogram]]:
    """Per metric: the histogram over every question ("") and per template."""
    shown = [*scores, *(key for key in others if not key.endswith(("_stdev", "_count")))]
    by_template: dict[str, list[Mapping[str, Any]]] = {template: [] for template in templates}
    for result in results:
        by_template[str(result["template_id"])].append(result)
    charts: dict[str, dict[str, Histogram]] = {}
    for metric in shown:
        unit = metric in scores
        groups = {"": results, **by_template}
        charts[metric] = {
            name: histogram([finite(result.get(metric)) for result in group], unit_interval=unit)
            for name, group in groups.items()
        }
    return charts


def _changes(
    comparison: Mapping[str, Any], results: Sequence[Mapping[str, Any]], scores: Sequence[str]
) -> Changes:
    """Score changes share one axis; tokens, time and counts each get their own (their units differ)."""
    questions = [item for item in comparison.get("questions") or [] if isinstance(item, Mapping)]
    micro = _mapping(comparison.get("metrics"))
    per_template = {
        template: _mapping(stats) for template, stats in _mapping(comparison.get("per_template")).items()
    }
    named = list(dict.fromkeys([*micro, *(metric for stats in per_template.values() for metric in stats)]))
    ordered = [metric for metric in scores if metric in named] + [m for m in named if m not in scores]
    score_scale = _scale([_mapping(micro.get(metric)) for metric in ordered if metric in scores])
    outcome_stats = _mapping(comparison.get("outcomes"))
    texts = {_question_key(result): _text(result.get("question_text")) for result in results}
    id_counts = Counter(_text(result["question_id"]) for result in results)
    lists = {
        kind: [
            {
                **item,
                "question_text": texts.get(_question_key(item), ""),
                "link": _link(item, id_counts),
                "score_deltas": _score_deltas(item, scores),
            }
            for item in questions
            if item.get("classification") == kind
        ]
        for kind in ("regressed", "fixed")
    }
    per_metric = []
    for metric in ordered:
        rows = [stats[metric] for stats in per_template.values() if isinstance(stats.get(metric), Mapping)]
        scale = _scale(rows)
        per_metric.append(
            (
                metric,
                [
                    _delta_row(template, stats[metric], scale, neutral=metric not in scores)
                    for template, stats in per_template.items()
                    if isinstance(stats.get(metric), Mapping)
                ],
            )
        )
    return Changes(
        baseline=_mapping(comparison.get("baseline")),
        confidence=finite(comparison.get("confidence")),
        counts=_change_counts(comparison, questions),
        outcomes=_delta_row("pass rate", outcome_stats, _scale([outcome_stats])) if outcome_stats else None,
        micro=[
            (metric, _delta_row(metric, _mapping(micro[metric]), score_scale))
            for metric in ordered
            if metric in scores and metric in micro
        ],
        micro_other=[
            (
                metric,
                _delta_row(metric, _mapping(micro[metric]), _scale([_mapping(micro[metric])]), neutral=True),
            )
            for metric in ordered
            if metric not in scores and metric in micro
        ],
        per_metric=per_metric,
        lists=lists,
        scale=score_scale,
    )


def _scale(stats: Sequence[Mapping[str, Any]]) -> float:
    return delta_scale([finite(item.get(key)) for item in stats for key in ("delta", "ci_low", "ci_high")])


def _score_deltas(item: Mapping[str, Any], scores: Sequence[str]) -> list[tuple[str, Any, Any, float]]:
    """The scores that changed for one question: (metric, baseline, current, delta)."""
    deltas = _mapping(item.get("deltas"))
    changed = []
    for metric in scores:
        values = _mapping(deltas.get(metric))
        delta = finite(values.get("delta"))
        if delta:
            changed.append((metric, values.get("baseline"), values.get("current"), delta))
    return changed


def _change_counts(comparison: Mapping[str, Any], questions: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Questions per classification, from the id lists (`regressions` holds the regressed ones)."""
    lists = {"regressed": comparison.get("regressions", comparison.get("regressed"))}
    lists.update({kind: comparison.get(kind) for kind in CHANGE_KINDS[1:]})
    if any(isinstance(ids, list) for ids in lists.values()):
        return {kind: len(ids) for kind, ids in lists.items() if isinstance(ids, list)}
    return dict(Counter(str(item.get("classification")) for item in questions))


def _delta_row(label: str, stats: Mapping[str, Any], scale: float, *, neutral: bool = False) -> DeltaRow:
    """One change with its bar; `neutral` for figures where up is neither better nor worse (tokens, time)."""
    delta, low, high = (finite(stats.get(key)) for key in ("delta", "ci_low", "ci_high"))
    significant = low is not None and high is not None and (low > 0 or high < 0)
    return DeltaRow(label, stats, delta_bar(delta, low, high, scale), significant, scale, neutral)


def _classifications(comparison: Mapping[str, Any] | None) -> dict[tuple[str, str], Mapping[str, Any]]:
    """Each question's change, keyed like the comparison pairs questions: by template and question id."""
    if not comparison:
        return {}
    return {
        _question_key(item): item for item in comparison.get("questions") or [] if isinstance(item, Mapping)
    }


def _question_key(item: Mapping[str, Any]) -> tuple[str, str]:
    return (_text(item.get("template_id")), _text(item.get("question_id")))


def _link(item: Mapping[str, Any], id_counts: Mapping[str, int]) -> str:
    """The page's address of a question: its id, with the template when another template reuses the id."""
    question_id = _text(item.get("question_id"))
    return f"{_text(item.get('template_id'))}/{question_id}" if id_counts[question_id] > 1 else question_id


def _index(
    results: Sequence[Mapping[str, Any]],
    outcomes: Sequence[str],
    templates: Sequence[str],
    scores: Sequence[str],
    classification: Mapping[tuple[str, str], Mapping[str, Any]],
    history_flaky: set[str],
) -> dict[str, Any]:
    """Columnar arrays for the question list: small to embed and quick to filter.

    `flaky` marks a question whose repeated attempts disagreed or that the history calls flaky.
    """
    template_position = {template: index for index, template in enumerate(templates)}
    return {
        "templates": list(templates),
        "metrics": list(scores),
        "outcomes": list(OUTCOMES),
        "id": [_text(result["question_id"]) for result in results],
        "text": [clip(_text(result.get("question_text")), 300) for result in results],
        "template": [template_position[str(result["template_id"])] for result in results],
        "outcome": [OUTCOMES.index(outcome) for outcome in outcomes],
        "change": [
            _text(classification.get(_question_key(result), {}).get("classification")) or None
            for result in results
        ],
        "flaky": [
            1 if is_flaky(result) or _text(result["question_id"]) in history_flaky else 0
            for result in results
        ],
        "agent_error": [1 if result.get("status") == "error" else 0 for result in results],
        "values": {metric: [_round(finite(result.get(metric))) for result in results] for metric in scores},
    }


def _details(
    result: Mapping[str, Any],
    metadata: Mapping[str, Any],
    change: Mapping[str, Any] | None,
    scores: Sequence[str],
    keys: Sequence[str],
) -> dict[str, Any]:
    """Everything the drill-down shows for one question; every text is data, escaped by the page."""
    reasons = [
        [key, clip(_text(value), TEXT_LIMIT)]
        for key, value in result.items()
        if key.endswith("_reason") and value not in (None, "")
    ]
    errors = [
        [key, clip(_text(value), TEXT_LIMIT)]
        for key, value in result.items()
        if key.endswith("_error") and value
    ]
    detail: dict[str, Any] = {
        "question_text": clip(_text(result.get("question_text")), TEXT_LIMIT),
        "template_id": _text(result["template_id"]),
        "status": _text(result.get("status", "success")),
        "reference_answer": clip(_text(result.get("reference_answer")), TEXT_LIMIT),
        "actual_answer": clip(_text(result.get("actual_answer")), TEXT_LIMIT),
        "error": clip(_text(result.get("error")), TEXT_LIMIT),
        "judge": _text(result.get("answer_judge")),
        "reasons": reasons,
        "metric_errors": errors,
        "values": [[key, finite(result.get(key))] for key in keys if key in result and key not in scores],
        "scores": [[key, finite(result.get(key))] for key in scores],
        "thresholds": [
            _threshold(item) for item in _list(result.get("thresholds")) if isinstance(item, Mapping)
        ],
        "failures": [clip(_text(item), TEXT_LIMIT) for item in _list(result.get("failures"))],
        "steps": step_table(result, _text(metadata.get("steps_scope")) or "last_group"),
    }
    if change:
        detail["change"] = {
            "classification": _text(change.get("classification")),
            "baseline_outcome": _text(change.get("baseline_outcome")),
            "current_outcome": _text(change.get("current_outcome")),
            "deltas": [
                [
                    metric,
                    finite(values.get("baseline")),
                    finite(values.get("current")),
                    finite(values.get("delta")),
                ]
                for metric, values in _mapping(change.get("deltas")).items()
                if isinstance(values, Mapping)
            ],
        }
    attempts = result.get("attempts")
    if isinstance(attempts, list):
        detail["attempts"] = [
            {
                "outcome": outcome_of(attempt),
                "scores": [[key, finite(attempt.get(key))] for key in scores if key in attempt],
            }
            for attempt in attempts
            if isinstance(attempt, Mapping)
        ]
    return detail


def _threshold(item: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "expression": _text(item.get("expression")),
        "metric": _text(item.get("metric")),
        "op": _text(item.get("op")),
        "limit": finite(item.get("limit")),
        "actual": finite(item.get("actual")),
        "passed": bool(item.get("passed")),
        "source": _text(item.get("source")),
        "message": _text(item.get("message")),
    }


def _stat(stats: Mapping[str, Any], metric: str, name: str) -> float | None:
    return finite(_mapping(stats.get(metric)).get(name))


def _micro_mean(micro: Mapping[str, Any], results: Sequence[Mapping[str, Any]], metric: str) -> float | None:
    """The report's own micro mean; computed over answered questions when a report lacks aggregates."""
    mean = _stat(micro, metric, "mean")
    if mean is not None:
        return mean
    return _mean([result for result in results if result.get("status", "success") == "success"], metric)


def _mean(results: Sequence[Mapping[str, Any]], metric: str) -> float | None:
    values = [value for value in (finite(result.get(metric)) for result in results) if value is not None]
    return sum(values) / len(values) if values else None


def _round(value: float | None) -> float | None:
    """Four decimals are plenty for filtering and keep the embedded index small."""
    return None if value is None else round(value, 4)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return "" if value is None else as_text(value)
