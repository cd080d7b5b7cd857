"""Hook specifications the plugin declares for users' conftest.py files."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Awaitable, Mapping

    from pytest_graphrag_eval.corpus.reference_corpus import Question


@pytest.hookspec(firstresult=True)
def pytest_graphrag_respond(
    question: Question, config: pytest.Config
) -> Mapping[str, Any] | Awaitable[Mapping[str, Any]] | None:
    """Answer one reference question live with the agent under test (docs/live-agents.md).

    Return the response in the replay format, or an awaitable of it; a sync implementation runs in
    worker threads, an async one on the plugin's event loop, several questions at once. None leaves
    the question unanswered; a malformed return fails that question, checked as a recorded one is.
    """
