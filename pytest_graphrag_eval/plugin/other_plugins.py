"""What the pytest plugins teams already run (rerunfailures, repeat, html, json-report, sugar) do to a
graphrag run, said in the summary, and the gates' verdict put where their reports are read."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import pytest

from pytest_graphrag_eval.formats.json_types import JsonObject
from pytest_graphrag_eval.report.run_coverage import RunCoverage, listed
from pytest_graphrag_eval.run.end_of_run import RunOutcome

AGENT_REPEATS = "--graphrag-agent-repeats"
HOW_TO_GATE = (
    'gate it with --graphrag-threshold "steps_score>=1" (each question) or '
    '--graphrag-gate "steps_score.mean>=0.9" (the run), '
    "or graphrag_thresholds / graphrag_gates in the ini file"
)


def rerun_record(item: pytest.Item, *, live: bool) -> JsonObject | None:
    """Which run of pytest-rerunfailures decided this question (None on its first run)."""
    run = getattr(item, "execution_count", 1)  # pytest-rerunfailures numbers an item's runs from 1
    return None if not isinstance(run, int) or run <= 1 else {"run": run, "agent_asked_again": live}


def interplay_lines(
    config: pytest.Config, results: Sequence[Mapping[str, object]], *, gated: bool
) -> list[tuple[str, str]]:
    """The summary's notes on reruns, repeats and a run that gates nothing: (text, colour)."""
    lines = [*_rerun_lines(results), *_repeat_lines(config)]
    if results and not gated and not any(result.get("thresholds") for result in results):
        lines.append(
            (
                "graphrag-eval: nothing was gated (no threshold, no gate): this run passes whatever its "
                f"scores, failing only on agent errors; {HOW_TO_GATE}",
                "yellow",
            )
        )
    return lines


def _rerun_lines(results: Sequence[Mapping[str, object]]) -> list[tuple[str, str]]:
    reruns = [(result, rerun) for result in results if isinstance(rerun := result.get("rerun"), Mapping)]
    if not reruns:
        return []
    asked = [(result, rerun) for result, rerun in reruns if rerun.get("agent_asked_again")]
    replayed = [
        str(result.get("question_id")) for result, rerun in reruns if not rerun.get("agent_asked_again")
    ]
    lines = []
    if asked:
        decided = [
            f"{result.get('question_id')} (run {rerun.get('run')}, {result.get('outcome')})"
            for result, rerun in asked
        ]
        lines.append(
            (
                f"graphrag-eval: pytest-rerunfailures ran {len(asked)} question(s) again, asking the live "
                f"agent each time; the last run decided: {listed(decided)}. A question that passes only "
                f"on a rerun is flaky: measure it with {AGENT_REPEATS} N",
                "yellow",
            )
        )
    if replayed:
        lines.append(
            (
                f"graphrag-eval: pytest-rerunfailures ran {len(replayed)} replayed question(s) again "
                f"({listed(replayed)}): a recorded response cannot change, so each rerun repeated its "
                f"verdict; to measure a flaky agent, ask it live with {AGENT_REPEATS} N",
                "yellow",
            )
        )
    return lines


def _repeat_lines(config: pytest.Config) -> list[tuple[str, str]]:
    count = config.getoption("count", None) if config.pluginmanager.hasplugin("repeat") else None
    if not isinstance(count, int) or count <= 1:
        return []
    return [
        (
            f"graphrag-eval: pytest-repeat's --count {count} repeats test functions, not corpus questions: "
            f"each question ran once; to ask the agent {count} times a question and gate on pass@k, "
            f"use {AGENT_REPEATS} {count}",
            "yellow",
        )
    ]


class FinishedSession(Protocol):
    """What the other reports read of the run's session once it ended."""

    @property
    def outcome(self) -> RunOutcome | None: ...
    @property
    def coverage(self) -> RunCoverage | None: ...


class OtherReports:
    """The gates' verdict in pytest-html's summary, pytest-json-report's report and after pytest-sugar's
    last line. Registered on the process that writes the run's reports (not on an xdist worker)."""

    def __init__(self, config: pytest.Config, session: FinishedSession) -> None:
        self.config, self.session = config, session

    def verdict(self) -> JsonObject | None:
        """The run's gates, failed or passed, and its coverage when partial (None before the run ended)."""
        session = self.session
        outcome = session.outcome
        if outcome is None:
            return None
        gates = [gate.to_json() for gate in outcome.finished.document.gates]
        coverage = session.coverage
        return {
            "gates_passed": not outcome.finished.gates_failed,
            "failed": outcome.failed,
            "gates": gates,
            "questions": len(outcome.finished.document.results),
            "partial": coverage.to_json() if coverage is not None and coverage.partial else None,
            "interrupted": bool(outcome.finished.document.metadata.get("interrupted")),  # -x, Ctrl-C
        }

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list[Any]) -> None:
        """pytest-html: one paragraph per gate above its results table."""
        verdict = self.verdict()
        if verdict is None or not (verdict["gates"] or verdict["partial"]):
            return
        for gate in verdict["gates"]:
            status = "PASS" if gate["passed"] else "FAIL"
            prefix.append(f"<p>graphrag-eval gate {status}: {html.escape(str(gate['message']))}</p>")
        partial = verdict["partial"]
        if isinstance(partial, Mapping):
            state = "interrupted, partial" if verdict["interrupted"] else "partial"
            prefix.append(
                f"<p>graphrag-eval: {state} run, {partial['judged_questions']} of "
                f"{partial['corpus_questions']} corpus questions judged</p>"
            )

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
        """pytest-json-report: the verdict under the report's `graphrag_eval` key."""
        verdict = self.verdict()
        if verdict is not None:
            json_report["graphrag_eval"] = verdict

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_sessionfinish(self) -> Any:
        """pytest-sugar replaces pytest's last line, which counts failed gates: say it after sugar's."""
        yield
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None or not type(terminal).__module__.startswith("pytest_sugar"):
            return  # sugar is not the terminal reporter (not installed, or not on a terminal)
        verdict = self.verdict()
        if verdict is None or not verdict["gates"]:
            return
        failed = sum(1 for gate in verdict["gates"] if not gate["passed"])
        total = len(verdict["gates"])
        if failed:
            terminal.write_line(f"graphrag-eval: {failed} of {total} gate(s) FAILED", red=True, bold=True)
        else:
            terminal.write_line(f"graphrag-eval: {total} gate(s) passed", green=True)
