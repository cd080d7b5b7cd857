"""Per-run state of the plugin and the hooks that forward pytest's events to the layers below."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question
from pytest_graphrag_eval.errors import ConfigurationError, GraphragEvalError
from pytest_graphrag_eval.formats.json_types import JsonObject, Order
from pytest_graphrag_eval.gates.corpus_rules import CorpusRules
from pytest_graphrag_eval.gates.thresholds import ThresholdResolver
from pytest_graphrag_eval.plugin import corpus_registry, xdist_workers
from pytest_graphrag_eval.plugin.items import (
    SESSION_KEY,
    QuestionFailed,
    QuestionItem,
    collect_finished_unreported,
    cut_question_record,
    cut_reason,
    item_outcome,
    numbered_attempts,
    question_report_record,
)
from pytest_graphrag_eval.plugin.other_plugins import interplay_lines, rerun_record
from pytest_graphrag_eval.plugin.progress import ProgressLine, judge_in_batches, runner_progress_line
from pytest_graphrag_eval.plugin.run_start import new_judge_client, start_run
from pytest_graphrag_eval.plugin.settings import PluginSettings
from pytest_graphrag_eval.plugin.xdist_workers import ProcessRole
from pytest_graphrag_eval.report.json_report import ResultCollector
from pytest_graphrag_eval.report.judge_spend import add_process_stats
from pytest_graphrag_eval.report.judging_summary import calibration_lines
from pytest_graphrag_eval.report.markdown_summary import escape_text
from pytest_graphrag_eval.report.review_queue import write_review_queue
from pytest_graphrag_eval.report.run_coverage import RunCoverage
from pytest_graphrag_eval.report.run_terminal import RunTerminal, write_run_terminal
from pytest_graphrag_eval.run.assembly import RunAssembly, assemble_run
from pytest_graphrag_eval.run.end_of_run import CollectedRun, RunOutcome, end_run
from pytest_graphrag_eval.run.judging import (
    Judging,
    calibrate,
    judge_gate_results,
    load_judging,
    plan_line,
    questions_of,
)
from pytest_graphrag_eval.run.passes import plan_lines
from pytest_graphrag_eval.run.pipeline import WrittenOutputs
from pytest_graphrag_eval.run.runner import AnsweredQuestion

INTERRUPTED_WRITING = (
    "graphrag-eval: interrupted (Ctrl-C) while the outputs were written: each file is whole or was not "
    "written, and the history holds the whole run or none of it"
)
"""SIGINT stays the user's: outputs are atomic and the history record one transaction, so a late
Ctrl-C stops the writing without leaving half a file."""


class QuestionsInRun:
    """Node ids of the question items selected (after every deselection), in collection order, and of
    those that reported: the rest never ran, because `-x`, `--maxfail` or Ctrl-C stopped the run first."""

    def __init__(self) -> None:
        self.selected: dict[str, None] = {}  # ordered, each once (every xdist worker sends them all)
        self.reported: set[str] = set()

    def select(self, nodeids: Iterable[str]) -> None:
        self.selected.update(dict.fromkeys(nodeids))

    def coverage(
        self, *, corpus_questions: int, results: Sequence[Mapping[str, object]], stopped: str | None
    ) -> RunCoverage:
        """How much of the corpus the run judged; `stopped` is why pytest stopped early, if it did."""
        in_results = {str(result.get("nodeid")) for result in results}
        not_run = [  # the question id a node id ends with (`corpus.yaml::template::question`)
            nodeid.rsplit("::", 1)[-1]
            for nodeid in self.selected
            if nodeid not in self.reported and nodeid not in in_results
        ]
        return RunCoverage(
            corpus_questions=max(corpus_questions, len(results)),
            selected_questions=len(self.selected),
            judged_questions=len(results),
            not_run=tuple(not_run),
            stopped=stopped if not_run else None,
        )


class GraphragSession:
    """Hooks and state for one pytest process."""

    def __init__(self, config: pytest.Config, settings: PluginSettings, role: ProcessRole):
        self.config, self.settings, self.role = config, settings, role
        self.corpus = corpus_registry.CorpusRegistry(settings.corpus_paths)
        self.shard = corpus_registry.select_shard(config, settings)
        self.reported: set[Order] = set()  # corpus order of every question item that ran
        self.questions = QuestionsInRun()  # the question items selected, and those that reported
        self.coverage: RunCoverage | None = None  # how much of the corpus the run judged, at its end
        self.cut_by_interrupt: QuestionItem | None = None  # the item Ctrl-C stopped while it ran
        self.collector = ResultCollector()
        self.thresholds = ThresholdResolver(settings.thresholds)
        start = start_run(config, settings, role)
        self.baseline, self.baseline_name = start.baseline, start.baseline_name
        self.baseline_results = start.baseline_results
        self.responses, self.judge, self.graph = start.responses, start.judge, start.graph
        self.assembly: RunAssembly | None = None
        self.worker_batches: xdist_workers.WorkerBatches | None = None
        self.started = time.time()
        self.interrupted = False
        self.worker_warnings: list[str] = []
        self.judge_stats: JsonObject | None = None  # xdist controller: summed over the workers
        self.dry_run_lines: list[str] = []
        self.progress: ProgressLine | None = None
        self.judge_batches: list[JsonObject] | None = None  # --graphrag-judge-batch: each batch's record
        self.outcome: RunOutcome | None = None
        self.graph_lines: list[tuple[str, str]] = []
        self.pytest_session: pytest.Session | None = None
        # labels, reviews and calibration (--graphrag-judge-labels, --graphrag-reviews)
        self.judging = Judging()
        if settings.judge_labels_path is not None and role is ProcessRole.CONTROLLER:
            raise ConfigurationError(
                "--graphrag-judge-labels calibrates in one process: run it without -n, or calibrate with "
                "graphrag-eval-judge before the distributed run"
            )
        config.stash[SESSION_KEY] = self

    def scored_questions(self) -> bool:
        """Whether this run scored a question (its end is ours to report)."""
        return bool(self.collector.results)

    @property
    def references_only(self) -> bool:
        return self.assembly is not None and self.assembly.references_only

    # collection ---------------------------------------------------------------------------
    def is_corpus_file(self, path: Path) -> bool:
        return self.corpus.is_corpus_file(path)

    def register_corpus(self, corpus: Corpus, path: Path) -> CorpusRules:
        return self.corpus.register(corpus, path)

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """With --graphrag-shard K/N, keep this shard's questions only."""
        corpus_registry.deselect_other_shards(config, items, self.shard, self.corpus.corpora.values())

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.pytest_session = session
        items = [item for item in session.items if isinstance(item, QuestionItem)]
        if self.role is not ProcessRole.WORKER:
            self.questions.select(item.nodeid for item in items)
        if not items or self.config.option.collectonly or not self.role.scores:
            return
        try:
            self.judging = load_judging(
                labels_path=self.settings.judge_labels_path,
                reviews_path=self.settings.reviews_path,
                shown=self.settings.shown,
                questions=questions_of(self.corpus.corpora.values()),
                answers=self.settings.answers,
            )
            self.assembly = self._assemble()
            if self.judging.calibrates and self.role is ProcessRole.PLAIN:
                self._calibrate()
            if self.role is ProcessRole.WORKER:
                self.worker_batches = xdist_workers.WorkerBatches(items, xdist_workers.dist_mode(self.config))
            elif self.graph is not None:  # one process runs them all: check every reference up front
                self.graph.prefetch(item.question for item in items)
        except GraphragEvalError as error:
            raise pytest.UsageError(str(error)) from None
        if self.role is ProcessRole.PLAIN:
            self.progress = runner_progress_line(self.config, self.assembly.runner, self.judge)

    def _calibrate(self) -> None:
        """Judge the labelled answers before any question, and say at once how the judge agrees."""
        settings = self.settings
        if settings.llm.dry_run:
            self.dry_run_lines.append(plan_line(self.judging, settings.answers))
            return
        assert self.judge is not None, "labels name a judged metric, so the run has a judge client"
        thresholds = [settings.thresholds, *(rules.thresholds.corpus for rules in self.corpus.rules.values())]
        section = calibrate(self.judging, settings.answers, self.judge, thresholds)
        failed = [
            gate for gate in judge_gate_results(self.corpus.gates(settings.gates), section) if not gate.passed
        ]
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        for line in calibration_lines(section):
            reporter.write_line(line)
        for gate in failed:
            reporter.write_line(
                f"graphrag-eval: {gate.message}: the judge's verdicts in this run are not to be trusted",
                red=True,
                bold=True,
            )

    def _assemble(self) -> RunAssembly:
        settings, hook = self.settings, self.config.hook.pytest_graphrag_respond
        if self.judge is None and any(rules.erag_needs_llm for rules in self.corpus.rules.values()):
            self.judge = new_judge_client(settings)
        settings.check_llm_only_options(self.judge is not None)
        if self.graph is not None:
            self.graph.endpoint  # noqa: B018 - load the graph now: a broken RDF file is a usage error
        return assemble_run(
            settings,
            recorded=self.responses,
            agent=(lambda question: hook(question=question, config=self.config))
            if hook.get_hookimpls()
            else None,
            judge=self.judge,
            rules=self.corpus.rules,
            corpora=self.corpus.corpora,
            prepare=self.graph.prepare if self.graph is not None else None,
        )

    # running ---------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        """Start every question this process will run before the first item reports."""
        assembly = self.assembly
        if assembly is None or self.config.option.collectonly or self.role is ProcessRole.WORKER:
            return None
        questions = [item.question for item in session.items if isinstance(item, QuestionItem)]
        if self.settings.llm.dry_run:  # plan the calls and run no item
            agent_calls = len(questions) * self.settings.agent_repeats if assembly.stand_in else None
            planned = plan_lines(assembly.runner, questions, self.judge, agent_calls)
            self.dry_run_lines = [*self.dry_run_lines, *planned]  # after the calibration's line
            return True
        if self.settings.llm.batch and self.judge is not None:
            self.judge_batches = []
            self.judge_batches = judge_in_batches(
                self.config, assembly.new_runner, questions, self.judge, assembly.remembered
            )
        assembly.runner.submit(questions)
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """xdist worker: start this item's batch, and the next item's, before the item runs."""
        if self.assembly is None or self.worker_batches is None:
            return
        pending = self.worker_batches.new_items(item, nextitem)
        self.assembly.runner.submit(p.question for p in pending if isinstance(p, QuestionItem))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """xdist controller: the question items its workers selected (each worker collects them all)."""
        rootpath = Path(self.config.rootpath)
        self.questions.select(
            nodeid for nodeid in ids if self.corpus.is_corpus_file(rootpath / nodeid.split("::")[0])
        )

    def outcome_for(self, question: Question, *, rerun: bool = False) -> AnsweredQuestion:
        """The question's outcome; on a rerun (pytest-rerunfailures) a live agent is asked again."""
        assert self.assembly is not None, "question items run only after collection finished"
        runner = self.assembly.runner
        if rerun and runner.live:
            runner.forget(question)
        if self.progress is None:
            return runner.outcome(question)
        try:
            return runner.outcome(question, self.progress.tick)
        finally:
            self.progress.done()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        """Remember the question whose item Ctrl-C stopped: it is reported as cut, not lost."""
        call_outcome = yield
        excinfo = call_outcome.excinfo
        interrupted = excinfo is not None and issubclass(excinfo[0], KeyboardInterrupt)
        if isinstance(item, QuestionItem) and interrupted and item.result is None:
            self.cut_by_interrupt = item

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report_outcome = yield
        if not isinstance(item, QuestionItem) or call.when == "teardown":
            return
        report = report_outcome.get_result()
        record = self._question_record(item, call, report)
        if record is None and call.when != "call":
            return  # a setup that passed: the call reports the question
        live = item.responses and self.assembly is not None and self.assembly.runner.live
        xdist_workers.put_on_report(
            report,
            self.corpus.order_of(item),
            record,
            numbered_attempts(item.responses) if live else None,
            as_text=self.role is ProcessRole.WORKER,
        )

    def _question_record(
        self, item: QuestionItem, call: pytest.CallInfo[None], report: pytest.TestReport
    ) -> JsonObject | None:
        """The question's record: scored, or cut before a result existed; a skip is no record."""
        if item.result is not None and call.when == "call":
            record = question_report_record(item, report)
        elif call.excinfo is not None and (report.failed or hasattr(report, "wasxfail")):
            error = call.excinfo.value
            reason = str(error) if isinstance(error, QuestionFailed) else cut_reason(call.when, call.excinfo)
            record = cut_question_record(item, reason, item_outcome(report))
        else:
            return None
        rerun = rerun_record(item, live=self.assembly is not None and self.assembly.runner.live)
        if rerun is not None:
            record["rerun"] = rerun
        return record

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        session = self.pytest_session
        if (
            self.graph is not None
            and self.graph.unavailable
            and session is not None
            and not session.shouldstop
        ):
            # A dead endpoint is one error: stop here rather than fail every question the same way.
            session.shouldstop = f"graphrag-eval: {self.graph.unavailable}"
            self.graph_lines = [(str(session.shouldstop), "red")]
        if self.role is ProcessRole.WORKER or report.when == "teardown":
            return
        reported = xdist_workers.taken_from_report(report)
        if reported.order is None:
            return  # not a question, or a setup that passed
        self.reported.add(reported.order)
        self.questions.reported.add(report.nodeid)
        if reported.result is not None:
            self.collector.add(reported.order, reported.result)
        if reported.responses:
            self.collector.add_response(reported.order, reported.responses)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """xdist controller: keep what a finished worker shipped (corpus gates, warnings, judge stats)."""
        shipment = xdist_workers.received_shipment(node, known=self.corpus.shipped.keys())
        if shipment is None:
            return
        self.corpus.receive(shipment.corpus_files)
        # Every worker checked the responses against the whole corpus: one worker's warnings are all of them.
        self.worker_warnings = self.worker_warnings or shipment.warnings
        if shipment.judge_stats is not None:
            self.judge_stats = self.judge_stats or {}
            add_process_stats(self.judge_stats, shipment.judge_stats)

    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True

    # finishing -------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        try:
            self._conclude(session, exitstatus)
        except KeyboardInterrupt:  # the user's Ctrl-C stops the writing (SIGINT stays theirs to handle)
            self.interrupted = True
            self.graph_lines.append((INTERRUPTED_WRITING, "red"))
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        finally:  # after the end of the run, which may query the graph (--graphrag-graph-coverage)
            if self.graph is not None:
                self.graph.close()

    def _conclude(self, session: pytest.Session, exitstatus: int) -> None:
        if self.assembly is not None:
            cut = self.cut_by_interrupt
            if cut is not None and self.role is not ProcessRole.WORKER:
                reason = "the question was cut before it was scored (KeyboardInterrupt while its item ran)"
                self.collector.add(self.corpus.order_of(cut), cut_question_record(cut, reason, "interrupted"))
            if self.interrupted:
                collect_finished_unreported(
                    session, self.assembly.runner, self.collector, self.corpus.order_of
                )
            self.assembly.runner.close()
        if self.role is ProcessRole.WORKER:
            xdist_workers.ship_shipment(
                self.config,
                xdist_workers.WorkerShipment(
                    dict(self.corpus.shipped),
                    list(self.assembly.responses_check.warnings) if self.assembly else [],
                    self.judge.stats.as_dict() if self.judge is not None else None,
                ),
            )
            return
        if not (self.collector.results or self.interrupted):
            return
        gates = self.corpus.gates(self.settings.gates)
        self.coverage = self.questions.coverage(
            corpus_questions=sum(int(str(file.record["questions"])) for file in self.corpus.shipped.values()),
            results=self.collector.ordered_results(),
            stopped=_stopped(session, self.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED),
        )
        self.outcome = end_run(
            CollectedRun(
                self.collector.ordered_results(),
                gates,
                self.corpus.identity(
                    self.collector.results, self.reported, self.settings.settings_record(gates), self.shard
                ),
                self.started,
                self.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED or self.coverage.interrupted,
                self._warnings(),
                self.collector.ordered_responses(),
                self.judge.stats.as_dict() if self.judge is not None else self.judge_stats,
                self.judge_batches,
                sum(1 for item in session.items if isinstance(item, QuestionItem)),
                self.baseline_name,
                self.judging.calibration,
                self.coverage.to_json() if self.coverage.partial else None,
                self.corpus.collected_corpora,
            ),
            self.settings,
            graph=self.graph,
            baseline=self.baseline,
            root=Path(self.config.rootpath),
            sharded=self.shard is not None,
        )
        if self.settings.review_queue_path is not None:  # after the reports; a problem is one line
            report, baseline = self.outcome.finished.report, self.baseline_results
            WrittenOutputs(self.outcome.written, self.outcome.problems).write(
                "review queue",
                self.settings.review_queue_path,
                lambda target: write_review_queue(target, report, escape_text, baseline),
            )
        self.graph_lines = [*self.outcome.graph.lines, *self.outcome.notes]
        if self.outcome.failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _warnings(self) -> list[str]:
        own = self.assembly.responses_check.warnings if self.assembly is not None else []
        return list(own or self.worker_warnings)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.role is ProcessRole.WORKER:
            return
        results = self.collector.ordered_results()
        gated = (
            bool(self.settings.thresholds)
            or bool(self.outcome and self.outcome.finished.gate_results)
            or bool(self.corpus.gates(self.settings.gates))
        )  # a corpus file's thresholds show in its results' checks (`interplay_lines`)
        shown = RunTerminal(
            results,
            baseline_results=self.baseline_results,
            warnings=self._warnings(),
            shard_line=corpus_registry.shard_note(self.shard, len(self.collector.results)),
            dry_run_lines=self.dry_run_lines,
            lines=[*self.graph_lines, *interplay_lines(self.config, results, gated=gated)],
            current_folder=Path(self.config.invocation_params.dir),
            coverage=self.coverage if self.coverage is not None and self.coverage.partial else None,
            gates_deferred=self.shard is not None,
        )
        write_run_terminal(terminalreporter, self.outcome.shown(shown) if self.outcome else shown)


def _stopped(session: pytest.Session, interrupted: bool) -> str | None:
    """Why pytest stopped before its last item: `-x`/`--maxfail`, another stop, or Ctrl-C."""
    if interrupted:
        return "interrupted by Ctrl-C"
    # under xdist the controller's scheduler decides to stop (`-x`, `--maxfail`), not the session
    scheduler = session.config.pluginmanager.get_plugin("dsession")
    reason = session.shouldfail or session.shouldstop or getattr(scheduler, "shouldstop", None)
    if not reason:
        return None
    return f"pytest stopped: {reason}" if isinstance(reason, str) else "pytest stopped early"
