"""A live run's status after pytest's dots while an item waits for its question, on a terminal only.

Written raw (pytest's line bookkeeping is left alone) with capture suspended, as live logging does,
and erased with backspaces before pytest reports the item.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.formats.json_types import JsonObject
from pytest_graphrag_eval.run.passes import RememberedSource, fill_cache_in_batches
from pytest_graphrag_eval.run.runner import BackgroundRunner, QuestionRunner

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.client import JudgeClient

WAIT_BEFORE_SHOWING = 0.5  # seconds an item waits before a status appears: quick items never flicker
REFRESH_INTERVAL = 0.5
MIN_ROOM = 24


def status_text(
    done: int, total: int, judge_done: int, judge_queued: int, cost_usd: float, elapsed: float
) -> str:
    """`graphrag 12/300 questions | judge 40 done, 64 queued | $0.0120 | ~1m20s left`."""
    parts = [f"graphrag {done}/{total} questions"]
    if judge_done or judge_queued:
        parts.append(f"judge {judge_done} done, {judge_queued} queued")
        parts.append(f"${cost_usd:.4f}")
    if done and total > done:
        parts.append(f"~{_duration(elapsed / done * (total - done))} left")
    return " | ".join(parts)


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class ProgressLine:
    """Writes and erases the status on pytest's current output line (a terminal writer)."""

    def __init__(
        self,
        writer: Any,
        status: Callable[[], str],
        clock: Callable[[], float] = time.monotonic,
        uncaptured: Callable[[], AbstractContextManager[Any]] = contextlib.nullcontext,
    ):
        self._writer = writer
        self._uncaptured = uncaptured
        self._status = status
        self._clock = clock
        self._shown = 0
        self._waiting_since: float | None = None
        self._last = 0.0

    def tick(self) -> None:
        """Called while an item waits: show or refresh the status once the wait is long enough."""
        now = self._clock()
        if self._waiting_since is None:
            self._waiting_since = now
        if now - self._waiting_since < WAIT_BEFORE_SHOWING or now - self._last < REFRESH_INTERVAL:
            return
        self._last = now
        room = self._writer.fullwidth - self._writer.width_of_current_line - 1
        if room < MIN_ROOM:
            return
        text = (" " + self._status())[:room]
        with self._uncaptured():
            self._erase()
            self._writer.write_raw(text, flush=True)
        self._shown = len(text)

    def done(self) -> None:
        """The item stops waiting: erase the status before pytest writes the item's outcome."""
        self._waiting_since = None
        if self._shown:
            with self._uncaptured():
                self._erase()

    def _erase(self) -> None:
        if self._shown:
            self._writer.write_raw("\b" * self._shown + " " * self._shown + "\b" * self._shown, flush=True)
            self._shown = 0


def terminal_progress_line(config: Any, status: Callable[[], str]) -> ProgressLine | None:
    """A status line on pytest's terminal, capture suspended while it writes; None off a terminal."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not reporter.isatty():
        return None
    capture = config.pluginmanager.get_plugin("capturemanager")
    uncaptured = capture.global_and_fixture_disabled if capture is not None else contextlib.nullcontext
    return ProgressLine(config.get_terminal_writer(), status, uncaptured=uncaptured)


def runner_progress_line(
    config: Any, runner: QuestionRunner, judge: JudgeClient | None
) -> ProgressLine | None:
    """A progress status for a run with something to wait on, when the output is a terminal."""
    if not isinstance(runner, BackgroundRunner):
        return None
    started = time.monotonic()

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

    return terminal_progress_line(config, status)


def judge_in_batches(
    config: Any,
    new_runner: Callable[[], QuestionRunner],
    questions: list[Question],
    judge: JudgeClient,
    remembered: RememberedSource | None,
) -> list[JsonObject]:
    """Fill the judge cache through the Batch API, with a status on a terminal, before any item runs."""
    status = [""]
    line = terminal_progress_line(config, lambda: status[0])

    def show(text: str) -> None:
        status[0] = text
        if line is not None:
            line.tick()

    try:
        return fill_cache_in_batches(new_runner, questions, judge, remembered, show)
    finally:
        if line is not None:
            line.done()
