"""Work done on a second core by a forked child process, with the work done here as the fallback.

A merge of shard reports has pieces of work that do not wait for each other (reading the baseline
while the shards are read, building the HTML page while the JSON report is written), but one Python
process runs one thread of bytecode at a time. A child made by `fork` starts with this process's
memory as it is (copy on write): the work's inputs cross no pipe, only its result does, pickled.

Where fork is missing or unsafe (Windows; macOS, whose system libraries are not fork-safe; another
thread running, whose locks the child would inherit held), where one core is all there is, or when
the child fails in any way, the work is done in this process when its result is asked for. So the
values and the errors are always those of calling the work here: a child only saves time.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")


class ForkedWork(Generic[T]):
    """`work()` started in a forked child; `result()` is its value (see the module docstring).

    Use it as a context manager: leaving the block without asking for the result (an error
    elsewhere) stops the child, so no process outlives what it was computing for.
    """

    def __init__(self, work: Callable[[], T], *, fork: bool = True) -> None:
        """`fork=False`: the work is done by `result()` (nothing else would run beside it)."""
        self._work = work
        self._child: tuple[BaseProcess, Connection] | None = (
            _start(work) if fork and forking_helps() else None
        )

    @property
    def forked(self) -> bool:
        """Whether a child process is computing the work (False: it is computed by `result()`)."""
        return self._child is not None

    def result(self) -> T:
        """The work's value: the child's, or computed here when there is none or it failed."""
        if self._child is not None:
            process, receiving = self._child
            self._child = None
            try:
                return pickle.loads(receiving.recv_bytes())  # type: ignore[no-any-return]
            except (EOFError, OSError, pickle.UnpicklingError):
                pass  # the child failed (its error is raised again below) or was stopped
            finally:
                receiving.close()
                process.join()
        return self._work()

    def __enter__(self) -> ForkedWork[T]:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._child is not None:
            process, receiving = self._child
            self._child = None
            process.terminate()
            process.join()
            receiving.close()


def forking_helps() -> bool:
    """Fork is safe here and a second core can run the child.

    Not in a child of `ForkedWork` itself: it is a daemon process, which multiprocessing lets have
    no children (its work, done where it was asked for, was what the cores had to run anyway).
    """
    return (
        sys.platform != "darwin"
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
        and not multiprocessing.current_process().daemon
        and _cores() > 1
    )


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))  # the cores this process may run on (a CI container's share)
    return os.cpu_count() or 1


def _start(work: Callable[[], T]) -> tuple[BaseProcess, Connection]:
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    # With fork the target and its arguments are not pickled: the child has them in its memory.
    process = context.Process(target=_run_child, args=(work, sending), daemon=True)
    process.start()
    sending.close()  # the child holds the only sending end: its exit is the end of the pipe
    return process, receiving


def _run_child(work: Callable[[], object], sending: Connection) -> None:
    try:
        data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:  # the parent does the work again, and raises the error itself
        return
    with contextlib.suppress(OSError):  # the parent is gone, or stopped waiting: nobody to tell
        sending.send_bytes(data)
