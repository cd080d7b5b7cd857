"""The JSON report's `history` section (its shape: docs/history.md), built once at the end of a run;
the summaries and the HTML view only read it, so a report regenerated from the store shows what the
run showed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pytest_graphrag_eval.compare.past_runs import (
    IDENTITIES,
    Flakiness,
    PastRun,
    RunHistory,
    outcome_series,
)
from pytest_graphrag_eval.gates.model import Gate
from pytest_graphrag_eval.gates.suite_gates import gate_value
from pytest_graphrag_eval.report_model import FlakyQuestion, HistoryRun, HistorySection, TrendSeries


def history_window(gates: Sequence[Gate], flaky_runs: int) -> int:
    """How many runs the run looks at and shows, itself included: the flaky window or a longer gate
    window (only trend and k-of-n gates have one)."""
    return max([flaky_runs, *(gate.window or 0 for gate in gates if gate.needs_history)])


def history_section(
    history: RunHistory,
    current: PastRun,
    results: Sequence[Mapping[str, Any]],
    flaky: Sequence[Flakiness],
    gates: Sequence[Gate],
) -> HistorySection:
    """The section for a run with a history; `current` is this run as it will be recorded."""
    window = history_window(gates, history.flaky_runs)
    runs = [*history.last(window - 1), current]
    before = history.last(window)[0] if len(history.runs) >= window else None
    templates = {str(result["question_id"]): result.get("template_id") for result in results}
    return HistorySection(
        runs=tuple(_run_entry(run, previous) for previous, run in zip([before, *runs], runs, strict=False)),
        flaky_runs=history.flaky_runs,
        flaky_flips=history.flaky_flips,
        flaky=tuple(
            FlakyQuestion(
                found.question_id,
                templates.get(found.question_id),
                found.flips,
                found.same_commit,
                found.outcomes,
            )
            for found in flaky
        ),
        questions=outcome_series(history, results, window),
        series=_series(runs, gates),
    )


def _run_entry(run: PastRun, previous: PastRun | None) -> HistoryRun:
    changed = (
        tuple(name for name in IDENTITIES if run.identities.get(name) != previous.identities.get(name))
        if previous is not None
        else ()
    )
    return HistoryRun(run.run_id, run.started_at, run.commit, run.branch, run.passed, changed)


def _series(runs: Sequence[PastRun], gates: Sequence[Gate]) -> tuple[TrendSeries, ...]:
    """Each gated value (level and trend gates; one per target) in every run shown."""
    series: dict[str, tuple[float | None, ...]] = {}
    for gate in gates:
        if gate.change is not None or gate.over not in (None, "trend") or gate.template == "*":
            continue
        level = replace(gate, over=None, window=None, confidence=None)
        target = f"{level.scope_text}:{level.target}"
        if target not in series:
            series[target] = tuple(gate_value(level, run.aggregates) for run in runs)
    return tuple(TrendSeries(target, values) for target, values in series.items())
