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
    """Answer one reference question live with the agent under test.

    Return the response in the replay format (success shape with
    `actual_answer`, `actual_steps`, token counts and `elapsed_sec`, or the
    error shape `{"status": "error", "error": "..."}`), or an awaitable of it
    when the agent is async. Several questions are answered concurrently
    (`--graphrag-agent-concurrency`): a sync implementation runs in worker
    threads, an async one on the plugin's event loop. Return None to leave the
    question unanswered (it then fails with "no response"). The return goes
    through the same checks as a recorded response (graphrag-eval 4.0's `steps`
    are read as `actual_steps`); a malformed one fails that question with a
    message naming the hook, the question and the field.
    """
