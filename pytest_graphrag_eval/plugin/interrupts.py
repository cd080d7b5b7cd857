"""Ctrl-C while the end of a run writes its outputs: finish writing, then stop.

Every question was already scored when the report is written; an interrupt there would lose all of
it (and show a traceback through the writers). `deferred_interrupt` holds SIGINT back for the
duration and says whether one came, so the session can report the run as interrupted afterwards.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class InterruptLatch:
    """Whether a Ctrl-C came while it was held back."""

    def __init__(self) -> None:
        self.received = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.received = True


@contextmanager
def deferred_interrupt() -> Iterator[InterruptLatch]:
    """Hold SIGINT back while the block runs (main thread only; elsewhere nothing changes)."""
    latch = InterruptLatch()
    if threading.current_thread() is not threading.main_thread():
        yield latch
        return
    previous = signal.signal(signal.SIGINT, latch)
    try:
        yield latch
    finally:
        signal.signal(signal.SIGINT, previous)
