"""The step and response format every adapter returns: a tool call that never got a result is an error
step (so it can never count as a success), a run with neither a call nor an answer an error."""

from __future__ import annotations

import json
from typing import Any

from pytest_graphrag_eval.errors import ResponseError, SourceLocation

NO_RESULT = "the trace has no result for this tool call (the agent stopped or the result was lost)"


def tool_error(message: object) -> str:
    return message if isinstance(message, str) and message else "the tool reported an error"


def parse_arguments(arguments: object) -> object:
    """A tool call's arguments as a JSON value; text that is not JSON stays text (what the model wrote)."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):  # ValueError: JSONDecodeError, or a number too long
            return arguments
    return {} if arguments is None else arguments


def response_dict(
    steps: list[dict[str, object]],
    answer: str | None,
    usage: dict[str, int],
    elapsed_sec: float | None,
    location: SourceLocation | None = None,
    input_field: str = "messages",
) -> dict[str, Any]:
    """The response dict in the replay format, with only what the trace told.

    A run with neither a tool call nor an answer is an error rather than a 0: the agent's output was
    not in what was passed.
    """
    if not steps and not answer:
        raise ResponseError(
            "holds no tool call and no assistant answer: nothing the agent did", location, input_field
        )
    response: dict[str, Any] = {"actual_answer": answer or None, "actual_steps": steps}
    if "total_tokens" not in usage and {"input_tokens", "output_tokens"} <= usage.keys():
        usage = {**usage, "total_tokens": usage["input_tokens"] + usage["output_tokens"]}
    response.update(usage)
    if elapsed_sec is not None:
        response["elapsed_sec"] = elapsed_sec
    return response
