"""Ctrl-C while the terminal summary is printed: pytest's one-line note and exit status 2, not the
traceback pytest gives there; the outputs are already written. Only runs that scored questions."""

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
