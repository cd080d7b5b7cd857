"""Run a coroutine from synchronous code without touching the caller's process state.

`asyncio.run` swaps the SIGINT handler and clears the thread's current loop, neither ours to do in
a user's pytest process: this runs on a private loop and leaves Ctrl-C to the user's handler.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_coroutine(coroutine: Coroutine[Any, Any, T]) -> T:
    """`coroutine`'s result on a loop of its own, wound down as `asyncio.run` winds its loop down."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coroutine)
    finally:
        try:
            # What is still pending (after Ctrl-C, the coroutine itself) is cancelled and may clean up.
            if pending := asyncio.all_tasks(loop):
                for task in pending:
                    task.cancel()
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()
