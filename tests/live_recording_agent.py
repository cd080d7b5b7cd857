"""A live agent for the history tests: answers each question from the recording named by
`GRAPHRAG_TEST_AGENT_RECORDING`, so a run is live (one input to the history, however it answers)
while the test decides what it answers. Loaded with `-p live_recording_agent`; it answers before
the example project's own agent."""

from __future__ import annotations

import functools
import json
import os
from typing import Any

import pytest

from pytest_graphrag_eval import Question


@functools.cache
def _answers(path: str) -> dict[str, dict[str, Any]]:
    with open(path, encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines if line.strip()]
    return {str(record["question_id"]): record for record in records}


@pytest.hookimpl(tryfirst=True)
def pytest_graphrag_respond(question: Question, config: pytest.Config) -> dict[str, Any]:
    record = _answers(os.environ["GRAPHRAG_TEST_AGENT_RECORDING"])[question.question_id]
    return {key: value for key, value in record.items() if key != "question_id"}
