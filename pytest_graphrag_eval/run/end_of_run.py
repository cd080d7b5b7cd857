"""The end of a run, after the last question: graph, spend, gates, report, outputs, and the verdict.

`end_run` returns a `RunOutcome`; the pytest session maps its `failed` to the exit status.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_graphrag_eval.formats.json_types import JsonMapping, JsonObject
from pytest_graphrag_eval.gates.model import Gate
from pytest_graphrag_eval.report.history_summary import history_lines
from pytest_graphrag_eval.report.json_report import write_recording
from pytest_graphrag_eval.report.judge_spend import spend_section
from pytest_graphrag_eval.report.run_coverage import PARTIAL_KEY
from pytest_graphrag_eval.report_model import JudgeSpend, Outcome, QuestionResult
from pytest_graphrag_eval.run.pipeline import (
    FinishedRun,
    GraphRun,
    OutputPaths,
    RunSettings,
    finish_run,
    write_outputs,
)

if TYPE_CHECKING:  # types only: a merge loads no corpus reader, terminal summary or judge settings
    from pytest_graphrag_eval.corpus.reference_corpus import Corpus
    from pytest_graphrag_eval.report.run_terminal import RunTerminal
    from pytest_graphrag_eval.run.configuration import RunConfiguration
    from pytest_graphrag_eval.run.graph_stage import GraphStage
    from pytest_graphrag_eval.run.run_history import HistoryOutcome


@dataclass(frozen=True)
class CollectedRun:
    """What a run collected by its end (a plain run's or, under xdist, the controller's)."""

    results: list[JsonObject]
    gates: Sequence[Gate]
    identity: JsonMapping  # the report metadata that lets graphrag-eval-merge check shards
    started: float
    interrupted: bool
    warnings: Sequence[str] = ()
    responses: Sequence[JsonObject] = ()  # live responses, for --graphrag-record
    judge_stats: JsonMapping | None = None
    judge_batches: list[JsonObject] | None = None
    questions_in_run: int = 0  # the run's questions, answered or not (for an interrupted update)
    baseline_name: str | None = None  # how reports name the baseline: its file, or a run of the history
    calibration: JsonMapping | None = None  # the judge's agreement with people (--graphrag-judge-labels)
    partial: JsonMapping | None = None  # a partial run's coverage (`report.run_coverage`), None when whole
    corpora: Callable[[], Sequence[Corpus]] = tuple  # the run's corpora, read for the graph's coverage


@dataclass(frozen=True)
class HistoryOptions:
    """Where and how the run is read from and recorded in the run history (`--graphrag-history`)."""

    url: str
    required: bool  # a run that could not be recorded fails
    run_key: str | None
    flaky_runs: int
    flaky_flips: int


@dataclass
class RunOutcome:
    """The finished run: its report and what happened to the outputs."""

    finished: FinishedRun
    graph: GraphRun
    judge_spend: JudgeSpend | None
    written: list[tuple[str, Path]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)  # terminal lines: (text, colour)
    history: HistoryOutcome | None = None  # with --graphrag-history: recorded, or why not
    history_required: bool = False
    interrupted: bool = False  # Ctrl-C stopped the run (or, merged, one of its shards)

    def shown(self, terminal: RunTerminal) -> RunTerminal:
        """The terminal summary of `terminal`'s run with this outcome's gates, comparison, spend and files."""
        document = self.finished.document
        return dataclasses.replace(
            terminal,
            gate_results=self.finished.gate_results,
            comparison=self.finished.document.comparison,
            judge_spend=self.judge_spend,
            written=self.written,
            problems=[*([self.finished.incomplete] if self.finished.incomplete else []), *self.problems],
            history_lines=history_lines(document),
            flaky_ids=document.history.flaky_ids if document.history is not None else frozenset(),
            history_line=(self.history.line, self.history.recorded) if self.history is not None else None,
            calibration=document.judge_calibration,
        )

    @property
    def failed(self) -> bool:
        """Whether the run fails beyond its items: a gate, a cache-only miss, an unwritten output or corpus
        update, a required history record, or an interruption."""
        unrecorded = self.history is not None and not self.history.recorded and self.history_required
        return (
            self.finished.gates_failed
            or self.finished.incomplete is not None
            or bool(self.problems)
            or self.graph.update_failures > 0
            or unrecorded
            or self.interrupted
        )

    @property
    def questions_failed(self) -> int:
        """The questions whose verdict is failed (pytest counts its items itself; a merge has none)."""
        return sum(1 for result in self.finished.document.results if result.outcome is Outcome.FAILED)


@dataclass(frozen=True)
class Recording:
    """`--graphrag-record`: the live responses and where to write them, after the reports."""

    path: Path
    responses: Sequence[JsonObject]


def end_run(
    collected: CollectedRun,
    settings: RunConfiguration,
    *,
    graph: GraphStage | None,
    baseline: JsonObject | None,
    root: Path,
    sharded: bool,
) -> RunOutcome:
    """Graph identity and reference updates, judge spend, then `conclude_run`: aggregates, comparison,
    gates, the report and every output file asked for, the history."""
    # Imported here: the graph stage reads corpus YAML and opens endpoints, which a merge never needs.
    from pytest_graphrag_eval.run.graph_stage import finish_graph_run

    results = collected.results
    graph_run = finish_graph_run(settings, graph, baseline, root, results, collected.corpora)
    judge_spend = spend_section(
        dict(collected.judge_stats) if collected.judge_stats is not None else None,
        results,
        max_cost_usd=settings.llm.max_cost_usd,
        max_calls=settings.llm.max_calls,
        cache_only=settings.llm.cache_only,
        batches=collected.judge_batches,
    )
    outcome = conclude_run(
        results,
        RunSettings(
            gates=collected.gates,
            metadata={
                **settings.report_metadata(),
                **graph_run.metadata,
                **collected.identity,
                **({PARTIAL_KEY: dict(collected.partial)} if collected.partial is not None else {}),
            },
            baseline=None if sharded else baseline,  # a shard's comparison is made on the merged whole
            baseline_path=collected.baseline_name,
            confidence=settings.confidence,
            resamples=settings.resamples,
            defer_gates=sharded,
            calibration=collected.calibration,
        ),
        OutputPaths(settings.report_path, settings.markdown_path, settings.html_path),
        started=collected.started,
        interrupted=collected.interrupted,
        warnings=[*collected.warnings, *graph_run.warnings],
        judge_spend=judge_spend,
        history=HistoryOptions(
            settings.history_url,
            settings.history_required,
            settings.history_run_key,
            settings.flaky_runs,
            settings.flaky_flips,
        )
        if settings.history_url is not None
        else None,
        root=root,
        graph=graph_run,
        recording=Recording(settings.record_path, collected.responses)
        if settings.record_path is not None and collected.responses
        else None,
    )
    if settings.update_references and collected.interrupted:
        outcome.notes.append(
            (_incomplete_update(graph_run.lines, len(results), collected.questions_in_run), "red")
        )
    return outcome


def conclude_run(
    results: Sequence[QuestionResult | JsonMapping],
    run_settings: RunSettings,
    outputs: OutputPaths,
    *,
    started: float,
    interrupted: bool,
    warnings: Sequence[str] = (),
    judge_spend: JudgeSpend | None = None,
    finished: float | None = None,
    history: HistoryOptions | None = None,
    root: Path | None = None,
    graph: GraphRun | None = None,
    recording: Recording | None = None,
    plain_results: bool = False,
) -> RunOutcome:
    """The end every run shares, a plugin's and a merge of shards alike, each stage once and in order
    (DESIGN.md): the history's earlier runs (a shard reads none), `finish_run`, the outputs from its
    document, the recording, the history record; then the outcome whose `failed` decides the exit
    status. `plain_results`: the results are plain JSON values as a parser read them (a merge's
    shards), see `write_outputs`."""
    history_warning = None
    if history is not None and not run_settings.defer_gates:
        run_settings, history_warning = _with_history(history, run_settings, results, root)
    graph = graph if graph is not None else GraphRun()
    finished_run = finish_run(
        results,
        run_settings,
        started=started,
        interrupted=interrupted,
        warnings=[*warnings, *([history_warning] if history_warning else [])],
        finished=finished,
        judge_spend=judge_spend,
        references=graph.references,
    )
    plain = [
        *(["results"] if plain_results else []),
        *(["comparison"] if finished_run.plain_comparison else []),
    ]
    written = write_outputs(finished_run.document, outputs, report=finished_run.report, plain_keys=plain)
    if recording is not None:
        responses = list(recording.responses)
        written.write("recording", recording.path, lambda path: write_recording(path, responses))
    outcome = RunOutcome(
        finished_run, graph, judge_spend, written.written, written.problems, interrupted=interrupted
    )
    if history is not None:
        from pytest_graphrag_eval.run.run_history import record_finished_run  # the store, only for a history

        outcome.history_required = history.required
        outcome.history = record_finished_run(
            history.url, finished_run.report, run_key=history.run_key, environ=os.environ, cwd=root
        )
    return outcome


def _with_history(
    history: HistoryOptions,
    run_settings: RunSettings,
    results: Sequence[QuestionResult | JsonMapping],
    root: Path | None,
) -> tuple[RunSettings, str | None]:
    """`run_settings` with the history's earlier runs and this run as it will be recorded, and why the
    history could not be read, if it could not. Read at the end, so the corpus files' gates (known only
    after collection) set the window too; the store and its drivers are imported only for a history."""
    from pytest_graphrag_eval.history.records import suite_of
    from pytest_graphrag_eval.report.history_section import history_window
    from pytest_graphrag_eval.run.run_history import read_history

    found = read_history(
        history.url,
        environ=os.environ,
        cwd=root,
        window=history_window(run_settings.gates, history.flaky_runs),
        flaky_runs=history.flaky_runs,
        flaky_flips=history.flaky_flips,
        suite=suite_of(run_settings.metadata),
    )
    records = [result.record if isinstance(result, QuestionResult) else result for result in results]
    current = found.current_run(run_settings.metadata, records)
    return dataclasses.replace(run_settings, history=found.runs, current_run=current), found.warning


def _incomplete_update(lines: Iterable[tuple[str, str]], answered: int, total: int) -> str:
    updated = sum(1 for text, _ in lines if text.startswith("updated "))
    pending = max(total - answered, 0)
    return (
        f"update-references: the run was interrupted, so the update is incomplete: {updated} output(s) "
        f"updated from the {answered} question(s) that finished; {pending} question(s) did not run and "
        "keep their old outputs (run again to finish the update)"
    )
