"""The end of a run, from the questions' results to the written reports, without pytest.

results, typed once -> the document with its aggregates -> its verdicts (baseline comparison,
gates, history gates, history section) -> the outputs (JSON, Markdown, HTML) written from it.
The plugin calls it when its questions are done (`run.end_of_run.conclude_run`);
`graphrag-eval-merge` calls it on the results of several shard reports, so a sharded run ends
exactly as one run would."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.aggregates import compute_aggregates
from pytest_graphrag_eval.compare.past_runs import Flakiness, PastRun, RunHistory, flaky_questions
from pytest_graphrag_eval.formats.atomic import write_text_atomic
from pytest_graphrag_eval.gates.history_gates import GateHistory
from pytest_graphrag_eval.gates.model import Gate, GateResult
from pytest_graphrag_eval.gates.suite_gates import evaluate_gates
from pytest_graphrag_eval.graph.summary import add_stale_counts
from pytest_graphrag_eval.report.history_section import history_section
from pytest_graphrag_eval.report.json_report import build_document, write_json_atomic
from pytest_graphrag_eval.report.judge_spend import cache_only_incomplete
from pytest_graphrag_eval.report_model import JudgeSpend, Outcome, QuestionResult, ReportDocument

if TYPE_CHECKING:
    from pytest_graphrag_eval.compare.comparison import Comparison

UNRECORDED_RUN = PastRun("this run", "", {}, {})
"""This run when no history knows its commit, branch and identities."""


@dataclass(frozen=True)
class RunSettings:
    """What the end of a run needs from the configuration, as plain values."""

    gates: Sequence[Gate] = ()
    metadata: Mapping[str, object] = field(default_factory=dict)  # the report's configuration metadata
    # the baseline report, already loaded and checked (typed, or its JSON object, typed here)
    baseline: ReportDocument | Mapping[str, object] | None = None
    baseline_path: str | None = None
    confidence: float = 0.95
    resamples: int = 2000
    defer_gates: bool = False  # a shard's gates are decided on the merged whole, not on its part
    history: RunHistory | None = None  # the earlier runs, from --graphrag-history
    current_run: PastRun | None = None  # this run as the history will record it (commit, identities)
    calibration: Mapping[str, object] | None = None  # the judge's agreement with people's labels

    @property
    def compares(self) -> bool:
        """The run is compared with its baseline: its report will have a comparison."""
        return self.baseline is not None and self.baseline_path is not None

    def compare(self, baseline: ReportDocument, results: Sequence[QuestionResult]) -> Comparison:
        """The comparison of `results` with `baseline`, at this run's confidence and resamples."""
        from pytest_graphrag_eval.compare.comparison import compare_documents  # not for a run without one

        return compare_documents(
            baseline,
            results,
            confidence=self.confidence,
            resamples=self.resamples,
            baseline_path=self.baseline_path,
        )


@dataclass(frozen=True)
class FinishedRun:
    """Everything computed at the end of a run; `document` is the typed report, complete when
    `finish_run` returns, and `report` its JSON, encoded once for every output that reads it."""

    results: list[Mapping[str, object]]  # the results' objects as the report holds them
    aggregates: dict[str, Any]
    comparison: Comparison | None
    gate_results: list[GateResult]
    document: ReportDocument

    @cached_property
    def report(self) -> dict[str, Any]:
        """The report's JSON object: the JSON report, the history record and the review queue."""
        return self.document.to_json()

    @property
    def plain_comparison(self) -> bool:
        """The report's comparison is plain JSON (`Comparison.all_finite`)."""
        return self.comparison is not None and self.comparison.all_finite

    @property
    def gates_failed(self) -> bool:
        return any(not gate.passed for gate in self.gate_results)

    @property
    def incomplete(self) -> str | None:
        """Why the run fails although its questions and gates passed (a cache-only run missed the cache)."""
        return cache_only_incomplete(self.document.judge_spend)


@dataclass(frozen=True)
class GraphRun:
    """What the graph adds to a finished run's report."""

    metadata: dict[str, Any] = field(default_factory=dict)
    references: dict[str, Any] | None = None
    warnings: tuple[str, ...] = ()
    lines: tuple[tuple[str, str], ...] = ()  # for the terminal: (text, colour)
    update_failures: int = 0  # --graphrag-update-references: corpus files or outputs it could not update


@dataclass(frozen=True)
class OutputPaths:
    """Where to write the run's reports (None: not asked for)."""

    report: Path | None = None
    markdown: Path | None = None
    html: Path | None = None


def finish_run(
    results: Sequence[QuestionResult | Mapping[str, object]],
    settings: RunSettings,
    *,
    started: float,
    interrupted: bool,
    warnings: Sequence[str] = (),
    finished: float | None = None,
    judge_spend: JudgeSpend | None = None,
    references: Mapping[str, Any] | None = None,
) -> FinishedRun:
    """The run's typed document and its verdicts: aggregates, the baseline comparison, the gates
    (history gates included) and the history section, with the graph's `references`.

    `results` are typed (a merge's, read from the shards) or result objects, typed here once.
    """
    typed = [_typed(result) for result in results]
    records = [result.record for result in typed]  # the results' own objects, not copies
    baseline = _baseline_document(settings)
    aggregates = compute_aggregates(records) if records else {}
    comparison = settings.compare(baseline, typed) if baseline is not None and settings.compares else None
    add_stale_counts(aggregates, records)  # only when references were checked against a graph
    known = settings.current_run or UNRECORDED_RUN
    flaky = flaky_questions(settings.history, records, known.commit, known.inputs) if settings.history else []
    gate_history = _gate_history(typed, baseline, settings, flaky) if settings.history is not None else None
    gate_results = (
        evaluate_gates(settings.gates, aggregates, comparison, records, gate_history, settings.calibration)
        if records and not settings.defer_gates
        else []
    )
    document = build_document(
        typed,
        aggregates,
        gate_results,
        settings.metadata,
        started=started,
        interrupted=interrupted,
        comparison=comparison,
        warnings=warnings,
        finished=finished,
        judge_spend=judge_spend,
    )
    if settings.calibration is not None:
        document.judge_calibration = dict(settings.calibration)
    if references is not None:
        document.references = dict(references)
    if settings.history is not None and gate_history is not None and not settings.defer_gates:
        current = _current_run(settings, aggregates, document)
        document.history = history_section(settings.history, current, records, flaky, settings.gates)
    return FinishedRun(records, aggregates, comparison, gate_results, document)


def _typed(result: QuestionResult | Mapping[str, object]) -> QuestionResult:
    return result if isinstance(result, QuestionResult) else QuestionResult.from_record(result)


def _baseline_document(settings: RunSettings) -> ReportDocument | None:
    baseline = settings.baseline
    if baseline is None or isinstance(baseline, ReportDocument):
        return baseline
    return ReportDocument.from_json(baseline, settings.baseline_path or "baseline report")


def _current_run(
    settings: RunSettings, aggregates: Mapping[str, object], document: ReportDocument
) -> PastRun:
    return dataclasses.replace(
        settings.current_run or UNRECORDED_RUN,
        started_at=str(document.metadata.get("started_at", "")),
        aggregates=aggregates,
        outcomes={result.question_id: str(result.record.get("outcome")) for result in document.results},
        passed=not document.gates_failed
        and all(result.outcome is not Outcome.FAILED for result in document.results),
    )


def _gate_history(
    results: Sequence[QuestionResult],
    baseline: ReportDocument | None,
    settings: RunSettings,
    flaky_found: Sequence[Flakiness],
) -> GateHistory:
    """The earlier runs, this run's flaky questions and, when a gate asks, the change without them."""
    assert settings.history is not None
    flaky = tuple(found.question_id for found in flaky_found)
    stable_changes = None
    wanted = any(gate.exclude_flaky for gate in settings.gates)
    if wanted and baseline is not None and settings.compares:
        left_out = set(flaky)
        stable_changes = settings.compare(
            dataclasses.replace(
                baseline,
                results=[result for result in baseline.results if result.question_id not in left_out],
            ),
            [result for result in results if result.question_id not in left_out],
        )
    return GateHistory(settings.history, flaky, stable_changes)


@dataclass
class WrittenOutputs:
    """The files a run wrote, as (what, path) in order, and one line per file it could not write."""

    written: list[tuple[str, Path]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def write(self, what: str, path: Path, write: Callable[[Path], object]) -> None:
        """Write one output file; a disk failure is one line naming the file, not a traceback."""
        try:
            write(path)
        except OSError as error:
            self.problems.append(f"could not write the {what} {path}: {error.strerror or error}")
        else:
            self.written.append((what, path))


def write_outputs(
    document: ReportDocument,
    paths: OutputPaths,
    *,
    report: Mapping[str, Any] | None = None,
    plain_keys: Collection[str] = (),
) -> WrittenOutputs:
    """Write the JSON report, the Markdown summary and the HTML report asked for, one after another.

    `report`: the document's JSON when the caller has it already (`FinishedRun.report`).
    `plain_keys`: report keys whose values are plain JSON values (`formats.plain_json`): a merge's
    results as a parser read them, a comparison whose numbers are all finite. orjson writes those
    when it is installed.
    """
    outputs = WrittenOutputs()
    if paths.report is not None:
        report = report if report is not None else document.to_json()
        outputs.write(
            "JSON report", paths.report, lambda path: write_json_atomic(path, report, plain_keys=plain_keys)
        )
    if paths.markdown is not None:
        from pytest_graphrag_eval.report.markdown_summary import render_markdown  # with the metric catalogue

        markdown = render_markdown(document)
        outputs.write("Markdown summary", paths.markdown, lambda path: write_text_atomic(path, markdown))
    if paths.html is not None:
        from pytest_graphrag_eval.report.html_report import write_html  # Jinja2 only when asked for

        outputs.write("HTML report", paths.html, lambda path: write_html(document, path))
    return outputs
