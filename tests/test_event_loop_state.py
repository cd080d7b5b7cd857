"""Running our coroutines leaves the caller's process as it was: its current event loop and its SIGINT
handler (`llm/event_loop.py`; `asyncio.run` changed both)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from plugin_support import corpus, good_responses

from pytest_graphrag_eval import run_evaluation
from pytest_graphrag_eval.llm.event_loop import run_coroutine
from pytest_graphrag_eval.scoring import ScoringContext


@pytest.fixture
def default_sigint() -> Iterator[None]:
    """Python's own SIGINT handler for the test, as an interactive pytest run has it."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


class HandlerSeen:
    """A user's scorer that notes the SIGINT handler in place while it scores."""

    name = "handler_seen"

    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def score(self, question: Any, response: Any, context: ScoringContext) -> dict[str, Any]:
        self.seen.append(signal.getsignal(signal.SIGINT))
        return {"handler_seen_score": 1.0}


def test_scoring_keeps_the_sigint_handler_the_user_has(default_sigint: None) -> None:
    scorer = HandlerSeen()
    run_evaluation(corpus(), good_responses(), scorers=[scorer])
    assert len(scorer.seen) == 3
    assert all(handler is signal.default_int_handler for handler in scorer.seen)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_scoring_keeps_the_callers_current_event_loop() -> None:
    policy = asyncio.get_event_loop_policy()
    users_loop = asyncio.new_event_loop()
    policy.set_event_loop(users_loop)
    try:
        run_evaluation(corpus(), good_responses())
        assert policy.get_event_loop() is users_loop
        assert not users_loop.is_closed()
    finally:
        policy.set_event_loop(None)
        users_loop.close()


def test_ctrl_c_inside_a_coroutine_cancels_the_others_and_reaches_the_caller() -> None:
    cleaned_up: list[str] = []

    async def waits_forever() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned_up.append("waiter")

    async def interrupted() -> None:
        waiter = asyncio.create_task(waits_forever())
        await asyncio.sleep(0)  # the waiter starts
        assert not waiter.done()
        raise KeyboardInterrupt  # what pytest's handler raises on Ctrl-C

    with pytest.raises(KeyboardInterrupt):
        run_coroutine(interrupted())
    assert cleaned_up == ["waiter"]
