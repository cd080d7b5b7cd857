"""The plugin's part of pytest's terminal summary, composed from a finished run in one order, the
failed gates last where CI logs end; `terminalreporter` is duck-typed, so no pytest import."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.formats.json_types import JsonMapping, JsonObject
from pytest_graphrag_eval.gates.model import GateResult
from pytest_graphrag_eval.report.baseline_summary import since_baseline_lines
from pytest_graphrag_eval.report.judge_spend import spend_lines
from pytest_graphrag_eval.report.judging_summary import calibration_lines, review_lines
from pytest_graphrag_eval.report.run_coverage import RunCoverage
from pytest_graphrag_eval.report.shown_path import printed_path
from pytest_graphrag_eval.report.terminal_summary import score_columns, summary_table
from pytest_graphrag_eval.report_model import ComparisonSection, JudgeSpend, OutcomeCounts, QuestionResult


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
        terminalreporter.write_line(line)
    if run.coverage is not None:
        gated = bool(run.gate_results)
        for line in run.coverage.lines(gated=gated, gates_deferred=run.gates_deferred):
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
        counts = OutcomeCounts.of(typed).parts()
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
