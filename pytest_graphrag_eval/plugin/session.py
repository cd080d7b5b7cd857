"""Per-run state of the plugin: corpus files, the question runner, collected results.

One `GraphragSession` is registered as a plugin object per pytest process.
Under xdist, workers answer and score their own share of questions and ship
each result to the controller on the test report; the controller (or a plain
run) alone aggregates, gates, writes the report and prints the summary.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.compare.baseline import load_baseline
from pytest_graphrag_eval.compare.comparison import Comparison
from pytest_graphrag_eval.compare.numeric import require_statistics
from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question, check_unique_question, load_corpus
from pytest_graphrag_eval.corpus.responses import load_response_attempts
from pytest_graphrag_eval.errors import ConfigurationError, GraphragEvalError
from pytest_graphrag_eval.evaluation import ResponsesCheck, check_responses_match
from pytest_graphrag_eval.formats import json_text
from pytest_graphrag_eval.gates.model import Gate, GateResult
from pytest_graphrag_eval.gates.suite_gates import combine_gates
from pytest_graphrag_eval.gates.thresholds import ThresholdResolver
from pytest_graphrag_eval.plugin.gate_outcome import announce_failed_gates
from pytest_graphrag_eval.plugin.items import SESSION_KEY, CorpusFile, QuestionItem
from pytest_graphrag_eval.plugin.runner import (
    BackgroundRunner,
    InlineRunner,
    LiveSource,
    QuestionOutcome,
    QuestionRunner,
    ReplaySource,
)
from pytest_graphrag_eval.plugin.scorers_factory import build_scorers
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
from pytest_graphrag_eval.report.json_report import ResultCollector, write_recording
from pytest_graphrag_eval.report.pipeline import (
    OutputPaths,
    RunSettings,
    finish_run,
    interrupted_record,
    question_record,
    write_output,
    write_outputs,
)
from pytest_graphrag_eval.report.run_identity import (
    corpus_file_record,
    corpus_positions,
    file_sha256,
    identity_metadata,
)
from pytest_graphrag_eval.report.terminal_summary import score_columns, write_terminal_summary

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


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _is_xdist_controller(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None)) and not _is_xdist_worker(config)


class GraphragSession:
    """Hooks and state for one pytest process."""

    def __init__(self, config: pytest.Config, settings: PluginSettings):
        self.config = config
        self.settings = settings
        self.corpus_files = _expand_corpus_paths(settings.corpus_paths)
        self._file_index = {path: index for index, path in enumerate(self.corpus_files)}
        self._resolved: dict[Path, Path] = {}
        self.corpora: dict[Path, Corpus] = {}  # by resolved file path
        self.corpus_records: dict[Path, dict[str, Any]] = {}  # each file's identity, for shard merges
        self.shard = select_shard(config, settings)
        self.reported: set[tuple[Any, ...]] = set()  # corpus order of every question item that ran
        self._questions_by_id: dict[str, Question] = {}
        self.collector = ResultCollector()
        self.gate_results: list[GateResult] = []
        self.thresholds = ThresholdResolver(settings.thresholds_ini, settings.thresholds_cli)
        self.baseline = load_baseline(settings.baseline_path) if settings.baseline_path else None
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
        # Read at start-up: a broken file is a usage error before collection, also under xdist,
        # whose controller would otherwise only see its workers fail.
        self.responses = load_response_attempts(settings.responses_path) if settings.responses_path else None
        config.stash[SESSION_KEY] = self

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

    def register_corpus(self, corpus: Corpus, path: Path) -> None:
        """Keep a collected corpus; a question id another corpus file already has is a CorpusError."""
        for question in corpus.questions():
            check_unique_question(question, self._questions_by_id)
        resolved = self._resolve(path)
        self.corpora[resolved] = corpus
        self.corpus_records[resolved] = corpus_file_record(
            corpus.file or str(path), file_sha256(resolved), len(corpus.positions)
        )

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
        items = [item for item in session.items if isinstance(item, QuestionItem)]
        if not items or self.config.option.collectonly or _is_xdist_controller(self.config):
            return
        self.runner = self._make_runner()
        if _is_xdist_worker(self.config):
            self.worker_batches = WorkerBatches(items, dist_mode(self.config))

    def _make_runner(self) -> QuestionRunner:
        settings = self.settings
        if settings.responses_path is not None:
            try:
                attempts = self.responses or load_response_attempts(settings.responses_path)
                self.responses_check = check_responses_match(
                    (qid for corpus in self.corpora.values() for qid in corpus.question_ids()), attempts
                )
                self.responses_check = dataclasses.replace(
                    self.responses_check,
                    extra_warnings=_unreplayed_attempts(attempts, settings.agent_repeats),
                )
            except GraphragEvalError as error:
                shown = str(error)
                if str(settings.responses_path) not in shown:  # loader errors already name the file
                    shown = f"{settings.responses_path}: {shown}"
                raise pytest.UsageError(shown) from None
            source: ReplaySource | LiveSource = ReplaySource(attempts)
        elif self.config.hook.pytest_graphrag_respond.get_hookimpls():
            hook = self.config.hook.pytest_graphrag_respond
            source = LiveSource(
                lambda question: hook(question=question, config=self.config),
                settings.agent_concurrency,
                settings.agent_timeout,
            )
        else:
            raise pytest.UsageError(NO_RESPONSES)
        try:
            scorers, context, on_close = build_scorers(settings, self.corpora.values())
        except GraphragEvalError as error:
            raise pytest.UsageError(str(error)) from None
        contexts = {}
        for corpus in self.corpora.values():
            corpus_context = dataclasses.replace(context, options={**context.options, **corpus.settings})
            contexts.update(dict.fromkeys(corpus.positions, corpus_context))
        # Something to wait on (the agent, a judge) runs in the background; a plain replay inline.
        runner_type = BackgroundRunner if source.live or on_close is not None else InlineRunner
        return runner_type(
            source, scorers, lambda question: contexts[question.question_id], on_close, settings.agent_repeats
        )

    # running ---------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """Start every question this process will run before the first item reports."""
        if self.runner is None or self.config.option.collectonly or _is_xdist_worker(self.config):
            return
        self.runner.submit(item.question for item in session.items if isinstance(item, QuestionItem))

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
        return self.runner.outcome(item.question)

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
            setattr(report, RESPONSE_ATTR, ship(_numbered_attempts(item.responses)))

    def _order_of(self, item: QuestionItem) -> list[Any]:
        """A sort key that is the same in every process: corpus file, then position in it."""
        file_index = self._file_index.get(self._resolve(item.path), -1)
        return [file_index, str(item.path), item.corpus.positions[item.question.question_id]]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
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

    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True

    # finishing -------------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.runner is not None:
            if self.interrupted:
                self._collect_finished_unreported(session)
            self.runner.close()
        if _is_xdist_worker(self.config):
            self.config.workeroutput[CORPUS_GATES_KEY] = {  # type: ignore[attr-defined]
                str(path): [corpus.file, corpus.settings.get("gates")]
                for path, corpus in self.corpora.items()
            }
            self.config.workeroutput[WARNINGS_KEY] = self.responses_check.warnings  # type: ignore[attr-defined]
            self.config.workeroutput[CORPUS_FILES_KEY] = {  # type: ignore[attr-defined]
                str(path): record for path, record in self.corpus_records.items()
            }
            return
        if not (self.collector.results or self.interrupted):
            return
        settings = self.settings
        gates = self._all_gates()
        sharded = self.shard is not None  # gates and the comparison are decided on the merged whole
        finished = finish_run(
            self.collector.ordered_results(),
            RunSettings(
                gates=gates,
                metadata={**settings.report_metadata(), **self._identity_metadata(gates)},
                baseline=None if sharded else self.baseline,
                baseline_path=str(settings.baseline_path) if settings.baseline_path is not None else None,
                confidence=settings.confidence,
                resamples=settings.resamples,
                defer_gates=sharded,
            ),
            started=self.started,
            interrupted=self.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED,
            warnings=self.responses_check.warnings or self.worker_warnings,
        )
        self.comparison, self.comparison_section = finished.comparison, finished.comparison_section
        self.gate_results = finished.gate_results
        if finished.gates_failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        self.write_problems += write_outputs(
            finished.report, OutputPaths(settings.report_path, settings.markdown_path, settings.html_path)
        )
        if settings.record_path is not None and self.collector.responses:
            responses = self.collector.ordered_responses()
            problem = write_output("recording", settings.record_path, lambda p: write_recording(p, responses))
            self.write_problems += [problem] if problem is not None else []
        if self.write_problems and session.exitstatus == pytest.ExitCode.OK:
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

    def _all_gates(self) -> list[Gate]:
        """CLI and ini gates plus every corpus file's `gates:` (an xdist controller collects nothing)."""
        corpora = []
        for path in self.corpus_files:
            try:
                corpus = self.corpora.get(path) or load_corpus(path)
                combine_gates((), [corpus])  # gates that do not parse failed the file's collection
            except GraphragEvalError:
                continue  # already reported as that file's collection error
            corpora.append(corpus)
        return combine_gates(self.settings.gates, corpora)

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
        )
        write_terminal_summary(
            terminalreporter,
            results,
            self.gate_results,
            self.settings.report_path,
            baseline_lines=baseline_lines,
            warnings=self.responses_check.warnings or self.worker_warnings,
        )
        if self.shard is not None and self.collector.results:
            terminalreporter.write_line(shard_note(self.shard, len(self.collector.results)))
        announce_failed_gates(terminalreporter, self.gate_results)
        for problem in self.write_problems:
            terminalreporter.write_line(f"graphrag-eval: {problem}", red=True, bold=True)


def _numbered_attempts(responses: list[dict[str, Any]]) -> dict[str, Any]:
    """What a recording keeps of one question: its response, or every attempt numbered from 1."""
    if len(responses) == 1:
        return {"responses": responses}
    return {"responses": [{**response, "attempt": number} for number, response in enumerate(responses, 1)]}


def _unreplayed_attempts(attempts: dict[str, list[dict[str, Any]]], repeats: int) -> tuple[str, ...]:
    """A warning when the recording holds more attempts per question than this run replays."""
    most = max((len(recorded) for recorded in attempts.values()), default=1)
    if most <= repeats:
        return ()
    return (
        f"the responses file holds up to {most} attempts per question; this run replays {repeats} "
        f"(pass --graphrag-agent-repeats {most} to replay them all)",
    )


def _item_outcome(report: pytest.TestReport) -> str:
    """The pytest outcome as people say it: xfail and xpass are told apart from skip and pass."""
    if hasattr(report, "wasxfail"):
        return "xpassed" if report.passed else "xfailed"
    return report.outcome


def _with_item_outcome(item: QuestionItem, report: pytest.TestReport) -> dict[str, Any]:
    """The question's result plus what pytest decided about it, for the report and baselines."""
    assert item.result is not None
    return question_record(item.result, nodeid=item.nodeid, outcome=_item_outcome(report), checks=item.checks)


def _as_json_text(value: dict[str, Any]) -> str:
    """A result as one JSON text for the trip from an xdist worker: execnet serialises nested
    dicts object by object in Python, a string at once (the JSON report stores the same values)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _unchanged(value: dict[str, Any]) -> dict[str, Any]:
    return value


def _from_json_text(value: Any) -> Any:
    return json_text.loads(value) if isinstance(value, str) else value


def _expand_corpus_paths(paths: tuple[Path, ...]) -> list[Path]:
    """Files as given; folders expand to their *.yaml / *.yml files, sorted for a stable order."""
    files: list[Path] = []
    for path in paths:
        resolved = Path(path).resolve()
        if resolved.is_dir():
            files.extend(
                sorted(p for p in resolved.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
            )
        else:
            files.append(resolved)
    return list(dict.fromkeys(files))


def corpus_file_for(parent: pytest.Collector, file_path: Path) -> CorpusFile | None:
    session: GraphragSession | None = parent.config.stash.get(SESSION_KEY, None)
    if session is None or not session.is_corpus_file(file_path):
        return None
    return CorpusFile.from_parent(parent, path=file_path)
