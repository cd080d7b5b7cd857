"""The HTML report's history view (trend charts with gate lines and change marks, flaky questions),
computed from the report's `history` section as plain dataclasses the template draws as SVG."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_graphrag_eval.compare.trend import least_squares_line
from pytest_graphrag_eval.report.html_report.charts import fmt
from pytest_graphrag_eval.report.html_report.metrics import finite
from pytest_graphrag_eval.report_model import (
    FlakyQuestion,
    GateRecord,
    HistoryRun,
    HistorySection,
    TrendSeries,
)

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
    flaky_runs: int
    flaky_flips: int
    width: int = TREND_WIDTH
    height: int = TREND_HEIGHT
    strip_cell: int = STRIP_CELL


def build_history(
    section: HistorySection, gates: Sequence[GateRecord], links: Mapping[str, str]
) -> HistoryView:
    """The view of a report's history section; `links` maps question ids to their page address."""
    count = len(section.runs)
    runs = tuple(_run_mark(run, index, count) for index, run in enumerate(section.runs))
    return HistoryView(
        runs=runs,
        changes=tuple(run for run in runs if run.changed),
        charts=tuple(_chart(series, runs, gates) for series in section.series),
        flaky=tuple(_flaky_row(entry, links) for entry in section.flaky),
        flaky_runs=section.flaky_runs,
        flaky_flips=section.flaky_flips,
    )


def question_outcomes(section: HistorySection) -> dict[str, list[str]]:
    """Each question's outcomes over the runs shown, for its drill-down ("none": not in that run)."""
    return {question_id: _shown_outcomes(outcomes) for question_id, outcomes in section.questions.items()}


def _shown_outcomes(outcomes: Sequence[str | None]) -> list[str]:
    return [outcome if outcome is not None else "none" for outcome in outcomes]


def _run_mark(run: HistoryRun, index: int, count: int) -> RunMark:
    return RunMark(
        x=TREND_WIDTH / 2
        if count <= 1
        else round(_PAD_X + index * (TREND_WIDTH - 2 * _PAD_X) / (count - 1), 2),
        label=run.run_id,
        started_at=run.started_at,
        commit=(run.commit or "")[:10],
        passed=run.passed,
        changed=run.changed,
        current=index == count - 1,
    )


def _chart(series: TrendSeries, runs: Sequence[RunMark], gates: Sequence[GateRecord]) -> TrendChart:
    target = series.target
    values = [finite(value) for value in series.values][: len(runs)]
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


def _flaky_row(entry: FlakyQuestion, links: Mapping[str, str]) -> FlakyRow:
    return FlakyRow(
        question_id=entry.question_id,
        link=links.get(entry.question_id, entry.question_id),
        template_id=entry.template_id or "",
        outcomes=tuple(_shown_outcomes(entry.outcomes)),
        flips=entry.flips,
        same_commit=entry.same_commit,
    )
