"""Ctrl-C while the terminal summary is printed: pytest's one-line note, not a traceback.

pytest handles an interrupt during the tests, not one during `pytest_terminal_summary`: that one
leaves the session as an uncaught KeyboardInterrupt, a traceback through pytest's and the plugins'
summary code. By then the run's reports and history record are written (`pytest_sessionfinish`
comes first), so only the rest of the summary is lost; the run ends as an interrupted run does,
with pytest's note and exit status 2. Only runs that scored questions are guarded: other test runs
in the same environment keep pytest's own behaviour.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest


class SummaryInterruptNote:
    """The outermost `pytest_terminal_summary` wrapper, turning a KeyboardInterrupt into pytest's note."""

    def __init__(self, applies: Callable[[], bool]) -> None:
        self._applies = applies

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> Generator[None]:
        try:
            return (yield)
        except KeyboardInterrupt:
            if not self._applies():
                raise
            session = config.pluginmanager.get_plugin("session")
            if isinstance(session, pytest.Session):
                session.exitstatus = pytest.ExitCode.INTERRUPTED
            terminalreporter.write_sep("!", "KeyboardInterrupt", red=True)
            terminalreporter.write_line(
                "Interrupted while the summary was printed, after the run's outputs were written."
            )
            return None
