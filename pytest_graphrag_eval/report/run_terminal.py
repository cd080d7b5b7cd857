"""The plugin's part of pytest's terminal summary, composed from a finished run in one order, the
failed gates last where CI logs end: the score table (a row per template and overall, a handful of
score columns so it fits a CI log), then the "since baseline" block read from the report's
`comparison` section (regressions, fixes, each metric's paired change with the smallest this corpus
could detect). `terminalreporter` is duck-typed, so no pytest import."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.aggregates import is_metric_value
from pytest_graphrag_eval.corpus.reference_steps import step_path
from pytest_graphrag_eval.formats.json_types import JsonMapping, JsonObject
from pytest_graphrag_eval.formats.terminal_text import terminal_safe
from pytest_graphrag_eval.gates.expressions import display_number
from pytest_graphrag_eval.gates.model import GateResult
from pytest_graphrag_eval.report.judge_spend import spend_lines
from pytest_graphrag_eval.report.judging_summary import calibration_lines, review_lines
from pytest_graphrag_eval.report.run_coverage import RunCoverage
from pytest_graphrag_eval.report.shown_path import printed_path
from pytest_graphrag_eval.report_model import (
    CHANGE_LISTS,
    ComparisonSection,
    JudgeSpend,
    MetricChange,
    Outcome,
    QuestionResult,
    compared_not_evaluated_text,
    outcome_counts,
)
from pytest_graphrag_eval.result_keys import CATALOGUE

MAX_METRIC_COLUMNS = 6
MAX_LISTED = 20
MAX_DELTAS_PER_QUESTION = 4


@dataclass(frozen=True)
class RunTerminal:
    """Everything the terminal summary of one run shows."""

    results: Sequence[JsonObject]
    gate_results: Sequence[GateResult] = ()
    comparison: ComparisonSection | None = None
    baseline_results: Mapping[str, JsonMapping] = field(default_factory=dict)
    warnings: Sequence[str] = ()
    judge_spend: JudgeSpend | None = None
    shard_line: str | None = None
    dry_run_lines: Sequence[str] = ()
    lines: Sequence[tuple[str, str]] = ()  # the graph's and the end of run's: (text, colour)
    written: Sequence[tuple[str, Path]] = ()
    current_folder: Path | None = None  # the files written are named from it (printed_path)
    coverage: RunCoverage | None = None  # a partial run's: how many of the corpus's questions were judged
    gates_deferred: bool = False  # a shard: its gates are decided on the merged whole
    problems: Sequence[str] = ()
    history_lines: Sequence[tuple[str, str]] = ()  # the flaky questions the history shows
    flaky_ids: Collection[str] = ()  # their ids, marked in the since-baseline lines
    history_line: tuple[str, bool] | None = None  # what was recorded in the history (or why not), recorded
    calibration: JsonMapping | None = None  # the judge's agreement with people's labels


def write_run_terminal(terminalreporter: Any, run: RunTerminal) -> None:
    results = list(run.results)
    baseline_lines = (
        since_baseline_lines(
            run.comparison,
            dict(run.baseline_results),
            {str(result["question_id"]): result for result in results},
            score_columns(results),
            run.flaky_ids,
        )
        if run.comparison is not None
        else []
    ) + list(run.history_lines)
    spend = spend_lines(run.judge_spend)
    if results or run.gate_results or run.warnings or spend:
        _write_summary(terminalreporter, run, results, baseline_lines, spend)
    for line in [*calibration_lines(run.calibration), *review_lines(results)]:
        terminalreporter.write_line(terminal_safe(line))  # a reviewer's name and reason are untrusted
    if run.coverage is not None:
        for line in run.coverage.lines(gated=bool(run.gate_results), gates_deferred=run.gates_deferred):
            terminalreporter.write_line(f"graphrag-eval: {line}", yellow=True)
    if run.shard_line:
        terminalreporter.write_line(run.shard_line)
    if run.dry_run_lines:
        terminalreporter.section("graphrag-eval dry run (no call was made)")
        for line in run.dry_run_lines:
            terminalreporter.write_line(line)
    for text, colour in run.lines:
        terminalreporter.write_line(text, **({colour: True} if colour else {}))
    # One line per file written, as pytest's own `--junitxml` says `generated xml file: ...`, named from
    # the current folder when inside it, else absolute (`printed_path`).
    for what, path in run.written:
        shown = printed_path(path, run.current_folder) if run.current_folder is not None else str(path)
        terminalreporter.write_sep("-", f"generated graphrag-eval {what}: {shown}")
    announce_failed_gates(terminalreporter, run.gate_results)
    for problem in run.problems:
        terminalreporter.write_line(f"graphrag-eval: {problem}", red=True, bold=True)
    if run.history_line is not None:
        text, recorded = run.history_line
        terminalreporter.write_line(f"graphrag-eval: {text}", **({} if recorded else {"yellow": True}))


def _write_summary(
    terminalreporter: Any,
    run: RunTerminal,
    results: Sequence[JsonObject],
    baseline_lines: Sequence[tuple[str, str]],
    spend: Sequence[str],
) -> None:
    """The graphrag-eval section: the score table, warnings, spend, the baseline lines, then the gates,
    each saying so when they saw part of the corpus only."""
    terminalreporter.section("graphrag-eval summary")
    if results:
        typed = [QuestionResult.from_record(result) for result in results]
        for line in summary_table(typed, score_columns(results)):
            terminalreporter.write_line(line)
        # Named as the Markdown and HTML name them (pytest's own line counts a not-evaluated item as skipped).
        counts = outcome_counts(typed)
        terminalreporter.write_line(
            f"{len(results)} questions" + (f": {', '.join(counts)}" if counts else "")
        )
    for warning in run.warnings:
        terminalreporter.write_line(f"warning: {warning}", yellow=True)
    for line in spend:
        terminalreporter.write_line(line, yellow=line.startswith(("budget reached", "cache-only")))
    if baseline_lines:
        terminalreporter.write_line("")
    for text, colour in baseline_lines:
        terminalreporter.write_line(text, **({colour: True} if colour else {}))
    if run.gate_results:
        terminalreporter.write_line("")
        terminalreporter.write_line("gates:")
        note = f"  [{run.coverage.gates_note()}]" if run.coverage is not None else ""
        for gate in run.gate_results:
            status = "PASS" if gate.passed else "FAIL"
            terminalreporter.write_line(
                f"  {status}  {gate.message}{note}", red=not gate.passed, green=gate.passed
            )


def announce_failed_gates(terminalreporter: Any, gates: Sequence[GateResult]) -> None:
    """Print the failed gates last and count them in pytest's final line ("3 passed, 1 gate failed"),
    which would otherwise read green for a run that exits 1."""
    failed = [gate for gate in gates if not gate.passed]
    if not failed:
        return
    terminalreporter.write_line("")
    terminalreporter.write_line(
        f"graphrag-eval: {len(failed)} suite gate(s) FAILED, so this run fails:", red=True, bold=True
    )
    for gate in failed:
        terminalreporter.write_line(f"  FAIL  {gate.message}", red=True)
    # Any key in `stats` shows up in the final line (`1 gate failed`); these entries are not test reports.
    key = "gate failed" if len(failed) == 1 else "gates failed"
    terminalreporter.stats.setdefault(key, []).extend(failed)


def score_columns(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Score keys present in results: those the scorers rank first, then the rest by name."""
    numeric = {key for result in results for key, value in result.items() if is_metric_value(key, value)}
    present = {key for key in numeric if CATALOGUE.summary_score(key)}  # once per key, not per result
    preferred = CATALOGUE.summary_columns()
    ordered = [key for key in preferred if key in present] + sorted(present - set(preferred))
    return ordered[:MAX_METRIC_COLUMNS]


def summary_table(results: Sequence[QuestionResult], columns: Sequence[str]) -> list[str]:
    """The table's lines: one row per template in first-seen order, then the overall row. Its counts
    are named by the one outcome vocabulary (`report_model`): a budget stop is counted as
    `not_evaluated` (a column only when a budget or a cache-only miss left any), never as an error."""
    counts: dict[str, Callable[[QuestionResult], bool]] = {
        "questions": lambda result: True,
        "agent_errors": lambda result: result.agent_error is not None,
    }
    if any(result.not_evaluated for result in results):
        counts[Outcome.NOT_EVALUATED.value] = lambda result: result.not_evaluated
    groups: dict[str, list[QuestionResult]] = {}
    for result in results:
        groups.setdefault(result.template_id, []).append(result)
    rows = [_row(label, group, columns, counts) for label, group in [*groups.items(), ("overall", results)]]
    return format_table(["template", *counts, *columns, "tokens", "elapsed_s"], rows)


def _row(
    label: str,
    results: Sequence[QuestionResult],
    columns: Sequence[str],
    counts: Mapping[str, Callable[[QuestionResult], bool]],
) -> list[str]:
    scored = [result.record for result in results if result.scored]
    cells = [label, *(str(sum(1 for result in results if counts[name](result))) for name in counts)]
    for key in (*columns, "total_tokens", "elapsed_sec"):
        values = [
            float(value)
            for result in scored
            if isinstance(value := result.get(key), (int, float)) and is_metric_value(key, value)
        ]
        cells.append(_mean_cell(statistics.fmean(values)) if values else "-")
    return cells


def _mean_cell(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(row[index])) for row in [header, *rows]) for index in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = f"{cells[0]:<{widths[0]}}"
        rest = "  ".join(f"{cell:>{width}}" for cell, width in zip(cells[1:], widths[1:], strict=True))
        return f"{first}  {rest}"

    return [line(header), *(line(row) for row in rows)]


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
    # The lists but unchanged (not said) and not evaluated (said with their reasons).
    counts = ", ".join(f"{len(ids[kind])} {kind}" for kind, _ in CHANGE_LISTS[:5])
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
    return "-" if value is None else "none" if change.undetectable else f"±{value:.3g}"
