"""The "since baseline" block of the terminal summary, read from the report's `comparison` section:
regressions, fixes, then each metric's paired change with the smallest this corpus could detect."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pytest_graphrag_eval.corpus.reference_steps import step_path
from pytest_graphrag_eval.gates.expressions import display_number
from pytest_graphrag_eval.report.terminal_summary import format_table
from pytest_graphrag_eval.report_model import (
    CHANGE_LISTS,
    ComparisonSection,
    MetricChange,
    compared_not_evaluated_text,
)
from pytest_graphrag_eval.result_keys import CATALOGUE

MAX_LISTED = 20
MAX_DELTAS_PER_QUESTION = 4


def stopped_matching(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """Reference steps that matched an actual step in the baseline and match none now."""
    groups = zip(baseline.get("reference_steps") or [], current.get("reference_steps") or [], strict=False)
    return [
        f"{step_path(group_index, step_index)} ({old.get('name')})"
        for group_index, (before, after) in enumerate(groups)
        if isinstance(before, list) and isinstance(after, list)
        for step_index, (old, new) in enumerate(zip(before, after, strict=False))
        if isinstance(old, Mapping)
        and isinstance(new, Mapping)
        and old.get("matches")
        and not new.get("matches")
    ]


def since_baseline_lines(
    comparison: ComparisonSection,
    baseline_results: Mapping[str, Mapping[str, Any]],
    current_results: Mapping[str, Mapping[str, Any]],
    metrics: Sequence[str],
    flaky: Collection[str] = (),
) -> list[tuple[str, str]]:
    """Lines with a colour name ("red", "green" or ""), ready for the terminal reporter; `flaky`
    questions are marked so a flip is not read as a regression."""
    ids = {name: comparison.ids(classification) for name, classification in CHANGE_LISTS}
    counts = ", ".join(
        f"{len(ids[kind])} {kind}" for kind in ("regressions", "fixed", "new", "removed", "edited")
    )
    if ids["not_evaluated"]:  # left out of every pair below: a budget stop is no regression
        counts += ", " + compared_not_evaluated_text(ids["not_evaluated"], current_results)

    lines = [(f"since baseline ({comparison.baseline.path or 'baseline report'}): {counts}", "")]
    questions = {change.question_id: change for change in comparison.questions}
    for kind, colour in (("regressions", "red"), ("fixed", "green")):
        if not ids[kind]:
            continue
        lines.append((f"{'regressed' if kind == 'regressions' else 'fixed'}:", colour))
        for question_id in ids[kind][:MAX_LISTED]:
            change = questions[question_id]
            current = current_results.get(question_id, {})
            what = (
                f"agent error: {current.get('error') or 'no message'}"
                if current.get("status") == "error"
                else _deltas_text(change.deltas)
            )
            mark = " (flaky)" if question_id in flaky else ""
            line = f"  {change.nodeid or question_id}{mark}  {what}"
            if kind == "regressions" and question_id in baseline_results and question_id in current_results:
                lost = stopped_matching(baseline_results[question_id], current_results[question_id])
                if lost:
                    line += f"; stopped matching: {', '.join(lost)}"
            lines.append((line.rstrip(), colour))
        if len(ids[kind]) > MAX_LISTED:
            lines.append((f"  ... and {len(ids[kind]) - MAX_LISTED} more (see the JSON report)", colour))
    lines.extend(_metric_lines(comparison, metrics))
    return lines


def _deltas_text(deltas: Mapping[str, Mapping[str, float]]) -> str:
    # Costs, counts and spreads change every run: a regression line shows the scores, leading ones first.
    changed = [
        name for name, delta in deltas.items() if delta.get("delta") and CATALOGUE.role(name) == "score"
    ]
    shown = [name for name in CATALOGUE.summary_columns() if name in changed]
    shown += sorted(name for name in changed if name not in shown)
    parts = [
        f"{name} {display_number(deltas[name]['baseline'])} -> {display_number(deltas[name]['current'])}"
        for name in shown[:MAX_DELTAS_PER_QUESTION]
    ]
    return ", ".join(parts) if parts else "no score changed (a threshold or the outcome did)"


def _metric_lines(comparison: ComparisonSection, metrics: Sequence[str]) -> list[tuple[str, str]]:
    percent = display_number(comparison.confidence * 100)
    rows = [("pass rate", comparison.outcomes)]
    rows.extend((metric, comparison.metrics[metric]) for metric in metrics if metric in comparison.metrics)
    header = [
        "metric",
        "baseline",
        "current",
        "delta",
        f"{percent}% interval",
        "p",
        "test",
        "n",
        "detectable",
    ]
    table = [
        [
            name,
            _number(change.baseline),
            _number(change.current),
            "-" if change.delta is None else f"{change.delta:+.4g}",
            _interval(change.ci_low, change.ci_high),
            _number(change.p_value),
            change.test or "-",
            str(change.n_pairs),
            _detectable(change),
        ]
        for name, change in rows
    ]
    lines = [("paired changes over questions in both runs (edited ones left out):", "")]
    return lines + [("  " + line, "") for line in format_table(header, table)]


def _number(value: float | None) -> str:
    return "-" if value is None else display_number(float(f"{value:.4g}"))


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"[{low:+.3g}, {high:+.3g}]"


def _detectable(change: MetricChange) -> str:
    """The smallest change the corpus can detect; a 0/1 metric on too few questions can detect none."""
    value = change.min_detectable_delta
    if value is None:
        return "-"
    return "none" if change.test == "mcnemar" and value > 1 else f"±{value:.3g}"
