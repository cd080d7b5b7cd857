"""The `pytest11` entry point: options, hook specs, the per-run session, corpus collection and the
outermost terminal-summary wrapper; the session object carries the rest of the hooks."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.errors import GraphragEvalError
from pytest_graphrag_eval.plugin import hookspecs
from pytest_graphrag_eval.plugin.detached_paths import check_config_detached_values
from pytest_graphrag_eval.plugin.items import SESSION_KEY, CorpusFile, corpus_file_for
from pytest_graphrag_eval.plugin.other_plugins import OtherReports
from pytest_graphrag_eval.plugin.session import GraphragSession
from pytest_graphrag_eval.plugin.settings import PluginSettings, add_options
from pytest_graphrag_eval.plugin.xdist_workers import ProcessRole, XdistController
from pytest_graphrag_eval.run.assembly import NO_RESPONSES

SESSION_PLUGIN_NAME = "graphrag-eval-session"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    try:
        role = ProcessRole.of(config)
        if role is not ProcessRole.WORKER:  # a worker's command line is the one xdist made for it
            check_config_detached_values(config)
        settings = PluginSettings.from_config(config, role)
        session = GraphragSession(config, settings, role)
    except GraphragEvalError as error:
        raise pytest.UsageError(str(error)) from None
    # An xdist controller collects nothing, so the check its workers make would surface as INTERNALERROR.
    has_source = (
        settings.responses_path is not None
        or config.hook.pytest_graphrag_respond.get_hookimpls()
        or settings.references_only_allowed
    )
    if role is ProcessRole.CONTROLLER and settings.corpus_paths and not has_source:
        raise pytest.UsageError(NO_RESPONSES)
    if settings.clear_cache and settings.llm.cache_dir is not None and role is not ProcessRole.WORKER:
        from pytest_graphrag_eval.llm import clear_cache

        clear_cache(settings.llm.cache_dir)
    config.pluginmanager.register(session, SESSION_PLUGIN_NAME)
    if role is not ProcessRole.WORKER:
        session.corpus.add_args(config, settings.corpus_from_cli)
        config.pluginmanager.register(OtherReports(config, session), "graphrag-eval-other-reports")
    if role is ProcessRole.CONTROLLER:
        live = settings.responses_path is None and bool(config.hook.pytest_graphrag_respond.get_hookimpls())
        graph = session.graph
        controller = XdistController(
            config, live or settings.answers.judge == "llm", lambda: graph.shared_store if graph else None
        )
        config.pluginmanager.register(controller, "graphrag-eval-xdist-controller")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CorpusFile | None:
    return corpus_file_for(parent, file_path)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> Generator[None]:
    """Ctrl-C while the summary is printed, after a run that scored questions wrote its outputs:
    pytest's one-line note and exit status 2, not the traceback pytest gives there."""
    try:
        return (yield)
    except KeyboardInterrupt:
        session = config.stash.get(SESSION_KEY, None)
        if not isinstance(session, GraphragSession) or session.role is ProcessRole.WORKER:
            raise  # pytest's own behaviour: no run of ours, or a worker (it prints no summary)
        if not session.scored_questions():
            raise
        pytest_session = config.pluginmanager.get_plugin("session")
        if isinstance(pytest_session, pytest.Session):
            pytest_session.exitstatus = pytest.ExitCode.INTERRUPTED
        terminalreporter.write_sep("!", "KeyboardInterrupt", red=True)
        terminalreporter.write_line(
            "Interrupted while the summary was printed, after the run's outputs were written."
        )
        return None
