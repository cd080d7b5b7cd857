"""Wires the plugin's live hook to the example grid agent.

`pytest example_project` asks this hook for every corpus question; with
`--graphrag-responses FILE` the plugin replays recorded responses instead and
the hook is never called (the store is then never loaded).
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import pytest
from grid_agent import GridAgent, load_store

from pytest_graphrag_eval import Question

_agent_lock = threading.Lock()


@functools.cache
def _create_agent() -> GridAgent:
    return GridAgent(load_store())


def grid_agent() -> GridAgent:
    """One agent (and one loaded store) per test session; the plugin calls the hook from threads."""
    with _agent_lock:
        return _create_agent()


def pytest_graphrag_respond(question: Question, config: pytest.Config) -> dict[str, Any]:
    return grid_agent().answer(question.question_id, question.question_text)
