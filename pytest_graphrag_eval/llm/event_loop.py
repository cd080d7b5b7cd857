"""Running a coroutine to completion from synchronous code without touching the caller's process state.

`asyncio.run` swaps the process's SIGINT handler while it runs and, when it ends, leaves the calling
thread with no current event loop, clearing one the user or another plugin (pytest-asyncio) had set.
Inside a user's pytest process neither is ours to do, so the library and the plugin run their
coroutines here: on a new loop of their own that is never made the thread's current loop, with
Ctrl-C left to the handler the user has (pytest's: a `KeyboardInterrupt`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_coroutine(coroutine: Coroutine[Any, Any, T]) -> T:
    """`coroutine`'s result, run on a loop of its own; the loop's other tasks, async generators and
    default executor are wound down before it closes, as `asyncio.run` winds them down."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        try:
            _cancel_remaining_tasks(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()


def _cancel_remaining_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is still pending (after a Ctrl-C, the interrupted coroutine itself) and let it
    run its cleanup, so no task is destroyed pending."""
    pending = asyncio.all_tasks(loop)
    if not pending:
        return
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
