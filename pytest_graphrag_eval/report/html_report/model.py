"""What the page shows, computed once from the JSON report.

The server-rendered parts (overview, distributions, changes) get plain
dataclasses and dicts; the question list gets a compact columnar index that the
page parses at load, and every question's drill-down sits in a second JSON
block that the page parses only when a question is first opened.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from math import isfinite

from pytest_graphrag_eval.report.html_report.charts import (
    DeltaBar,
    Histogram,
    delta_bar,
    delta_scale,
    fmt,
    group_histograms,
)
from pytest_graphrag_eval.report.html_report.graph_coverage import CoverageView, coverage_view
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
from pytest_graphrag_eval.report.html_report.review import ReviewView, build_review_view
from pytest_graphrag_eval.report.html_report.steps import as_text, clip, is_mapping, step_table
from pytest_graphrag_eval.report.judge_spend import spend_lines
from pytest_graphrag_eval.report_model import (
    Classification,
    ComparisonSection,
    GateRecord,
    GroupAggregates,
    HistorySection,
    MetricChange,
    QuestionChange,
    ReportDocument,
    not_evaluated_reasons,
)

TEXT_LIMIT = 4000
OVERVIEW_METRICS = 6  # score columns of the overview's template table before the gated ones
CHANGE_KINDS = ("regressed", "fixed", "new", "removed", "edited", "unchanged")
_THRESHOLD_KEYS = ("expression", "metric", "op", "limit", "actual", "passed", "source", "message")


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
    stats: Mapping[str, object]
    bar: DeltaBar
    significant: bool
    scale: float
    neutral: bool


@dataclass
class Changes:
    baseline: Mapping[str, object]
    confidence: float | None
    counts: dict[str, int]
    outcomes: DeltaRow | None
    micro: list[tuple[str, DeltaRow]]
    micro_other: list[tuple[str, DeltaRow]]
    per_metric: list[tuple[str, list[DeltaRow]]]
    lists: dict[str, list[dict[str, object]]]
    scale: float


@dataclass
class ReportView:
    metadata: Mapping[str, object]
    format_version: object
    questions: int
    outcome_counts: dict[str, int]
    has_outcomes: bool
    agent_errors: int  # of questions not marked xfail: those are expected to fail
    expected_errors: int  # agent errors of xfailed questions
    not_evaluated_reasons: str  # "cache miss" ("" when every question was evaluated): as every summary says
    gates: list[GateRecord]
    warnings: list[str]
    spend: list[str]
    score_metrics: list[str]
    overview_metrics: list[str]  # the template table's columns: it fits a 1400 px window
    gate_verdicts: dict[tuple[str, str], bool]  # (micro|macro|template id, metric) -> its mean's gates passed
    templates: list[TemplateRow]
    micro_means: dict[str, float | None]
    macro_means: dict[str, float | None]
    usage: list[tuple[str, str, str]]
    has_cost: bool
    metric_errors: dict[str, int]
    histograms: dict[str, dict[str, Histogram]]
    changes: Changes | None
    index: dict[str, object]
    details: list[dict[str, object]] = field(default_factory=list)
    history: HistoryView | None = None  # the runs before this one, when the run had a history
    review: ReviewView | None = None  # the judge's calibration, the review queue and its form
    graph_coverage: CoverageView | None = None  # --graphrag-graph-coverage: what no reference query names

    def verdict(self, row: str, metric: str) -> bool | None:
        """Whether the gates on this row's mean of `metric` passed; None when no gate judges it."""
        return self.gate_verdicts.get((row, metric))


Columns = dict[str, list[float | None]]  # each numeric key's values over the questions, `finite` once


def _columns(results: Sequence[Mapping[str, object]], keys: Sequence[str]) -> Columns:
    """Read in one pass over the results (scattered in memory), not one per key: the page reads them
    many times (score detection, means, histograms, the question index, the drill-downs)."""
    rows = [tuple(map(result.get, keys)) for result in results]
    columns = zip(*rows, strict=True) if rows else (() for _ in keys)
    return {key: [finite(value) for value in column] for key, column in zip(keys, columns, strict=True)}


def build_view(report: ReportDocument) -> ReportView:
    """Everything the page shows of a report read and checked already (`ReportDocument.from_json`)."""
    results = [result.record for result in report.results]
    keys = numeric_keys(results)
    columns = _columns(results, keys)
    scores = score_metrics(keys, columns)
    layouts = list(map(key_layouts(keys, scores), map(tuple, results)))  # the error counts' and the details'
    metadata, comparison, history = report.metadata, report.comparison, report.history
    question_keys = [result.key for result in report.results]
    others = [key for key in keys if key not in scores]
    classification = {question.key: question for question in comparison.questions} if comparison else {}
    history_flaky = history.flaky_ids if history is not None else frozenset()
    outcomes = [outcome_of(result) for result in results]
    groups: dict[str, list[int]] = {}
    for position, result in enumerate(results):
        groups.setdefault(str(result["template_id"]), []).append(position)
    templates = list(groups)
    micro = report.aggregates.micro
    gates = report.gates
    verdicts = _gate_verdicts(gates)
    gated = {metric for _, metric in verdicts}
    id_counts = Counter(question_id for _, question_id in question_keys)
    errors = Counter(  # agent errors, apart (True) from those of xfailed questions
        outcome == "xfailed"
        for result, outcome in zip(results, outcomes, strict=True)
        if result.get("status") == "error"
    )
    return ReportView(
        metadata=metadata,
        format_version=report.format_version,
        questions=len(results),
        outcome_counts=dict(Counter(outcomes)),
        has_outcomes=any(isinstance(result.get("outcome"), str) for result in results),
        agent_errors=errors[False],
        expected_errors=errors[True],
        not_evaluated_reasons=not_evaluated_reasons(
            [reason for result in report.results if (reason := result.not_evaluated_reason) is not None]
        ),
        gates=gates,
        warnings=[clip(warning, TEXT_LIMIT) for warning in report.warnings],
        spend=spend_lines(report.judge_spend),
        score_metrics=scores,
        # the first scores (the scorers' own order) and every gated one: all of them are in Distributions
        overview_metrics=[
            metric for index, metric in enumerate(scores) if index < OVERVIEW_METRICS or metric in gated
        ],
        gate_verdicts=verdicts,
        templates=[
            _template_row(tid, members, results, outcomes, scores, keys, columns)
            for tid, members in groups.items()
        ],
        micro_means={metric: _micro_mean(micro, results, metric, columns) for metric in scores},
        macro_means={metric: _stat(report.aggregates.macro, metric, "mean") for metric in scores},
        usage=_usage(micro, results, keys),
        has_cost=bool(cost_keys(keys)),
        metric_errors=dict(
            Counter(
                key for index, result in enumerate(results) for key in layouts[index].errors if result[key]
            )
        ),
        histograms={  # every question's ("") and each template's
            metric: group_histograms(columns[metric], groups, unit_interval=metric in scores)
            for metric in [*scores, *(key for key in others if not key.endswith(("_stdev", "_count")))]
        },
        changes=_changes(comparison, results, question_keys, id_counts, scores)
        if comparison is not None
        else None,
        index=_index(
            results, question_keys, outcomes, templates, scores, classification, history_flaky, columns
        ),
        details=_drill_downs(results, question_keys, metadata, comparison, scores, columns, layouts, history),
        history=build_history(
            history,
            gates,
            {_text(result["question_id"]): _link(result, id_counts) for result in results},
        )
        if history is not None
        else None,
        review=build_review_view(report.to_json()),
        graph_coverage=coverage_view(metadata),
    )


def _gate_verdicts(gates: Sequence[GateRecord]) -> dict[tuple[str, str], bool]:
    """Which means a gate judged, and whether every gate on each passed.

    Only these get a pass or fail colour; a score no gate judges is shown without one (a low number is
    not a failure unless someone said so).
    """
    verdicts: dict[tuple[str, str], bool] = {}
    for gate in gates:
        if gate.stat != "mean" or gate.change:
            continue
        key = (gate.row, gate.metric)
        verdicts[key] = verdicts.get(key, True) and gate.passed
    return verdicts


def _template_row(
    template_id: str,
    members: Sequence[int],
    results: Sequence[Mapping[str, object]],
    outcomes: Sequence[str],
    scores: Sequence[str],
    keys: Sequence[str],
    columns: Columns,
) -> TemplateRow:
    answered = [index for index in members if results[index].get("status", "success") == "success"]
    costs = cost_keys(keys)
    tokens = columns.get("total_tokens")
    return TemplateRow(
        template_id=template_id,
        questions=len(members),
        outcomes=dict(Counter(outcomes[index] for index in members)),
        errors=len(members) - len(answered),
        means={metric: _mean(columns[metric], answered) for metric in scores},
        tokens=sum(tokens[index] or 0.0 for index in members) if tokens else 0.0,
        cost=sum(columns[key][index] or 0.0 for index in members for key in costs) if costs else None,
        elapsed_mean=_mean(columns.get("elapsed_sec"), answered),
    )


def _usage(
    micro: GroupAggregates | None, results: Sequence[Mapping[str, object]], keys: Sequence[str]
) -> list[tuple[str, str, str]]:
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


def _changes(
    comparison: ComparisonSection,
    results: Sequence[Mapping[str, object]],
    question_keys: Sequence[tuple[str, str]],
    id_counts: Mapping[str, int],
    scores: Sequence[str],
) -> Changes:
    """Score changes share one axis; tokens, time and counts each get their own (their units differ)."""
    micro, per_template = comparison.metrics, comparison.per_template
    named = list(dict.fromkeys([*micro, *(metric for stats in per_template.values() for metric in stats)]))
    ordered = [metric for metric in scores if metric in named] + [m for m in named if m not in scores]
    score_scale = _scale([micro[metric] for metric in ordered if metric in scores and metric in micro])
    texts = {
        key: _text(result.get("question_text")) for key, result in zip(question_keys, results, strict=True)
    }
    lists = {
        kind: [
            {
                **(item := question.to_json()),
                "question_text": texts.get(question.key, ""),
                "link": _link(item, id_counts),
                "score_deltas": _score_deltas(question, scores),
            }
            for question in comparison.questions
            if question.classification == kind
        ]
        for kind in ("regressed", "fixed")
    }
    per_metric = []
    for metric in ordered:
        changes = {template: stats[metric] for template, stats in per_template.items() if metric in stats}
        scale, neutral = _scale(list(changes.values())), metric not in scores
        rows = [_delta_row(template, change, scale, neutral=neutral) for template, change in changes.items()]
        per_metric.append((metric, rows))
    outcomes = comparison.outcomes
    return Changes(
        baseline=comparison.baseline.to_json(),
        confidence=finite(comparison.confidence),
        counts={kind: len(comparison.ids(Classification(kind))) for kind in CHANGE_KINDS},
        outcomes=DeltaRow(
            "pass rate", comparison.outcomes_json(), *_bar(outcomes, _scale([outcomes])), neutral=False
        ),
        micro=[
            (metric, _delta_row(metric, micro[metric], score_scale))
            for metric in ordered
            if metric in scores and metric in micro
        ],
        micro_other=[
            (metric, _delta_row(metric, micro[metric], _scale([micro[metric]]), neutral=True))
            for metric in ordered
            if metric not in scores and metric in micro
        ],
        per_metric=per_metric,
        lists=lists,
        scale=score_scale,
    )


def _scale(changes: Sequence[MetricChange]) -> float:
    return delta_scale(
        [finite(value) for change in changes for value in (change.delta, change.ci_low, change.ci_high)]
    )


def _score_deltas(question: QuestionChange, scores: Sequence[str]) -> list[tuple[str, float, float, float]]:
    """The scores that changed for one question: (metric, baseline, current, delta)."""
    changed = []
    for metric in scores:
        values = question.deltas.get(metric)
        if values is not None and (delta := finite(values["delta"])):
            changed.append((metric, values["baseline"], values["current"], delta))
    return changed


def _delta_row(label: str, change: MetricChange, scale: float, *, neutral: bool = False) -> DeltaRow:
    """One change with its bar; `neutral` for figures where up is neither better nor worse (tokens, time)."""
    return DeltaRow(label, change.to_dict(), *_bar(change, scale), neutral=neutral)


def _bar(change: MetricChange, scale: float) -> tuple[DeltaBar, bool, float]:
    """The change's bar on an axis of `scale`, whether its interval excludes zero, and the scale."""
    delta, low, high = finite(change.delta), finite(change.ci_low), finite(change.ci_high)
    significant = low is not None and high is not None and (low > 0 or high < 0)
    return delta_bar(delta, low, high, scale), significant, scale


def _link(item: Mapping[str, object], id_counts: Mapping[str, int]) -> str:
    """The page's address of a question: its id, with the template when another template reuses the id."""
    question_id = _text(item.get("question_id"))
    return f"{_text(item.get('template_id'))}/{question_id}" if id_counts[question_id] > 1 else question_id


def _index(
    results: Sequence[Mapping[str, object]],
    question_keys: Sequence[tuple[str, str]],
    outcomes: Sequence[str],
    templates: Sequence[str],
    scores: Sequence[str],
    classification: Mapping[tuple[str, str], QuestionChange],
    history_flaky: frozenset[str],
    columns: Columns,
) -> dict[str, object]:
    """Columnar arrays for the question list: small to embed and quick to filter.

    `flaky` marks a question whose repeated attempts disagreed or that the history calls flaky.
    """
    template_position = {template: index for index, template in enumerate(templates)}
    outcome_position = {outcome: index for index, outcome in enumerate(OUTCOMES)}
    return {
        "templates": list(templates),
        "metrics": list(scores),
        "outcomes": list(OUTCOMES),
        "id": [question_id for _, question_id in question_keys],
        "text": [clip(_text(result.get("question_text")), 300) for result in results],
        "template": [template_position[str(result["template_id"])] for result in results],
        "outcome": [outcome_position[outcome] for outcome in outcomes],
        "change": [
            change.classification.value if (change := classification.get(key)) is not None else None
            for key in question_keys
        ],
        "flaky": [
            1 if is_flaky(result) or question_id in history_flaky else 0
            for result, (_, question_id) in zip(results, question_keys, strict=True)
        ],
        "agent_error": [1 if result.get("status") == "error" else 0 for result in results],
        "values": {metric: _rounded(columns[metric]) for metric in scores},
    }


@dataclass(frozen=True)
class KeyLayout:
    """Which keys of a result are reasons, metric errors and numbers shown apart from the scores."""

    reasons: tuple[str, ...]  # `*_reason`, in the result's order
    errors: tuple[str, ...]  # `*_error`, in the result's order
    values: tuple[str, ...]  # numeric keys that are not scores, in the report's order


def key_layouts(keys: Sequence[str], scores: Sequence[str]) -> Callable[[tuple[str, ...]], KeyLayout]:
    """The `KeyLayout` of a result's keys (`tuple(result)`), decided once per distinct key sequence
    rather than once per question: the results of a run share a handful of them."""

    @cache
    def layout(names: tuple[str, ...]) -> KeyLayout:
        return KeyLayout(
            reasons=tuple(key for key in names if key.endswith("_reason")),
            errors=tuple(key for key in names if key.endswith("_error")),
            values=tuple(key for key in keys if key in names and key not in scores),
        )

    return layout


def _drill_downs(
    results: Sequence[Mapping[str, object]],
    question_keys: Sequence[tuple[str, str]],
    metadata: Mapping[str, object],
    comparison: ComparisonSection | None,
    scores: Sequence[str],
    columns: Columns,
    layouts: Sequence[KeyLayout],
    history: HistorySection | None,
) -> list[dict[str, object]]:
    """Every question's drill-down, in the results' order; every text is data, escaped by the page.

    Its sequences are tuples (JSON writes them as the lists they were): holding only texts and
    numbers, they are dropped by the garbage collector at its first look, where lists would be walked
    again in every full collection.
    """
    steps_scope = _text(metadata.get("steps_scope")) or "last_group"
    score_columns = [(key, columns[key]) for key in scores]
    changes = {change.key: change for change in comparison.questions} if comparison is not None else {}
    outcomes_over_runs = question_outcomes(history) if history is not None else {}
    details = []
    for position, result in enumerate(results):
        layout = layouts[position]
        detail: dict[str, object] = {
            "question_text": _shown(result.get("question_text")),
            "template_id": _text(result["template_id"]),
            "status": _text(result.get("status", "success")),
            "reference_answer": _shown(result.get("reference_answer")),
            "actual_answer": _shown(result.get("actual_answer")),
            "error": _shown(result.get("error")),
            "judge": _text(result.get("answer_judge")),
            "reasons": tuple(
                [(key, _shown(value)) for key in layout.reasons if (value := result[key]) not in (None, "")]
            ),
            "metric_errors": tuple([(key, _shown(value)) for key in layout.errors if (value := result[key])]),
            "values": tuple([(key, columns[key][position]) for key in layout.values]),
            "scores": tuple([(key, column[position]) for key, column in score_columns]),
            "thresholds": tuple(
                [_threshold(item) for item in _list(result.get("thresholds")) if is_mapping(item)]
            ),
            "failures": tuple([_shown(item) for item in _list(result.get("failures"))]),
            "steps": step_table(result, steps_scope),
        }
        change = changes.get(question_keys[position])
        if change is not None:
            detail["change"] = _change_detail(change)
        attempts = result.get("attempts")
        if isinstance(attempts, list):
            detail["attempts"] = tuple(
                {
                    "outcome": outcome_of(attempt),
                    "scores": tuple((key, finite(attempt.get(key))) for key in scores if key in attempt),
                }
                for attempt in attempts
                if is_mapping(attempt)
            )
        question_id = _text(result["question_id"])
        if question_id in outcomes_over_runs:
            assert history is not None
            detail["history"] = outcomes_over_runs[question_id]
            detail["history_flaky"] = question_id in history.flaky_ids
        details.append(detail)
    return details


def _change_detail(change: QuestionChange) -> dict[str, object]:
    """A question's change with [metric, baseline, current, delta] of each metric, JSON-safe: finite
    floats, nearly every one, as they are; any other number through `finite`."""
    deltas: list[tuple[str, float | None, float | None, float | None]] = []
    for metric, values in change.deltas.items():
        baseline, current, delta = values["baseline"], values["current"], values["delta"]
        if type(baseline) is type(current) is type(delta) is float and isfinite(baseline + current + delta):
            deltas.append((metric, baseline, current, delta))
        else:
            deltas.append((metric, finite(baseline), finite(current), finite(delta)))
    return {
        "classification": change.classification.value,
        "baseline_outcome": _text(change.baseline_outcome),
        "current_outcome": _text(change.current_outcome),
        "deltas": tuple(deltas),
    }


def _threshold(item: Mapping[str, object]) -> Mapping[str, object]:
    if type(item) is dict and tuple(item) == _THRESHOLD_KEYS:
        expression, metric, op, limit, actual, passed, source, message = item.values()
        if (  # a threshold check as the plugin writes it: texts, finite floats, a flag, shown as it is
            type(expression) is str
            and type(metric) is str
            and type(op) is str
            and type(passed) is bool
            and type(source) is str
            and type(message) is str
            and type(limit) is float
            and type(actual) is float
            and isfinite(limit + actual)
        ):
            return item
    shown: dict[str, object] = {key: _text(item.get(key)) for key in _THRESHOLD_KEYS}  # in their order
    shown.update(
        limit=finite(item.get("limit")), actual=finite(item.get("actual")), passed=bool(item.get("passed"))
    )
    return shown


def _stat(group: GroupAggregates | None, metric: str, name: str) -> float | None:
    return finite(group.stat(metric, name)) if group is not None else None


def _micro_mean(
    micro: GroupAggregates | None, results: Sequence[Mapping[str, object]], metric: str, columns: Columns
) -> float | None:
    """The report's own micro mean; computed over answered questions when a report lacks aggregates."""
    mean = _stat(micro, metric, "mean")
    if mean is not None:
        return mean
    answered = [index for index, result in enumerate(results) if result.get("status", "success") == "success"]
    return _mean(columns[metric], answered)


def _mean(column: Sequence[float | None] | None, positions: Sequence[int]) -> float | None:
    """The mean of the column's numbers at `positions` (None: no number there, or no column)."""
    values = [value for index in positions if (value := column[index]) is not None] if column else []
    return sum(values) / len(values) if values else None


def _rounded(column: Sequence[float | None]) -> list[float | None]:
    """Four decimals are plenty for filtering and keep the embedded index small.

    `round` to places is slow and a score column holds few distinct values: each is rounded once.
    A zero stays as it is (rounding keeps its sign, which a dict keyed by value would lose).
    """
    rounded = {value: round(value, 4) for value in set(column) if value}
    return [None if value is None else rounded[value] if value else value for value in column]


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _shown(value: object) -> str:
    """`clip(_text(value), TEXT_LIMIT)`, with short text (nearly every answer and reason) kept in one test."""
    if type(value) is str and len(value) <= TEXT_LIMIT:
        return value
    return clip(_text(value), TEXT_LIMIT)


def _text(value: object) -> str:
    if type(value) is str:  # most fields are text already: no call, no isinstance
        return value
    return "" if value is None else as_text(value)
