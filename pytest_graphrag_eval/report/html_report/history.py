"""The HTML report's history view (trend charts with gate lines and change marks, flaky questions),
computed from the report's `history` section as plain dataclasses the template draws as SVG."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_graphrag_eval.compare.trend import least_squares_line
from pytest_graphrag_eval.report.html_report.charts import fmt
from pytest_graphrag_eval.report.html_report.metrics import finite
from pytest_graphrag_eval.report_model import GateRecord

TREND_WIDTH = 560
TREND_HEIGHT = 150
_PAD_X = 14
_PAD_TOP = 20  # room for the change labels
_PAD_BOTTOM = 8
STRIP_CELL = 12


@dataclass(frozen=True)
class RunMark:
    """One run on the timeline; `changed` names what differs from the run before it."""

    x: float
    label: str
    started_at: str
    commit: str
    passed: bool | None
    changed: tuple[str, ...]
    current: bool


@dataclass(frozen=True)
class TrendPoint:
    x: float
    y: float
    value: float
    title: str


@dataclass(frozen=True)
class TrendChart:
    target: str
    gates: tuple[str, ...]
    points: tuple[TrendPoint, ...]
    path: str  # the polyline through the points
    low_label: str
    high_label: str
    limit: tuple[float, str] | None  # (y, text) of a level gate's limit within the axis
    fit: tuple[float, float, float, float] | None  # the trend window's least-squares line
    missing: int


@dataclass(frozen=True)
class FlakyRow:
    question_id: str
    link: str
    template_id: str
    outcomes: tuple[str, ...]  # one per run shown, oldest first; "none" where it did not run
    flips: int
    same_commit: bool


@dataclass(frozen=True)
class HistoryView:
    runs: tuple[RunMark, ...]
    changes: tuple[RunMark, ...]  # the runs whose corpus, graph, responses or settings changed
    charts: tuple[TrendChart, ...]
    flaky: tuple[FlakyRow, ...]
    flaky_runs: object
    flaky_flips: object
    width: int = TREND_WIDTH
    height: int = TREND_HEIGHT
    strip_cell: int = STRIP_CELL


def build_history(
    section: Mapping[str, object], gates: Sequence[GateRecord], links: Mapping[str, str]
) -> HistoryView:
    """The view of a report's history section; `links` maps question ids to their page address."""
    runs_data = [run for run in _list(section.get("runs")) if isinstance(run, Mapping)]
    count = len(runs_data)
    runs = tuple(_run_mark(run, index, count) for index, run in enumerate(runs_data))
    found = section.get("flaky_rule")
    rule: Mapping[str, object] = found if isinstance(found, Mapping) else {}
    return HistoryView(
        runs=runs,
        changes=tuple(run for run in runs if run.changed),
        charts=tuple(
            _chart(series, runs, gates)
            for series in _list(section.get("series"))
            if isinstance(series, Mapping) and isinstance(series.get("values"), list)
        ),
        flaky=tuple(
            _flaky_row(entry, links)
            for entry in _list(section.get("flaky"))
            if isinstance(entry, Mapping) and "question_id" in entry
        ),
        flaky_runs=rule.get("runs"),
        flaky_flips=rule.get("min_flips"),
    )


def question_outcomes(section: Mapping[str, object]) -> dict[str, list[str]]:
    """Each question's outcomes over the runs shown, for its drill-down ("none": not in that run)."""
    questions = section.get("questions")
    if not isinstance(questions, Mapping):
        return {}
    return {
        str(question_id): [str(outcome) if outcome is not None else "none" for outcome in outcomes]
        for question_id, outcomes in questions.items()
        if isinstance(outcomes, list)
    }


def _x(index: int, count: int) -> float:
    if count <= 1:
        return TREND_WIDTH / 2
    return round(_PAD_X + index * (TREND_WIDTH - 2 * _PAD_X) / (count - 1), 2)


def _run_mark(run: Mapping[str, object], index: int, count: int) -> RunMark:
    commit = str(run.get("commit") or "")
    return RunMark(
        x=_x(index, count),
        label=str(run.get("run_id") or ""),
        started_at=str(run.get("started_at") or ""),
        commit=commit[:10],
        passed=passed if isinstance(passed := run.get("passed"), bool) else None,
        changed=tuple(str(name) for name in _list(run.get("changed"))),
        current=index == count - 1,
    )


def _chart(series: Mapping[str, object], runs: Sequence[RunMark], gates: Sequence[GateRecord]) -> TrendChart:
    target = str(series.get("target"))
    values = [finite(value) for value in _list(series["values"])][: len(runs)]
    related = [gate for gate in gates if _gate_target(gate) == target]
    limits = [float(gate.limit) for gate in related if not gate.over]
    present = [value for value in values if value is not None]
    low, high = _axis([*present, *limits])

    def y(value: float) -> float:
        span = TREND_HEIGHT - _PAD_TOP - _PAD_BOTTOM
        return round(TREND_HEIGHT - _PAD_BOTTOM - (value - low) / (high - low) * span, 2)

    points = tuple(
        TrendPoint(run.x, y(value), value, f"{run.label or 'run'} {run.started_at}: {fmt(value, 4)}")
        for run, value in zip(runs, values, strict=False)
        if value is not None
    )
    window = max((gate.window or 0 for gate in related if gate.over == "trend"), default=0)
    fit = None
    if window:
        tail = values[-window:]
        line = least_squares_line(tail)
        if line is not None:
            slope, intercept = line
            first = len(values) - len(tail)
            start, end = runs[first], runs[len(values) - 1]
            fit = (start.x, y(intercept), end.x, y(intercept + slope * (len(tail) - 1)))
    limit = (y(limits[0]), f"limit {fmt(limits[0], 4)}") if limits else None
    return TrendChart(
        target=target,
        gates=tuple(gate.expression for gate in related),
        points=points,
        path=" ".join(f"{point.x},{point.y}" for point in points),
        low_label=fmt(low, 4),
        high_label=fmt(high, 4),
        limit=limit,
        fit=fit,
        missing=len(values) - len(present),
    )


def _gate_target(gate: GateRecord) -> str:
    scope = f"template[{gate.template}]" if gate.scope == "template" else gate.scope
    return f"{scope}:{gate.metric}" + (f".{gate.stat}" if gate.stat else "")


def _axis(values: Sequence[float]) -> tuple[float, float]:
    """A little room around the values; a flat series gets a band around it."""
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    if high - low < 1e-9:
        pad = max(abs(low) * 0.05, 0.01)
        return low - pad, high + pad
    pad = (high - low) * 0.08
    return low - pad, high + pad


def _flaky_row(entry: Mapping[str, object], links: Mapping[str, str]) -> FlakyRow:
    question_id = str(entry["question_id"])
    return FlakyRow(
        question_id=question_id,
        link=links.get(question_id, question_id),
        template_id=str(entry.get("template_id") or ""),
        outcomes=tuple(
            str(outcome) if outcome is not None else "none" for outcome in _list(entry.get("outcomes"))
        ),
        flips=_int(entry.get("flips")),
        same_commit=bool(entry.get("same_commit")),
    )


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _int(value: object) -> int:
    """A count from the report (absent, null or not a number: 0)."""
    return int(value) if isinstance(value, (int, float, str)) and value else 0
