"""Per-run state of the plugin: corpus files, the question runner, collected results.

One `GraphragSession` is registered as a plugin object per pytest process.
Under xdist, workers answer and score their own share of questions and ship
each result to the controller on the test report; the controller (or a plain
run) alone aggregates, gates, writes the report and prints the summary.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_graphrag_eval.compare.baseline import load_baseline
from pytest_graphrag_eval.compare.comparison import Comparison
from pytest_graphrag_eval.compare.numeric import require_statistics
from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question, check_unique_question
from pytest_graphrag_eval.corpus.response_records import ResponseRecord
from pytest_graphrag_eval.corpus.responses import load_response_attempts
from pytest_graphrag_eval.errors import ConfigurationError, GraphragEvalError
from pytest_graphrag_eval.evaluation import ResponsesCheck
from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.formats.gc_pause import paused_full_collections
from pytest_graphrag_eval.gates.corpus_rules import CorpusRules, corpus_rules
from pytest_graphrag_eval.gates.model import TREND, Gate, GateResult
from pytest_graphrag_eval.gates.thresholds import ThresholdResolver
from pytest_graphrag_eval.history.recording import HistoryOutcome, record_finished_run
from pytest_graphrag_eval.plugin.gate_outcome import announce_failed_gates
from pytest_graphrag_eval.plugin.items import SESSION_KEY, CorpusFile, QuestionItem
from pytest_graphrag_eval.plugin.progress import ProgressLine, status_text, terminal_progress_line
from pytest_graphrag_eval.plugin.settings import PluginSettings
from pytest_graphrag_eval.plugin.shard_selection import (
    SHARD_OPTION,
    deselect_other_shards,
    select_shard,
    shard_note,
)
from pytest_graphrag_eval.plugin.xdist_batches import (
    WORKERINPUT_KEY,
    WorkerBatches,
    batching_note,
    dist_mode,
)
from pytest_graphrag_eval.report.baseline_summary import since_baseline_lines
from pytest_graphrag_eval.report.history_summary import history_lines
from pytest_graphrag_eval.report.json_report import ResultCollector, write_recording
from pytest_graphrag_eval.report.judge_spend import add_process_stats, spend_lines, spend_section
from pytest_graphrag_eval.report.pipeline import (
    OutputPaths,
    RunSettings,
    finish_run,
    interrupted_record,
    question_record,
    write_outputs,
)
from pytest_graphrag_eval.report.run_identity import (
    corpus_file_record,
    corpus_positions,
    file_sha256,
    identity_metadata,
)
from pytest_graphrag_eval.report.terminal_summary import (
    score_columns,
    write_output_paths,
    write_terminal_summary,
)
from pytest_graphrag_eval.run.corpora import expand_corpus_paths, run_gates
from pytest_graphrag_eval.run.dry_run import StandInAgent, plan_lines
from pytest_graphrag_eval.run.graph_stage import GraphStage, finish_graph_run
from pytest_graphrag_eval.run.judge_batch import RememberedSource, fill_cache_in_batches
from pytest_graphrag_eval.run.replay import numbered_attempts, replay_attempts
from pytest_graphrag_eval.run.run_history import history_at_finish, read_history
from pytest_graphrag_eval.run.runner import (
    BackgroundRunner,
    InlineRunner,
    LiveSource,
    QuestionOutcome,
    QuestionRunner,
    ReplaySource,
    ResponseSource,
)
from pytest_graphrag_eval.run.scoring_setup import scoring_setup

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm import JudgeClient

NO_RESPONSES = (
    "pytest-graphrag-eval has no responses to score: pass --graphrag-responses PATH "
    "(or set graphrag_responses in the ini file) to replay recorded responses, or implement "
    "the pytest_graphrag_respond(question, config) hook in conftest.py to call your agent live."
)
RESULT_ATTR = "graphrag_result"
ORDER_ATTR = "graphrag_order"
RESPONSE_ATTR = "graphrag_response"
CORPUS_GATES_KEY = "graphrag_corpus_gates"
CORPUS_FILES_KEY = "graphrag_corpus_files"
WARNINGS_KEY = "graphrag_warnings"
GRAPH_STORE_KEY = "graphrag_graph_store"
JUDGE_STATS_KEY = "graphrag_judge_stats"


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _is_xdist_controller(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and not _is_xdist_worker(config)


class GraphragSession:
    """Hooks and state for one pytest process."""

    def __init__(self, config: pytest.Config, settings: PluginSettings):
        self.config = config
        self.settings = settings
        if settings.corpus_paths:
            # The corpus, the items and every result are kept to the end of the run, so full
            # collections would only traverse them again and again (a second or so on 10,000
            # questions); young collections go on (see gc_pause.py). It ends with the config.
            pause = contextlib.ExitStack()
            pause.enter_context(paused_full_collections())
            config.add_cleanup(pause.close)
        self.corpus_files = expand_corpus_paths(settings.corpus_paths)
        self._file_index = {path: index for index, path in enumerate(self.corpus_files)}
        self._resolved: dict[Path, Path] = {}
        self.corpora: dict[Path, Corpus] = {}  # by resolved file path
        self.rules: dict[Path, CorpusRules] = {}  # each collected file's thresholds, gates, scoring settings
        self.corpus_records: dict[Path, dict[str, Any]] = {}  # each file's identity, for shard merges
        self.shard = select_shard(config, settings)
        self.reported: set[tuple[Any, ...]] = set()  # corpus order of every question item that ran
        self._questions_by_id: dict[str, Question] = {}
        self.collector = ResultCollector()
        self.gate_results: list[GateResult] = []
        self.thresholds = ThresholdResolver(settings.thresholds_ini, settings.thresholds_cli)
        self.baseline, self.baseline_name = self._load_baseline()
        if self.baseline is not None:
            require_statistics()  # a missing numpy/scipy is said now, not after every question ran
        self.baseline_results: dict[str, dict[str, Any]] = {
            str(result["question_id"]): result for result in (self.baseline or {}).get("results", [])
        }
        needing_baseline = [gate.expression for gate in settings.gates if gate.needs_baseline]
        if needing_baseline and self.baseline is None:
            raise ConfigurationError(
                f"gate {needing_baseline[0]} compares with a baseline run: pass --graphrag-baseline PATH "
                "(the JSON report of an earlier run, e.g. main's CI artifact)"
            )
        needing_history = [gate.expression for gate in settings.gates if gate.needs_history]
        if needing_history and settings.history_url is None:
            raise ConfigurationError(
                f"gate {needing_history[0]} looks at earlier runs: pass --graphrag-history URL"
            )
        if any(gate.over == TREND for gate in settings.gates):
            require_statistics()  # the slope's interval needs scipy
        self.comparison: Comparison | None = None
        self.comparison_section: dict[str, Any] | None = None  # its report form, built once
        self.runner: QuestionRunner | None = None
        # Responses for questions outside the corpora: warnings for the terminal summary and the report.
        self.responses_check = ResponsesCheck()
        self.worker_batches: WorkerBatches | None = None
        self.started = time.time()
        self.interrupted = False
        self.worker_warnings: list[str] = []
        self.write_problems: list[str] = []
        self.written: list[tuple[str, Path]] = []  # (what, path) of each output file written, in order
        self.history: HistoryOutcome | None = None  # with --graphrag-history: recorded, or why not
        self.history_lines: list[tuple[str, str]] = []  # the flaky questions, for the terminal summary
        self.judge: JudgeClient | None = None  # the judge client of this process, made at most once
        self.judge_stats: dict[str, Any] | None = None  # xdist controller: summed over the workers
        self.judge_spend: dict[str, Any] | None = None
        self.dry_run_lines: list[str] = []
        self.stand_in: StandInAgent | None = None
        self.progress: ProgressLine | None = None
        self.judge_batches: list[dict[str, Any]] | None = None  # --graphrag-judge-batch: each batch's record
        self._remembered: RememberedSource | None = None
        # Makes a runner like self.runner, for a judge batch's collecting passes.
        self._new_runner: Callable[[], QuestionRunner] | None = None
        if settings.dry_run and _is_xdist_controller(config):
            raise ConfigurationError("--graphrag-dry-run plans the whole run in one process: drop -n")
        if settings.judge_batch and not settings.dry_run and _is_xdist_controller(config):
            raise ConfigurationError(
                "--graphrag-judge-batch sends the run's judge calls from one process: drop -n"
            )
        if settings.corpus_paths and settings.answers.needs_llm:
            # Made now, so a missing API key or an unusable cache folder is a usage error in every
            # process; an xdist controller scores nothing and keeps none (its workers' stats add up).
            client = self._new_judge_client()
            self.judge = None if _is_xdist_controller(config) else client
        # Read at start-up: a broken file is a usage error before collection, also under xdist,
        # whose controller would otherwise only see its workers fail.
        self.responses = self._load_responses() if settings.responses_path else None
        # The knowledge graph, when a run checks references or executes queries (opened on first use).
        self.graph = GraphStage(settings, Path(config.rootpath)) if settings.uses_graph else None
        if self.graph is not None:
            self.graph.check_remote()
        if self.graph is not None and _is_xdist_controller(config):
            self.graph.share_with_workers()  # load once here; a broken RDF file is a usage error now
        elif self.graph is not None and _is_xdist_worker(config):
            self.graph.shared_store = config.workerinput.get(GRAPH_STORE_KEY)  # type: ignore[attr-defined]
        self.graph_lines: list[tuple[str, str]] = []
        self.pytest_session: pytest.Session | None = None
        self.references_only = False  # no responses: a run that checks or updates references only
        config.stash[SESSION_KEY] = self

    def _load_baseline(self) -> tuple[dict[str, Any] | None, str | None]:
        """The baseline report and how reports name it: a file, or a run of the history (history:REF)."""
        settings = self.settings
        if settings.baseline_path is not None:
            return load_baseline(settings.baseline_path), str(settings.baseline_path)
        if settings.baseline_history is None:
            return None, None
        if settings.history_url is None:
            raise ConfigurationError(
                f"--graphrag-baseline history:{settings.baseline_history} takes the baseline from the run "
                "history: pass --graphrag-history URL too"
            )
        found = read_history(
            settings.history_url,
            environ=os.environ,
            cwd=Path(self.config.rootpath),
            window=1,
            flaky_runs=settings.flaky_runs,
            flaky_flips=settings.flaky_flips,
            baseline_ref=settings.baseline_history,
        )
        return found.baseline, found.baseline_name

    def _new_judge_client(self) -> JudgeClient:
        from pytest_graphrag_eval.llm import JudgeClient  # the OpenAI SDK: only when a judge is needed

        return JudgeClient(self.settings.llm)

    def _load_responses(self) -> dict[str, list[ResponseRecord]]:
        settings = self.settings
        assert settings.responses_path is not None
        return load_response_attempts(
            settings.responses_path, settings.responses_format, settings.trace_question_attribute
        )

    # collection ---------------------------------------------------------------------------
    def add_corpus_args(self) -> None:
        """Make pytest visit configured corpus files the given arguments do not already cover."""
        config = self.config
        if _is_xdist_worker(config):
            return
        explicit = config.args_source == pytest.Config.ArgsSource.ARGS
        if explicit and not self.settings.corpus_from_cli:
            return
        invocation_dir = Path(config.invocation_params.dir)
        covered = [(invocation_dir / arg.split("::")[0]).resolve() for arg in config.args]
        for corpus_file in self.corpus_files:
            if not any(corpus_file == path or path in corpus_file.parents for path in covered):
                config.args.append(str(corpus_file))

    def baseline_result(self, question_id: str) -> dict[str, Any] | None:
        """This question's result in the baseline run, if one was given and had it."""
        return self.baseline_results.get(question_id)

    def is_corpus_file(self, path: Path) -> bool:
        return self._resolve(path) in self._file_index

    def register_corpus(self, corpus: Corpus, path: Path) -> CorpusRules:
        """Keep a collected corpus and its rules, parsed here once; a bad rule, or a question id another
        corpus file already has, is a CorpusError."""
        rules = corpus_rules(corpus)
        for question in corpus.questions():
            check_unique_question(question, self._questions_by_id)
        resolved = self._resolve(path)
        self.corpora[resolved], self.rules[resolved] = corpus, rules
        self.corpus_records[resolved] = corpus_file_record(
            corpus.file or str(path), file_sha256(resolved), len(corpus.positions)
        )
        return rules

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """With --graphrag-shard K/N, keep this shard's questions only."""
        if self.shard is not None and self.shard.selected_by == SHARD_OPTION:
            deselect_other_shards(config, items, self.shard.spec, self.corpora.values())

    def _resolve(self, path: Path) -> Path:
        """`path.resolve()`, remembered: items ask for their file's path once per question."""
        if path not in self._resolved:
            self._resolved[path] = path.resolve()
        return self._resolved[path]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.pytest_session = session
        items = [item for item in session.items if isinstance(item, QuestionItem)]
        if not items or self.config.option.collectonly or _is_xdist_controller(self.config):
            return
        self.runner = self._make_runner()
        if _is_xdist_worker(self.config):
            self.worker_batches = WorkerBatches(items, dist_mode(self.config))
        elif self.graph is not None:  # one process runs them all: check every reference up front
            try:
                self.graph.prefetch(item.question for item in items)
            except GraphragEvalError as error:
                raise pytest.UsageError(str(error)) from None
        if not _is_xdist_worker(self.config):
            self.progress = self._progress_line()

    def _make_runner(self) -> QuestionRunner:
        settings = self.settings
        if settings.responses_path is not None:
            try:
                attempts, self.responses_check = replay_attempts(
                    self.responses or self._load_responses(), self.corpora.values(), settings.agent_repeats
                )
            except GraphragEvalError as error:
                shown = str(error)
                if str(settings.responses_path) not in shown:  # loader errors already name the file
                    shown = f"{settings.responses_path}: {shown}"
                raise pytest.UsageError(shown) from None
            source: ResponseSource = ReplaySource(attempts)
        elif self.config.hook.pytest_graphrag_respond.get_hookimpls() and settings.dry_run:
            source = self.stand_in = StandInAgent()  # a dry run asks no agent
        elif self.config.hook.pytest_graphrag_respond.get_hookimpls():
            hook = self.config.hook.pytest_graphrag_respond
            source = LiveSource(
                lambda question: hook(question=question, config=self.config),
                settings.agent_concurrency,
                settings.agent_timeout,
            )
        elif settings.references_only_allowed:
            source = ReplaySource({})  # references only: each item reports its reference check alone
            self.references_only = True
        else:
            raise pytest.UsageError(NO_RESPONSES)
        if settings.judge_batch and not settings.dry_run:
            source = self._remembered = RememberedSource(source)  # the agent is asked once for every pass
        try:
            if self.judge is None and any(rules.erag_needs_llm for rules in self.rules.values()):
                self.judge = self._new_judge_client()
            setup = scoring_setup(
                settings.answers,
                self.judge,
                settings.steps_scope,
                settings.tool_names,
                self.rules,
                self.corpora,
            )
        except GraphragEvalError as error:
            raise pytest.UsageError(str(error)) from None
        on_close = self.judge.aclose if self.judge is not None else None
        # Something to wait on (the agent, a judge) runs in the background; a plain replay inline.
        runner_type = BackgroundRunner if source.live or on_close is not None else InlineRunner
        prepare = None
        if self.graph is not None:
            try:
                self.graph.endpoint  # noqa: B018 - load the graph now: a broken RDF file is a usage error
            except GraphragEvalError as error:
                raise pytest.UsageError(str(error)) from None
            prepare = self.graph.prepare
        self._new_runner = lambda: BackgroundRunner(
            source,
            setup.scorers,
            setup.context_for,
            None,
            settings.agent_repeats,
            prepare,
        )
        return runner_type(
            source,
            setup.scorers,
            setup.context_for,
            on_close,
            settings.agent_repeats,
            prepare,
        )

    # running ---------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        """Start every question this process will run before the first item reports."""
        if self.runner is None or self.config.option.collectonly or _is_xdist_worker(self.config):
            return None
        if self.settings.dry_run:  # plan the calls and run no item
            questions = [item.question for item in session.items if isinstance(item, QuestionItem)]
            live = self.stand_in is not None
            agent_calls = len(questions) * self.settings.agent_repeats if live else None
            self.dry_run_lines = plan_lines(self.runner, questions, self.judge, agent_calls)
            return True
        if self.settings.judge_batch and self.judge is not None:
            self._judge_in_batches(
                self.judge, [item.question for item in session.items if isinstance(item, QuestionItem)]
            )
        self.runner.submit(item.question for item in session.items if isinstance(item, QuestionItem))
        return None

    def _judge_in_batches(self, judge: JudgeClient, questions: list[Question]) -> None:
        """Fill the judge cache through the Batch API, with a status on a terminal, before any item runs."""
        assert self._new_runner is not None, "made with the runner, which a judged run has"
        new_runner = self._new_runner
        status = [""]
        line = terminal_progress_line(self.config, lambda: status[0])

        def show(text: str) -> None:
            status[0] = text
            if line is not None:
                line.tick()

        self.judge_batches = []
        try:
            self.judge_batches = fill_cache_in_batches(new_runner, questions, judge, self._remembered, show)
        finally:
            if line is not None:
                line.done()

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        """Say so when xdist's distribution mode lets a worker have only two questions in flight."""
        live = self.settings.responses_path is None and config.hook.pytest_graphrag_respond.get_hookimpls()
        if not _is_xdist_controller(config) or not (live or self.settings.judge == "llm"):
            return None
        return batching_note(dist_mode(config))

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: tell each worker the distribution mode, which decides its batches."""
        node.workerinput[WORKERINPUT_KEY] = dist_mode(self.config)
        if self.graph is not None and self.graph.shared_store is not None:
            node.workerinput[GRAPH_STORE_KEY] = self.graph.shared_store

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """xdist worker: start this item's batch, and the next item's, before the item runs."""
        if self.runner is None or self.worker_batches is None:
            return
        pending = self.worker_batches.new_items(item, nextitem)
        self.runner.submit(
            pending_item.question for pending_item in pending if isinstance(pending_item, QuestionItem)
        )

    def outcome_for(self, item: QuestionItem) -> QuestionOutcome:
        assert self.runner is not None, "question items run only after collection finished"
        if self.progress is None:
            return self.runner.outcome(item.question)
        try:
            return self.runner.outcome(item.question, self.progress.tick)
        finally:
            self.progress.done()

    def _progress_line(self) -> ProgressLine | None:
        """A progress status for a run with something to wait on, when the output is a terminal."""
        if not isinstance(self.runner, BackgroundRunner):
            return None
        runner, judge, started = self.runner, self.judge, time.monotonic()

        def status() -> str:
            done, total = runner.progress()
            stats = judge.stats if judge is not None else None
            return status_text(
                done,
                total,
                stats.calls_made + stats.cache_hits if stats is not None else 0,
                judge.pending_calls if judge is not None else 0,
                stats.cost_usd if stats is not None else 0.0,
                time.monotonic() - started,
            )

        return terminal_progress_line(self.config, status)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report_outcome = yield
        if not isinstance(item, QuestionItem) or call.when != "call":
            return
        report = report_outcome.get_result()
        ship = _as_json_text if _is_xdist_worker(self.config) else _unchanged
        setattr(report, ORDER_ATTR, self._order_of(item))
        if item.result is not None:
            setattr(report, RESULT_ATTR, ship(_with_item_outcome(item, report)))
        if item.responses and self.runner is not None and self.runner.live:
            setattr(report, RESPONSE_ATTR, ship(numbered_attempts(item.responses)))

    def _order_of(self, item: QuestionItem) -> list[Any]:
        """A sort key that is the same in every process: corpus file, then position in it."""
        file_index = self._file_index.get(self._resolve(item.path), -1)
        return [file_index, str(item.path), item.corpus.positions[item.question.question_id]]

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
        if _is_xdist_worker(self.config) or report.when != "call":
            return
        if hasattr(report, ORDER_ATTR):
            self.reported.add(tuple(getattr(report, ORDER_ATTR)))
        result = _from_json_text(getattr(report, RESULT_ATTR, None))
        if result is not None:
            self.collector.add(getattr(report, ORDER_ATTR), result)
        responses = _from_json_text(getattr(report, RESPONSE_ATTR, None))
        if responses:
            self.collector.add_response(getattr(report, ORDER_ATTR, None) or [0, "", 0], responses)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """xdist controller: keep the `gates:` a worker read, so no corpus file is parsed again here."""
        output = getattr(node, "workeroutput", {})
        for path, (file, gates) in output.get(CORPUS_GATES_KEY, {}).items():
            self.corpora.setdefault(Path(path), Corpus(templates=(), file=file, settings={"gates": gates}))
        for path, record in output.get(CORPUS_FILES_KEY, {}).items():
            self.corpus_records.setdefault(Path(path), record)
        # Every worker checked the responses against the whole corpus: one worker's warnings are all of them.
        self.worker_warnings = self.worker_warnings or list(output.get(WARNINGS_KEY, []))
        if JUDGE_STATS_KEY in output:
            self.judge_stats = self.judge_stats or {}
            add_process_stats(self.judge_stats, output[JUDGE_STATS_KEY])

    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True

    # finishing -------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.runner is not None:
            if self.interrupted:
                self._collect_finished_unreported(session)
            self.runner.close()
        if self.graph is not None:
            self.graph.close()
        if _is_xdist_worker(self.config):
            self.config.workeroutput[CORPUS_GATES_KEY] = {  # type: ignore[attr-defined]
                str(path): [corpus.file, corpus.settings.get("gates")]
                for path, corpus in self.corpora.items()
            }
            self.config.workeroutput[WARNINGS_KEY] = self.responses_check.warnings  # type: ignore[attr-defined]
            if self.judge is not None:
                self.config.workeroutput[JUDGE_STATS_KEY] = self.judge.stats.as_dict()  # type: ignore[attr-defined]
            self.config.workeroutput[CORPUS_FILES_KEY] = {  # type: ignore[attr-defined]
                str(path): record for path, record in self.corpus_records.items()
            }
            return
        if not (self.collector.results or self.interrupted):
            return
        settings = self.settings
        results = self.collector.ordered_results()
        graph_run = finish_graph_run(settings, self.graph, self.baseline, Path(self.config.rootpath), results)
        self.graph_lines = list(graph_run.lines)
        self.judge_spend = spend_section(
            self.judge.stats.as_dict() if self.judge is not None else self.judge_stats,
            results,
            max_cost_usd=settings.max_cost,
            max_calls=settings.max_calls,
            cache_only=settings.cache_only,
            batches=self.judge_batches,
        )
        gates = run_gates(self.settings.gates, self.corpus_files, self.rules, self.corpora)
        sharded = self.shard is not None  # gates and the comparison are decided on the merged whole
        metadata = {**settings.report_metadata(), **graph_run.metadata, **self._identity_metadata(gates)}
        history = (
            history_at_finish(
                settings.history_url,
                environ=os.environ,
                cwd=Path(self.config.rootpath),
                gates=gates,
                flaky_runs=settings.flaky_runs,
                flaky_flips=settings.flaky_flips,
                metadata=metadata,
                results=results,
            )
            if settings.history_url is not None and not sharded
            else None
        )
        finished = finish_run(
            results,
            RunSettings(
                gates=gates,
                metadata=metadata,
                baseline=None if sharded else self.baseline,
                baseline_path=self.baseline_name,
                confidence=settings.confidence,
                resamples=settings.resamples,
                defer_gates=sharded,
                history=history.runs if history is not None else None,
                current_run=history.current if history is not None else None,
            ),
            started=self.started,
            interrupted=self.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED,
            warnings=[
                *(self.responses_check.warnings or self.worker_warnings),
                *graph_run.warnings,
                *([history.warning] if history is not None and history.warning else []),
            ],
            judge_spend=self.judge_spend,
        )
        self.history_lines = history_lines(finished.report)
        if graph_run.references is not None:
            finished.report["references"] = graph_run.references
        self.comparison, self.comparison_section = finished.comparison, finished.comparison_section
        self.gate_results = finished.gate_results
        if finished.gates_failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        outputs = write_outputs(
            finished.report, OutputPaths(settings.report_path, settings.markdown_path, settings.html_path)
        )
        if settings.record_path is not None and self.collector.responses:
            responses = self.collector.ordered_responses()
            outputs.write("recording", settings.record_path, lambda p: write_recording(p, responses))
        self.written += outputs.written
        self.write_problems += outputs.problems
        if self.write_problems and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if settings.history_url is not None:
            self.history = record_finished_run(
                settings.history_url,
                finished.report,
                run_key=settings.history_run_key,
                environ=os.environ,
                cwd=Path(self.config.rootpath),
            )
            if (
                settings.history_required
                and not self.history.recorded
                and session.exitstatus == pytest.ExitCode.OK
            ):
                session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _collect_finished_unreported(self, session: pytest.Session) -> None:
        """After Ctrl-C: finished questions whose items never reported still go in the report."""
        assert self.runner is not None
        finished = self.runner.finished()
        for item in session.items:
            if not isinstance(item, QuestionItem):
                continue
            outcome = finished.get(item.question.question_id)
            order = tuple(self._order_of(item))
            if outcome is not None and outcome.result is not None and order not in self.collector.results:
                self.collector.add(order, interrupted_record(outcome.result, nodeid=item.nodeid))

    def _identity_metadata(self, gates: list[Gate]) -> dict[str, Any]:
        """What lets graphrag-eval-merge check and merge this run's report with other shards'."""
        files = [
            self.corpus_records.get(path) or corpus_file_record(str(path), "", 0)
            for path in self.corpus_files
        ]
        answered = [(key[0], key[2]) for key in sorted(self.collector.results)]
        unanswered = [(key[0], key[2]) for key in self.reported if key not in self.collector.results]
        return identity_metadata(
            files,
            self.settings.settings_record(gates),
            shard=self.shard.to_dict() if self.shard is not None else None,
            positions=corpus_positions(answered, unanswered, sum(file["questions"] for file in files)),
        )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if _is_xdist_worker(self.config):
            return
        results = self.collector.ordered_results()
        baseline_lines = (
            since_baseline_lines(
                self.comparison_section,
                self.baseline_results,
                {str(result["question_id"]): result for result in results},
                score_columns(results),
            )
            if self.comparison_section is not None
            else []
        ) + self.history_lines
        write_terminal_summary(
            terminalreporter,
            results,
            self.gate_results,
            baseline_lines=baseline_lines,
            warnings=self.responses_check.warnings or self.worker_warnings,
            spend=spend_lines(self.judge_spend),
        )
        if self.shard is not None and self.collector.results:
            terminalreporter.write_line(shard_note(self.shard, len(self.collector.results)))
        if self.dry_run_lines:
            terminalreporter.section("graphrag-eval dry run (no call was made)")
            for line in self.dry_run_lines:
                terminalreporter.write_line(line)
        for text, colour in self.graph_lines:
            terminalreporter.write_line(text, **({colour: True} if colour else {}))
        write_output_paths(terminalreporter, self.written)
        announce_failed_gates(terminalreporter, self.gate_results)
        for problem in self.write_problems:
            terminalreporter.write_line(f"graphrag-eval: {problem}", red=True, bold=True)
        if self.history is not None:
            terminalreporter.write_line(
                f"graphrag-eval: {self.history.line}", **({} if self.history.recorded else {"yellow": True})
            )


def _item_outcome(report: pytest.TestReport) -> str:
    """The pytest outcome as people say it: xfail and xpass are told apart from skip and pass."""
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    return report.outcome


def _with_item_outcome(item: QuestionItem, report: pytest.TestReport) -> dict[str, Any]:
    """The question's result plus what pytest decided about it, for the report and baselines."""
    assert item.result is not None
    outcome = "not_evaluated" if item.not_evaluated else _item_outcome(report)
    return question_record(item.result, nodeid=item.nodeid, outcome=outcome, checks=item.checks)


def _as_json_text(value: dict[str, Any]) -> str:
    """A result as one JSON text for the trip from an xdist worker: execnet serialises nested
    dicts object by object in Python, a string at once (the JSON report stores the same values)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _unchanged(value: dict[str, Any]) -> dict[str, Any]:
    return value


def _from_json_text(value: Any) -> Any:
    return json_text.loads(value) if isinstance(value, str) else value


def corpus_file_for(parent: pytest.Collector, file_path: Path) -> CorpusFile | None:
    session: GraphragSession | None = parent.config.stash.get(SESSION_KEY, None)
    if session is None or not session.is_corpus_file(file_path):
        return None
    return CorpusFile.from_parent(parent, path=file_path)
